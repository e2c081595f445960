"""TensorIterator through the C test hook tl_test_binary_add (a + b with a tiny
hand-written loop; not the add operator) and the metadata API tl_iter_compute.
Checked against numpy on random shapes."""
import itertools
import warnings

import numpy as np
import pytest

import torchlet as tl
from torchlet import _rt
from torchlet._C import lib

from rt_helpers import ALL, BF16, FLOATS, NP, assert_same, random_array, to_tl
from test_dtype import PROMOTE, _oracle

add = _rt.test_binary_add


def np_add(a, b, dt):
    """numpy reference in dtype dt (bool: logical or)."""
    a = a.astype(NP[dt])
    b = b.astype(NP[dt])
    if dt is tl.bool:
        return np.logical_or(a, b)
    with np.errstate(over="ignore"):
        return (a + b).astype(NP[dt])


def random_broadcast_shapes(rng):
    nd = int(rng.integers(0, 5))
    out = [int(rng.choice([0, 1, 2, 3, 5, 7])) if rng.random() < 0.1 else int(rng.integers(1, 7)) for _ in range(nd)]
    def sub():
        k = int(rng.integers(0, nd + 1))
        return tuple(1 if rng.random() < 0.3 else s for s in out[nd - k:])
    return sub(), sub()


@pytest.mark.parametrize("seed", range(40))
def test_broadcasting_random_shapes(cpu_capability, seed):
    rng = np.random.default_rng(seed)
    sa, sb = random_broadcast_shapes(rng)
    a = random_array(rng, sa, tl.float32)
    b = random_array(rng, sb, tl.float32)
    got = add(tl.from_numpy(a), tl.from_numpy(b))
    assert_same(got, a + b)


@pytest.mark.parametrize("sa,sb", [((0,), (1,)), ((3, 0), (3, 1)), ((0, 4), (4,)), ((2, 1, 0), (1, 5, 1)),
                                   ((1,), ()), ((), ()), ((5, 1, 3), (4, 1)), ((1, 1, 1), (2, 3, 4))])
def test_broadcasting_edge_shapes(sa, sb):
    rng = np.random.default_rng(0)
    a = random_array(rng, sa, tl.float64)
    b = random_array(rng, sb, tl.float64)
    assert_same(add(tl.from_numpy(a), tl.from_numpy(b)), a + b)
    assert _rt.iter_compute(tl.from_numpy(a), tl.from_numpy(b))[0] == np.broadcast_shapes(sa, sb)


def test_broadcast_error():
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(4\) must match the size of tensor b \(3\) "
                                           r"at non-singleton dimension 1"):
        add(_rt.zeros(2, 4), _rt.zeros(2, 3))


@pytest.mark.parametrize("da,db", list(itertools.product(ALL, ALL)))
def test_promotion_every_pair(cpu_capability, da, db):
    rng = np.random.default_rng(1)
    a = random_array(rng, (3, 4), da, small=True)
    b = random_array(rng, (4,), db, small=True)
    got = add(tl.tensor(a, dtype=da), tl.tensor(b, dtype=db))
    want = PROMOTE[(da, db)]
    assert got.dtype is want
    assert _rt.iter_compute(tl.tensor(a, dtype=da), tl.tensor(b, dtype=db))[1] is want
    assert_same(got, np_add(a, b, want))


@pytest.mark.parametrize("d", ALL)
@pytest.mark.parametrize("v", [True, 3, -2, 2.5])
def test_promotion_python_scalars(d, v):
    rng = np.random.default_rng(2)
    a = random_array(rng, (5,), d, small=True)
    t = tl.tensor(a, dtype=d)
    sdt = tl.bool if isinstance(v, bool) else (tl.int64 if isinstance(v, int) else tl.float64)
    want = _oracle([("dim", d), ("wrapped", sdt)])
    got = add(t, v)
    assert got.dtype is want
    if want is tl.bool:
        ref = np.logical_or(a.astype(bool), bool(v))
    else:
        ref = np_add(a, np.array(v), want)
    assert_same(got, ref)
    assert add(v, t).dtype is want


@pytest.mark.parametrize("d,z", list(itertools.product(ALL, ALL)))
def test_promotion_zero_dim(d, z):
    rng = np.random.default_rng(3)
    a = random_array(rng, (2, 3), d, small=True)
    s = random_array(rng, (), z, small=True)
    got = add(tl.tensor(a, dtype=d), tl.tensor(s, dtype=z))
    want = _oracle([("dim", d), ("zero", z)])
    assert got.dtype is want
    assert_same(got, np_add(a, s, want))


