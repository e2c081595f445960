"""Pointwise math: pow (Tensor_Tensor / Tensor_Scalar /
Scalar), floor_divide, remainder, fmod, atan2, asin, acos, atan, sinh, cosh,
round (+ decimals), logit (+ logit_backward), nan_to_num, isnan, isinf,
isfinite -- functional, in-place, out=, the `**` `//` `%` dunders.

Against numpy always (values and result dtypes from PyTorch's rules, written
down here) and against torch when installed (values, dtypes, error types and
messages): all dtypes and dtype pairs, Python scalars, broadcasting, transposed
and stepped views, 0-dim, empty, special values (inf, NaN, -0.0, zero
divisors), integer wrap-around, Meta tensors; kernel tests run once per CPU
capability level (the cpu_capability fixture)."""
import operator
import re
import warnings

import numpy as np
import pytest

import torchlet as tl
from torchlet import _rt

from ops_helpers import ALL, BF16, FLOATS, NAMES, needs_torch, torch

NPT = {tl.bool: np.bool_, tl.uint8: np.uint8, tl.int8: np.int8, tl.int16: np.int16, tl.int32: np.int32,
       tl.int64: np.int64, tl.float16: np.float16, tl.float32: np.float32, tl.float64: np.float64}
INTS = [tl.uint8, tl.int8, tl.int16, tl.int32, tl.int64]
UNARY_FLOAT = ["asin", "acos", "atan", "sinh", "cosh"]
NP_UNARY = {"asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh}


def T(a, dt):
    """a torchlet copy of a (never aliases a)"""
    if dt is tl.bfloat16:
        return _rt.to(tl.from_numpy(np.ascontiguousarray(a, np.float32)), dtype=dt)
    return _rt.to(tl.from_numpy(np.array(a, copy=True, order="C")), dtype=dt)


def TT(a, dt):
    t = torch.from_numpy(np.ascontiguousarray(a).astype(np.float32 if dt is tl.bfloat16 else np.asarray(a).dtype))
    return t.to(getattr(torch, NAMES[dt]))


def np_of(t):
    x = t.numpy()
    return x.astype(np.float32) if BF16 is not None and x.dtype == BF16 else np.asarray(x)


def torch_np(t):
    return t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy()


TOL = {tl.float16: 2e-3, tl.bfloat16: 1.6e-2, tl.float32: 2e-6, tl.float64: 1e-13}


def close(got, want, dt=None, rtol=None):
    """got: torchlet tensor; want: numpy array -- floats within the result dtype's
    tolerance (NaN where want is NaN, infinities equal), integers and bools exact"""
    g = np_of(got)
    want = np.asarray(want)
    assert g.shape == want.shape, (g.shape, want.shape)
    if g.dtype.kind == "f":
        tol = rtol if rtol is not None else TOL[dt or got.dtype]
        with np.errstate(all="ignore"):
            np.testing.assert_allclose(g, want.astype(g.dtype), rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(g, want)


def check(got, want_t, rtol=None):
    """got: torchlet tensor; want_t: torch tensor (dtype and values)"""
    assert NAMES[got.dtype] == str(want_t.dtype).split(".")[-1], (got.dtype, want_t.dtype)
    close(got, torch_np(want_t), rtol=rtol)


def agree(tl_call, torch_call, rtol=None):
    """torchlet gives torch's values and dtype, or raises torch's error type and
    message (the loops' names too: '"remainder_cpu" not implemented for 'Bool'').
    True if torch computed."""
    try:
        want = torch_call()
    except (RuntimeError, NotImplementedError) as e:
        msg = str(e).splitlines()[0]
        with pytest.raises(type(e), match="^" + re.escape(msg)):
            tl_call()
        return False
    check(tl_call(), want, rtol)
    return True


def rand(rng, shape, dt, lo=-5, hi=6):
    if dt is tl.bool:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dt is tl.uint8:
        return rng.integers(0, hi, size=shape).astype(np.uint8)
    if dt in INTS:
        return rng.integers(lo, hi, size=shape).astype(NPT[dt])
    v = rng.uniform(lo, hi, size=shape)
    if dt is tl.bfloat16:
        return v.astype(np.float32).astype(BF16).astype(np.float32)
    return v.astype(NPT[dt])


def nonzero(rng, shape, dt):
    """divisors: no zero, both signs"""
    a = rand(rng, shape, dt, -4, 5)
    if dt is tl.bool:
        return np.ones(shape, np.bool_)
    a = np.where(a == 0, 3, a).astype(a.dtype)
    if dt not in INTS:
        a = np.where(np.abs(a) < 0.25, 1.5, a).astype(a.dtype)
    return a


# ============================================================ numpy references
def np_pow(a, b, rdt):
    """pow in the result dtype: integers exact with PyTorch's negative-exponent rule"""
    if rdt in INTS:
        a64, b64 = np.broadcast_arrays(np.asarray(a).astype(np.int64), np.asarray(b).astype(np.int64))
        out = np.empty(a64.shape, np.int64)
        for i, (x, e) in enumerate(zip(a64.ravel(), b64.ravel())):
            if e < 0:
                out.flat[i] = 1 if x == 1 else ((-1 if e % 2 else 1) if x == -1 else 0)
            else:
                out.flat[i] = np.int64(pow(int(x), int(e), 2 ** 64) - (2 ** 64 if pow(int(x), int(e), 2 ** 64) >= 2 ** 63 else 0))
        return out.astype(NPT[rdt])
    with np.errstate(all="ignore"):
        return np.power(np.asarray(a, np.float64), np.asarray(b, np.float64))


def np_remainder(a, b):
    with np.errstate(all="ignore"):
        return np.remainder(a, b)


def np_fmod(a, b):
    with np.errstate(all="ignore"):
        return np.fmod(a, b)


def np_floor_divide(a, b):
    with np.errstate(all="ignore"):
        return np.floor_divide(a, b)


def result_type(da, db):
    """PyTorch's promotion of two tensors of the same rank (== torch.promote_types)"""
    order = ALL
    if da == db:
        return da
    fl = {da, db} & set(FLOATS)
    if fl:
        if len(fl) == 2:
            if fl == {tl.float16, tl.bfloat16}:
                return tl.float32
            return max(fl, key=order.index)
        return fl.pop()
    if tl.bool in (da, db):
        return db if da is tl.bool else da
    if {da, db} == {tl.uint8, tl.int8}:
        return tl.int16
    if tl.uint8 in (da, db):
        other = db if da is tl.uint8 else da
        return other
    return max((da, db), key=order.index)


BINARY = {"pow": np_pow, "remainder": np_remainder, "fmod": np_fmod, "floor_divide": np_floor_divide,
          "atan2": lambda a, b: np.arctan2(np.asarray(a, np.float64), np.asarray(b, np.float64))}


def binary_result(op, da, db):
    r = result_type(da, db)
    if op == "atan2" and r not in FLOATS:
        return tl.float32
    return r


def refused(op, rdt):
    """dtypes a binary op has no loop for (PyTorch too)"""
    if rdt is tl.bool:
        return op != "atan2"
    return False


def binary_ref(op, a, b, rdt):
    if op == "pow":
        return np_pow(a, b, rdt)
    if rdt in INTS:
        x, y = np.asarray(a).astype(np.int64), np.asarray(b).astype(np.int64)
        return BINARY[op](x, y).astype(NPT[rdt])
    return BINARY[op](np.asarray(a, np.float64), np.asarray(b, np.float64))


def binary_inputs(rng, op, shape, da, db):
    a = rand(rng, shape, da)
    if op == "pow":
        b = rand(rng, shape, db, -3, 4) if db in INTS or db is tl.bool else rand(rng, shape, db, -2.5, 2.5)
        if da not in FLOATS and db not in FLOATS:
            b = np.abs(b).astype(b.dtype)   # integer results: exact, non-negative exponents
        if da in FLOATS:
            a = np.abs(a).astype(a.dtype) + (0.5 if da is not tl.bfloat16 else 0.5)   # real results
        return a, b
    if op in ("remainder", "fmod", "floor_divide"):
        return a, nonzero(rng, shape, db)
    return a, rand(rng, shape, db)


def binary_tol(op, rdt):
    if op == "pow" and rdt is tl.float16:
        return 4e-3     # half-float powers of large bases
    return None


# ============================================================ binary ops: dtype pairs
@pytest.mark.parametrize("op", list(BINARY))
@pytest.mark.parametrize("da", ALL, ids=lambda d: NAMES[d])
def test_binary_dtype_pairs_vs_numpy(op, da, cpu_capability):
    rng = np.random.default_rng(hash((op, NAMES[da])) % 2**32)
    for db in ALL:
        if BF16 is None and tl.bfloat16 in (da, db):
            continue
        rdt = binary_result(op, da, db)
        a, b = binary_inputs(rng, op, (3, 17), da, db)
        if refused(op, rdt):
            with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
                getattr(tl, op)(T(a, da), T(b, db))
            continue
        r = getattr(tl, op)(T(a, da), T(b, db))
        assert r.dtype is rdt, (op, da, db, r.dtype)
        # inputs rounded to the computation dtype first, as the kernels see them
        ca = np_of(T(a, da).to(rdt)) if rdt in FLOATS else a
        cb = np_of(T(b, db).to(rdt)) if rdt in FLOATS else b
        close(r, binary_ref(op, ca, cb, rdt), rtol=binary_tol(op, rdt))


@needs_torch
@pytest.mark.parametrize("op", list(BINARY))
@pytest.mark.parametrize("da", ALL, ids=lambda d: NAMES[d])
def test_binary_dtype_pairs_vs_torch(op, da):
    rng = np.random.default_rng(hash((op, NAMES[da], 1)) % 2**32)
    for db in ALL:
        a, b = binary_inputs(rng, op, (4, 9), da, db)
        agree(lambda: getattr(tl, op)(T(a, da), T(b, db)), lambda: getattr(torch, op)(TT(a, da), TT(b, db)),
              binary_tol(op, binary_result(op, da, db)))


@needs_torch
@pytest.mark.parametrize("op", list(BINARY))
@pytest.mark.parametrize("dt", [tl.float32, tl.float64, tl.int64, tl.int32, tl.uint8, tl.bfloat16, tl.float16])
def test_binary_layouts_vs_torch(op, dt, cpu_capability):
    rng = np.random.default_rng(5)
    a, b = binary_inputs(rng, op, (30, 41), dt, dt)
    ta, tb, xa, xb = T(a, dt), T(b, dt), TT(a, dt), TT(b, dt)
    f, g = getattr(tl, op), getattr(torch, op)
    tol = binary_tol(op, dt)
    check(f(_rt.transpose(ta, 0, 1), _rt.transpose(tb, 0, 1)), g(xa.T, xb.T), tol)
    check(f(_rt.slice(ta, 0, 1, 30, 3), _rt.slice(tb, 0, 0, 30, 3)), g(xa[1::3], xb[::3]), tol)
    check(f(ta, _rt.select(tb, 0, 2)), g(xa, xb[2]), tol)                 # broadcast row
    check(f(_rt.slice(ta, 1, 0, 1, 1), tb), g(xa[:, :1], xb), tol)        # broadcast column
    check(f(_rt.select(_rt.select(ta, 0, 1), 0, 2), tb), g(xa[1, 2], xb), tol)   # 0-dim tensor operand
    z = f(_rt.select(_rt.select(ta, 0, 1), 0, 2), _rt.select(_rt.select(tb, 0, 3), 0, 4))
    assert tuple(z.shape) == ()
    check(z, g(xa[1, 2], xb[3, 4]), tol)
    e = f(_rt.slice(ta, 0, 0, 0, 1), _rt.select(tb, 0, 0))     # empty, broadcast against a row
    assert tuple(e.shape) == (0, 41)
    # long, odd length: vector body, tails, the float16/bfloat16 conversion chunks
    a2, b2 = binary_inputs(rng, op, (1031,), dt, dt)
    check(f(T(a2, dt), T(b2, dt)), g(TT(a2, dt), TT(b2, dt)), tol)


# ============================================================ Python scalars
SCALARS = [2, -3, 2.5, -0.75, True]


@pytest.mark.parametrize("op", ["remainder", "fmod", "floor_divide", "pow"])
@pytest.mark.parametrize("dt", [tl.bool, tl.uint8, tl.int32, tl.int64, tl.float16, tl.float32, tl.float64])
def test_tensor_scalar_vs_numpy(op, dt):
    rng = np.random.default_rng(8)
    a = rand(rng, (4, 5), dt)
    if op == "pow" and dt in FLOATS:
        a = np.abs(a).astype(a.dtype) + 0.5
    for s in SCALARS:
        if op == "pow" and dt in INTS + [tl.bool] and isinstance(s, int) and not isinstance(s, bool) and s < 0:
            with pytest.raises(RuntimeError, match=r"^Integers to negative integer powers are not allowed\.$"):
                tl.pow(T(a, dt), s)
            continue
        if isinstance(s, bool):
            rdt = dt if dt is not tl.bool else tl.bool
        elif isinstance(s, int):
            rdt = dt if dt is not tl.bool else tl.int64
        else:
            rdt = dt if dt in FLOATS else tl.float32
        if rdt is tl.bool and op != "pow":
            with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
                getattr(tl, op)(T(a, dt), s)
            continue
        r = getattr(tl, op)(T(a, dt), s)
        assert r.dtype is rdt, (op, dt, s, r.dtype)
        ca = np_of(T(a, dt).to(rdt)) if rdt in FLOATS else a
        if op == "pow" and rdt is tl.bool:
            want = a if s else np.ones_like(a)
        else:
            # the number converted to the result dtype first (uint8 % -3 divides by 253, as PyTorch)
            want = binary_ref(op, ca, np.float64(s) if rdt in FLOATS else np.array(s).astype(NPT[rdt]), rdt)
        close(r, want, rtol=binary_tol(op, rdt))


@needs_torch
@pytest.mark.parametrize("op", ["remainder", "fmod", "floor_divide", "pow", "atan2"])
@pytest.mark.parametrize("dt", ALL, ids=lambda d: NAMES[d])
def test_tensor_scalar_vs_torch(op, dt):
    rng = np.random.default_rng(9)
    a = rand(rng, (3, 6), dt)
    if op == "pow" and dt in FLOATS:
        a = np.abs(a).astype(a.dtype) + 0.5
    for s in SCALARS + [0, 1, 0.5, -0.5, -1.0, -2.0, 3, 2.0]:
        if op == "atan2":   # no Scalar overload in PyTorch: a 0-dim tensor
            s_t, s_l = torch.tensor(s), tl.tensor(s)
        else:
            s_t = s_l = s
        agree(lambda: getattr(tl, op)(T(a, dt), s_l), lambda: getattr(torch, op)(TT(a, dt), s_t),
              binary_tol(op, dt))


@needs_torch
@pytest.mark.parametrize("dt", ALL, ids=lambda d: NAMES[d])
def test_scalar_tensor_overloads_vs_torch(dt):
    """pow.Scalar (number ** tensor) and remainder.Scalar_Tensor (number % tensor)"""
    rng = np.random.default_rng(10)
    e = rand(rng, (3, 5), dt, -2, 4)
    d = nonzero(rng, (3, 5), dt)
    for base in [2, -3, 2.5, 1, 1.0, 0, 0.0, True]:
        if agree(lambda: tl.pow(base, T(e, dt)), lambda: torch.pow(base, TT(e, dt))):
            check(base ** T(e, dt), base ** TT(e, dt))        # __rpow__
        if agree(lambda: tl.remainder(base, T(d, dt)), lambda: torch.remainder(base, TT(d, dt))):
            check(base % T(d, dt), base % TT(d, dt))          # __rmod__
            check(base // T(d, dt), base // TT(d, dt))        # __rfloordiv__


# ============================================================ pow specifics
@pytest.mark.parametrize("e", [0, 1, 2, 3, -1, -2, 0.5, -0.5, 2.5, -1.5, 0.0, 1.0, 2.0, 3.0, -3])
@pytest.mark.parametrize("dt", [tl.float16, tl.bfloat16, tl.float32, tl.float64])
def test_pow_tensor_scalar_fast_paths_vs_numpy(e, dt, cpu_capability):
    """the exponents with a fast path (2, 3, -2, 0.5, -0.5, -1) and the general loop"""
    if dt is tl.bfloat16 and BF16 is None:
        pytest.skip("ml_dtypes not installed")
    rng = np.random.default_rng(12)
    a = rand(rng, (3, 67), dt, 0.1, 4)
    a[0, :6] = [0.0, np.inf, np.nan, 1.0, 4.0, 0.25]
    a = np_of(T(a, dt)).astype(np.float64)
    r = tl.pow(T(a, dt), e)
    assert r.dtype is dt
    with np.errstate(all="ignore"):
        want = np.power(a, np.float64(e))
    close(r, want, dt)
    # negative bases: NaN for a fractional exponent, signed for integer ones
    neg = -np.abs(a[1])
    with np.errstate(all="ignore"):
        close(tl.pow(T(neg, dt), e), np.power(neg, np.float64(e)), dt)


def test_pow_exponent_0_1_fill_and_copy():
    """PyTorch's pow_Tensor_Scalar_out: exponent 0 fills 1 (NaN ** 0 is 1), 1 copies
    self converted to the result / out= dtype; in place, strided, empty, Meta"""
    a = np.array([[1.5, -2.0, np.nan], [np.inf, -0.0, 3.0]], np.float32)
    for e in (0, 0.0, False, -0.0):
        np.testing.assert_array_equal(np_of(tl.pow(T(a, tl.float32), e)), np.ones((2, 3), np.float32))
    for e in (1, 1.0, True):
        np.testing.assert_array_equal(np_of(tl.pow(T(a, tl.float32), e)), a)
    i = np.array([[3, -4, 5]], np.int64)
    r = tl.pow(T(i, tl.int64), 1.0)   # int ** 1.0: float32, as result_type(int, 1.0)
    assert r.dtype is tl.float32
    np.testing.assert_array_equal(np_of(r), i.astype(np.float32))
    out = T(np.zeros((1, 3)), tl.float64)
    tl.pow(T(i, tl.int64), 1, out=out)
    np.testing.assert_array_equal(np_of(out), i.astype(np.float64))
    tl.pow(T(i, tl.int64), 0, out=out)
    np.testing.assert_array_equal(np_of(out), np.ones((1, 3)))
    t = T(a, tl.float32)
    t.pow_(1)
    np.testing.assert_array_equal(np_of(t), a)
    t.t().pow_(0)   # a transposed view in place
    np.testing.assert_array_equal(np_of(t), np.ones((2, 3), np.float32))
    s = T(a, tl.float32)[:, ::2]
    np.testing.assert_array_equal(np_of(tl.pow(s, 1)), a[:, ::2])
    assert tl.pow(T(np.zeros((0, 3)), tl.float32), 1).shape == (0, 3)
    m = tl.pow(_rt.empty(2, 3, device="meta"), 0)
    assert m.shape == (2, 3) and m.device.type == "meta"


@pytest.mark.parametrize("dt", [tl.float32, tl.float64])
def test_pow_negative_bases_vs_numpy(dt, cpu_capability):
    """the float pow loop takes |x| to the vector pow and puts the sign back:
    odd / even integer exponents, fractional ones (NaN), -0.0, -inf, NaN, +-1
    with inf / NaN exponents, huge odd and even exponents; random mixed signs"""
    sp = np.array([0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0, np.inf, -np.inf, np.nan,
                   2.5, -2.5, 1e-3, -1e-3, 16777216.0, 16777215.0, -16777215.0, 7.0, -7.0], np.float64)
    a, b = np.meshgrid(sp, sp)
    rng = np.random.default_rng(5)
    a = np.concatenate([a.ravel(), rng.standard_normal(3000) * 3]).astype(NPT[dt])
    b = np.concatenate([b.ravel(), rng.integers(-6, 7, 3000) + (rng.random(3000) < 0.2) * 0.5]).astype(NPT[dt])
    with np.errstate(all="ignore"):
        want = np.power(a.astype(np.float64), b.astype(np.float64)).astype(NPT[dt])
    got = np_of(tl.pow(T(a, dt), T(b, dt)))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.signbit(got[~np.isnan(want)]), np.signbit(want[~np.isnan(want)]))
    close(tl.pow(T(a, dt), T(b, dt)), want, dt)
    close(tl.pow(T(a, dt), 3.0), np.power(a.astype(np.float64), 3.0), dt)


@needs_torch
@pytest.mark.parametrize("e", [0, 1, 2, 3, -1, -2, 0.5, -0.5, 2.5, -1.5, 3.0, -3, True, False])
@pytest.mark.parametrize("dt", ALL, ids=lambda d: NAMES[d])
def test_pow_tensor_scalar_vs_torch(e, dt):
    rng = np.random.default_rng(13)
    a = rand(rng, (5, 13), dt, -4, 5)
    a.flat[:3] = [0, 1, 2] if dt is not tl.bool else [0, 1, 1]
    if dt in FLOATS:
        a.flat[3:8] = [-0.0, np.inf, -np.inf, np.nan, -2.0]
    if agree(lambda: tl.pow(T(a, dt), e), lambda: torch.pow(TT(a, dt), e)):
        check(T(a, dt) ** e, TT(a, dt) ** e)                    # __pow__
    else:
        with pytest.raises(RuntimeError, match=r"^Integers to negative integer powers are not allowed\.$"):
            tl.pow(T(a, dt), e)
        return
    check(T(a, dt).pow(e), TT(a, dt).pow(e))                    # method


def test_integer_pow_exact_and_wrapping():
    a = np.array([3, -3, 7, 2, -2, 0, 1, -1, 10], np.int64)
    b = np.array([39, 39, 22, 63, 63, 0, 100, 101, 3], np.int64)
    got = np_of(tl.pow(tl.from_numpy(a), tl.from_numpy(b)))
    np.testing.assert_array_equal(got, np_pow(a, b, tl.int64))    # exact, wraps like int64 multiplication
    assert got[3] == -(2 ** 63) and got[4] == -(2 ** 63)
    # negative integer exponents in a tensor: PyTorch's powi (1, +-1, else 0)
    x = np.array([1, -1, -1, 2, -2, 5], np.int8)
    y = np.array([-3, -3, -2, -1, -1, -7], np.int8)
    np.testing.assert_array_equal(np_of(tl.pow(tl.from_numpy(x), tl.from_numpy(y))), [1, -1, 1, 0, 0, 0])
    # narrow integers wrap in their own width
    u = np.array([2, 3, 255], np.uint8)
    np.testing.assert_array_equal(np_of(tl.pow(tl.from_numpy(u), 9)), (u.astype(np.int64) ** 9) % 256)
    i8 = np.array([3, -3, 2], np.int8)
    np.testing.assert_array_equal(np_of(tl.pow(tl.from_numpy(i8), 5)),
                                  ((i8.astype(np.int64) ** 5 + 128) % 256 - 128).astype(np.int8))
    for dt in INTS + [tl.bool]:
        with pytest.raises(RuntimeError, match=r"^Integers to negative integer powers are not allowed\.$"):
            tl.pow(T(np.array([1, 2]), dt), -1)


def test_pow_dtype_rules():
    i = tl.tensor([2, 3])
    b = tl.tensor([True, False])
    assert tl.pow(i, 2).dtype is tl.int64
    assert tl.pow(i, 2.5).dtype is tl.float32
    assert tl.pow(b, 2).dtype is tl.int64
    assert tl.pow(b, True).dtype is tl.bool
    np.testing.assert_array_equal(np_of(tl.pow(b, False)), [True, True])
    np.testing.assert_array_equal(np_of(tl.pow(b, True)), [True, False])
    assert tl.pow(2, i).dtype is tl.int64 and tl.pow(2.5, i).dtype is tl.float32
    assert tl.pow(i, tl.tensor(2.5)).dtype is tl.float32
    assert tl.pow(tl.tensor([1.5], dtype=tl.float16), tl.tensor([2.0], dtype=tl.bfloat16)).dtype is tl.float32
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        tl.pow(b, b)
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        tl.pow(True, b)
    np.testing.assert_array_equal(np_of(tl.pow(2, b)), [2, 1])
    np.testing.assert_array_equal(np_of(tl.pow(1, tl.tensor([np.nan, 2.0]))), [1.0, 1.0])   # 1 ** x is 1


# ============================================================ division family specifics
@pytest.mark.parametrize("op", ["remainder", "fmod", "floor_divide"])
@pytest.mark.parametrize("dt", INTS)
def test_integer_zero_divisor(op, dt):
    a = T(np.array([5, 6, 7]), dt)
    with pytest.raises(RuntimeError, match="^ZeroDivisionError$"):
        getattr(tl, op)(a, T(np.array([1, 0, 2]), dt))
    with pytest.raises(RuntimeError, match="^ZeroDivisionError$"):
        getattr(tl, op)(a, 0)
    # nothing written before the error
    c = T(np.array([5, 6, 7]), dt)
    with pytest.raises(RuntimeError, match="^ZeroDivisionError$"):
        getattr(c, op + "_")(T(np.array([1, 0, 2]), dt))
    np.testing.assert_array_equal(np_of(c), [5, 6, 7])
    # an empty result divides nothing
    assert tuple(getattr(tl, op)(_rt.slice(a, 0, 0, 0, 1), 0).shape) == (0,)
    if op != "floor_divide":
        with pytest.raises(RuntimeError, match="^ZeroDivisionError$"):
            tl.remainder(2, T(np.array([1, 0]), dt))


@pytest.mark.parametrize("dt", [tl.int8, tl.int16, tl.int32, tl.int64])
def test_integer_most_negative_by_minus_one(dt):
    """x % -1 is 0 and x // -1 wraps (no trap on the most negative value)"""
    lo = np.iinfo(NPT[dt]).min
    a = T(np.array([lo, lo + 1, -7, 7]), dt)
    m1 = T(np.array([-1, -1, -1, -1]), dt)
    np.testing.assert_array_equal(np_of(tl.remainder(a, m1)), [0, 0, 0, 0])
    np.testing.assert_array_equal(np_of(tl.fmod(a, m1)), [0, 0, 0, 0])
    np.testing.assert_array_equal(np_of(tl.floor_divide(a, m1)), np.array([lo, -(lo + 1), 7, -7]).astype(NPT[dt]))


def _hard_divisions(dt, n, seed):
    """float operands of every kind for fmod / remainder: random bit patterns
    (all exponents: huge quotients, subnormals, inf, NaN), small quotients,
    negative and zero divisors, infinities; in dt's numpy type"""
    rng = np.random.default_rng(seed)
    npt = {tl.float16: np.float16, tl.float32: np.float32, tl.float64: np.float64}[dt]
    ity = {np.float16: np.uint16, np.float32: np.uint32, np.float64: np.uint64}[npt]
    bits = lambda: rng.integers(0, np.iinfo(ity).max, n, dtype=ity, endpoint=True).view(npt)
    a = (rng.standard_normal(n) * 100).astype(npt)
    b = (rng.standard_normal(n) * 3).astype(npt)
    k = rng.integers(0, 6, n)
    a = np.where(k == 0, bits(), a)
    b = np.where(k <= 1, bits(), b)
    b = np.where(k == 2, rng.integers(-3, 4, n).astype(npt), b)   # zero and small integer divisors
    a = np.where(k == 3, rng.choice(np.array([0.0, -0.0, np.inf, -np.inf, np.nan], npt), n), a)
    b = np.where(k == 4, rng.choice(np.array([np.inf, -np.inf, np.nan, -0.0], npt), n), b)
    return a, b


def _ref_remainder(a, b):
    """PyTorch's float remainder: fmod, then + b where the signs differ (fmod's zero sign kept)"""
    c = np.float32 if a.dtype == np.float16 else a.dtype
    m = np.fmod(a.astype(c), b.astype(c))
    return np.where((m != 0) & ((b < 0) != (m < 0)), m + b.astype(c), m).astype(a.dtype)


def _same_bits(got, want, msg):
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan, err_msg=msg)
    np.testing.assert_array_equal(got[~nan].view(f"u{got.itemsize}"), want[~nan].view(f"u{want.itemsize}"),
                                  err_msg=msg)


@pytest.mark.parametrize("dt", [tl.float16, tl.float32, tl.float64])
def test_fmod_remainder_exact_vs_numpy(dt, cpu_capability):
    """the vectorized float fmod is exact (bit for bit libm's fmod, as PyTorch's
    SLEEF loop): every operand kind, chunks with and without the libm fallback
    (zero divisors, infinite dividends, huge quotients), tails, in-place,
    broadcast scalars, strided views"""
    with np.errstate(all="ignore"):
        for n, seed in ((1, 0), (7, 1), (255, 2), (257, 3), (1025, 4), (20000, 5)):
            a, b = _hard_divisions(dt, n, seed)
            want = {"fmod": np.fmod(a, b), "remainder": _ref_remainder(a, b)}
            for op in ("fmod", "remainder"):
                _same_bits(np_of(getattr(tl, op)(T(a, dt), T(b, dt))), want[op], f"{op} n={n}")
                t = T(a, dt)
                getattr(t, op + "_")(T(b, dt))   # in place: the output aliases the dividend
                _same_bits(np_of(t), want[op], f"{op}_ n={n}")
            # chunks of 256 without any fallback element, then one with a single one
            x = (np.arange(1000) * 7.25 - 3000).astype(a.dtype)
            y = np.full(1000, -2.5, a.dtype)
            y[600] = 0
            for op, ref in (("fmod", np.fmod), ("remainder", _ref_remainder)):
                _same_bits(np_of(getattr(tl, op)(T(x, dt), T(y, dt))), ref(x, y), op)
            # a broadcast scalar on either side, strided views
            for op, ref in (("fmod", np.fmod), ("remainder", _ref_remainder)):
                s = a[:1].copy()
                _same_bits(np_of(getattr(tl, op)(T(a, dt), T(s, dt)[0])), ref(a, np.broadcast_to(s, a.shape)), op)
                _same_bits(np_of(getattr(tl, op)(T(s, dt)[0], T(b, dt))), ref(np.broadcast_to(s, b.shape), b), op)
                if n > 2:
                    _same_bits(np_of(getattr(tl, op)(T(a, dt)[::2], T(b, dt)[::2])), ref(a[::2], b[::2]), op)
    # large quotients on purpose: every exponent gap the float types have
    with np.errstate(all="ignore"):
        npt = {tl.float16: np.float16, tl.float32: np.float32, tl.float64: np.float64}[dt]
        fi = np.finfo(npt)
        e = np.arange(int(np.log2(fi.smallest_subnormal)), fi.maxexp, dtype=np.float64)
        a = (np.exp2(e[:, None]) * np.array([1.0, -1.375, 1.9921875])).astype(npt).ravel()
        b = np.resize(np.array([0.3, -7.1, 1e-3, 3.3e3], npt), a.size)
        _same_bits(np_of(tl.fmod(T(a, dt), T(b, dt))), np.fmod(a, b), "fmod gaps")
        _same_bits(np_of(tl.remainder(T(a, dt), T(b, dt))), _ref_remainder(a, b), "remainder gaps")


@needs_torch
@pytest.mark.parametrize("dt", [tl.float32, tl.float64])
def test_fmod_remainder_exact_vs_torch(dt):
    with np.errstate(all="ignore"):
        a, b = _hard_divisions(dt, 5000, 11)
        # torch's SLEEF loop gives NaN where a / b overflows the dtype (std::fmod,
        # numpy and torchlet: the exact remainder); compared elsewhere
        q = np.abs(a.astype(np.float64) / b.astype(np.float64))
        keep = ~(q > np.finfo(a.dtype).max / 4) | ~np.isfinite(a) | (b == 0)
        a, b = a[keep], b[keep]
        for op in ("fmod", "remainder"):
            want = getattr(torch, op)(torch.from_numpy(a), torch.from_numpy(b)).numpy()
            _same_bits(np_of(getattr(tl, op)(T(a, dt), T(b, dt))), want, op)


def test_sign_rules_and_special_values_vs_numpy():
    a = np.array([5.5, -5.5, 5.5, -5.5, 0.0, -0.0, np.inf, -np.inf, np.nan, 3.0, 1e-30], np.float64)
    b = np.array([2.0, 2.0, -2.0, -2.0, 3.0, 3.0, 2.0, 2.0, 2.0, 0.0, np.inf], np.float64)
    for dt in (tl.float32, tl.float64):
        ta, tb = T(a, dt), T(b, dt)
        ca, cb = a.astype(NPT[dt]), b.astype(NPT[dt])
        with np.errstate(all="ignore"):
            for op, ref in (("remainder", np.remainder), ("fmod", np.fmod), ("floor_divide", np.floor_divide)):
                got, want = np_of(getattr(tl, op)(ta, tb)), ref(ca, cb)
                if op == "remainder":   # PyTorch: fmod-based, x % inf keeps x (numpy too); x % 0 NaN
                    want = want.copy()
                np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=op)
                fin = ~np.isnan(want)
                np.testing.assert_array_equal(got[fin], want[fin], err_msg=op)
                if op != "remainder":   # PyTorch's remainder keeps fmod's zero sign (-0.0 % 3 is -0.0), numpy not
                    np.testing.assert_array_equal(np.signbit(got[fin & (want == 0)]),
                                                  np.signbit(want[fin & (want == 0)]), err_msg=op)
    # integer sign rules: remainder follows the divisor, fmod the dividend
    x = np.array([7, -7, 7, -7], np.int32)
    y = np.array([3, 3, -3, -3], np.int32)
    np.testing.assert_array_equal(np_of(tl.remainder(tl.from_numpy(x), tl.from_numpy(y))), [1, 2, -2, -1])
    np.testing.assert_array_equal(np_of(tl.fmod(tl.from_numpy(x), tl.from_numpy(y))), [1, -1, 1, -1])
    np.testing.assert_array_equal(np_of(tl.floor_divide(tl.from_numpy(x), tl.from_numpy(y))), [2, -3, -3, 2])


