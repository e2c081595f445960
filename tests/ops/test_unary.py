"""Unary pointwise math and activations generated from ufunc formulas
(kernels/ufunc/<op>.h): exp, exp2, expm1, log,
log2, log10, log1p, sqrt, rsqrt, sin, cos, tan, tanh, sigmoid, reciprocal,
erf, erfc, abs, sign, floor, ceil, trunc, frac, silu.

Against torch when installed (values within tolerance, result dtypes, which
dtypes are refused, for every dtype), else numpy; non-contiguous (transposed,
stepped, expanded), 0-dim, empty, out= (resize, dtype rules), in-place,
Meta tensors, the public API (functions and methods); kernel tests run once
per CPU capability level (the cpu_capability fixture)."""
import math
import warnings

import numpy as np
import pytest

import torchlet as tl
from torchlet import _rt

from ops_helpers import ALL, BF16, FLOATS, NAMES, needs_torch, torch

NPT = {tl.bool: np.bool_, tl.uint8: np.uint8, tl.int8: np.int8, tl.int16: np.int16, tl.int32: np.int32,
       tl.int64: np.int64, tl.float16: np.float16, tl.float32: np.float32, tl.float64: np.float64}

# float-valued: integer and bool inputs compute in the default float dtype
FLOAT_OPS = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan",
             "tanh", "sigmoid", "reciprocal", "erf", "erfc"]
# keep the input's dtype; bool refused (sign accepts it), frac/silu floats only
KEEP_OPS = ["abs", "sign", "floor", "ceil", "trunc", "frac", "silu"]
OPS = FLOAT_OPS + KEEP_OPS
REFUSED = {"abs": {tl.bool}, "floor": {tl.bool}, "ceil": {tl.bool}, "trunc": {tl.bool},
           "frac": set(ALL) - set(FLOATS), "silu": set(ALL) - set(FLOATS)}


def _sig(x):
    return 1 / (1 + np.exp(-x))


_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])
NP_REF = {
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2, "log10": np.log10,
    "log1p": np.log1p, "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x), "sin": np.sin, "cos": np.cos,
    "tan": np.tan, "tanh": np.tanh, "sigmoid": _sig, "reciprocal": lambda x: 1 / x, "erf": _erf, "erfc": _erfc,
    "abs": np.abs, "sign": np.sign, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
    "frac": lambda x: x - np.trunc(x), "silu": lambda x: x * _sig(x),
}


def tl_fn(op):
    if op == "silu":
        return tl._C._nn.silu   # python_module: nn (no torchlet.silu, as no torch.silu)
    return getattr(tl, op)


def torch_fn(op):
    if op == "silu":
        return torch._C._nn.silu   # takes out= (F.silu does not)
    return getattr(torch, op)


def rand(rng, shape, dt, op):
    """random input in op's domain (log/sqrt of negatives and tan near its poles
    are compared too, but on a few values only, below)"""
    if dt is tl.bool:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dt is tl.uint8:
        return rng.integers(0, 20, size=shape).astype(np.uint8)
    if dt not in FLOATS:
        lo = 0 if op in ("log", "log2", "log10", "log1p", "sqrt", "rsqrt") else -10
        return rng.integers(lo, 10, size=shape).astype(NPT[dt])
    v = rng.standard_normal(size=shape) * 3
    if op in ("log", "log2", "log10", "sqrt", "rsqrt"):
        v = np.abs(v) + 0.05
    elif op == "log1p":
        v = np.abs(v) - 0.9
    elif op == "tan":
        v = np.clip(v, -1.4, 1.4)
    if dt is tl.bfloat16:
        return v.astype(np.float32).astype(BF16).astype(np.float32)
    return v.astype(NPT[dt])


def T(a, dt):
    if dt is tl.bfloat16:
        return _rt.to(tl.from_numpy(np.ascontiguousarray(a, np.float32)), dtype=dt)
    return _rt.to(tl.from_numpy(np.array(a, copy=True, order="C")), dtype=dt)   # never aliases `a`


def torch_of(a, dt):
    t = torch.from_numpy(np.ascontiguousarray(a).astype(np.float32 if dt is tl.bfloat16 else a.dtype))
    return t.to(getattr(torch, NAMES[dt]))


