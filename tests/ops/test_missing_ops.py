"""The operators of docs/OPS_MISSING.md: asinh/acosh/atanh,
the numpy-style arc* aliases, nonzero / argwhere / where(condition) /
count_nonzero, the .out overloads, matrix norms, and PyTorch deviations.

Against numpy always, against torch when installed (values, dtypes, error
types and messages)."""
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


def T(a, dt=None):
    """a torchlet copy of numpy array a (bfloat16 through float32)"""
    a = np.asarray(a)
    if dt is tl.bfloat16:
        return _rt.to(tl.from_numpy(np.array(a, np.float32, copy=True, order="C")), dtype=dt)
    t = tl.from_numpy(np.array(a, copy=True, order="C"))
    return t if dt is None else _rt.to(t, dtype=dt)


def TT(a, dt=None):
    a = np.asarray(a)
    t = torch.from_numpy(np.array(a, copy=True, dtype=np.float32 if dt is tl.bfloat16 else a.dtype))
    return t if dt is None else t.to(getattr(torch, NAMES[dt]))


def np_of(t):
    x = t.numpy()
    return x.astype(np.float32) if BF16 is not None and x.dtype == BF16 else np.asarray(x)


def torch_np(t):
    t = t.detach()
    return t.float().numpy() if t.dtype in (torch.bfloat16, torch.float16) else t.numpy()


def close(got, want, rtol=1e-6, atol=None):
    g = np_of(got)
    want = np.asarray(want)
    assert g.shape == want.shape, (g.shape, want.shape)
    if g.dtype.kind == "f":
        with np.errstate(all="ignore"):
            np.testing.assert_allclose(g, want.astype(g.dtype), rtol=rtol, atol=rtol if atol is None else atol,
                                       equal_nan=True)
    else:
        np.testing.assert_array_equal(g, want)


def same_error(tl_call, torch_call, exc=None):
    """torch raises; torchlet raises the same type with the same first line"""
    with pytest.raises(Exception) as ei:
        torch_call()
    msg = str(ei.value).splitlines()[0]
    with pytest.raises(exc or type(ei.value), match="^" + re.escape(msg)):
        tl_call()


def rand(rng, shape, dt, lo=-4.0, hi=4.0):
    if dt is tl.bool:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dt in INTS:
        return rng.integers(0 if dt is tl.uint8 else -3, 4, size=shape).astype(NPT[dt])
    v = rng.uniform(lo, hi, size=shape)
    if dt is tl.bfloat16:
        return v.astype(np.float32).astype(BF16).astype(np.float32)
    return v.astype(NPT[dt])


# ======================================================= asinh / acosh / atanh
HYP = {"asinh": (np.arcsinh, -4.0, 4.0), "acosh": (np.arccosh, 1.0, 6.0), "atanh": (np.arctanh, -0.95, 0.95)}
TOL = {tl.float16: 2e-3, tl.bfloat16: 1.6e-2, tl.float32: 1e-5, tl.float64: 1e-13}


@pytest.mark.parametrize("op", sorted(HYP))
@pytest.mark.parametrize("dt", ALL, ids=lambda d: NAMES[d])
def test_inverse_hyperbolic_vs_numpy(op, dt, cpu_capability):
    if dt is tl.bfloat16 and BF16 is None:
        pytest.skip("ml_dtypes not installed")
    fn, lo, hi = HYP[op]
    rng = np.random.default_rng(hash((op, NAMES[dt])) % 2**32)
    a = rand(rng, (3, 45), dt, lo, hi)
    ta = T(a, dt)
    rdt = dt if dt in FLOATS else tl.float32   # integers and bool compute in the default float dtype
    src = np_of(ta).astype(np.float64)
    with np.errstate(all="ignore"):
        want = fn(src)
    got = getattr(tl, op)(ta)
    assert got.dtype is rdt
    close(got, want, TOL[rdt])
    close(getattr(ta, op)(), want, TOL[rdt])
    close(getattr(tl, op)(_rt.transpose(ta, 0, 1)), want.T, TOL[rdt])
    close(getattr(tl, op)(_rt.slice(ta, 1, 1, 45, 4)), want[:, 1::4], TOL[rdt])
    z = getattr(tl, op)(_rt.select(_rt.select(ta, 0, 1), 0, 2))
    assert tuple(z.shape) == ()
    close(z, want[1, 2], TOL[rdt])
    assert tuple(getattr(tl, op)(_rt.slice(ta, 0, 0, 0, 1)).shape) == (0, 45)