@needs_torch
def test_special_values_vs_torch():
    vals = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 1e30, -1e30, np.inf, -np.inf, np.nan, 3.0], np.float64)
    A, B = np.meshgrid(vals, vals)
    for dt in (tl.float32, tl.float64, tl.float16):
        with np.errstate(over="ignore"):   # 1e30 is inf in float16, on purpose
            a, b = A.astype(NPT[dt]), B.astype(NPT[dt])
        for op in BINARY:
            got, want = np_of(getattr(tl, op)(T(a, dt), T(b, dt))), torch_np(getattr(torch, op)(TT(a, dt), TT(b, dt)))
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{op} {dt}")
            fin = ~np.isnan(want)
            np.testing.assert_allclose(got[fin], want[fin], rtol=TOL[dt], err_msg=f"{op} {dt}")
            np.testing.assert_array_equal(np.signbit(got[fin]), np.signbit(want[fin]), err_msg=f"{op} {dt}")


# ============================================================ unary float ops
def unary_input(rng, op, shape, dt):
    if dt is tl.bool:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dt in INTS:
        return rng.integers(0 if dt is tl.uint8 else -2, 3, size=shape).astype(NPT[dt])
    lo, hi = (-1, 1) if op in ("asin", "acos") else (-4, 4)
    return rand(rng, shape, dt, lo, hi)


