"""The copy/cast kernel (any dtype -> any dtype, any strides) and fill, run once
per CPU capability level; float16 / bfloat16 rounding bit-exact against numpy
and ml_dtypes."""
import itertools

import numpy as np
import pytest

import torchlet as tl
from torchlet import _rt

from rt_helpers import ALL, BF16, FLOATS, INTS, NP, assert_same, needs_bf16, random_array

LAYOUTS = ["contiguous", "transposed", "strided", "broadcast", "scalar"]


def np_cast(a, dst):
    """numpy's conversion (bool: != 0)."""
    if dst is tl.bool:
        return a.astype(np.float64) != 0 if a.dtype == BF16 else a != 0
    with np.errstate(invalid="ignore", over="ignore"):
        if a.dtype == BF16 and dst in INTS:
            return a.astype(np.float32).astype(NP[dst])
        return a.astype(NP[dst])


def cast_safe_values(rng, shape, src, dst):
    """Values of src that convert to dst without overflow / undefined results."""
    a = random_array(rng, shape, src, small=True)
    if src in FLOATS and dst in INTS:
        lo = 0 if dst is tl.uint8 else -100
        a = np.clip(a.astype(np.float64), lo, 100).astype(a.dtype)
    if src in INTS and dst is tl.uint8:
        a = np.abs(a.astype(np.int64)).astype(a.dtype)
    if src in INTS and dst is tl.int8:
        a = np.clip(a.astype(np.int64), -128, 127).astype(a.dtype)
    return a


def make_src(a, layout):
    """(numpy values the copy should produce, torchlet source) for a layout."""
    if layout == "contiguous":
        return a, tl.from_numpy(a)
    if layout == "transposed":
        base = np.ascontiguousarray(a.T)
        return a, _rt.transpose(tl.from_numpy(base), 0, 1)
    if layout == "strided":
        big = np.repeat(np.repeat(a, 2, axis=0), 3, axis=1)
        return big[::2, ::3], _rt.slice(_rt.slice(tl.from_numpy(big), 0, 0, None, 2), 1, 0, None, 3)
    if layout == "broadcast":
        row = np.ascontiguousarray(a[:1])
        return np.broadcast_to(row, a.shape), _rt.expand(tl.from_numpy(row), *a.shape)
    if layout == "scalar":
        s = np.ascontiguousarray(a[0, 0])
        return np.broadcast_to(s, a.shape), tl.from_numpy(s.reshape(()))
    raise AssertionError(layout)


def _as_tl(a, dt):
    if dt is tl.bfloat16:
        return tl.from_numpy(np.ascontiguousarray(a))
    return tl.from_numpy(np.ascontiguousarray(a))


@pytest.mark.parametrize("src,dst", list(itertools.product(ALL, ALL)))
def test_copy_every_dtype_pair_every_layout(cpu_capability, src, dst):
    if BF16 is None and tl.bfloat16 in (src, dst):
        pytest.skip("ml_dtypes not installed")
    rng = np.random.default_rng(hash((src._name, dst._name)) % 2**32)
    a = cast_safe_values(rng, (37, 19), src, dst)
    for layout in LAYOUTS:
        vals, s = make_src(a, layout)
        assert s.dtype is src
        out = _rt.empty(37, 19, dtype=dst)
        _rt.copy_(out, s)
        assert_same(out, np_cast(np.asarray(vals), dst))
        # into a transposed (column-major) destination too
        outT = _rt.transpose(_rt.empty(19, 37, dtype=dst), 0, 1)
        _rt.copy_(outT, s)
        assert_same(outT, np_cast(np.asarray(vals), dst))
    # the allocating paths
    t = tl.from_numpy(a)
    assert_same(_rt.to(t, dst), np_cast(a, dst))
    assert_same(_rt.to(_rt.transpose(t, 0, 1), dst), np_cast(a.T, dst))