@pytest.mark.parametrize("op", sorted(HYP))
def test_inverse_hyperbolic_inplace_out_specials(op):
    fn, lo, hi = HYP[op]
    a = np.array([lo, (lo + hi) / 2, hi * 0.9, np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.0])
    with np.errstate(all="ignore"):
        want = fn(a)
    close(getattr(tl, op)(T(a)), want, 1e-13)   # inf, nan, domain edges as numpy
    c = T(a.astype(np.float32))
    v0 = c._version
    assert getattr(c, op + "_")() is c and c._version > v0
    close(c, want.astype(np.float32), 1e-5)
    c = T(a.astype(np.float32))
    getattr(tl, op + "_")(c)
    close(c, want.astype(np.float32), 1e-5)
    o = _rt.empty(2, dtype=tl.float64)     # computed in float32, widened into the (resized) float64 out=
    with pytest.warns(UserWarning, match="was resized"):
        r = getattr(tl, op)(T(a.astype(np.float32)), out=o)
    assert r is o and tuple(o.shape) == (11,)
    with np.errstate(all="ignore"):
        close(o, fn(a.astype(np.float32).astype(np.float64)), 1e-5)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        getattr(T(np.array([1, 2])), op + "_")()


@needs_torch
@pytest.mark.parametrize("op", sorted(HYP))
@pytest.mark.parametrize("dt", ALL, ids=lambda d: NAMES[d])
def test_inverse_hyperbolic_vs_torch(op, dt):
    fn, lo, hi = HYP[op]
    rng = np.random.default_rng(hash((op, NAMES[dt], 2)) % 2**32)
    a = rand(rng, (5, 67), dt, lo - 1, hi + 1)   # some outside the domain: NaN
    if dt in FLOATS:
        a.flat[:8] = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.0]
    want = getattr(torch, op)(TT(a, dt))
    got = getattr(tl, op)(T(a, dt))
    assert NAMES[got.dtype] == str(want.dtype).split(".")[-1]
    close(got, torch_np(want), TOL[got.dtype])


# ============================================================ arc* aliases
ALIASES = {"arcsin": "asin", "arccos": "acos", "arctan": "atan", "arcsinh": "asinh", "arccosh": "acosh",
           "arctanh": "atanh"}


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_arc_aliases_match_original(alias):
    op = ALIASES[alias]
    rng = np.random.default_rng(7)
    a = rng.uniform(1.05, 1.9, (4, 5)) if op == "acosh" else rng.uniform(-0.9, 0.9, (4, 5))
    want = getattr(tl, op)(T(a))
    close(getattr(tl, alias)(T(a)), np_of(want), 0)
    close(getattr(T(a), alias)(), np_of(want), 0)
    c = T(a)
    assert getattr(c, alias + "_")() is c
    close(c, np_of(want), 0)
    c = T(a)
    getattr(tl, alias + "_")(c)
    close(c, np_of(want), 0)
    o = _rt.empty(0, dtype=tl.float64)
    assert getattr(tl, alias)(T(a), out=o) is o
    close(o, np_of(want), 0)
    assert getattr(tl, alias)(T(np.array([1, 2], np.int32))).dtype is tl.float32
    # autograd records the original's node (CompositeImplicitAutograd alias)
    x = T(a).requires_grad_()
    y = getattr(tl, alias)(x)
    assert type(y.grad_fn).__name__ == op.capitalize() + "Backward0"
    y.sum().backward()
    g = {"asin": lambda: 1 / np.sqrt(1 - a * a), "acos": lambda: -1 / np.sqrt(1 - a * a),
         "atan": lambda: 1 / (1 + a * a), "asinh": lambda: 1 / np.sqrt(a * a + 1),
         "acosh": lambda: 1 / np.sqrt(a * a - 1), "atanh": lambda: 1 / (1 - a * a)}[op]()
    close(x.grad, g, 1e-12)


def test_arctan2_alias():
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(3, 4)), rng.normal(size=(4,))
    close(tl.arctan2(T(a), T(b)), np.arctan2(a, b), 1e-13)
    close(T(a).arctan2(T(b)), np.arctan2(a, b), 1e-13)
    c = T(a)
    assert c.arctan2_(T(b)) is c
    close(c, np.arctan2(a, b), 1e-13)
    o = _rt.empty(3, 4, dtype=tl.float64)
    assert tl.arctan2(T(a), T(b), out=o) is o
    close(o, np.arctan2(a, b), 1e-13)
    assert not hasattr(tl, "arctan2_")   # PyTorch: method only


@needs_torch
def test_arc_aliases_vs_torch():
    a = np.linspace(-0.95, 0.95, 12).reshape(3, 4)
    for alias in ALIASES:
        x = a + 2.0 if alias == "arccosh" else a
        close(getattr(tl, alias)(T(x)), getattr(torch, alias)(TT(x)).numpy(), 1e-13)
        assert hasattr(torch.Tensor, alias + "_") and hasattr(tl.Tensor, alias + "_")
    close(tl.arctan2(T(a), T(a.T[:1].T)), torch.arctan2(TT(a), TT(a.T[:1].T)).numpy(), 1e-13)