@pytest.mark.parametrize("op", UNARY_FLOAT)
@pytest.mark.parametrize("dt", ALL, ids=lambda d: NAMES[d])
def test_unary_float_vs_numpy(op, dt, cpu_capability):
    if dt is tl.bfloat16 and BF16 is None:
        pytest.skip("ml_dtypes not installed")
    rng = np.random.default_rng(hash((op, NAMES[dt])) % 2**32)
    a = unary_input(rng, op, (3, 45), dt)
    ta = T(a, dt)
    rdt = dt if dt in FLOATS else tl.float32
    src = np_of(ta).astype(np.float64) if dt in FLOATS else a.astype(np.float32).astype(np.float64)
    with np.errstate(all="ignore"):
        want = NP_UNARY[op](src)
    got = getattr(tl, op)(ta)
    assert got.dtype is rdt
    tol = 1e-5 if rdt is tl.float32 else None   # libmvec's <= 4 ulp
    close(got, want, rdt, tol)
    close(getattr(tl, op)(_rt.transpose(ta, 0, 1)), want.T, rdt, tol)
    close(getattr(tl, op)(_rt.slice(ta, 1, 1, 45, 4)), want[:, 1::4], rdt, tol)
    z = getattr(tl, op)(_rt.select(_rt.select(ta, 0, 1), 0, 2))
    assert tuple(z.shape) == ()
    close(z, want[1, 2], rdt, tol)
    assert tuple(getattr(tl, op)(_rt.slice(ta, 0, 0, 0, 1)).shape) == (0, 45)