def np_of(t):
    x = t.numpy()
    return x.astype(np.float32) if x.dtype == BF16 else np.asarray(x)


def torch_np(t):
    return t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy()


def _tol(dt):
    # float32: libmvec (<= 4 ulp) against torch's SLEEF (<= 1 ulp); float16 /
    # bfloat16: both compute in float and round once, one ulp of the storage type
    return {tl.float16: 2e-3, tl.bfloat16: 1.6e-2, tl.float32: 1e-5, tl.float64: 1e-12}[dt]


def close(got, want, dt=None):
    """got: torchlet tensor; want: numpy array (values) -- floats within the
    tolerance of the result dtype, NaN where want is NaN, exact otherwise"""
    g = np_of(got)
    assert g.shape == want.shape, (g.shape, want.shape)
    if g.dtype.kind == "f":
        tol = _tol(dt or got.dtype)
        with np.errstate(all="ignore"):
            np.testing.assert_allclose(g, want.astype(g.dtype), rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(g, want)


def check(got, want_t):
    """got: torchlet tensor; want_t: torch tensor (dtype and values)"""
    assert NAMES[got.dtype] == str(want_t.dtype).split(".")[-1], (got.dtype, want_t.dtype)
    close(got, torch_np(want_t))


# ---------------------------------------------------------------- against torch
@needs_torch
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dt", ALL)
def test_dtypes_vs_torch(cpu_capability, op, dt):
    rng = np.random.default_rng(hash((op, NAMES[dt])) % 2**32)
    a = rand(rng, (5, 67), dt, op)
    ta, t = T(a, dt), torch_of(a, dt)
    try:
        want = torch_fn(op)(t)
    except (RuntimeError, NotImplementedError) as e:
        assert dt in REFUSED.get(op, ()), (op, dt, e)
        with pytest.raises(type(e), match="not implemented for '%s'" % str(e).split("'")[-2]):
            tl_fn(op)(ta)
        return
    assert dt not in REFUSED.get(op, ())
    check(tl_fn(op)(ta), want)


@needs_torch
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dt", [tl.float32, tl.float64, tl.bfloat16, tl.int32])
def test_layouts_vs_torch(cpu_capability, op, dt):
    if dt in REFUSED.get(op, ()):
        pytest.skip("refused (test_dtypes_vs_torch)")
    rng = np.random.default_rng(7)
    a = rand(rng, (40, 33), dt, op)
    ta, t = T(a, dt), torch_of(a, dt)
    f, g = tl_fn(op), torch_fn(op)
    check(f(_rt.transpose(ta, 0, 1)), g(t.T))                           # transposed
    check(f(_rt.slice(_rt.slice(ta, 0, 1, 40, 3), 1, 0, 33, 2)), g(t[1::3, ::2]))  # stepped
    check(f(_rt.expand(_rt.slice(ta, 0, 0, 1, 1), [7, 33])), g(t[:1].expand(7, 33)))  # broadcast (stride 0)
    check(f(_rt.select(_rt.select(ta, 0, 3), 0, 5)), g(t[3, 5]))        # 0-dim
    assert tuple(f(_rt.select(_rt.select(ta, 0, 3), 0, 5)).shape) == ()
    check(f(_rt.slice(ta, 0, 0, 0, 1)), g(t[:0]))                        # empty
    # longer than the float16/bfloat16 conversion chunk, odd length
    b = rand(rng, (1031,), dt, op)
    check(f(T(b, dt)), g(torch_of(b, dt)))


@needs_torch
@pytest.mark.parametrize("op", FLOAT_OPS + ["abs", "sign", "floor", "ceil", "trunc", "frac", "silu"])
def test_special_values_vs_torch(cpu_capability, op):
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 1e-30, -1e-30, 80.0, -80.0, 100.0, -100.0, 1e30, -1e30,
            np.inf, -np.inf, np.nan, math.pi / 2, 1e-8]
    for dt in (tl.float32, tl.float64):
        a = np.array(vals, NPT[dt])
        got, want = np_of(tl_fn(op)(T(a, dt))), torch_np(torch_fn(op)(torch_of(a, dt)))
        with np.errstate(all="ignore"):
            np.testing.assert_allclose(got, want, rtol=_tol(dt), atol=0, equal_nan=True)
        # signs of zeros and infinities exactly as torch's
        fin = ~np.isnan(want)
        np.testing.assert_array_equal(np.signbit(got[fin & (want == 0)]), np.signbit(want[fin & (want == 0)]))