# ============================================================ nonzero family
def nz_input(rng, shape, dt, density=0.4):
    if dt is tl.bool:
        return rng.random(shape) < density
    v = rand(rng, shape, dt, -3, 3)
    return np.where(rng.random(shape) < density, v, 0).astype(v.dtype)


@pytest.mark.parametrize("dt", ALL, ids=lambda d: NAMES[d])
@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 4), (1, 1, 17), (0,), (2, 0, 3), ()])
def test_nonzero_vs_numpy(dt, shape):
    if dt is tl.bfloat16 and BF16 is None:
        pytest.skip("ml_dtypes not installed")
    rng = np.random.default_rng(hash((NAMES[dt], shape)) % 2**32)
    a = nz_input(rng, shape, dt)
    t = T(a, dt)
    want = np.argwhere(np.asarray(a) != 0) if shape else np.zeros((int(a != 0), 0), np.int64)
    want = want.reshape(want.shape[0], len(shape))
    got = tl.nonzero(t)
    assert got.dtype is tl.int64
    close(got, want)
    close(t.nonzero(), want)
    close(tl.argwhere(t), want)
    close(t.argwhere(), want)
    cols = tl.where(t)
    np_cols = np.nonzero(np.atleast_1d(a))
    assert isinstance(cols, tuple) and len(cols) == len(np_cols)
    for c, w in zip(cols, np_cols):
        assert c.dtype is tl.int64
        close(c, w)
    for c, w in zip(tl.nonzero(t, as_tuple=True), np_cols):
        close(c, w)
    for c, w in zip(t.nonzero(as_tuple=True), np_cols):
        close(c, w)
    assert tl.count_nonzero(t).item() == np.count_nonzero(a)
    if len(shape) >= 2:
        close(tl.count_nonzero(t, 1), np.count_nonzero(a, axis=1))
        close(t.count_nonzero((0, -1)), np.count_nonzero(a, axis=(0, len(shape) - 1)))
        close(tl.count_nonzero(t, dim=[]), np.array(np.count_nonzero(a)))


def test_nonzero_special_values_and_views():
    a = np.array([[np.nan, -0.0, 0.0, np.inf], [1e-45, -1.0, 0.0, -np.inf]], np.float32)
    for dt in (tl.float32, tl.float64, tl.float16, tl.bfloat16):
        want = np.argwhere((a != 0) | np.isnan(a))
        if dt in (tl.float16, tl.bfloat16):   # 1e-45 underflows to zero
            want = np.argwhere(((a != 0) | np.isnan(a)) & (np.abs(a) != np.float32(1e-45)))
        close(tl.nonzero(T(a, dt)), want)
    rng = np.random.default_rng(5)
    b = nz_input(rng, (6, 9), tl.int32)
    close(tl.nonzero(_rt.transpose(T(b), 0, 1)), np.argwhere(b.T))
    close(tl.nonzero(_rt.slice(T(b), 1, 1, 9, 3)), np.argwhere(b[:, 1::3]))
    e = _rt.expand(T(np.array([1, 0, 2])), [2, 3])
    close(tl.nonzero(e), np.argwhere(np.broadcast_to([1, 0, 2], (2, 3))))


def test_nonzero_large_thread_independent():
    rng = np.random.default_rng(11)
    a = nz_input(rng, (301, 1031), tl.float32, 0.3)
    want = np.argwhere(a)
    n0 = tl.get_num_threads()
    try:
        for nt in (1, 2, 3):
            tl.set_num_threads(nt)
            close(tl.nonzero(T(a)), want)
            assert tl.count_nonzero(T(a)).item() == want.shape[0]
    finally:
        tl.set_num_threads(n0)


def test_nonzero_out():
    a = np.array([[1.0, 0], [0, 3]])
    o = _rt.empty(0, dtype=tl.int64)
    assert tl.nonzero(T(a), out=o) is o
    close(o, np.argwhere(a))
    o = _rt.slice(_rt.empty(2, 4, dtype=tl.int64), 1, 0, 4, 2)   # strided out= of the right shape: written through
    tl.nonzero(T(a), out=o)
    assert tuple(o.stride()) == (4, 2)
    close(o, np.argwhere(a))
    o = _rt.empty(5, 2, dtype=tl.int64)
    with pytest.warns(UserWarning, match=r"had shape \[5, 2\], which does not match the required output shape \[2, 2\]"):
        tl.nonzero(T(a), out=o)
    close(o, np.argwhere(a))
    with pytest.raises(RuntimeError, match="^nonzero: Expected out tensor to have scalar type Long but got scalar typeFloat$"):
        tl.nonzero(T(a), out=_rt.empty(0))
    with pytest.raises(RuntimeError, match="^nonzero does not support the out kwarg when as_tuple is True$"):
        tl.nonzero(T(a), out=o, as_tuple=True)