def _noncontig(rng, shape, kind):
    """(numpy array, torchlet view) of the same values, non-contiguous."""
    if kind == "transposed":
        base = random_array(rng, shape[::-1], tl.float32)
        return base.T, _rt.permute(tl.from_numpy(base), *reversed(range(len(shape))))
    if kind == "sliced":
        big = random_array(rng, tuple(2 * s for s in shape), tl.float32)
        view = tl.from_numpy(big)
        for d in range(len(shape)):
            view = _rt.slice(view, d, 1, None, 2)
        return big[tuple(np.s_[1::2] for _ in shape)], view
    if kind == "expanded":
        base = random_array(rng, (1,) + shape[1:], tl.float32)
        return np.broadcast_to(base, shape), _rt.expand(tl.from_numpy(base), *shape)
    raise AssertionError(kind)


@pytest.mark.parametrize("ka,kb", list(itertools.product(["transposed", "sliced", "expanded", "contig"], repeat=2)))
@pytest.mark.parametrize("shape", [(7, 5), (3, 4, 6), (65, 130)])
def test_non_contiguous_inputs(ka, kb, shape):
    rng = np.random.default_rng(4)
    def make(kind):
        if kind == "contig":
            a = random_array(rng, shape, tl.float32)
            return a, tl.from_numpy(a)
        return _noncontig(rng, shape, kind)
    a, ta = make(ka)
    b, tb = make(kb)
    assert_same(add(ta, tb), a + b)


def test_output_layout_follows_inputs():
    a = _rt.transpose(_rt.zeros(4, 3), 0, 1)      # (3, 4) with strides (1, 3)
    out = add(a, a)
    assert out.shape == (3, 4) and out.stride() == (1, 3)
    shape, dt, perm = _rt.iter_compute(a, a)
    assert shape == (3, 4) and dt is tl.float32 and perm == (1, 0)
    assert _rt.iter_compute(_rt.zeros(3, 4), a)[2] == (0, 1)   # the first input decides
    assert add(_rt.zeros(3, 4), a).is_contiguous()


def test_coalescing():
    a = _rt.zeros(4, 5, 6)
    assert lib.tl_test_count_loops(a._h, a._h) == 1           # one 1-D loop over 120
    s = _rt.slice(a, 2, 0, 3)                                   # (4, 5, 3) rows of a wider tensor
    assert lib.tl_test_count_loops(s._h, s._h) == 20


def test_out_same_shape_and_dtype():
    a = _rt.ones(3, 4)
    out = _rt.empty(3, 4)
    r = add(a, a, out=out)
    assert r is out
    assert_same(out, np.full((3, 4), 2, np.float32))


def test_out_resize_empty():
    out = _rt.empty(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        add(_rt.ones(2, 3), _rt.ones(3), out=out)
    assert out.shape == (2, 3)
    assert_same(out, np.full((2, 3), 2, np.float32))


def test_out_resize_nonempty_warns():
    out = _rt.empty(5)
    with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
        add(_rt.ones(2, 3), _rt.ones(3), out=out)
    assert out.shape == (2, 3)


def test_out_cast_error():
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        add(_rt.ones(3), _rt.ones(3), out=_rt.empty(3, dtype=tl.int64))
    with pytest.raises(RuntimeError, match="result type Long can't be cast to the desired output type Bool"):
        add(_rt.ones(3, dtype=tl.int64), 1, out=_rt.empty(3, dtype=tl.bool))


def test_out_of_wider_dtype():
    out = _rt.empty(3, dtype=tl.float64)
    add(_rt.ones(3, dtype=tl.int32), 2, out=out)
    assert_same(out, np.full(3, 3.0))
    out16 = _rt.empty(3, dtype=tl.float16)
    add(_rt.full((3,), 0.1, dtype=tl.float32), 0.2, out=out16)
    assert_same(out16, (np.float32(0.1) + np.float32(0.2)).astype(np.float16).repeat(3))


def test_out_non_contiguous():
    base = _rt.zeros(4, 6)
    out = _rt.slice(base, 1, 0, None, 2)        # (4, 3), strides (6, 2)
    add(_rt.ones(4, 3), _rt.ones(3), out=out)
    ref = np.zeros((4, 6), np.float32)
    ref[:, ::2] = 2
    assert_same(base, ref)


def test_out_shape_mismatch_without_resize_is_error():
    a = _rt.zeros(3)
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"):
        _rt.copy_(a, _rt.zeros(2, 3))


def test_overlap_checks():
    base = _rt.zeros(10)
    a = _rt.slice(base, 0, 0, 8)
    b = _rt.slice(base, 0, 2, 10)
    with pytest.raises(RuntimeError, match="some elements of the input tensor and the written-to tensor refer to a "
                                           "single memory location"):
        add(a, a, out=b)
    # full overlap (in-place) is fine
    x = _rt.ones(5)
    add(x, x, out=x)
    assert_same(x, np.full(5, 2, np.float32))
    # an expanded output writes one element many times
    e = _rt.expand(_rt.zeros(1), 4)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a single "
                                           "memory location"):
        add(_rt.ones(4), 1.0, out=e)