@needs_torch
@pytest.mark.parametrize("op", OPS)
def test_out_and_inplace_vs_torch(op):
    rng = np.random.default_rng(3)
    a = rand(rng, (4, 6), tl.float32, op)
    ta, t = T(a, tl.float32), torch_of(a, tl.float32)
    f, g = tl_fn(op), torch_fn(op)
    # out= of the right shape, one to resize, a wider dtype
    out = _rt.empty(4, 6)
    r = f(ta, out=out)
    assert r is out or _rt is None or tuple(r.shape) == (4, 6)
    check(out, g(t))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wrong = _rt.empty(5)
        f(ta, out=wrong)
        assert tl._C.lib.tl_has_warning() == 0  # the call raised its warning
    assert tuple(wrong.shape) == (4, 6)
    check(wrong, g(t))
    out64 = _rt.empty(4, 6, dtype=tl.float64)
    if op in FLOAT_OPS:
        f(ta, out=out64)   # computed in float32, widened (torch's order)
        close(out64, g(t, out=torch.empty(4, 6, dtype=torch.float64)).numpy(), tl.float32)
    else:              # unary_op: every operand in the input's dtype
        with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
            g(t, out=torch.empty(4, 6, dtype=torch.float64))
        with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
            f(ta, out=out64)
    # in-place: method and function forms
    b = T(a, tl.float32)
    v0 = b._version
    (getattr(b, op + "_") if op != "silu" else lambda: tl._C._nn.silu_(b))()
    assert b._version > v0
    check(b, g(t.clone()))
    if op != "silu":
        c = T(a, tl.float32)
        getattr(tl, op + "_")(c)
        check(c, g(t))
    # method form
    if op != "silu":
        check(getattr(ta, op)(), getattr(t, op)())


@needs_torch
@pytest.mark.parametrize("op", FLOAT_OPS)
def test_float_ops_integer_rules(op):
    rng = np.random.default_rng(4)
    a = rand(rng, (3, 5), tl.int64, op)
    ti, t = T(a, tl.int64), torch.from_numpy(a)
    check(tl_fn(op)(ti), torch_fn(op)(t))
    assert tl_fn(op)(ti).dtype is tl.float32
    # int out= for a float result, int in-place: refused like torch
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        tl_fn(op)(ti, out=_rt.empty(3, 5, dtype=tl.int64))
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        getattr(T(a, tl.int64), op + "_")()
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        getattr(t.clone(), op + "_")()
    # a float64 out= of an integer input: computed in float32, then widened (torch's order)
    o = _rt.empty(3, 5, dtype=tl.float64)
    tl_fn(op)(ti, out=o)
    close(o, torch_fn(op)(t, out=torch.empty(3, 5, dtype=torch.float64)).numpy(), tl.float32)
    # bool input: float32 too
    b = np.array([True, False, True])
    check(tl_fn(op)(tl.from_numpy(b)), torch_fn(op)(torch.from_numpy(b)))


@needs_torch
def test_integer_keep_ops_vs_torch():
    big = np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max, -(2**53) - 1, 2**53 + 1, -1, 0, 1], np.int64)
    for op in ("abs", "sign", "floor", "ceil", "trunc"):
        check(tl_fn(op)(tl.from_numpy(big)), torch_fn(op)(torch.from_numpy(big)))
    for npdt in (np.uint8, np.int8, np.int16, np.int32):
        info = np.iinfo(npdt)
        a = np.array([info.min, info.max, 0, 1], npdt)
        for op in ("abs", "sign", "floor"):
            check(tl_fn(op)(tl.from_numpy(a)), torch_fn(op)(torch.from_numpy(a)))
    b = np.array([True, False])
    check(tl.sign(tl.from_numpy(b)), torch.sign(torch.from_numpy(b)))


# ---------------------------------------------------------------- meta
@pytest.mark.parametrize("op", OPS)
def test_meta(op):
    for dt in (tl.float32, tl.float64, tl.int32, tl.bfloat16):
        m = _rt.empty(2, 3, dtype=dt, device="meta")
        if dt in REFUSED.get(op, ()):
            # the dtype check is in the loop table: a meta tensor gets its shape
            r = tl_fn(op)(m)
            assert tuple(r.shape) == (2, 3)
            continue
        r = tl_fn(op)(m)
        assert str(r.device) == "meta" and tuple(r.shape) == (2, 3)
        want = tl.float32 if (op in FLOAT_OPS and dt is tl.int32) else dt
        assert r.dtype is want, (op, dt, r.dtype)