@needs_torch
@pytest.mark.parametrize("op", UNARY_FLOAT)
@pytest.mark.parametrize("dt", ALL, ids=lambda d: NAMES[d])
def test_unary_float_vs_torch(op, dt):
    rng = np.random.default_rng(hash((op, NAMES[dt], 2)) % 2**32)
    a = unary_input(rng, op, (5, 67), dt)
    if dt in FLOATS:
        a.flat[:8] = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.0]
    want = getattr(torch, op)(TT(a, dt))
    check(getattr(tl, op)(T(a, dt)), want, rtol=1e-5 if want.dtype == torch.float32 else None)
    check(getattr(T(a, dt), op)(), getattr(TT(a, dt), op)(), rtol=1e-5 if want.dtype == torch.float32 else None)


# ============================================================ round
HALVES = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, 3.7, -3.7, 0.0, -0.0, np.inf, -np.inf, np.nan, 1e20, 123.456]


@pytest.mark.parametrize("dt", [tl.float16, tl.bfloat16, tl.float32, tl.float64])
def test_round_half_even_vs_numpy(dt, cpu_capability):
    if dt is tl.bfloat16 and BF16 is None:
        pytest.skip("ml_dtypes not installed")
    a = np_of(T(np.array(HALVES), dt)).astype(np.float64)
    got = np_of(tl.round(T(a, dt)))
    want = np.round(a)
    np.testing.assert_array_equal(got, want.astype(got.dtype))
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    rng = np.random.default_rng(3)
    b = np_of(T(rng.uniform(-50, 50, 1031), dt)).astype(np.float64)
    np.testing.assert_array_equal(np_of(tl.round(T(b, dt))), np.round(b).astype(NPT.get(dt, np.float32)))