def test_device_mismatch_and_meta():
    m = _rt.empty(2, 3, device="meta")
    r = add(m, m)
    assert r.device.type == "meta" and r.shape == (2, 3)
    r = add(m, 1.5)                                   # CPU scalars mix with any device
    assert r.device.type == "meta"
    r = add(m, _rt.scalar_tensor(2.0))                # so do CPU 0-dim tensors
    assert r.device.type == "meta"
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, but found at least two "
                                           "devices, meta and cpu!"):
        add(m, _rt.zeros(2, 3))


def test_large_transposed_and_threads():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((300, 257)).astype(np.float32)
    b = rng.standard_normal((257, 300)).astype(np.float32)
    ta, tb = tl.from_numpy(a), _rt.transpose(tl.from_numpy(b), 0, 1)
    before = tl.get_num_threads()
    try:
        for n in (1, 2, 3):
            tl.set_num_threads(n)
            assert_same(add(ta, tb), a + b.T)
            assert_same(add(tl.from_numpy(a), tl.from_numpy(a)), a + a)
    finally:
        tl.set_num_threads(before)
    with pytest.raises(RuntimeError, match="Expected number of threads to be positive"):
        tl.set_num_threads(0)


def test_grain_size_threads_small_and_uneven():
    before = tl.get_num_threads()
    g = lib.tl_get_grain_size()
    try:
        tl.set_num_threads(2)
        lib.tl_set_grain_size(7)
        rng = np.random.default_rng(6)
        for shape in [(3, 5), (100,), (2, 33, 3), (13, 1, 7)]:
            a = rng.standard_normal(shape)
            b = rng.standard_normal(shape[-1:])
            assert_same(add(tl.from_numpy(a), tl.from_numpy(b)), a + b)
            assert_same(add(_rt.permute(tl.from_numpy(np.ascontiguousarray(a.T)), *reversed(range(a.ndim))),
                            tl.from_numpy(b)), a + b)
    finally:
        lib.tl_set_grain_size(g)
        tl.set_num_threads(before)


def test_iter_compute_meta_only():
    a = _rt.empty(2, 1, 4, device="meta")
    b = _rt.empty(3, 1, device="meta")
    assert _rt.iter_compute(a, b) == ((2, 3, 4), tl.float32, (0, 1, 2))
    assert _rt.iter_compute(_rt.empty(2, dtype=tl.int32, device="meta"), 1.5)[1] is tl.float32
    with pytest.raises(RuntimeError, match="must match"):
        _rt.iter_compute(_rt.empty(2, device="meta"), _rt.empty(3, device="meta"))


def _random_view(rng, arr):
    """A torchlet view (and the numpy equivalent) of arr: permuted, sliced with
    positive steps or expanded, never negative strides."""
    base = np.ascontiguousarray(arr)
    t = tl.from_numpy(base)
    ref = base
    r = rng.random()
    if r < 0.3 and base.ndim >= 2:
        perm = list(rng.permutation(base.ndim))
        src = np.ascontiguousarray(base.transpose(np.argsort(perm)))
        t = _rt.permute(tl.from_numpy(src), *[int(p) for p in perm])
        ref = src.transpose(perm)
    elif r < 0.6 and base.ndim >= 1:
        steps = [int(rng.integers(1, 3)) for _ in range(base.ndim)]
        src = np.zeros(tuple(s * st for s, st in zip(base.shape, steps)), dtype=base.dtype)
        src[tuple(np.s_[::st] for st in steps)] = base
        t = tl.from_numpy(src)
        for d, st in enumerate(steps):
            t = _rt.slice(t, d, 0, None, st)
        ref = src[tuple(np.s_[::st] for st in steps)]
    return ref, t


@pytest.mark.parametrize("seed", range(150))
def test_iterator_fuzz_against_numpy(seed):
    rng = np.random.default_rng(1000 + seed)
    sa, sb = random_broadcast_shapes(rng)
    da, db = [ALL[int(i)] for i in rng.integers(0, len(ALL), 2)]
    if BF16 is None and tl.bfloat16 in (da, db):
        pytest.skip("ml_dtypes not installed")
    a = random_array(rng, sa, da, small=True)
    b = random_array(rng, sb, db, small=True)
    ra, ta = _random_view(rng, a)
    rb, tb = _random_view(rng, b)
    assert ta.dtype is da and tb.dtype is db
    want = PROMOTE[(da, db)]
    ref = np_add(np.asarray(ra), np.asarray(rb), want)
    mode = rng.integers(0, 3)
    if mode == 0:
        got = add(ta, tb)
    elif mode == 1:            # out= of the result shape, transposed layout when 2-D+
        out = _rt.empty(*ref.shape, dtype=want)
        if ref.ndim >= 2:
            out = _rt.transpose(_rt.empty(*(ref.shape[:-2] + ref.shape[-2:][::-1]), dtype=want), -1, -2)
        got = add(ta, tb, out=out)
        assert got is out
    else:                      # out= of a wider float dtype (allowed cast)
        out = _rt.empty(*ref.shape, dtype=tl.float64)
        got = add(ta, tb, out=out)
        ref = ref.astype(np.float64)
    assert_same(got, ref)