# ---------------------------------------------------------------- numpy oracle (runs without torch)
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dt", [tl.float32, tl.float64, tl.float16, tl.bfloat16, tl.int32, tl.uint8])
def test_vs_numpy(cpu_capability, op, dt):
    if dt is tl.bfloat16 and BF16 is None:
        pytest.skip("ml_dtypes not installed")
    if dt in REFUSED.get(op, ()):
        with pytest.raises(NotImplementedError, match="not implemented for"):
            tl_fn(op)(T(rand(np.random.default_rng(0), (3,), dt, op), dt))
        return
    rng = np.random.default_rng(11)
    a = rand(rng, (3, 45), dt, op)
    ta = T(a, dt)
    with np.errstate(all="ignore"):
        if op in FLOAT_OPS and dt not in FLOATS:
            want, rdt = NP_REF[op](a.astype(np.float32).astype(np.float64)), tl.float32
        else:
            src = a.astype(np.float64) if dt in FLOATS else a
            want, rdt = NP_REF[op](src), dt
            if dt not in FLOATS:
                want = want.astype(NPT[dt])
    got = tl_fn(op)(ta)
    assert got.dtype is rdt
    close(got, np.asarray(want), rdt)
    close(tl_fn(op)(_rt.transpose(ta, 0, 1)), np.asarray(want).T, rdt)
    z = tl_fn(op)(_rt.select(_rt.select(ta, 0, 1), 0, 2))
    assert tuple(z.shape) == ()
    close(z, np.asarray(want)[1, 2], rdt)
    assert tuple(tl_fn(op)(_rt.slice(ta, 0, 0, 0, 1)).shape) == (0, 45)


def test_sign_abs_edges_vs_numpy():
    a = tl.from_numpy(np.array([np.nan, -0.0, 0.0, -np.inf, np.inf, -3.0], np.float32))
    s = np_of(tl.sign(a))
    np.testing.assert_array_equal(s, [0, 0, 0, -1, 1, -1])       # NaN -> 0 like torch
    r = np_of(tl.abs(a))
    assert np.isnan(r[0]) and not np.signbit(r[0]) and not np.signbit(r[1])
    np.testing.assert_array_equal(r[1:], [0, 0, np.inf, np.inf, 3])
    assert list(np_of(tl.floor(tl.from_numpy(np.array([-0.5], np.float32))))) == [-1.0]
    f = np_of(tl.frac(tl.from_numpy(np.array([-2.5, 2.25, np.inf], np.float32))))
    assert list(f[:2]) == [-0.5, 0.25] and np.isnan(f[2])


def test_threads_same_bits():
    a = np.random.default_rng(1).standard_normal(1 << 18).astype(np.float32)
    ta = tl.from_numpy(a)
    r1 = np_of(tl.exp(ta))
    old = tl.get_num_threads() if hasattr(tl, "get_num_threads") else None
    if old is None:
        pytest.skip("no thread control")
    try:
        tl.set_num_threads(4)
        r4 = np_of(tl.exp(ta))
    finally:
        tl.set_num_threads(old)
    np.testing.assert_array_equal(r1, r4)


# ---------------------------------------------------------------- gradients against torch
@needs_torch
@pytest.mark.parametrize("op", OPS)
def test_gradients_vs_torch(op):
    rng = np.random.default_rng(9)
    a = rand(rng, (3, 4), tl.float64, op)
    if op in ("abs", "sign", "floor", "ceil", "trunc", "frac"):
        a = np.floor(a) + 0.25 + 0.5 * rng.random(a.shape)
    g = rng.standard_normal(a.shape)
    x = tl.tensor(a, requires_grad=True)
    r = tl_fn(op)(x)
    (r * tl.tensor(g)).sum().backward()
    xt = torch.tensor(a, requires_grad=True)
    rt = torch_fn(op)(xt)
    (rt * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-12)
    assert r.grad_fn.name() == rt.grad_fn.name()
