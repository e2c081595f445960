"""Logical, bitwise and shift operators from ufunc formulas:
logical_and/or/xor/not (bool results; out= / in-place of any dtype get 1/0),
bitwise_and/or/xor/not (integers and bool; Tensor, Scalar and Scalar_Tensor
overloads), bitwise_left_shift / bitwise_right_shift (integers; PyTorch's rules
for negative and too-large shift counts) and the dunders & | ^ ~ << >> with
their reflected and in-place forms.

Every case is checked against numpy (always) and torch (when installed):
values and result dtypes over all dtypes and dtype pairs, Python scalars,
broadcasting, transposed / stepped views, 0-dim, empty, out= and in-place,
Meta tensors, and PyTorch's errors for floating inputs."""
import operator

import numpy as np
import pytest

import torchlet as tl
from torchlet import _rt

from ops_helpers import ALL, FLOATS, NAMES, needs_torch, np_of, tl_copy, torch, torch_copy

INTS = [tl.uint8, tl.int8, tl.int16, tl.int32, tl.int64]
NPDT = {tl.bool: np.bool_, tl.uint8: np.uint8, tl.int8: np.int8, tl.int16: np.int16, tl.int32: np.int32,
        tl.int64: np.int64, tl.float16: np.float16, tl.float32: np.float32, tl.float64: np.float64}