def test_nonzero_autograd_and_bindings():
    x = T(np.array([1.0, 0.0, 2.0])).requires_grad_()
    r = tl.nonzero(x)
    assert not r.requires_grad and r.grad_fn is None
    c = tl.count_nonzero(x)
    assert not c.requires_grad and c.item() == 2
    assert not hasattr(tl, "nonzero_numpy") and not hasattr(x, "nonzero_numpy")   # as in PyTorch


def test_count_nonzero_errors():
    x = T(np.ones((2, 3)))
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times in the list of dims"):
        tl.count_nonzero(x, (0, 0))
    with pytest.raises(IndexError, match=re.escape("Dimension out of range (expected to be in range of [-2, 1], but got 5)")):
        tl.count_nonzero(x, 5)
    assert tl.count_nonzero(T(np.array(3.0)), 0).item() == 1


@needs_torch
@pytest.mark.parametrize("dt", ALL, ids=lambda d: NAMES[d])
def test_nonzero_vs_torch(dt):
    rng = np.random.default_rng(hash(NAMES[dt]) % 2**32)
    for shape in [(5, 7), (3,), (), (0, 4), (2, 1, 3)]:
        a = nz_input(rng, shape, dt)
        t, u = T(a, dt), TT(a, dt)
        close(tl.nonzero(t), torch.nonzero(u).numpy())
        close(tl.argwhere(t), torch.argwhere(u).numpy())
        got, want = tl.where(t), torch.where(u)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            close(g, w.numpy())
        for g, w in zip(t.nonzero(as_tuple=True), u.nonzero(as_tuple=True)):
            close(g, w.numpy())
        close(tl.count_nonzero(t), torch.count_nonzero(u).numpy())
        if len(shape) == 2:
            close(tl.count_nonzero(t, 0), torch.count_nonzero(u, 0).numpy())
            close(tl.count_nonzero(t, (1, 0)), torch.count_nonzero(u, (1, 0)).numpy())
    same_error(lambda: tl.count_nonzero(T(np.ones((2, 3))), (0, 0)), lambda: torch.count_nonzero(torch.ones(2, 3), (0, 0)))
    same_error(lambda: tl.count_nonzero(T(np.ones((2, 3))), 4), lambda: torch.count_nonzero(torch.ones(2, 3), 4))
    same_error(lambda: tl.nonzero(T(np.ones(2)), out=_rt.empty(0)), lambda: torch.nonzero(torch.ones(2), out=torch.empty(0)))


# ============================================================ .out overloads
def test_max_min_dim_out_tuple():
    rng = np.random.default_rng(21)
    a = rng.normal(size=(3, 5))
    for op, npv, npi in (("max", np.max, np.argmax), ("min", np.min, np.argmin)):
        v, i = _rt.empty(0, dtype=tl.float64), _rt.empty(0, dtype=tl.int64)
        r = getattr(tl, op)(T(a), 1, out=(v, i))
        assert type(r).__name__ == op + "_out" and type(r).__module__ == "torchlet.return_types"
        assert r.values is v and r.indices is i and r[0] is v
        close(v, npv(a, 1), 0)
        close(i, npi(a, 1))
        with pytest.warns(UserWarning, match="was resized"):
            getattr(tl, op)(T(a), dim=0, keepdim=True, out=[v, i])
        close(v, npv(a, 0, keepdims=True), 0)
        with pytest.raises(TypeError, match="^expected tuple of 2 elements but got 1$"):
            getattr(tl, op)(T(a), 1, out=(v,))
        with pytest.raises(TypeError, match="^expected Tensor as element 1 in argument 3, but got int$"):
            getattr(tl, op)(T(a), 1, out=(v, 3))
        with pytest.raises(TypeError, match=re.escape(f"{op}() received an invalid combination of arguments")):
            getattr(tl, op)(T(a), 1, out=v)
        with pytest.raises(RuntimeError, match="Expected out tensor to have dtype double, but got long int instead"):
            getattr(tl, op)(T(a), 1, out=(i, v))


@needs_torch
def test_max_min_dim_out_vs_torch():
    a = np.random.default_rng(2).normal(size=(4, 6)).astype(np.float32)
    for op in ("max", "min"):
        v, i = _rt.empty(0), _rt.empty(0, dtype=tl.int64)
        tv, ti = torch.empty(0), torch.empty(0, dtype=torch.long)
        getattr(tl, op)(T(a), -1, True, out=(v, i))
        r = getattr(torch, op)(TT(a), -1, True, out=(tv, ti))
        assert type(r).__name__ == op + "_out"
        close(v, tv.numpy(), 0)
        close(i, ti.numpy())
        same_error(lambda: getattr(tl, op)(T(a), 1, out=(v,)), lambda: getattr(torch, op)(TT(a), 1, out=(tv,)))
        same_error(lambda: getattr(tl, op)(T(a), 1, out=(i, v)), lambda: getattr(torch, op)(TT(a), 1, out=(ti, tv)))