@pytest.mark.parametrize("decimals", [1, 2, 3, -1, -2, 0])
def test_round_decimals_vs_numpy(decimals):
    rng = np.random.default_rng(4)
    a = np.concatenate([rng.uniform(-1000, 1000, 50), [0.125, -0.125, 2.5, 25.0, 250.0, -0.0]])
    for dt in (tl.float32, tl.float64):
        x = a.astype(NPT[dt])
        got = tl.round(T(x, dt), decimals=decimals)
        assert got.dtype is dt
        # PyTorch's order: nearbyint(x * 10^d) / 10^d, or nearbyint(x / 10^-d) * 10^-d, in the dtype
        ten = NPT[dt](10.0 ** abs(decimals))
        want = np.rint(x * ten) / ten if decimals > 0 else (np.rint(x / ten) * ten if decimals < 0 else np.rint(x))
        np.testing.assert_array_equal(np_of(got), want)


@needs_torch
@pytest.mark.parametrize("dt", ALL, ids=lambda d: NAMES[d])
def test_round_vs_torch(dt):
    rng = np.random.default_rng(6)
    a = rand(rng, (4, 33), dt, -20, 20)
    if dt in FLOATS:
        a = (np.round(a * 4) / 4).astype(a.dtype)   # many exact halves
        a.flat[:4] = [np.nan, np.inf, -0.0, -0.5]
    for kw in ({}, {"decimals": 1}, {"decimals": -1}, {"decimals": 0}, {"decimals": 2}, {"decimals": 6}):
        if agree(lambda: tl.round(T(a, dt), **kw), lambda: torch.round(TT(a, dt), **kw)):
            check(T(a, dt).round(**kw), TT(a, dt).round(**kw))