@pytest.mark.parametrize("dt", ALL)
def test_clone_contiguous_to(cpu_capability, dt):
    rng = np.random.default_rng(7)
    a = random_array(rng, (6, 10), dt)
    t = tl.from_numpy(a) if dt is not tl.bfloat16 else tl.from_numpy(a)
    c = _rt.clone(t)
    assert c.data_ptr() != t.data_ptr()
    assert_same(c, a)
    tt = _rt.transpose(t, 0, 1)
    ct = _rt.clone(tt)                      # preserves the (dense) transposed layout
    assert ct.stride() == tt.stride()
    assert_same(ct, a.T)
    cc = _rt.contiguous(tt)
    assert cc.is_contiguous() and cc.stride() == (6, 1)
    assert_same(cc, np.ascontiguousarray(a.T))
    assert _rt.contiguous(t) .data_ptr() == t.data_ptr()   # already contiguous: same tensor
    s = _rt.slice(t, 1, 1, None, 3)         # not dense: clone is contiguous
    cs = _rt.clone(s)
    assert cs.is_contiguous()
    assert_same(cs, a[:, 1::3])
    assert _rt.to(t, dt).data_ptr() == t.data_ptr()
    assert _rt.to(t, dt, copy=True).data_ptr() != t.data_ptr()


@pytest.mark.parametrize("n", [0, 1, 15, 16, 17, 1000, 100003])
def test_copy_lengths(cpu_capability, n):
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n).astype(np.float32)
    for dst in (tl.float16, tl.bfloat16, tl.float64, tl.int32, tl.float32):
        if dst is tl.bfloat16 and BF16 is None:
            continue
        assert_same(_rt.to(tl.from_numpy(a), dst), np_cast(a, dst))


def _f32_bit_patterns(rng, n):
    bits = rng.integers(0, 2**32, size=n, dtype=np.uint64).astype(np.uint32)
    specials = np.array([0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0x00000001, 0x477fe000,
                         0x477ff000, 0x477fefff, 0x38800000, 0x33000000, 0x33000001, 0x387fc000,
                         0x3f808000, 0x3f818000, 0x3f808001, 0x7f7fffff], dtype=np.uint32)
    # values near float16's range, where rounding matters most
    near = (rng.standard_normal(n) * 2.0 ** rng.integers(-26, 17, n)).astype(np.float32).view(np.uint32)
    return np.concatenate([bits, specials, near]).view(np.float32)


def test_f32_to_f16_bit_exact(cpu_capability):
    rng = np.random.default_rng(11)
    x = _f32_bit_patterns(rng, 200000)
    with np.errstate(over="ignore", invalid="ignore"):
        want = x.astype(np.float16)
    got = _rt.to(tl.from_numpy(x), tl.float16).numpy()
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(got.view(np.uint16)[~nan], want.view(np.uint16)[~nan])


def test_f64_to_f16_bit_exact(cpu_capability):
    rng = np.random.default_rng(12)
    x = (rng.standard_normal(200000) * 2.0 ** rng.integers(-30, 17, 200000))
    # halfway cases that double rounding through float32 would get wrong
    ties = (1 + 2.0 ** -11 + 2.0 ** -40) * 2.0 ** rng.integers(-14, 15, 1000)
    x = np.concatenate([x, ties, -ties, [65504.0, 65519.99, 65520.0, 2.0 ** -25, 2.0 ** -25 * 1.0000001,
                                         2.0 ** -24, 1e-300, np.inf, -np.inf]])
    with np.errstate(over="ignore"):
        want = x.astype(np.float16)
    got = _rt.to(tl.from_numpy(x), tl.float16).numpy()
    assert np.array_equal(got.view(np.uint16), want.view(np.uint16))


def test_f16_to_f32_exhaustive(cpu_capability):
    h = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
    want = h.astype(np.float32)
    got = _rt.to(tl.from_numpy(h), tl.float32).numpy()
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(got.view(np.uint32)[~nan], want.view(np.uint32)[~nan])
    assert np.array_equal(_rt.to(tl.from_numpy(h), tl.float64).numpy()[~nan], h.astype(np.float64)[~nan])