def _np_softmax(a, dim):
    e = np.exp(a - a.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def test_softmax_log_softmax_out():
    rng = np.random.default_rng(4)
    a = rng.normal(size=(3, 7)).astype(np.float32)
    for dim in (0, 1, -1):
        o = _rt.empty(0)
        assert tl.softmax(T(a), dim, out=o) is o
        close(o, _np_softmax(a.astype(np.float64), dim), 1e-6)
        o = _rt.empty(0)
        assert tl.log_softmax(T(a), dim, out=o) is o
        close(o, np.log(_np_softmax(a.astype(np.float64), dim)), 1e-5)
    o = _rt.transpose(_rt.empty(7, 3), 0, 1)      # strided out= of the right shape: written through
    tl.softmax(T(a), 1, out=o)
    close(o, _np_softmax(a.astype(np.float64), 1), 1e-6)
    o64 = _rt.empty(0, dtype=tl.float64)
    tl.softmax(T(a), 1, dtype=tl.float64, out=o64)
    close(o64, _np_softmax(a.astype(np.float64), 1), 1e-12)
    with pytest.raises(RuntimeError, match="^Expected out tensor to have dtype float, but got double instead$"):
        tl.softmax(T(a), 1, out=_rt.empty(0, dtype=tl.float64))
    with pytest.warns(UserWarning, match="was resized"):
        tl.log_softmax(T(a), 1, out=_rt.empty(2))


def test_nll_loss_out():
    rng = np.random.default_rng(8)
    x = np.log(_np_softmax(rng.normal(size=(5, 4)), 1))
    t = np.array([0, 3, 1, 1, 2])
    w = rng.uniform(0.5, 2, 4)
    picked = -x[np.arange(5), t]
    nn = tl._C._nn
    for red, want in ((0, picked * w[t]), (1, (picked * w[t]).sum() / w[t].sum()), (2, (picked * w[t]).sum())):
        o = _rt.empty(0, dtype=tl.float64)
        assert nn.nll_loss(T(x), T(t), T(w), red, out=o) is o
        close(o, want, 1e-12)
    o, tw = _rt.empty(0, dtype=tl.float64), _rt.empty(0, dtype=tl.float64)
    r = nn.nll_loss_forward(T(x), T(t), T(w), 2, -100, out=(o, tw))
    assert r[0] is o and r[1] is tw
    close(o, (picked * w[t]).sum(), 1e-12)
    close(tw, w[t].sum(), 1e-12)
    with pytest.raises(RuntimeError, match="^Expected out tensor to have dtype double, but got float instead$"):
        nn.nll_loss(T(x), T(t), out=_rt.empty(0))


@needs_torch
def test_softmax_nll_out_vs_torch():
    rng = np.random.default_rng(9)
    a = rng.normal(size=(4, 5)).astype(np.float32)
    for f in ("softmax", "log_softmax"):
        o, to = _rt.empty(0), torch.empty(0)
        getattr(tl, f)(T(a), 0, out=o)
        getattr(torch, f)(TT(a), 0, out=to)
        close(o, to.numpy(), 1e-6)
        same_error(lambda: getattr(tl, f)(T(a), 0, out=_rt.empty(0, dtype=tl.int64)),
                   lambda: getattr(torch, f)(TT(a), 0, out=torch.empty(0, dtype=torch.long)))
    x = np.log(_np_softmax(a.astype(np.float64), 1))
    t = np.array([0, 4, 2, 1])
    o, to = _rt.empty(0, dtype=tl.float64), torch.empty(0, dtype=torch.float64)
    tl._C._nn.nll_loss(T(x), T(t), None, 2, out=o)
    torch._C._nn.nll_loss(TT(x), TT(t), None, 2, out=to)
    close(o, to.numpy(), 1e-12)


CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
       "ge": np.greater_equal}


@pytest.mark.parametrize("op", sorted(CMP))
def test_comparison_scalar_out(op):
    a = np.array([[1, 2, 3], [3, 2, 1]], np.int32)
    o = _rt.empty(0, dtype=tl.bool)
    assert getattr(tl, op)(T(a), 2, out=o) is o
    close(o, CMP[op](a, 2))
    o = _rt.empty(2, 3, dtype=tl.float32)     # another out= dtype: stored as 1/0
    getattr(tl, op)(T(a), 2.5, out=o)
    close(o, CMP[op](a, 2.5).astype(np.float32), 0)
    if torch is not None:
        to = torch.empty(2, 3)
        getattr(torch, op)(TT(a), 2.5, out=to)
        close(o, to.numpy(), 0)