LOGICAL = {"logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor}
BITWISE = {"bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor}
KERNEL = {"bitwise_and": "bitwise_and_cpu", "bitwise_or": "bitwise_or_cpu", "bitwise_xor": "bitwise_xor_cpu",
          "bitwise_left_shift": "lshift_cpu", "bitwise_right_shift": "rshift_cpu"}


def rand(rng, shape, dt):
    """values with zeros among them (logical ops) and both signs"""
    if dt is tl.bool:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dt is tl.uint8:
        return rng.integers(0, 256, size=shape).astype(np.uint8)
    if dt in INTS:
        info = np.iinfo(NPDT[dt])
        v = rng.integers(max(info.min, -1000), min(info.max, 1000), size=shape, endpoint=True)
        return np.where(rng.random(shape) < 0.2, 0, v).astype(NPDT[dt])
    v = rng.integers(-4, 5, size=shape) / 2
    if rng.random() < 0.5:
        v.flat[:: max(1, v.size // 3)] = np.nan   # NaN counts as true
    return v.astype(np.float32 if dt is tl.bfloat16 else NPDT[dt])


T, N, TT = tl_copy, np_of, torch_copy


def same(got, want):
    """torchlet tensor against a numpy array (exact) or a torch tensor (dtype too)"""
    if torch is not None and isinstance(want, torch.Tensor):
        assert NAMES[got.dtype] == str(want.dtype).split(".")[-1], (got.dtype, want.dtype)
        want = want.float().numpy() if want.dtype == torch.bfloat16 else want.numpy()
    g = N(got)
    assert g.shape == np.shape(want), (g.shape, np.shape(want))
    np.testing.assert_array_equal(g, want)


def np_result(da, db):
    """torch.result_type of two tensors of these dtypes (through numpy for ints/bool)"""
    if da is db:
        return da
    r = np.result_type(NPDT[da], NPDT[db])
    return {v: k for k, v in NPDT.items()}[r.type]


# --------------------------------------------------------------- logical
@pytest.mark.parametrize("op", sorted(LOGICAL))
@pytest.mark.parametrize("da", ALL, ids=lambda d: NAMES[d])
def test_logical_all_dtype_pairs(op, da, cpu_capability):
    rng = np.random.default_rng(0)
    for db in ALL:
        a, b = rand(rng, (4, 9), da), rand(rng, (4, 9), db)
        r = getattr(tl, op)(T(a, da), T(b, db))
        assert r.dtype is tl.bool
        same(r, LOGICAL[op](a, b))
        if torch is not None:
            same(r, getattr(torch, op)(TT(a, da), TT(b, db)))


@pytest.mark.parametrize("dt", ALL, ids=lambda d: NAMES[d])
def test_logical_not_all_dtypes(dt, cpu_capability):
    a = rand(np.random.default_rng(1), (3, 1031), dt)   # longer than a float16 chunk, odd
    r = tl.logical_not(T(a, dt))
    same(r, np.logical_not(a))
    same(T(a, dt).logical_not(), np.logical_not(a))
    if torch is not None:
        same(r, torch.logical_not(TT(a, dt)))


@pytest.mark.parametrize("op", sorted(LOGICAL))
def test_logical_layouts(op, cpu_capability):
    rng = np.random.default_rng(2)
    a, b = rand(rng, (6, 5), tl.float32), rand(rng, (5,), tl.int32)
    ta, tb = T(a, tl.float32), T(b, tl.int32)
    f, g = getattr(tl, op), LOGICAL[op]
    same(f(ta, tb), g(a, b))                                           # broadcast
    same(f(tb, ta), g(b, a))
    same(f(_rt.transpose(ta, 0, 1), _rt.unsqueeze(tb, 1)), g(a.T, b[:, None]))
    same(f(_rt.slice(ta, 0, 1, 6, 2), tb), g(a[1::2], b))              # stepped
    same(f(_rt.select(_rt.select(ta, 0, 2), 0, 1), tb), g(a[2, 1], b))  # 0-dim with a vector
    z = f(_rt.select(_rt.select(ta, 0, 2), 0, 1), _rt.select(tb, 0, 3))
    assert tuple(z.shape) == () and bool(N(z)) == bool(g(a[2, 1], b[3]))
    assert tuple(f(_rt.slice(ta, 0, 0, 0, 1), tb).shape) == (0, 5)       # empty
    with pytest.raises(RuntimeError, match="must match the size"):
        f(ta, T(rand(rng, (4,), tl.int32), tl.int32))


@pytest.mark.parametrize("op", sorted(LOGICAL) + ["logical_not"])
def test_logical_out_and_inplace(op):
    rng = np.random.default_rng(3)
    a, b = rand(rng, (3, 4), tl.float32), rand(rng, (3, 4), tl.int64)
    unary = op == "logical_not"
    want = np.logical_not(a) if unary else LOGICAL[op](a, b)
    args = (T(a, tl.float32),) if unary else (T(a, tl.float32), T(b, tl.int64))
    for odt in (tl.bool, tl.float32, tl.int32, tl.float64, tl.uint8):   # any dtype gets 1/0
        out = _rt.empty(3, 4, dtype=odt)
        r = getattr(tl, op)(*args, out=out)
        assert r is out and out.dtype is odt
        same(out, want.astype(NPDT.get(odt, np.float32)))
        if torch is not None:
            tout = torch.empty(3, 4, dtype=getattr(torch, NAMES[odt]))
            getattr(torch, op)(*((TT(a, tl.float32),) if unary else (TT(a, tl.float32), TT(b, tl.int64))), out=tout)
            same(out, tout)
    # in-place on a float and on an int tensor: the receiver keeps its dtype
    for dt in (tl.float32, tl.int64):
        x = T(a if dt is tl.float32 else b, dt)
        v0 = x._version
        r = getattr(x, op + "_")() if unary else getattr(x, op + "_")(T(b, tl.int64) if dt is tl.float32 else T(a, tl.float32))
        assert r is x and x.dtype is dt and x._version > v0
        src = (a if dt is tl.float32 else b)
        w = np.logical_not(src) if unary else LOGICAL[op](src, b if dt is tl.float32 else a)
        same(x, w.astype(NPDT[dt]))
    # in-place cannot broadcast the receiver
    if not unary:
        with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
            getattr(T(b[0], tl.int64), op + "_")(T(a, tl.float32))


def test_logical_meta_and_grad():
    m = _rt.empty(2, 3, device="meta")
    r = tl.logical_and(m, _rt.empty(3, dtype=tl.int32, device="meta"))
    assert str(r.device) == "meta" and r.dtype is tl.bool and tuple(r.shape) == (2, 3)
    assert tl.logical_not(m).dtype is tl.bool
    # bool results are not differentiable: no error, no grad_fn
    x = tl.from_numpy(np.array([0.0, 1.5, -2.0])).requires_grad_()
    for r in (tl.logical_and(x, x), tl.logical_or(x, x), tl.logical_xor(x, x), tl.logical_not(x)):
        assert not r.requires_grad and r.grad_fn is None


# --------------------------------------------------------------- bitwise
@pytest.mark.parametrize("op", sorted(BITWISE))
@pytest.mark.parametrize("da", INTS + [tl.bool], ids=lambda d: NAMES[d])
def test_bitwise_integer_dtype_pairs(op, da, cpu_capability):
    rng = np.random.default_rng(4)
    for db in INTS + [tl.bool]:
        a, b = rand(rng, (5, 7), da), rand(rng, (5, 7), db)
        r = getattr(tl, op)(T(a, da), T(b, db))
        rdt = np_result(da, db)
        assert r.dtype is rdt
        same(r, BITWISE[op](a.astype(NPDT[rdt]), b.astype(NPDT[rdt])))
        if torch is not None:
            same(r, getattr(torch, op)(TT(a, da), TT(b, db)))


@pytest.mark.parametrize("op", sorted(BITWISE))
def test_bitwise_scalars_and_dunders(op):
    rng = np.random.default_rng(5)
    a = rand(rng, (4, 6), tl.int32)
    ta = T(a, tl.int32)
    f, g = getattr(tl, op), BITWISE[op]
    dunder = {"bitwise_and": operator.and_, "bitwise_or": operator.or_, "bitwise_xor": operator.xor}[op]
    idunder = {"bitwise_and": operator.iand, "bitwise_or": operator.ior, "bitwise_xor": operator.ixor}[op]
    for s in (5, -3, True, 1 << 20):
        w = g(a, np.int32(s))
        same(f(ta, s), w)                       # Tensor, Scalar: the int32 tensor keeps its dtype
        same(getattr(ta, op)(s), w)
        same(f(s, ta), w)                       # Scalar_Tensor
        same(dunder(ta, s), w)
        same(dunder(s, ta), w)                  # __rand__ ...
        x = T(a, tl.int32)
        assert idunder(x, s) is x
        same(x, w)
        y = T(a, tl.int32)
        assert getattr(y, op + "_")(s) is y
        same(y, w)
        out = _rt.empty(0, dtype=tl.int32)
        assert f(ta, s, out=out) is out          # Scalar_out (an empty out= is resized silently)
        same(out, w)
        out2 = _rt.empty(0, dtype=tl.int32)
        assert f(s, ta, out=out2) is out2         # Scalar_Tensor_out (PyTorch's autogen entry)
        same(out2, w)
        if torch is not None:
            same(f(ta, s), getattr(torch, op)(TT(a, tl.int32), s))
            same(f(s, ta), getattr(torch, op)(s, TT(a, tl.int32)))
    # bool tensor with a bool scalar stays bool; with an int it becomes int64
    bt = T(np.array([True, False, True]), tl.bool)
    assert f(bt, True).dtype is tl.bool and f(bt, 3).dtype is tl.int64
    # uint8 with -1: the wrapped number does not promote (-1 wraps to 255)
    same(f(T(np.array([1, 2, 255], np.uint8), tl.uint8), -1), g(np.array([1, 2, 255], np.uint8), np.uint8(255)))
    # dunder with a non-number gives Python's TypeError
    with pytest.raises(TypeError):
        dunder(ta, "x")


@pytest.mark.parametrize("op", sorted(BITWISE) + ["bitwise_left_shift", "bitwise_right_shift"])
def test_bitwise_refuses_floats(op):
    """PyTorch's CPU kernels have no floating loops; shifts have no bool loop either"""
    kernel = KERNEL[op]
    f = getattr(tl, op)
    for dt in FLOATS:
        x = T(np.array([1.0, 2.0]), dt)
        with pytest.raises(NotImplementedError, match=f'"{kernel}" not implemented for \'{NAMES_PT[dt]}\''):
            f(x, x)
    with pytest.raises(NotImplementedError, match=f'"{kernel}" not implemented for \'Float\''):
        f(T(np.array([1, 2]), tl.int64), 1.5)    # the float number promotes
    if torch is not None:
        with pytest.raises(NotImplementedError, match=f'"{kernel}" not implemented for \'Float\''):
            getattr(torch, op)(torch.tensor([1, 2]), 1.5)
    b = T(np.array([True, False]), tl.bool)
    if "shift" in op:
        with pytest.raises(NotImplementedError, match=f'"{kernel}" not implemented for \'Bool\''):
            f(b, b)
    else:
        same(f(b, b), BITWISE[op](np.array([True, False]), np.array([True, False])))
    # nothing is computed on Meta tensors, so nothing is refused there (shapes only)
    m = _rt.empty(2, 3, device="meta")
    assert tuple(f(m, m).shape) == (2, 3)


NAMES_PT = {tl.float16: "Half", tl.bfloat16: "BFloat16", tl.float32: "Float", tl.float64: "Double"}


@pytest.mark.parametrize("dt", INTS + [tl.bool], ids=lambda d: NAMES[d])
def test_bitwise_not(dt, cpu_capability):
    a = rand(np.random.default_rng(6), (3, 257), dt)
    want = np.invert(a)
    same(tl.bitwise_not(T(a, dt)), want)
    same(~T(a, dt), want)
    same(_rt.transpose(T(a, dt), 0, 1).bitwise_not(), want.T)
    x = T(a, dt)
    assert x.bitwise_not_() is x
    same(x, want)
    out = _rt.empty(3, 257, dtype=dt)
    tl.bitwise_not(T(a, dt), out=out)
    same(out, want)
    if torch is not None:
        same(tl.bitwise_not(T(a, dt)), torch.bitwise_not(TT(a, dt)))
    with pytest.raises(RuntimeError, match="Found dtype"):
        tl.bitwise_not(T(a, dt), out=_rt.empty(3, 257, dtype=tl.float32))


def test_bitwise_not_refuses_floats():
    for dt in FLOATS:
        with pytest.raises(NotImplementedError, match=f'"bitwise_not_cpu" not implemented for \'{NAMES_PT[dt]}\''):
            tl.bitwise_not(T(np.array([1.0]), dt))
    if torch is not None:
        with pytest.raises(NotImplementedError, match='"bitwise_not_cpu" not implemented for \'Float\''):
            torch.bitwise_not(torch.tensor([1.0]))
        with pytest.raises(TypeError, match="only implemented on integer and Boolean-type tensors"):
            ~torch.tensor([1.0])
    with pytest.raises(TypeError, match="only implemented on integer and Boolean-type tensors"):
        ~T(np.array([1.0]), tl.float32)


@pytest.mark.parametrize("op", sorted(BITWISE))
def test_bitwise_layouts(op, cpu_capability):
    rng = np.random.default_rng(7)
    a, b = rand(rng, (6, 5), tl.int16), rand(rng, (5,), tl.int64)
    ta, tb = T(a, tl.int16), T(b, tl.int64)
    f, g = getattr(tl, op), BITWISE[op]
    same(f(ta, tb), g(a.astype(np.int64), b))
    same(f(_rt.transpose(ta, 0, 1), _rt.unsqueeze(tb, 1)), g(a.T.astype(np.int64), b[:, None]))
    same(f(_rt.slice(ta, 0, 1, 6, 2), tb), g(a[1::2].astype(np.int64), b))
    # a 0-dim tensor promotes like a scalar of its category: int16 stays int16
    z = _rt.select(tb, 0, 2)
    r = f(ta, z)
    assert r.dtype is tl.int16
    same(r, g(a, np.int16(b[2])))
    assert tuple(f(_rt.slice(ta, 0, 0, 0, 1), tb).shape) == (0, 5)
    # out= of another integer dtype takes the cast result (torch's canCast); bool cannot hold it
    out = _rt.empty(6, 5, dtype=tl.int64)
    f(ta, tb, out=out)
    same(out, g(a.astype(np.int64), b))
    out16 = _rt.empty(6, 5, dtype=tl.int16)
    f(ta, tb, out=out16)
    same(out16, g(a.astype(np.int64), b).astype(np.int16))
    with pytest.raises(RuntimeError, match="result type Long can't be cast to the desired output type Bool"):
        f(ta, tb, out=_rt.empty(6, 5, dtype=tl.bool))


# --------------------------------------------------------------- shifts
def np_shift(op, a, b):
    """PyTorch's rule: a count that is negative (as the signed type) or >= the
    bit width gives 0 for <<, and the sign fill for >> (0 for uint8)"""
    bits = a.dtype.itemsize * 8
    signed = a.dtype.kind == "i"
    sb = b.astype(np.dtype(f"i{a.dtype.itemsize}")).astype(np.int64)
    out = np.empty_like(a)
    for i, (x, s) in enumerate(zip(a.ravel().tolist(), sb.ravel().tolist())):
        if op == "bitwise_left_shift":
            v = 0 if (s < 0 or s >= bits) else (x << s)
        else:
            m = bits - 1 if signed else bits
            v = (x >> m) if (s < 0 or s >= m) else (x >> s)
        out.flat[i] = np.array(v & ((1 << bits) - 1), np.uint64).astype(f"u{a.dtype.itemsize}").view(a.dtype)
    return out


@pytest.mark.parametrize("op", ["bitwise_left_shift", "bitwise_right_shift"])
@pytest.mark.parametrize("dt", INTS, ids=lambda d: NAMES[d])
def test_shift_counts(op, dt, cpu_capability):
    rng = np.random.default_rng(8)
    bits = np.dtype(NPDT[dt]).itemsize * 8
    a = rand(rng, (3, 40), dt)
    lo = 0 if dt is tl.uint8 else -3
    b = rng.integers(lo, min(bits + 4, 127), size=(3, 40)).astype(NPDT[dt])
    b[0, :4] = [0, 1, bits - 1, bits - 1]
    if dt is tl.uint8:
        b[0, 4] = 200    # negative as int8
    r = getattr(tl, op)(T(a, dt), T(b, dt))
    assert r.dtype is dt
    same(r, np_shift(op, a, b))
    if torch is not None:
        same(r, getattr(torch, op)(TT(a, dt), TT(b, dt)))


def test_shift_scalars_and_dunders():
    a = np.array([[1, -8, 100], [7, 0, -1]], np.int64)
    ta = T(a, tl.int64)
    same(ta << 2, a << 2)
    same(ta >> 1, a >> 1)
    same(3 << ta, np_shift("bitwise_left_shift", np.full_like(a, 3), a))    # __rlshift__
    same(256 >> T(np.abs(a) % 9, tl.int64), 256 >> (np.abs(a) % 9))        # __rrshift__
    same(tl.bitwise_left_shift(ta, 3), a << 3)
    same(ta.bitwise_right_shift(2), a >> 2)
    same(tl.bitwise_left_shift(2, T(np.array([0, 1, 5]), tl.int64)), np.array([2, 4, 64]))   # Scalar_Tensor
    o3 = _rt.empty(3, dtype=tl.int64)
    assert tl.bitwise_right_shift(64, T(np.array([0, 1, 5]), tl.int64), out=o3) is o3        # Scalar_Tensor_out
    same(o3, np.array([64, 32, 2]))
    x = T(a, tl.int64)
    x <<= 1
    same(x, a << 1)
    x >>= 2
    same(x, (a << 1) >> 2)
    y = T(a, tl.int64)
    assert y.bitwise_left_shift_(1) is y and y.bitwise_right_shift_(T(np.array([1]), tl.int64)) is y
    same(y, (a << 1) >> 1)
    out = _rt.empty(2, 3, dtype=tl.int64)
    assert tl.bitwise_right_shift(ta, 1, out=out) is out
    same(out, a >> 1)
    # a bool tensor shifted by an int: int64 (bool + int promotes)
    same(T(np.array([True, False]), tl.bool) << 1, np.array([2, 0]))
    # int8: the wrapped number does not promote; shifting wraps
    same(T(np.array([3, -1], np.int8), tl.int8) << 7, np.array([-128, -128], np.int8))
    if torch is not None:
        t = TT(a, tl.int64)
        same(ta << 2, t << 2)
        same(3 << ta, 3 << t)
        same(256 >> T(np.abs(a) % 9, tl.int64), 256 >> torch.from_numpy(np.abs(a) % 9))
        same(T(np.array([3, -1], np.int8), tl.int8) << 7, torch.tensor([3, -1], dtype=torch.int8) << 7)
    with pytest.raises(NotImplementedError, match='"lshift_cpu" not implemented for \'Float\''):
        T(np.array([1.0]), tl.float32) << 1
    with pytest.raises(NotImplementedError, match='"rshift_cpu" not implemented for \'Float\''):
        2.0 >> ta


def test_meta_bitwise():
    m = _rt.empty(4, 1, dtype=tl.int32, device="meta")
    r = tl.bitwise_xor(m, _rt.empty(3, dtype=tl.int64, device="meta"))
    assert str(r.device) == "meta" and r.dtype is tl.int64 and tuple(r.shape) == (4, 3)
    assert (m << 2).dtype is tl.int32 and tuple(tl.bitwise_not(m).shape) == (4, 1)


@needs_torch
def test_dunders_against_torch_random():
    rng = np.random.default_rng(9)
    for da in INTS + [tl.bool]:
        a, b = rand(rng, (7,), da), rand(rng, (7,), tl.int64)
        for fn in (operator.and_, operator.or_, operator.xor):
            same(fn(T(a, da), T(b, tl.int64)), fn(TT(a, da), TT(b, tl.int64)))
            same(fn(T(a, da), 6), fn(TT(a, da), 6))