# ============================================================ logit
def np_logit(x, eps=None, ct=np.float64, bt=None):
    """in the computation type ct (float32 for float16/bfloat16/float32 and integer inputs);
    the clamp bounds eps, 1 - eps rounded to the tensor's dtype bt, as PyTorch's kernel"""
    x = np.asarray(x, ct)
    if eps is not None and eps >= 0:
        bt = bt or ct
        lo = bt(eps)
        x = np.clip(x, ct(lo), ct(bt(1) - lo))
    with np.errstate(all="ignore"):
        return np.log(x / (ct(1) - x)).astype(np.float64)


@pytest.mark.parametrize("eps", [None, 0.0, 1e-6, 0.1, 0.49, -1.0])
@pytest.mark.parametrize("dt", [tl.float32, tl.float64, tl.float16, tl.bfloat16, tl.int64, tl.bool])
def test_logit_vs_numpy(eps, dt, cpu_capability):
    if dt is tl.bfloat16 and BF16 is None:
        pytest.skip("ml_dtypes not installed")
    rng = np.random.default_rng(2)
    if dt in FLOATS:
        a = np_of(T(np.concatenate([rng.uniform(-0.2, 1.2, 40), [0.0, 1.0, 0.5, np.nan, -np.inf, np.inf]]), dt))
    else:
        a = np.array([0, 1, 1, 0, 2, -1] if dt is tl.int64 else [0, 1, 1, 0]).astype(NPT[dt])
    got = tl.logit(T(a, dt), eps) if eps is not None else tl.logit(T(a, dt))
    rdt = dt if dt in FLOATS else tl.float32
    assert got.dtype is rdt
    ct = np.float64 if rdt is tl.float64 else np.float32
    bt = {tl.float16: np.float16, tl.bfloat16: BF16.type if BF16 is not None else None}.get(rdt, ct)
    close(got, np_logit(a.astype(np.float64), eps, ct, bt), rdt, 1e-5 if rdt is tl.float32 else None)


@needs_torch
@pytest.mark.parametrize("eps", [None, 0.0, 1e-3, 0.25, -0.5])
def test_logit_vs_torch(eps):
    a = np.array([-0.5, 0.0, 1e-4, 0.2, 0.5, 0.75, 1.0, 1.5, np.nan, -0.0], np.float32)
    for dt in (tl.float32, tl.float64, tl.float16, tl.bfloat16):
        check(tl.logit(T(a, dt), eps=eps), torch.logit(TT(a, dt), eps=eps), rtol=1e-5 if dt is tl.float32 else None)
        check(T(a, dt).logit(eps), TT(a, dt).logit(eps), rtol=1e-5 if dt is tl.float32 else None)
        g = np.linspace(-2, 2, a.size).astype(np.float32)
        check(tl.logit_backward(T(g, dt), T(a, dt), eps), torch.ops.aten.logit_backward(TT(g, dt), TT(a, dt), eps))
    i = np.array([0, 1, 2])
    check(tl.logit(tl.from_numpy(i)), torch.logit(torch.from_numpy(i)))


# ============================================================ nan_to_num and predicates
SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.5, 1e30, -1e30], np.float64)


@pytest.mark.parametrize("dt", [tl.float16, tl.bfloat16, tl.float32, tl.float64])
def test_nan_to_num_vs_numpy(dt, cpu_capability):
    if dt is tl.bfloat16 and BF16 is None:
        pytest.skip("ml_dtypes not installed")
    a = np_of(T(SPECIAL, dt))
    big = {tl.float16: 65504.0, tl.bfloat16: 3.3895313892515355e38, tl.float32: np.finfo(np.float32).max,
           tl.float64: np.finfo(np.float64).max}[dt]
    got = tl.nan_to_num(T(a, dt))
    assert got.dtype is dt
    want = np.nan_to_num(a.astype(np.float64), posinf=big, neginf=-big)
    np.testing.assert_array_equal(np_of(got).astype(np.float64), want)
    got = tl.nan_to_num(T(a, dt), nan=7.0, posinf=100.0, neginf=-3.0)
    np.testing.assert_array_equal(np_of(got), np.nan_to_num(a, nan=7.0, posinf=100.0, neginf=-3.0))
    got = T(a, dt).nan_to_num(posinf=2.0)       # only one given: the others default
    np.testing.assert_array_equal(np_of(got).astype(np.float64), np.nan_to_num(a.astype(np.float64), posinf=2.0,
                                                                               neginf=-big))
    # in-place, transposed view
    m = T(np.stack([a, a[::-1]]), dt)
    v = _rt.transpose(m, 0, 1)
    v0 = m._version
    tl.nan_to_num_(v, nan=1.0)
    assert m._version > v0
    assert not np.isnan(np_of(m)).any()


@needs_torch
@pytest.mark.parametrize("dt", ALL, ids=lambda d: NAMES[d])
def test_nan_to_num_and_predicates_vs_torch(dt):
    rng = np.random.default_rng(14)
    a = rand(rng, (3, 11), dt)
    if dt in FLOATS:
        with np.errstate(over="ignore"):   # 1e30 is inf in float16, on purpose
            a.flat[:len(SPECIAL)] = SPECIAL
    for kw in ({}, {"nan": 2.0}, {"posinf": 1e10, "neginf": -5}, {"nan": -1.0, "posinf": 3.0, "neginf": 4.0}):
        check(tl.nan_to_num(T(a, dt), **kw), torch.nan_to_num(TT(a, dt), **kw))
    for op in ("isnan", "isinf", "isfinite"):
        check(getattr(tl, op)(T(a, dt)), getattr(torch, op)(TT(a, dt)))
        check(getattr(_rt.transpose(T(a, dt), 0, 1), op)(), getattr(TT(a, dt).T, op)())