# ============================================================ PyTorch deviations fixed
def test_cat_stack_empty_list():
    for call in (lambda: tl.cat([]), lambda: tl.cat(()), lambda: tl.cat([], 1), lambda: tl.cat(tensors=[])):
        with pytest.raises(ValueError, match=r"^torch\.cat\(\): expected a non-empty list of Tensors$"):
            call()
    with pytest.raises(ValueError, match=r"^torch\.cat\(\): expected a non-empty list of Tensors$"):
        tl.cat([], out=_rt.empty(0))
    with pytest.raises(RuntimeError, match="^stack expects a non-empty TensorList$"):
        tl.stack([])
    close(tl.cat([T(np.ones(2)), T(np.zeros(1))]), np.array([1.0, 1.0, 0.0]), 0)
    if torch is not None:
        same_error(lambda: tl.cat([]), lambda: torch.cat([]))
        same_error(lambda: tl.stack([]), lambda: torch.stack([]))


def test_number_matmul_tensor_is_type_error():
    t = T(np.ones(2))
    with pytest.raises(TypeError, match=re.escape("unsupported operand type(s) for @: 'int' and 'Tensor'")):
        2 @ t
    with pytest.raises(TypeError, match=re.escape("unsupported operand type(s) for @: 'Tensor' and 'float'")):
        t @ 2.0
    assert (t @ t).item() == 2.0
    if torch is not None:
        with pytest.raises(TypeError, match=re.escape("unsupported operand type(s) for @: 'int' and 'Tensor'")):
            2 @ torch.ones(2)


DOF = "degrees of freedom is <= 0. Correction should be strictly less than the reduction factor (input numel divided by output numel)."


def _warned(call):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        call()
    return [(x.category, str(x.message)) for x in w]


@pytest.mark.parametrize("call, name", [
    (lambda x: tl.var(x), "var"), (lambda x: x.var(), "var"), (lambda x: tl.std(x, 0), "std"),
    (lambda x: x.std(correction=2), "std"), (lambda x: tl.var_mean(x), "var_mean"), (lambda x: tl.std_mean(x), "std_mean"),
    (lambda x: tl.var(x, 0, out=_rt.empty(())), "var"), (lambda x: tl.var(_rt.empty(0)), "var"),
])
def test_var_std_dof_warning(call, name):
    assert _warned(lambda: call(T(np.ones(1, np.float32)))) == [(UserWarning, f"{name}(): {DOF}")]


def test_var_no_warning_when_dof_positive():
    assert _warned(lambda: tl.var(T(np.ones(1)), correction=0)) == []
    assert _warned(lambda: tl.std(T(np.ones(3)))) == []


@needs_torch
def test_warnings_vs_torch():
    for f in (lambda m, x: m.var(x), lambda m, x: m.std_mean(x, correction=3), lambda m, x: m.var(x[:0], 0)):
        want = [str(m).split(" (Triggered")[0] for c, m in _warned(lambda: f(torch, torch.ones(2, 1)))]
        got = [m for c, m in _warned(lambda: f(tl, T(np.ones((2, 1), np.float32))))]
        assert got == want


def test_where_uint8_and_scatter_reduce_warnings():
    w = _warned(lambda: tl.where(T(np.array([1, 0], np.uint8)), T(np.ones(2)), T(np.zeros(2))))
    assert w == [(UserWarning, "where received a uint8 condition tensor. This behavior is deprecated and will be "
                               "removed in a future version of PyTorch. Use a boolean condition instead.")]
    w = _warned(lambda: [tl.scatter(T(np.zeros(3)), 0, T(np.array([0])), T(np.ones(1)), reduce="add")
                         for _ in range(2)])   # once per process, as PyTorch's TORCH_WARN_ONCE
    assert len(w) <= 1
    assert all(m.startswith("The reduce argument of torch.scatter with Tensor src is deprecated") for c, m in w)


# ============================================================ singular values, matrix norms
INF = float("inf")
ORDS = ["fro", "nuc", INF, -INF, 1, -1, 2, -2]


def _np_ord(o):
    return {INF: np.inf, -INF: -np.inf}.get(o, o)