@needs_bf16
def test_bf16_bit_exact(cpu_capability):
    rng = np.random.default_rng(13)
    x = _f32_bit_patterns(rng, 200000)
    with np.errstate(invalid="ignore", over="ignore"):
        want = x.astype(BF16)
    got = _rt.to(tl.from_numpy(x), tl.bfloat16).numpy()
    nan = np.isnan(x)
    assert np.array_equal(np.isnan(got.astype(np.float32)), nan)
    assert np.array_equal(got.view(np.uint16)[~nan], want.view(np.uint16)[~nan])
    # float64 and int sources round through float32 (ml_dtypes, PyTorch)
    d = rng.standard_normal(50000) * 1e3
    assert np.array_equal(_rt.to(tl.from_numpy(d), tl.bfloat16).numpy().view(np.uint16),
                          d.astype(BF16).view(np.uint16))
    i = rng.integers(-2**31, 2**31 - 1, 50000, dtype=np.int64).astype(np.int32)
    assert np.array_equal(_rt.to(tl.from_numpy(i), tl.bfloat16).numpy().view(np.uint16),
                          i.astype(BF16).view(np.uint16))
    # bf16 -> f32 exhaustive
    h = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(BF16)
    w = h.astype(np.float32)
    g = _rt.to(tl.from_numpy(h), tl.float32).numpy()
    nan = np.isnan(w)
    assert np.array_equal(g.view(np.uint32)[~nan], w.view(np.uint32)[~nan])


def test_int_to_f16(cpu_capability):
    i = np.arange(-70000, 70000, 7, dtype=np.int64)
    for src in (np.int64, np.int32):
        a = i.astype(src)
        with np.errstate(over="ignore"):
            want = a.astype(np.float16)
        assert np.array_equal(_rt.to(tl.from_numpy(a), tl.float16).numpy().view(np.uint16), want.view(np.uint16))


@pytest.mark.parametrize("dt", ALL)
@pytest.mark.parametrize("value", [0, 1, -3, 2.5, True])
def test_fill_every_dtype(cpu_capability, dt, value):
    if dt is tl.bfloat16 and BF16 is None:
        pytest.skip("ml_dtypes not installed")
    if dt in (tl.uint8, tl.bool) and value == -3:
        value = 3
    t = _rt.empty(5, 7, dtype=dt)
    _rt.fill_(t, value)
    want = np.full((5, 7), value).astype(NP[dt]) if dt is not tl.bool else np.full((5, 7), bool(value))
    if dt in INTS and isinstance(value, float):
        want = np.full((5, 7), int(value), dtype=NP[dt])
    assert_same(t, want)
    # through a strided view
    base = _rt.zeros(5, 14, dtype=dt)
    _rt.fill_(_rt.slice(base, 1, 0, None, 2), 1)
    ref = np.zeros((5, 14), dtype=NP[dt])
    ref[:, ::2] = 1
    assert_same(base, ref)


def test_factories():
    assert_same(_rt.zeros(2, 3), np.zeros((2, 3), np.float32))
    assert_same(_rt.ones(4, dtype=tl.int16), np.ones(4, np.int16))
    assert_same(_rt.full((2, 2), 7), np.full((2, 2), 7, np.int64))
    assert_same(_rt.full((2,), True), np.array([True, True]))
    assert_same(_rt.arange(5), np.arange(5))
    assert _rt.empty_strided((2, 3), (1, 2)).stride() == (1, 2)


def test_copy_overlapping_views():
    a = np.arange(10, dtype=np.float32)
    t = tl.from_numpy(a)
    _rt.copy_(_rt.slice(t, 0, 2, 10), _rt.slice(t, 0, 0, 8))    # like memmove
    assert np.array_equal(a, np.array([0, 1, 0, 1, 2, 3, 4, 5, 6, 7], np.float32))
    _rt.copy_(t, t)                                               # no-op
    m = np.arange(9, dtype=np.float64).reshape(3, 3)
    tm = tl.from_numpy(m)
    _rt.copy_(tm, _rt.transpose(tm, 0, 1))                        # in-place transpose
    assert np.array_equal(m, np.arange(9, dtype=np.float64).reshape(3, 3).T)


def test_copy_errors():
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        _rt.copy_(_rt.expand(_rt.zeros(1), 3), _rt.ones(3))
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor"):
        _rt.copy_(_rt.zeros(2), _rt.empty(2, device="meta"))
    m = _rt.empty(2, device="meta")
    _rt.copy_(m, _rt.zeros(2))                                    # into meta: shape check only
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        _rt.copy_(m, _rt.zeros(3))


def test_version_counter():
    t = _rt.zeros(3)
    v = _rt.slice(t, 0, 1)
    before = t._version
    _rt.fill_(v, 1)
    assert t._version == v._version == before + 1
    _rt.copy_(t, _rt.ones(3))
    assert v._version == before + 2