def test_predicates_vs_numpy():
    for dt in ALL:
        if dt is tl.bfloat16 and BF16 is None:
            continue
        a = SPECIAL if dt in FLOATS else np.array([0, 1, 2, 3])
        ta = T(a, dt)
        x = np_of(ta).astype(np.float64) if dt in FLOATS else np.asarray(a, np.float64)
        for op, ref in (("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite)):
            r = getattr(tl, op)(ta)
            assert r.dtype is tl.bool
            np.testing.assert_array_equal(np_of(r), ref(x), err_msg=f"{op} {dt}")
            e = getattr(tl, op)(_rt.slice(ta, 0, 0, 0, 1))
            assert tuple(e.shape) == (0,) and e.dtype is tl.bool
            z = getattr(tl, op)(_rt.select(ta, 0, 1))
            assert tuple(z.shape) == () and bool(np_of(z)) == bool(ref(x[1]))


# ============================================================ out= and in-place
OUT_CASES = [
    ("pow", lambda f, a, b: f(a, b)), ("remainder", lambda f, a, b: f(a, b)), ("fmod", lambda f, a, b: f(a, b)),
    ("floor_divide", lambda f, a, b: f(a, b)), ("atan2", lambda f, a, b: f(a, b)),
]


@needs_torch
@pytest.mark.parametrize("op", ["pow", "remainder", "fmod", "floor_divide", "atan2"])
def test_binary_out_and_inplace_vs_torch(op):
    rng = np.random.default_rng(15)
    a, b = binary_inputs(rng, op, (4, 6), tl.float32, tl.float32)
    ta, tb, xa, xb = T(a, tl.float32), T(b, tl.float32), TT(a, tl.float32), TT(b, tl.float32)
    f, g = getattr(tl, op), getattr(torch, op)
    out = _rt.empty(4, 6)
    r = f(ta, tb, out=out)
    check(out, g(xa, xb))
    assert tuple(r.shape) == (4, 6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wrong = _rt.empty(5)
        f(ta, tb, out=wrong)       # resized (PyTorch's deprecation warning)
        assert tl._C.lib.tl_has_warning() == 0  # the call raised its warning
    check(wrong, g(xa, xb))
    out64 = _rt.empty(4, 6, dtype=tl.float64)
    f(ta, tb, out=out64)           # computed in float32 (libmvec vs SLEEF: a few ulp), widened
    check(out64, g(xa, xb, out=torch.empty(4, 6, dtype=torch.float64)), rtol=2e-6)
    # int out= of a float result: refused like torch
    with pytest.raises(RuntimeError) as e1:
        g(xa, xb, out=torch.empty(4, 6, dtype=torch.int64))
    with pytest.raises(RuntimeError, match=str(e1.value).splitlines()[0]):
        f(ta, tb, out=_rt.empty(4, 6, dtype=tl.int64))
    # in-place: method, version counter, broadcasting refusal
    c = T(a, tl.float32)
    v0 = c._version
    getattr(c, op + "_")(tb)
    assert c._version > v0
    check(c, g(xa, xb))
    with pytest.raises(RuntimeError, match=r"output with shape \[6\] doesn't match the broadcast shape \[4, 6\]"):
        getattr(T(a[0], tl.float32), op + "_")(tb)
    # an int tensor in-place with a float result: refused like torch
    i = T(np.array([1, 2, 3]), tl.int64)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        getattr(i, op + "_")(T(np.array([1.5, 2.5, 3.5]), tl.float32))
    # the Scalar overloads' out= / in-place
    if op in ("remainder", "fmod", "pow", "floor_divide"):
        o = _rt.empty(4, 6)
        f(ta, 1.5, out=o) if op != "floor_divide" else f(ta, tl.tensor(1.5), out=o)
        check(o, g(xa, 1.5))
        d = T(a, tl.float32)
        getattr(d, op + "_")(1.5)
        check(d, g(xa, 1.5))


@needs_torch
def test_pow_out_and_inplace_dtypes_vs_torch():
    i = np.array([2, -3, 0], np.int64)
    ti, xi = tl.from_numpy(i.copy()), torch.from_numpy(i.copy())
    for e in (2.5, 2):
        check(tl.pow(ti, e, out=_rt.empty(3, dtype=tl.float64)), torch.pow(xi, e, out=torch.empty(3, dtype=torch.float64)))
    check(tl.pow(2, ti, out=_rt.empty(3, dtype=tl.int8)), torch.pow(2, xi, out=torch.empty(3, dtype=torch.int8)))
    check(tl.pow(2, ti, out=_rt.empty(3, dtype=tl.float64)), torch.pow(2, xi, out=torch.empty(3, dtype=torch.float64)))
    check(tl.pow(ti, ti, out=_rt.empty(3, dtype=tl.int8)), torch.pow(xi, xi, out=torch.empty(3, dtype=torch.int8)))
    for fn in (lambda t: t.pow_(2.5), lambda t: t.pow_(torch.tensor([1.5]) if isinstance(t, torch.Tensor)
                                                        else tl.tensor([1.5]))):
        with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
            fn(tl.from_numpy(i.copy()))
    c = tl.from_numpy(i.copy())
    c **= 2
    np.testing.assert_array_equal(np_of(c), i ** 2)
    c = T(np.array([7, -7]), tl.int32)
    c //= 2
    np.testing.assert_array_equal(np_of(c), [3, -4])
    c %= 3
    np.testing.assert_array_equal(np_of(c), [0, 2])


@needs_torch
def test_unary_out_and_inplace_vs_torch():
    a = np.linspace(-0.9, 0.9, 12).astype(np.float32).reshape(3, 4)
    for op in UNARY_FLOAT + ["round"]:
        f, g = getattr(tl, op), getattr(torch, op)
        o = _rt.empty(3, 4)
        f(T(a, tl.float32), out=o)
        check(o, g(torch.from_numpy(a)), rtol=1e-5)
        c = T(a, tl.float32)
        v0 = c._version
        getattr(c, op + "_")()
        assert c._version > v0
        check(c, g(torch.from_numpy(a)), rtol=1e-5)
        c = T(a, tl.float32)
        getattr(tl, op + "_")(c)
        check(c, g(torch.from_numpy(a)), rtol=1e-5)
        if op != "round":   # float ops: computed in float32, widened into a float64 out=
            o64 = _rt.empty(3, 4, dtype=tl.float64)
            f(T(a, tl.float32), out=o64)
            check(o64, g(torch.from_numpy(a), out=torch.empty(3, 4, dtype=torch.float64)), rtol=1e-5)
            with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
                getattr(T(np.array([1, 2]), tl.int64), op + "_")()
    # round keeps the dtype: another out= dtype is refused
    with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
        torch.round(torch.from_numpy(a), out=torch.empty(3, 4, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
        tl.round(T(a, tl.float32), out=_rt.empty(3, 4, dtype=tl.float64))
    with pytest.raises(RuntimeError, match="Found dtype Float but expected Long"):
        tl.round(T(np.array([1, 2]), tl.int64), decimals=2, out=_rt.empty(2))
    r = T(a * 10, tl.float32)
    r.round_(decimals=1)
    check(r, torch.round(torch.from_numpy(a * 10), decimals=1))
    # logit: out=, in-place, integer refusals
    o = _rt.empty(3, 4, dtype=tl.float64)
    p = (a + 1) / 2
    tl.logit(T(p, tl.float32), 0.1, out=o)
    check(o, torch.logit(torch.from_numpy(p), 0.1, out=torch.empty(3, 4, dtype=torch.float64)), rtol=1e-5)
    c = T(p, tl.float32)
    c.logit_()
    check(c, torch.logit(torch.from_numpy(p)), rtol=1e-5)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        tl.logit(T(np.array([1, 2]), tl.int64), out=_rt.empty(2, dtype=tl.int64))
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        T(np.array([1, 2]), tl.int64).logit_()
    # nan_to_num: out= must have the input's dtype; integers are copied
    with pytest.raises(RuntimeError, match="nan_to_num: dtype of out: Float should be same as input: Long"):
        tl.nan_to_num(T(np.array([1, 2]), tl.int64), out=_rt.empty(2))
    o = _rt.empty(0, dtype=tl.int64)
    tl.nan_to_num(T(np.array([1, 2, 3]), tl.int64), out=o)
    np.testing.assert_array_equal(np_of(o), [1, 2, 3])
    s = np.array([np.nan, np.inf, 1.0], np.float32)
    o = _rt.empty(3)
    tl.nan_to_num(tl.from_numpy(s.copy()), 0.5, out=o)
    check(o, torch.nan_to_num(torch.from_numpy(s), 0.5))


# ============================================================ dunders
@needs_torch
def test_dunders_vs_torch():
    a = np.array([[7.5, -7.5, 3.0], [2.0, -2.0, 0.5]], np.float32)
    b = np.array([2.0, -3.0, 1.5], np.float32)
    ta, tb, xa, xb = tl.from_numpy(a.copy()), tl.from_numpy(b.copy()), torch.from_numpy(a), torch.from_numpy(b)
    for fn in (operator.pow, operator.floordiv, operator.mod):
        check(fn(ta, tb), fn(xa, xb))
        check(fn(ta, 2), fn(xa, 2))
        check(fn(3, tb), fn(3, xb))
        check(fn(2.5, tb), fn(2.5, xb))
    i = np.array([7, -7, 5], np.int64)
    ti, xi = tl.from_numpy(i.copy()), torch.from_numpy(i.copy())
    for fn in (operator.pow, operator.floordiv, operator.mod):
        check(fn(ti, 3), fn(xi, 3))
        check(fn(ti, 2.5), fn(xi, 2.5))
        check(fn(2, tl.from_numpy(np.array([1, 2, 3]))), fn(2, torch.tensor([1, 2, 3])))
    check(ti ** True, xi ** True)
    for name in ("__ipow__", "__ifloordiv__", "__imod__"):
        c, d = tl.from_numpy(a.copy()), torch.from_numpy(a.copy())
        r = getattr(c, name)(tb)
        getattr(d, name)(xb)
        assert r is c
        check(c, d)


# ============================================================ Meta tensors
def test_meta():
    m = _rt.empty(2, 3, dtype=tl.float32, device="meta")
    mi = _rt.empty(2, 3, dtype=tl.int32, device="meta")
    for r, dt in [(tl.pow(m, m), tl.float32), (tl.pow(mi, 2.5), tl.float32), (tl.pow(mi, 2), tl.int32),
                  (tl.pow(2.5, mi), tl.float32), (tl.remainder(mi, mi), tl.int32), (tl.fmod(m, 2), tl.float32),
                  (tl.floor_divide(mi, mi), tl.int32), (tl.atan2(mi, mi), tl.float32), (tl.asin(mi), tl.float32),
                  (tl.cosh(m), tl.float32), (tl.round(mi), tl.int32), (tl.round(m, decimals=2), tl.float32),
                  (tl.logit(mi, 0.1), tl.float32), (tl.nan_to_num(m), tl.float32), (tl.nan_to_num(mi), tl.int32),
                  (tl.isnan(m), tl.bool), (tl.isinf(mi), tl.bool), (tl.isfinite(m), tl.bool),
                  (tl.remainder(3, mi), tl.int32), (tl.logit_backward(m, m), tl.float32)]:
        assert str(r.device) == "meta" and tuple(r.shape) == (2, 3) and r.dtype is dt, (r, dt)


# ============================================================ gradients against torch
GRAD_CASES = {
    "pow_tensor_scalar": (lambda m, a, b: m.pow(a, 2.5), "pos"),
    "pow_tensor_scalar_2": (lambda m, a, b: m.pow(a, 2), "any"),
    "pow_tensor_scalar_0": (lambda m, a, b: m.pow(a, 0) * a, "any"),
    "pow_tensor_tensor": (lambda m, a, b: m.pow(a, b), "pos"),
    "pow_scalar": (lambda m, a, b: m.pow(2.5, b), "any"),
    "pow_scalar_zero_base": (lambda m, a, b: m.pow(0.0, b.abs() + 0.5), "any"),
    "remainder": (lambda m, a, b: m.remainder(a, b), "div"),
    "remainder_scalar": (lambda m, a, b: m.remainder(a, 1.5), "any"),
    "fmod": (lambda m, a, b: m.fmod(a, b), "div"),
    "fmod_scalar": (lambda m, a, b: m.fmod(a, -1.5), "any"),
    "atan2": (lambda m, a, b: m.atan2(a, b), "any"),
    "asin": (lambda m, a, b: m.asin(a * 0.3), "any"),
    "acos": (lambda m, a, b: m.acos(a * 0.3), "any"),
    "atan": (lambda m, a, b: m.atan(a), "any"),
    "sinh": (lambda m, a, b: m.sinh(a), "any"),
    "cosh": (lambda m, a, b: m.cosh(a), "any"),
    "round": (lambda m, a, b: m.round(a) * b, "any"),
    "round_decimals": (lambda m, a, b: m.round(a, decimals=1) + b, "any"),
    "logit": (lambda m, a, b: m.logit(a.sigmoid()), "any"),
    "logit_eps": (lambda m, a, b: m.logit(a * 0.5, 0.2), "any"),
    "nan_to_num": (lambda m, a, b: m.nan_to_num(m.log(a)), "any"),
}


@needs_torch
@pytest.mark.parametrize("case", list(GRAD_CASES))
def test_gradients_vs_torch(case):
    fn, kind = GRAD_CASES[case]
    rng = np.random.default_rng(16)
    a = rng.uniform(-2, 2, (3, 4))
    b = rng.uniform(-2, 2, (4,))
    if kind == "pos":
        a = np.abs(a) + 0.3
    if kind == "div":
        b = np.where(np.abs(b) < 0.3, 1.1, b)
    g = rng.standard_normal((3, 4))
    xs = [tl.tensor(a, requires_grad=True), tl.tensor(b, requires_grad=True)]
    ys = [torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)]
    r = fn(tl, *xs)
    rt = fn(torch, *ys)
    (r * tl.tensor(g)).sum().backward()
    (rt * torch.tensor(g)).sum().backward()
    close(r.detach() if hasattr(r, "detach") else r, rt.detach().numpy())
    for x, y in zip(xs, ys):
        if y.grad is None:
            assert x.grad is None or not np.any(np_of(x.grad))
            continue
        np.testing.assert_allclose(np_of(x.grad), y.grad.numpy(), rtol=1e-10, atol=1e-12, equal_nan=True)


@needs_torch
def test_not_differentiable_like_torch():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    for op in ("isnan", "isinf", "isfinite"):
        r = getattr(tl, op)(x)
        assert not r.requires_grad and r.dtype is tl.bool
    # floor_divide has no derivative in PyTorch: a NotImplemented grad_fn, backward raises
    # (tests/autograd/test_not_implemented.py)
    r = tl.floor_divide(x, 2)
    assert r.requires_grad and r.grad_fn.name() == "torch::autograd::NotImplemented"


def test_threads_same_bits():
    a = np.random.default_rng(1).uniform(0.1, 3, 1 << 18).astype(np.float32)
    ta = tl.from_numpy(a)
    if not hasattr(tl, "get_num_threads"):
        pytest.skip("no thread control")
    old = tl.get_num_threads()
    r1 = [np_of(tl.pow(ta, 2.5)), np_of(tl.atan2(ta, ta)), np_of(tl.remainder(ta, 0.7))]
    try:
        tl.set_num_threads(4)
        r4 = [np_of(tl.pow(ta, 2.5)), np_of(tl.atan2(ta, ta)), np_of(tl.remainder(ta, 0.7))]
    finally:
        tl.set_num_threads(old)
    for x, y in zip(r1, r4):
        np.testing.assert_array_equal(x, y)