@pytest.mark.parametrize("dt", [tl.float32, tl.float64], ids=lambda d: NAMES[d])
@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (1, 1), (2, 3, 4), (2, 1, 4, 4)])
def test_svd_vs_numpy(dt, shape):
    rng = np.random.default_rng(hash((shape, NAMES[dt])) % 2**32)
    a = rng.normal(size=shape).astype(NPT[dt])
    tol = 1e-4 if dt is tl.float32 else 1e-11
    s = tl.linalg.svdvals(T(a))
    assert s.dtype is dt
    close(s, np.linalg.svd(a.astype(np.float64), compute_uv=False), tol)
    for full in (False, True):
        U, S, Vh = tl.linalg.svd(T(a), full_matrices=full)
        m, n = shape[-2:]
        k = min(m, n)
        assert tuple(U.shape) == shape[:-2] + ((m, m) if full else (m, k))
        assert tuple(Vh.shape) == shape[:-2] + ((n, n) if full else (k, n))
        u, vh = np_of(U).astype(np.float64), np_of(Vh).astype(np.float64)
        rec = (u[..., :, :k] * np_of(S)[..., None, :]) @ vh[..., :k, :]
        np.testing.assert_allclose(rec, a, rtol=tol * 10, atol=tol * 10)
        eye = np.broadcast_to(np.eye(u.shape[-1]), u.shape[:-2] + (u.shape[-1],) * 2)
        np.testing.assert_allclose(np.swapaxes(u, -1, -2) @ u, eye, atol=tol * 10)
    # a transposed view, an empty matrix
    close(tl.linalg.svdvals(_rt.transpose(T(a), -1, -2)), np.linalg.svd(np.swapaxes(a, -1, -2).astype(np.float64),
                                                                        compute_uv=False), tol)
    assert tuple(tl.linalg.svdvals(T(np.zeros((0, 3), NPT[dt]))).shape) == (0,)


def test_svd_errors():
    with pytest.raises(RuntimeError, match="^linalg.svd: The input tensor A must have at least 2 dimensions.$"):
        tl.linalg.svdvals(T(np.ones(3)))
    with pytest.raises(RuntimeError, match="^linalg.svd: Expected a floating point or complex tensor as input. Got Long$"):
        tl.linalg.svdvals(T(np.ones((2, 2), np.int64)))


@pytest.mark.parametrize("ord", ORDS, ids=str)
def test_matrix_norm_vs_numpy(ord):
    rng = np.random.default_rng(31)
    a = rng.normal(size=(2, 4, 3))
    want = np.linalg.norm(a, _np_ord(ord), axis=(-2, -1))
    close(tl.linalg.matrix_norm(T(a), ord), want, 1e-12)
    close(tl.linalg.matrix_norm(T(a), ord), want, 1e-12)
    close(tl.linalg.matrix_norm(T(a), ord, dim=(2, 1)), np.linalg.norm(a, _np_ord(ord), axis=(2, 1)), 1e-12)
    close(tl.linalg.matrix_norm(T(a), ord, dim=(0, 2), keepdim=True),
          np.linalg.norm(a, _np_ord(ord), axis=(0, 2), keepdims=True), 1e-12)
    close(tl.linalg.matrix_norm(_rt.transpose(T(a), 0, 2), ord), np.linalg.norm(a.T, _np_ord(ord), axis=(-2, -1)),
          1e-12)
    r = tl.linalg.matrix_norm(T(a.astype(np.float32)), ord, dtype=tl.float64)
    assert r.dtype is tl.float64
    close(r, np.linalg.norm(a.astype(np.float32).astype(np.float64), _np_ord(ord), axis=(-2, -1)), 1e-12)
    o = _rt.empty(0, dtype=tl.float64)
    assert tl.linalg.matrix_norm(T(a), ord, out=o) is o
    close(o, want, 1e-12)
    # linalg.norm of a matrix with ord: the matrix norm; torchlet.norm for the string orders
    close(tl.linalg.norm(T(a[0]), ord), np.linalg.norm(a[0], _np_ord(ord)), 1e-12)
    close(tl.linalg.norm(T(a), ord, dim=(1, 2)), want, 1e-12)
    if isinstance(ord, str):
        close(tl.norm(T(a), ord, dim=(1, 2)), want, 1e-12)
        close(T(a[0]).norm(ord), np.linalg.norm(a[0], ord), 1e-12)


@needs_torch
@pytest.mark.parametrize("shape", [(5, 0), (0, 5), (2, 5, 0), (3, 0, 4)])
@pytest.mark.parametrize("ord", [1, -1, float("inf"), -float("inf")])
@pytest.mark.parametrize("keepdim", [False, True])
def test_matrix_norm_empty_like_torch(shape, ord, keepdim):
    """The max of no column (row) sums is 0, outside the graph; the min of none
    is amin's error, as PyTorch."""
    x = torch.zeros(shape, dtype=torch.float64, requires_grad=True)
    try:
        want = torch.linalg.matrix_norm(x, ord, keepdim=keepdim)
    except IndexError as e:
        with pytest.raises(IndexError, match="^" + re.escape(str(e)) + "$"):
            tl.linalg.matrix_norm(T(np.zeros(shape)), ord, keepdim=keepdim)
        return
    got = tl.linalg.matrix_norm(T(np.zeros(shape)).requires_grad_(), ord, keepdim=keepdim)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(np_of(got.detach()), want.detach().numpy())
    assert got.requires_grad == want.requires_grad
    np.testing.assert_array_equal(np_of(tl.linalg.norm(T(np.zeros(shape[-2:])), ord)),
                                  torch.linalg.norm(torch.zeros(shape[-2:], dtype=torch.float64), ord).numpy())


def test_linalg_norm_vector_cases_and_errors():
    a = np.random.default_rng(5).normal(size=(3, 4))
    close(tl.linalg.norm(T(a)), np.linalg.norm(a), 1e-12)                  # ord None: 2-norm of all
    close(tl.linalg.norm(T(a), 3, dim=1), np.linalg.norm(a, 3, axis=1), 1e-12)
    close(tl.linalg.norm(T(a[0]), 1), np.linalg.norm(a[0], 1), 1e-12)
    close(tl.norm(T(a), "nuc"), np.linalg.norm(a, "nuc"), 1e-12)
    msgs = [
        (lambda: tl.linalg.norm(T(a), dim=(0, 1, 1)), "linalg.norm: If dim is specified, it must be of length 1 or 2. Got [0, 1, 1]"),
        (lambda: tl.linalg.norm(T(np.ones((2, 2, 2))), 2), "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got 3D."),
        (lambda: tl.linalg.matrix_norm(T(a), 3), "linalg.matrix_norm: Order 3 not supported."),
        (lambda: tl.linalg.matrix_norm(T(a), 0.5), "linalg.matrix_norm: Order 0.5 not supported."),
        (lambda: tl.linalg.matrix_norm(T(a), "abc"), "linalg.matrix_norm: Order abc not supported."),
        (lambda: tl.linalg.matrix_norm(T(np.ones(3))), "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."),
        (lambda: tl.linalg.matrix_norm(T(np.ones((3, 3), np.int64))), "linalg.matrix_norm: Expected a floating point or complex tensor as input. Got Long"),
        (lambda: tl.linalg.matrix_norm(T(a), dim=(0, 0)), "linalg.matrix_norm: dims must be different. Got (0, 0)"),
        (lambda: tl.linalg.matrix_norm(T(a), dim=(1, -1)), "linalg.matrix_norm: dims must be different. Got (1, 1)"),
        (lambda: tl.linalg.matrix_norm(T(a), "nuc", dtype=tl.int64), "linalg.matrix_norm: dtype should be floating point or complex, but got Long"),
        (lambda: tl.linalg.matrix_norm(T(a).to(tl.float16), "nuc"), "linalg.matrix_norm: Low precision dtypes not supported. Got Half"),
        (lambda: tl.norm(T(a), "fro", (0, 1, 1)), "linalg.matrix_norm: dim must be a 2-tuple. Got 0 1 1"),
    ]
    for call, msg in msgs:
        with pytest.raises(RuntimeError, match="^" + re.escape(msg) + "$"):
            call()
    with pytest.raises(IndexError, match=re.escape("Dimension out of range (expected to be in range of [-2, 1], but got 5)")):
        tl.linalg.matrix_norm(T(a), dim=(0, 5))
    close(tl.linalg.matrix_norm(T(np.ones((0, 3))), 2), np.array(0.0), 0)


@needs_torch
@pytest.mark.parametrize("ord", ORDS, ids=str)
def test_matrix_norm_vs_torch(ord):
    rng = np.random.default_rng(41)
    a = rng.normal(size=(3, 5, 4)).astype(np.float32)
    for kw in ({}, {"dim": (0, 2)}, {"dim": (-1, -3), "keepdim": True}, {"dtype": tl.float64}):
        tkw = {k: (torch.float64 if v is tl.float64 else v) for k, v in kw.items()}
        got = tl.linalg.matrix_norm(T(a), ord, **kw)
        want = torch.linalg.matrix_norm(TT(a), ord, **tkw)
        assert NAMES[got.dtype] == str(want.dtype).split(".")[-1]
        close(got, want.numpy(), 1e-5)
    close(tl.linalg.norm(T(a[0]), ord), torch.linalg.norm(TT(a[0]), ord).numpy(), 1e-5)
    if isinstance(ord, str):
        close(tl.norm(T(a), ord, (1, 2)), torch.norm(TT(a), ord, (1, 2)).numpy(), 1e-5)
    # gradients (svdvals' backward for nuc / 2 / -2)
    x = T(a.astype(np.float64)).requires_grad_()
    tx = TT(a.astype(np.float64)).requires_grad_()
    tl.linalg.matrix_norm(x, ord).sum().backward()
    torch.linalg.matrix_norm(tx, ord).sum().backward()
    close(x.grad, tx.grad.numpy(), 1e-9)
    same_error(lambda: tl.linalg.matrix_norm(T(a), ord, dim=(0, 0)), lambda: torch.linalg.matrix_norm(TT(a), ord, dim=(0, 0)))


def test_svd_backward_of_u():
    """gradients through U and Vh (tests/autograd/test_svd_backward.py checks them in depth)"""
    x = T(np.random.default_rng(2).normal(size=(3, 3))).requires_grad_()
    U, S, Vh = tl.linalg.svd(x)
    (U * U * tl.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert x.grad is not None and np.isfinite(x.grad.numpy()).all()
