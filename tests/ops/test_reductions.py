"""Reductions (kernels/native/reduce_*.c): sum, mean,
prod, amax/amin, max/min (full, .dim -> torchlet.return_types.max, .other),
argmax/argmin, var/std/var_mean/std_mean, logsumexp, linalg_vector_norm /
torchlet.norm, all/any, cumsum/cumprod, flip.

Against numpy always (random data, odd shapes, dim lists with negative dims,
keepdim, non-contiguous inputs, 0-dim, empty) and torch when installed (values,
result dtypes, error types and messages); dtype= and out= rules, NaN
propagation, the 1e-6 accuracy bar at 2^24 float32 elements, results that do
not depend on the thread count, kernels at every CPU capability level."""
import itertools
import warnings

import numpy as np
import pytest

import torchlet as tl

from ops_helpers import NAMES, needs_torch, torch

R = np.random.default_rng(2468)

NPT = {tl.bool: np.bool_, tl.uint8: np.uint8, tl.int8: np.int8, tl.int16: np.int16, tl.int32: np.int32,
       tl.int64: np.int64, tl.float16: np.float16, tl.float32: np.float32, tl.float64: np.float64}


def arr(shape, dt=np.float32):
    if np.dtype(dt) == np.bool_:
        return R.random(shape) < 0.5
    if np.issubdtype(dt, np.integer):
        lo = 0 if np.issubdtype(dt, np.unsignedinteger) else -5
        return R.integers(lo, 6, shape).astype(dt)
    return R.standard_normal(shape).astype(dt)


def T(x):
    """a torchlet tensor holding a copy of numpy x"""
    return tl.from_numpy(np.array(x, copy=True))


def views(a):
    """(name, numpy view, torchlet view) of the same data: contiguous,
    transposed and stepped"""
    t = T(a)
    out = [("contiguous", a, t)]
    if a.ndim >= 2:
        out.append(("transposed", a.swapaxes(0, -1), t.transpose(0, -1)))
        out.append(("stepped", a[::2], t[::2]))
    return out


def close(t, ref, rtol=1e-5, atol=1e-6):
    got = t.numpy()
    assert got.shape == np.shape(ref), (got.shape, np.shape(ref))
    np.testing.assert_allclose(got.astype(np.float64), np.asarray(ref, dtype=np.float64), rtol=rtol, atol=atol)


SHAPES_DIMS = [((5,), None), ((5,), 0), ((3, 4), 1), ((3, 4), -2), ((2, 3, 4), (0, 2)), ((2, 3, 4), (-1, 0)),
               ((2, 3, 4), (0, 1, 2)), ((4, 1, 3), 1), ((), None), ((), 0)]


# ------------------------------------------------------------------ sum / mean / prod / amax / amin

NP_RED = {"sum": np.sum, "mean": np.mean, "prod": np.prod, "amax": np.max, "amin": np.min}


@pytest.mark.parametrize("op", list(NP_RED))
@pytest.mark.parametrize("shape,dim", SHAPES_DIMS)
@pytest.mark.parametrize("keepdim", [False, True])
def test_vs_numpy(cpu_capability, op, shape, dim, keepdim):
    a = arr(shape, np.float64)
    if op == "prod" and dim is not None and not isinstance(dim, int):
        pytest.skip("prod takes one dim")
    for name, av, tv in views(a):
        nd = None if dim is None else dim
        if av.ndim == 0 and dim is not None:
            nd = None   # numpy has no axis on a 0-dim array; the result is the value
        ref = NP_RED[op](av, axis=nd, keepdims=keepdim)
        if dim is None:
            got = getattr(tl, op)(tv) if op in ("sum", "mean", "prod") else getattr(tl, op)(tv, (), keepdim)
            if op in ("sum", "mean", "prod"):
                ref = NP_RED[op](av)
        else:
            got = getattr(tl, op)(tv, dim, keepdim)
        close(got, ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dt", [tl.float32, tl.float16, tl.bfloat16, tl.int32, tl.uint8, tl.bool])
def test_dtypes(dt):
    a = arr((3, 5), np.float32 if dt in (tl.float16, tl.bfloat16) else NPT.get(dt, np.float32))
    x = T(a).to(dt)
    xf = x.to(tl.float64).numpy()
    integral = dt in (tl.int32, tl.uint8, tl.bool)
    s = tl.sum(x, 1)
    assert s.dtype == (tl.int64 if integral else dt)
    assert tl.prod(x).dtype == (tl.int64 if integral else dt)
    tol = 1e-2 if dt in (tl.float16, tl.bfloat16) else 1e-6
    close(s.to(tl.float64), xf.sum(1), rtol=tol, atol=tol)
    close(tl.prod(x, 0).to(tl.float64), xf.prod(0), rtol=tol, atol=tol)
    if dt is not tl.bool:
        assert tl.amax(x, 1).dtype == dt
        close(tl.amax(x, 1).to(tl.float64), xf.max(1))
        close(tl.amin(x, 0).to(tl.float64), xf.min(0))
    if integral:
        with pytest.raises(RuntimeError, match=r"mean\(\): could not infer output dtype. Input dtype must be either "
                                               r"a floating point or complex dtype. Got: " + tl_scalar_name(dt)):
            tl.mean(x)
    else:
        assert tl.mean(x).dtype == dt
        close(tl.mean(x, 0).to(tl.float64), xf.mean(0), rtol=tol, atol=tol)


def tl_scalar_name(dt):
    return {tl.int32: "Int", tl.uint8: "Byte", tl.bool: "Bool", tl.int64: "Long"}[dt]


def test_dtype_argument_and_out():
    a = arr((4, 3))
    x = T(a)
    r = tl.sum(x, 0, dtype=tl.float64)
    assert r.dtype == tl.float64
    close(r, a.astype(np.float64).sum(0), rtol=1e-12)
    assert tl.mean(x, dtype=tl.float64).dtype == tl.float64
    with pytest.raises(RuntimeError, match="Optional dtype must be either a floating point or complex dtype. Got: Long"):
        tl.mean(x, dtype=tl.int64)
    xi = T(arr((4, 3), np.int32))
    assert tl.prod(xi, 1, dtype=tl.float32).dtype == tl.float32
    assert tl.sum(x.to(tl.float16), 1, dtype=tl.int32).dtype == tl.int32
    # out=: the result in out's dtype and shape (resized)
    out = tl.empty(0, dtype=tl.float64)
    r = tl.mean(x, 1, out=out)
    assert r is out and out.shape == (4,) and out.dtype == tl.float64
    close(out, a.astype(np.float64).mean(1), rtol=1e-6)
    out = tl.empty(0)
    tl.prod(x, 0, out=out)
    close(out, a.prod(0), rtol=1e-5)
    with pytest.raises(RuntimeError, match="Expected the dtype for input and out to match, but got Float for "
                                           "input's dtype and Double for out's dtype."):
        tl.amax(x, 0, out=tl.empty(0, dtype=tl.float64))
    out = tl.empty(0)
    tl.amax(x, (0, 1), keepdim=True, out=out)
    assert out.shape == (1, 1) and out.item() == a.max()


def test_empty():
    e, e2 = tl.empty(0), tl.empty(0, 3)
    assert tl.sum(e).item() == 0 and tl.prod(e).item() == 1
    assert np.isnan(tl.mean(e).item())
    assert np.isnan(tl.mean(e2, 0).numpy()).all() and tl.mean(e2, 0).shape == (3,)
    assert (tl.prod(e2, 0).numpy() == 1).all()
    assert tl.amax(e2, 1).shape == (0,) and tl.sum(e2, 1).shape == (0,)
    with pytest.raises(RuntimeError, match=r"amax\(\): Expected reduction dim to be specified for input.numel\(\) == 0. "
                                           r"Specify the reduction dim with the 'dim' argument."):
        tl.amax(e)
    with pytest.raises(IndexError, match=r"amin\(\): Expected reduction dim 0 to have non-zero size."):
        tl.amin(e2, 0)
    with pytest.raises(RuntimeError, match=r"max\(\): Expected reduction dim to be specified"):
        tl.max(e)
    with pytest.raises(IndexError, match=r"max\(\): Expected reduction dim 0 to have non-zero size."):
        tl.max(e2, 0)
    assert tl.max(e2, 1).values.shape == (0,)
    with pytest.raises(IndexError, match=r"argmax\(\): Expected reduction dim to be specified for input.numel\(\) == 0.$"):
        tl.argmax(e)
    assert tl.logsumexp(e2, 0).numpy().tolist() == [-np.inf] * 3
    assert tl.all(e).item() is True and tl.any(e).item() is False
    assert tl.cumsum(e2, 0).shape == (0, 3)


def test_dim_errors():
    x = T(arr((2, 3)))
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"):
        tl.sum(x, 2)
    with pytest.raises(IndexError, match=r"but got -3"):
        tl.argmax(x, -3)
    for f in (tl.sum, tl.amax, tl.mean, tl.var):
        with pytest.raises(RuntimeError, match="dim 0 appears multiple times in the list of dims"):
            f(x, (0, 0))
    with pytest.raises(IndexError, match=r"range of \[-1, 0\], but got 1"):
        tl.cumsum(tl.tensor(2.0), 1)
    with pytest.raises(TypeError):
        tl.amax(x, "a")


# ------------------------------------------------------------------ max / min / argmax / argmin

@pytest.mark.parametrize("shape,dim", [((3, 4), 1), ((3, 4), 0), ((2, 3, 4), -1), ((5,), 0), ((), 0)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_dim(cpu_capability, shape, dim, keepdim):
    a = arr(shape, np.float64)
    for _, av, tv in views(a):
        if av.ndim == 0:
            r = tl.max(tv, dim, keepdim)
            assert r.values.item() == av and r.indices.item() == 0
            continue
        r = tl.max(tv, dim, keepdim)
        assert isinstance(r, tl.return_types.max) and r._fields == ("values", "indices")
        v, i = r
        close(v, av.max(dim, keepdims=keepdim))
        np.testing.assert_array_equal(i.numpy(), np.expand_dims(av.argmax(dim), dim) if keepdim else av.argmax(dim))
        assert i.dtype == tl.int64
        mn = tv.min(dim, keepdim=keepdim)
        close(mn.values, av.min(dim, keepdims=keepdim))
        np.testing.assert_array_equal(tl.argmin(tv, dim, keepdim).numpy(), mn.indices.numpy())


def test_max_full_ties_nan_bool():
    a = np.array([[1.0, 5.0, 5.0], [5.0, 0.0, -1.0]], np.float32)
    x = T(a)
    assert tl.max(x).item() == 5.0 and x.min().item() == -1.0
    np.testing.assert_array_equal(tl.max(x, 1).indices.numpy(), [1, 0])   # first of the ties
    assert tl.argmax(x).item() == 1 and tl.argmin(x).item() == 5
    assert tl.argmax(x, keepdim=True).shape == (1, 1)
    # NaN propagates (values NaN, index of the first NaN); float32 SIMD path and general path
    for n in (7, 300):
        b = R.standard_normal(n).astype(np.float32)
        b[n // 3] = np.nan
        b[n // 2] = np.nan
        y = T(b)
        assert np.isnan(tl.amax(y).item()) and np.isnan(tl.amin(y).item()) and np.isnan(y.max().item())
        assert tl.argmax(y).item() == n // 3 and tl.argmin(y).item() == n // 3
        assert tl.max(y, 0).indices.item() == n // 3
        b2 = np.stack([b, np.arange(n, dtype=np.float32)])
        np.testing.assert_array_equal(np.isnan(tl.amax(T(b2), 1).numpy()), [True, False])
        np.testing.assert_array_equal(np.isnan(tl.amax(T(b2.T.copy()), 0).numpy()), [True, False])
    xb = T(np.array([[True, False], [False, False]]))
    assert tl.max(xb).item() is True and tl.max(xb, 0).indices.numpy().tolist() == [0, 0]
    with pytest.raises(RuntimeError, match=r"argmax\(\): does not support bool input"):
        tl.argmax(xb)
    xi = T(np.array([3, -7, 9, 9], np.int64))
    assert tl.max(xi).item() == 9 and tl.argmax(xi).item() == 2 and tl.argmin(xi).item() == 1
    big = T(np.array([2 ** 62 + 1, 2 ** 62], np.int64))   # exact: integers are compared as int64
    assert tl.max(big).item() == 2 ** 62 + 1 and tl.argmin(big).item() == 1


def test_max_other_and_out():
    a, b = arr((2, 3)), arr((3,))
    np.testing.assert_array_equal(tl.max(T(a), T(b)).numpy(), np.maximum(a, b))
    np.testing.assert_array_equal(T(a).min(T(b)).numpy(), np.minimum(a, b))
    out = tl.empty(0, dtype=tl.float64)
    r = tl.max(T(a), out=out)   # max.unary_out: any out dtype
    assert r is out and out.shape == () and out.item() == pytest.approx(float(a.max()))
    out = tl.empty(0, dtype=tl.int32)
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype long int, but got int instead"):
        tl.argmax(T(a), out=out)
    o = tl.empty(0, dtype=tl.int64)
    tl.argmin(T(a), 1, out=o)
    np.testing.assert_array_equal(o.numpy(), a.argmin(1))


# ------------------------------------------------------------------ var / std

@pytest.mark.parametrize("shape,dim", [((7,), None), ((3, 4), 1), ((3, 4), (0, 1)), ((2, 3, 4), (-1, 0)),
                                       ((5, 3), 0)])
@pytest.mark.parametrize("correction", [None, 0, 2, 1.5])
@pytest.mark.parametrize("keepdim", [False, True])
def test_var_std(shape, dim, correction, keepdim):
    a = arr(shape, np.float64)
    ddof = 1 if correction is None else correction
    for _, av, tv in views(a):
        axis = dim if dim is None or isinstance(dim, int) else tuple(dim)
        ref = av.var(axis=axis, ddof=ddof, keepdims=keepdim)
        close(tl.var(tv, dim, correction=correction, keepdim=keepdim), ref, rtol=1e-12)
        close(tv.std(dim, correction=correction, keepdim=keepdim), np.sqrt(ref), rtol=1e-12)
        v, m = tl.var_mean(tv, dim, correction=correction, keepdim=keepdim)
        close(v, ref, rtol=1e-12)
        close(m, av.mean(axis=axis, keepdims=keepdim), rtol=1e-12, atol=1e-14)
        s, m = tl.std_mean(tv, dim, correction=correction, keepdim=keepdim)
        close(s, np.sqrt(ref), rtol=1e-12)


def test_var_overloads_and_errors():
    a = arr((4, 5))
    x = T(a)
    close(tl.var(x), a.var(ddof=1), rtol=1e-5)
    close(tl.var(x, False), a.var(), rtol=1e-5)
    close(x.var(1, unbiased=False), a.var(1), rtol=1e-5)
    close(tl.std(x, 0, True, True), a.std(0, ddof=1, keepdims=True), rtol=1e-5)
    close(tl.var_mean(x, False)[0], a.var(), rtol=1e-5)
    close(tl.std_mean(x, 1, True)[1], a.mean(1), rtol=1e-5)
    out = tl.empty(0, dtype=tl.float64)
    tl.var(x, 0, out=out)
    close(out, a.astype(np.float64).var(0, ddof=1), rtol=1e-6)
    assert tl.var(x.to(tl.float16)).dtype == tl.float16
    with pytest.raises(RuntimeError, match="std and var only support floating point and complex dtypes"):
        tl.var(T(arr((3,), np.int64)))
    assert np.isnan(tl.var(T(np.ones(1, np.float32))).item())   # dof 0 (warns, as PyTorch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.isinf(tl.var(T(np.array([1.0, 2.0])), correction=2).item())


# ------------------------------------------------------------------ logsumexp / norms

def _lse(a, axis, keepdims):
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isinf(m), 0, m)
    r = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    return r if keepdims else np.squeeze(r, axis=axis)


@pytest.mark.parametrize("shape,dim", [((3, 4), 1), ((3, 4), (0, 1)), ((2, 3, 4), (0, -1)), ((5,), 0)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_logsumexp(shape, dim, keepdim):
    a = arr(shape, np.float64) * 30
    for _, av, tv in views(a):
        close(tl.logsumexp(tv, dim, keepdim), _lse(av, dim, keepdim), rtol=1e-12)


def test_logsumexp_special():
    x = T(np.array([[-np.inf, -np.inf], [np.inf, 1.0], [np.nan, 0.0], [1000.0, 1000.0]]))
    r = tl.logsumexp(x, 1).numpy()
    assert r[0] == -np.inf and r[1] == np.inf and np.isnan(r[2]) and r[3] == pytest.approx(1000 + np.log(2))
    xi = T(np.arange(6, dtype=np.int64).reshape(2, 3))
    assert tl.logsumexp(xi, 1).dtype == tl.float32
    close(tl.logsumexp(xi, 1), _lse(np.arange(6.0).reshape(2, 3), 1, False), rtol=1e-6)
    with pytest.raises(RuntimeError, match=r"logsumexp\(\): Expected floating point type for result tensor, but got: Long"):
        tl.logsumexp(T(arr((2, 3))), 1, out=tl.empty(0, dtype=tl.int64))


ORDS = [2, 1, 3, 0.5, 0, float("inf"), float("-inf"), -1]


@pytest.mark.parametrize("ord", ORDS)
@pytest.mark.parametrize("shape,dim", [((7,), None), ((3, 4), 1), ((3, 4), (0, 1)), ((2, 3, 4), (0, 2))])
@pytest.mark.parametrize("keepdim", [False, True])
def test_vector_norm(ord, shape, dim, keepdim):
    a = arr(shape, np.float64)
    for _, av, tv in views(a):
        axis = tuple(range(av.ndim)) if dim is None else (dim if isinstance(dim, tuple) else (dim,))
        flat = np.moveaxis(av, axis, tuple(range(-len(axis), 0)))
        flat = flat.reshape(flat.shape[:av.ndim - len(axis)] + (-1,))
        ref = np.linalg.norm(flat, ord=ord, axis=-1)
        if keepdim:
            ref = np.expand_dims(ref, axis)
        close(tl.linalg.vector_norm(tv, ord, dim, keepdim), ref, rtol=1e-12)
        close(tl.linalg.vector_norm(tv, ord, dim, keepdim), ref, rtol=1e-12)


def test_norm_api_and_errors():
    a = arr((3, 4))
    x = T(a)
    close(tl.norm(x), np.linalg.norm(a), rtol=1e-6)
    close(x.norm(), np.linalg.norm(a), rtol=1e-6)
    close(tl.norm(x, "fro", dim=(0, 1)), np.linalg.norm(a), rtol=1e-6)
    close(tl.norm(x, 1, dim=1), np.abs(a).sum(1), rtol=1e-6)
    close(x.norm(p=float("inf"), dim=0, keepdim=True), np.abs(a).max(0, keepdims=True))
    assert tl.norm(x, dtype=tl.float64).dtype == tl.float64
    assert tl.linalg.vector_norm(x.to(tl.float16)).dtype == tl.float16
    close(tl.norm(x, "nuc"), np.linalg.norm(a, "nuc"), rtol=1e-6)   # linalg_matrix_norm (docs/OPS_MISSING.md)
    with pytest.raises(RuntimeError, match="linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long"):
        tl.norm(T(np.arange(3)))
    with pytest.raises(RuntimeError, match="linalg.vector_norm: dtype should be floating point or complex, but got Long"):
        tl.linalg.vector_norm(x, dtype=tl.int64)
    with pytest.raises(RuntimeError, match="cannot compute the inf norm on an empty tensor because the operation "
                                           "does not have an identity"):
        tl.linalg.vector_norm(tl.empty(0), float("inf"))
    with pytest.raises(RuntimeError, match="cannot compute the -inf norm on the dimension 0because this dimension is empty"):
        tl.linalg.vector_norm(tl.empty(0, 3), float("-inf"), 0)
    assert tl.linalg.vector_norm(tl.empty(0, 3), float("inf"), 1).shape == (0,)
    assert tl.norm(tl.empty(0)).item() == 0


# ------------------------------------------------------------------ all / any

@pytest.mark.parametrize("dt", [tl.bool, tl.uint8, tl.int32, tl.float32])
def test_all_any(dt):
    a = arr((3, 4), NPT[dt])
    if dt is not tl.bool:
        a = a * (R.random((3, 4)) < 0.8)   # some zeros
    x = T(a)
    rdt = tl.uint8 if dt is tl.uint8 else tl.bool
    for f, nf in ((tl.all, np.all), (tl.any, np.any)):
        assert f(x).dtype == rdt and bool(f(x).item()) == nf(a)
        np.testing.assert_array_equal(f(x, 1).numpy().astype(bool), nf(a, 1))
        np.testing.assert_array_equal(f(x.t(), 0, True).numpy().astype(bool), nf(a.T, 0, keepdims=True))
        np.testing.assert_array_equal(f(x, (0, 1)).numpy().astype(bool), nf(a))
        np.testing.assert_array_equal(f(x, dim=None).numpy().astype(bool), nf(a))
        np.testing.assert_array_equal(f(x, ()).numpy().astype(bool), a.astype(bool))   # dim=[]: no reduction
    assert tl.all(T(np.array([np.nan, 1.0]))).item() is True   # NaN is true
    out = tl.empty(0, dtype=tl.uint8)
    tl.any(x, 0, out=out)
    np.testing.assert_array_equal(out.numpy(), np.any(a, 0).astype(np.uint8))
    with pytest.raises(RuntimeError, match="all only supports bool tensor for result, got: Float"):
        tl.all(x, out=tl.empty(0))


# ------------------------------------------------------------------ cumsum / cumprod / flip

@pytest.mark.parametrize("op,nf", [("cumsum", np.cumsum), ("cumprod", np.cumprod)])
@pytest.mark.parametrize("shape,dim", [((5,), 0), ((3, 4), 1), ((3, 4), -2), ((2, 3, 4), 1), ((0, 3), 0)])
def test_scans(op, nf, shape, dim):
    a = arr(shape, np.float64)
    for _, av, tv in views(a):
        close(getattr(tl, op)(tv, dim), nf(av, axis=dim), rtol=1e-12)
    ai = arr(shape, np.int32)
    r = getattr(tl, op)(T(ai), dim)
    assert r.dtype == tl.int64
    np.testing.assert_array_equal(r.numpy(), nf(ai.astype(np.int64), axis=dim))


def test_scan_dtypes_out_inplace():
    a = arr((3, 4))
    x = T(a)
    assert tl.cumsum(T(a > 0), 0).dtype == tl.int64
    assert tl.cumsum(x, 0, dtype=tl.float64).dtype == tl.float64
    r = tl.cumsum(x, 0, dtype=tl.int32)
    np.testing.assert_array_equal(r.numpy(), np.cumsum(a.astype(np.int32), 0))
    out = tl.empty(0, dtype=tl.float64)
    tl.cumprod(x, 1, out=out)
    close(out, np.cumprod(a.astype(np.float64), 1), rtol=1e-6)
    y = T(a)
    assert y.cumsum_(1) is y
    close(y, np.cumsum(a, 1), rtol=1e-5)
    s = tl.tensor(2.5)
    assert tl.cumsum(s, 0).item() == 2.5 and tl.cumprod(s, -1).shape == ()
    big = T(np.array([2 ** 40, 2 ** 40], np.int64))
    assert tl.cumprod(big, 0).numpy().tolist() == [2 ** 40, 0]   # wraps like int64


def test_flip():
    a = arr((2, 3, 4))
    for _, av, tv in views(a):
        np.testing.assert_array_equal(tl.flip(tv, (0, 2)).numpy(), np.flip(av, (0, 2)))
        np.testing.assert_array_equal(tv.flip([-1]).numpy(), np.flip(av, -1))
        np.testing.assert_array_equal(tv.flip(()).numpy(), av)
    with pytest.raises(RuntimeError, match="dim 1 appears multiple times"):
        tl.flip(T(a), (1, -2))


# ------------------------------------------------------------------ accuracy, threads, layouts

@pytest.mark.parametrize("gen", ["rand", "randn"])
def test_accuracy_2_24(gen):
    n = 1 << 24
    rng = np.random.default_rng(5)
    a = (rng.random(n) if gen == "rand" else rng.standard_normal(n)).astype(np.float32)
    a64 = a.astype(np.float64)
    x = T(a)
    s = a64.sum()
    for got, ref in ((tl.sum(x), s), (tl.mean(x), s / n), (tl.var(x), a64.var(ddof=1)),
                     (tl.std(x), a64.std(ddof=1)), (tl.norm(x), np.sqrt((a64 * a64).sum())),
                     (tl.logsumexp(x, 0), np.log(np.exp(a64 - a64.max()).sum()) + a64.max())):
        assert abs(got.item() - ref) <= 1e-6 * abs(ref), (got.item(), ref)
    m = tl.sum(x.view(4096, 4096), 0).numpy().astype(np.float64)
    np.testing.assert_allclose(m, a64.reshape(4096, 4096).sum(0), rtol=1e-5, atol=1e-4)


def test_threads_do_not_change_results():
    a = R.standard_normal(1 << 20).astype(np.float32)
    x = T(a)
    n0 = tl.get_num_threads()
    x64, x16 = T(a.astype(np.float64)), T(a.astype(np.float16))
    got = []
    try:   # full sums: subtrees of the pairwise tree claimed by the threads in any order
        for th in (1, 2, 3):
            tl.set_num_threads(th)
            got.append([tl.sum(x).item(), tl.mean(x).item(), tl.amax(x).item(), tl.sum(x64).item(),
                        tl.sum(x16).item(), tl.sum(x[3:]).item()])
    finally:
        tl.set_num_threads(n0)
    assert got[0] == got[1] == got[2]


@pytest.mark.parametrize("shape,dim", [((1 << 20,), None), ((3, 300001), 1), ((4096, 64), 1), ((64, 4096), 0),
                                       ((5, 70000), 0), ((2, 3, 70001), (1, 2)), ((300001,), 0)])
@pytest.mark.parametrize("op", ["amax", "amin", "max"])
def test_amax_threads_same_bits_and_nan(shape, dim, op):
    """float32 amax/amin/max split across threads (rows, columns, fixed chunks of
    a long row): 1 and 2 threads give the same bits and numpy's values, and any
    NaN (first, last, at a chunk boundary, in the tail) makes the result NaN."""
    a = R.standard_normal(shape).astype(np.float32)
    n = a.size
    flat_positions = [None, 0, n - 1, 65535, 65536, n // 2 + 7, n - 3]
    ref_fn = np.max if op in ("amax", "max") else np.min
    n0 = tl.get_num_threads()
    try:
        for pos in flat_positions:
            b = a.copy()
            if pos is not None:
                b.reshape(-1)[pos] = np.nan
            x = T(b)
            got = []
            for th in (1, 2):
                tl.set_num_threads(th)
                if op == "max" or dim is None:
                    r = getattr(tl, "max" if op == "max" else op)(x)
                else:
                    r = getattr(tl, op)(x, dim)
                got.append(r.numpy().copy())
            ax = None if (op == "max" or dim is None) else dim
            ref = ref_fn(b, axis=ax)
            assert got[0].tobytes() == got[1].tobytes(), (pos, th)
            np.testing.assert_array_equal(got[0], ref)   # NaN where numpy has NaN
            if pos is not None and ax is None:
                assert np.isnan(got[0])
    finally:
        tl.set_num_threads(n0)


@pytest.mark.parametrize("shape", [(1000,), (3, 257), (257, 3), (2, 130, 5), (129,), (16, 16)])
def test_amax_f32_layouts(cpu_capability, shape):
    """the float32 SIMD row/column kernels against the general path"""
    a = arr(shape)
    x = T(a)
    nd = len(shape)
    for k in range(1, nd + 1):
        for dims in itertools.combinations(range(nd), k):
            for f, nf in ((tl.amax, np.max), (tl.amin, np.min)):
                np.testing.assert_array_equal(f(x, dims).numpy(), nf(a, axis=dims))
                np.testing.assert_array_equal(f(x, dims, True).numpy(), nf(a, axis=dims, keepdims=True))


def test_sum_mean_leaf_tails(cpu_capability):
    """lengths around the vector widths and the 4096-element leaves"""
    for n in (1, 7, 15, 16, 17, 31, 33, 63, 64, 65, 127, 128, 129, 1023, 1025, 4095, 4096, 4097, 8193, 70000):
        a = arr((n,))
        # float32 partial sums (8 elements per lane): on random data an error
        # below ~2e-8 of sum|x| (measured), not relative to the near-zero
        # sums that mixed signs give
        np.testing.assert_allclose(tl.sum(T(a)).item(), a.astype(np.float64).sum(), rtol=1e-6,
                                   atol=1e-7 * np.abs(a).astype(np.float64).sum())
        np.testing.assert_allclose(tl.mean(T(a).to(tl.float16)).item(),
                                   a.astype(np.float16).astype(np.float64).mean(), rtol=2e-3, atol=2e-3)


def _adversarial_2_24(kind):
    """2^24 float32 values that a plain float32 accumulation gets wrong"""
    rng = np.random.default_rng(11)
    n = 1 << 24
    if kind == "ones":        # all ~1.0: a running float32 sum stalls near 2^24
        return (1.0 + rng.random(n) * 1e-3).astype(np.float32)
    if kind == "magnitudes":  # positive, 12 orders of magnitude mixed
        return np.exp(rng.uniform(-14, 14, n)).astype(np.float32)
    # mixed signs and magnitudes (a relative bar only makes sense against sum|x|)
    return (rng.standard_normal(n) * np.exp(rng.uniform(-8, 8, n))).astype(np.float32)


@pytest.mark.parametrize("kind", ["ones", "magnitudes", "mixed"])
def test_sum_accuracy_adversarial_2_24(kind):
    """float32 sum / mean / column and row sums within 1e-6 of the float64
    sum, relative to sum|x| (the same as relative to the sum for same-sign
    data); every kernel level, ISA by ISA"""
    a = _adversarial_2_24(kind)
    a64 = a.astype(np.float64)
    mag, s = np.abs(a64).sum(), a64.sum()
    a2 = a64.reshape(4096, 4096)
    for cap in tl._supported_cpu_capabilities():
        before = tl.get_cpu_capability()
        tl._set_cpu_capability(cap)
        try:
            x = T(a)
            assert abs(tl.sum(x).item() - s) <= 1e-6 * mag, (cap, tl.sum(x).item(), s)
            assert abs(tl.mean(x).item() - s / a.size) <= 1e-6 * mag / a.size, cap
            x2 = x.view(4096, 4096)
            for dim in (0, 1):
                got = tl.sum(x2, dim).numpy().astype(np.float64)
                err = np.abs(got - a2.sum(dim)) / np.abs(a2).sum(dim)
                assert err.max() <= 1e-6, (cap, dim, err.max())
        finally:
            tl._set_cpu_capability(before)


def test_sum_same_bits_every_isa():
    """the SIMD kernels of every ISA do the same float operations in the
    same order: one result, bit for bit"""
    a = arr((1000, 333))
    x = T(a)
    caps = tl._supported_cpu_capabilities()
    before = tl.get_cpu_capability()
    res = {}
    try:
        for cap in caps:
            tl._set_cpu_capability(cap)
            res[cap] = [tl.sum(x).item(), tl.sum(x, 0).numpy().tobytes(), tl.sum(x, 1).numpy().tobytes(),
                        tl.mean(x[:, 5:]).item()]
    finally:
        tl._set_cpu_capability(before)
    assert all(r == res[caps[0]] for r in res.values())


@pytest.mark.parametrize("rows", [1, 7, 8, 9, 17, 64])
@pytest.mark.parametrize("cols", [1, 15, 16, 17, 33, 2049, 4100])
def test_sum_columns(cpu_capability, rows, cols):
    """sum over an outer dim (the column kernel: 8 rows at a time, column
    blocks, vector and scalar tails) against float64"""
    a = arr((rows, cols))
    x = T(a)
    close(tl.sum(x, 0), a.astype(np.float64).sum(0), rtol=1e-6, atol=1e-5)
    close(tl.mean(x, 0, True), a.astype(np.float64).mean(0, keepdims=True), rtol=1e-6, atol=1e-6)
    a3 = arr((3, rows, cols))
    close(tl.sum(T(a3), 1), a3.astype(np.float64).sum(1), rtol=1e-6, atol=1e-5)   # per outer index
    close(tl.sum(T(a3), (0, 1)), a3.astype(np.float64).sum((0, 1)), rtol=1e-6, atol=1e-5)
    ai = arr((rows, cols), np.int32)
    np.testing.assert_array_equal(tl.sum(T(ai), 0).numpy(), ai.astype(np.int64).sum(0))


def test_sum_nan_inf_propagate(cpu_capability):
    for n in (5, 100, 4096, 5000):
        for pos in (0, n // 2, n - 1):
            a = np.ones((8, n), np.float32)
            a[3, pos] = np.nan
            x = T(a)
            assert np.isnan(tl.sum(x).item()) and np.isnan(tl.sum(x, 0).numpy()[pos])
            assert np.isnan(tl.sum(x, 1).numpy()[3]) and not np.isnan(tl.sum(x, 1).numpy()[2])
            a[3, pos] = np.inf
            assert tl.sum(T(a)).item() == np.inf and tl.sum(T(a), 0).numpy()[pos] == np.inf
            a[5, pos] = -np.inf
            assert np.isnan(tl.sum(T(a)).item()) and np.isnan(tl.sum(T(a), 0).numpy()[pos])


def test_sum_threads_do_not_change_results_dims():
    """the walk splits a kept dim across threads (columns or rows); each
    output is still summed in one fixed order"""
    cases = [((512, 700), 0), ((512, 700), 1), ((700, 512), None), ((40, 50, 60), (0, 2)), ((40, 50, 60), 1),
             ((3, 300000), 1), ((300000, 3), 0), ((64, 4096), 0)]
    n0 = tl.get_num_threads()
    try:
        for shape, dim in cases:
            for dt in (np.float32, np.float64, np.float16, np.int32):
                a = arr(shape, dt)
                xs = [T(a), T(a).transpose(0, -1)]
                got = {}
                for th in (1, 2):
                    tl.set_num_threads(th)
                    got[th] = [(tl.sum(x) if dim is None else tl.sum(x, dim)).numpy().tobytes() for x in xs]
                    if dt != np.int32:
                        got[th].append((tl.mean(xs[0]) if dim is None else tl.mean(xs[0], dim)).numpy().tobytes())
                assert got[1] == got[2], (shape, dim, dt)
    finally:
        tl.set_num_threads(n0)


def test_sum_integer_input_no_copy_semantics():
    """integer inputs are summed without a converted copy: the result still
    equals converting to the result dtype first (wrapping)"""
    a = R.integers(-2**31, 2**31 - 1, (1000, 37), dtype=np.int64).astype(np.int32)
    x = T(a)
    np.testing.assert_array_equal(tl.sum(x, 1).numpy(), a.astype(np.int64).sum(1))
    np.testing.assert_array_equal(tl.sum(x, 0, dtype=tl.int16).numpy(), a.astype(np.int16).sum(0, dtype=np.int16))
    np.testing.assert_array_equal(tl.sum(x, 0, dtype=tl.uint8).numpy(), a.astype(np.uint8).sum(0, dtype=np.uint8))
    b = a > 0
    assert tl.sum(T(b)).item() == b.sum()
    assert tl.sum(T(b), 0, dtype=tl.bool).numpy().tolist() == b.any(0).tolist()
    assert tl.sum(T(a), 0, dtype=tl.bool).numpy().tolist() == (a != 0).any(0).tolist()


def test_sum_layouts_merged_and_split():
    """flipped (negative strides), expanded (stride 0), permuted and stepped
    inputs through the dim merging, the column / row kernels and the thread
    split (above 2^16 elements), every dim combination, against float64"""
    a = arr((4, 130, 130))
    t = T(a)
    cases = [(t.flip((0, 2)), a[::-1, :, ::-1]), (T(a[:, :1]).expand(4, 130, 130), np.broadcast_to(a[:, :1], a.shape)),
             (t.permute(2, 0, 1), a.transpose(2, 0, 1)), (t[:, ::3, 1::2], a[:, ::3, 1::2])]
    n0 = tl.get_num_threads()
    try:
        for tv, av in cases:
            th, ah = tv.to(tl.float16), av.astype(np.float16).astype(np.float64)
            ti, ai = (tv * 10).to(tl.int32), (av * 10).astype(np.int32).astype(np.int64)
            for k in (1, 2, 3):
                for dims in itertools.combinations(range(3), k):
                    for nt in (1, 2):
                        tl.set_num_threads(nt)
                        close(tl.sum(tv, dims), av.astype(np.float64).sum(dims), rtol=1e-5, atol=1e-5)
                        close(tl.sum(th, dims), ah.sum(dims), rtol=1e-2, atol=1e-2)
                        np.testing.assert_array_equal(tl.sum(ti, dims).numpy(), ai.sum(dims))
    finally:
        tl.set_num_threads(n0)


# ------------------------------------------------------------------ direct kernels: var/std, norms, logsumexp, argmax
# (kernels/native/reduce_direct.c, kernels/cpu/reduce_stats_kernel.c, reduce_minmax_kernel.c): float32 and float64
# read in place (row kernels, column kernels across a kept inner dim, a full reduction in fixed chunks), other
# layouts through one contiguous copy; compared with float64 numpy on the same values.

def _np_lse(a, axis):
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isinf(m), 0, m)
    with np.errstate(divide="ignore"):
        return np.squeeze(np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m, axis=axis)


def _np_norm(a, ord, axis):
    x = np.abs(a)
    if ord == float("inf"):
        return x.max(axis=axis)
    if ord == float("-inf"):
        return x.min(axis=axis)
    if ord == 0:
        return (a != 0).sum(axis=axis).astype(np.float64)
    return (x ** ord).sum(axis=axis) ** (1.0 / ord)


def _check_stats(a, x, dims, rtol):
    """var/std/var_mean, norms, logsumexp of torchlet x (same values as numpy a) over dims"""
    a64 = a.astype(np.float64)
    for corr in (1, 0):
        with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")   # numpy: "Degrees of freedom <= 0" (a NaN / inf result, as torchlet)
            ref = a64.var(axis=dims, ddof=corr, keepdims=True)
        close(tl.var(x, dims, correction=corr), np.squeeze(ref, dims), rtol=rtol, atol=1e-12)
        v, m = tl.std_mean(x, dims, correction=corr, keepdim=True)
        close(v, np.sqrt(ref), rtol=rtol, atol=1e-12)
        close(m, a64.mean(axis=dims, keepdims=True), rtol=rtol, atol=1e-7)
    for ord in (2, 1, float("inf"), float("-inf"), 0, 3):
        close(tl.linalg.vector_norm(x, ord, dims), _np_norm(a64, ord, dims), rtol=rtol, atol=1e-12)
    # x - max is rounded in the input dtype (PyTorch's too): absolute error up to eps * max |x|
    close(tl.logsumexp(x, dims), _np_lse(a64, dims), rtol=rtol, atol=rtol * np.abs(a64).max(initial=1))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1000,), (3, 257), (257, 3), (2, 130, 5), (33,), (7, 17), (1, 1), (600, 2)])
@pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0")   # var with N - correction <= 0 (PyTorch warns too)
def test_direct_stats_layouts(cpu_capability, dt, shape):
    """row kernels, column kernels ([A, R, B] with B > 1) and the copy path (transposed / stepped views, reduced
    dims not adjacent), every dim combination"""
    rtol = 1e-6 if dt == np.float32 else 1e-12
    a = arr(shape, dt) * 3 + 1
    for _, av, tv in views(a):
        nd = av.ndim
        for k in range(1, nd + 1):
            for dims in itertools.combinations(range(nd), k):
                _check_stats(av, tv, dims, rtol)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1000,), (3, 257), (257, 3), (2, 130, 5), (7, 17), (600, 2)])
def test_direct_argmax_layouts(cpu_capability, dt, shape):
    """argmax/argmin/max.dim/min.dim through the row, column and copy paths, with ties (small integers)"""
    a = R.integers(-20, 20, shape).astype(dt)
    for _, av, tv in views(a):
        assert tl.argmax(tv).item() == av.argmax() and tl.argmin(tv).item() == av.argmin()
        for d in range(av.ndim):
            np.testing.assert_array_equal(tl.argmax(tv, d).numpy(), av.argmax(d))
            np.testing.assert_array_equal(tl.argmin(tv, d, True).numpy(), np.expand_dims(av.argmin(d), d))
            v, i = tl.max(tv, d)
            np.testing.assert_array_equal(v.numpy(), av.max(d))
            np.testing.assert_array_equal(i.numpy(), av.argmax(d))
            v, i = tl.min(tv, d)
            np.testing.assert_array_equal(v.numpy(), av.min(d))
            np.testing.assert_array_equal(i.numpy(), av.argmin(d))


@pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0")   # var with N - correction <= 0 (PyTorch warns too)
def test_direct_tails_and_chunks(cpu_capability):
    """lengths around the vector widths, var's 2048-element blocks, argmax's 8192-element blocks and the
    65536-element chunks of a full reduction; the best element placed at the start, the end and in between,
    ties across blocks and chunks"""
    for n in (1, 7, 15, 17, 31, 33, 63, 65, 1023, 1025, 2047, 2049, 4097, 8191, 8193, 65535, 65537,
              3 * 65536 + 5):
        a = arr((n,)) * 2 + 0.5
        x = T(a)
        _check_stats(a, x, (0,), 1e-6)
        close(tl.var(x), a.astype(np.float64).var(ddof=1) if n > 1 else np.nan, rtol=1e-6)
        close(tl.var(T(a.astype(np.float64))), a.astype(np.float64).var(ddof=1) if n > 1 else np.nan, rtol=1e-12)
        for pos in sorted({0, n // 3, n // 2, n - 1}):
            b = a.copy()
            b[pos] = 100.0
            b[min(n - 1, pos + 8195)] = 100.0   # a tie later (another block / chunk): the first one wins
            c = -b
            assert tl.argmax(T(b)).item() == pos and tl.argmin(T(c)).item() == pos
            assert tl.max(T(b), 0).indices.item() == pos
            b64 = b.astype(np.float64)
            assert tl.argmax(T(b64)).item() == pos and tl.argmin(T(-b64)).item() == pos


@pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0")   # var with N - correction <= 0 (PyTorch warns too)
def test_direct_nan_inf(cpu_capability):
    """NaN / inf through the row, column and chunked paths: argmax/argmin give the first NaN, norms and
    logsumexp propagate NaN, logsumexp of all -inf is -inf and of a +inf is +inf (PyTorch's rules)"""
    inf = np.inf
    for n in (5, 100, 70000):
        for dt in (np.float32, np.float64):
            a = arr((n,), dt)
            b = a.copy()
            b[n // 5] = inf
            b[n // 3 + 1] = np.nan
            b[n // 2 + 2] = np.nan
            assert tl.argmax(T(b)).item() == n // 3 + 1 and tl.argmin(T(b)).item() == n // 3 + 1
            assert np.isnan(tl.max(T(b), 0).values.item())
            for ord in (2, 1, inf, -inf, 3):
                assert np.isnan(tl.linalg.vector_norm(T(b), ord).item()), ord
            assert tl.linalg.vector_norm(T(b), 0).item() == np.count_nonzero(b)
            assert np.isnan(tl.logsumexp(T(b), 0).item()) and np.isnan(tl.var(T(b)).item())
            c = a.copy()
            c[n - 1] = inf
            assert tl.logsumexp(T(c), 0).item() == inf and tl.linalg.vector_norm(T(c), inf).item() == inf
            c[:] = -inf
            assert tl.logsumexp(T(c), 0).item() == -inf and tl.argmax(T(c)).item() == 0
            c[n - 1] = inf
            assert tl.logsumexp(T(c), 0).item() == inf and tl.argmax(T(c)).item() == n - 1
    # columns (a kept inner dim): one column per case
    m = np.array([[-inf, inf, np.nan, 1.0, -inf], [-inf, 1.0, 2.0, np.nan, 3.0], [-inf, -inf, np.nan, 5.0, 4.0]])
    for dt in (np.float32, np.float64):
        x = T(m.astype(dt))
        r = tl.logsumexp(x, 0).numpy()
        assert r[0] == -inf and r[1] == inf and np.isnan(r[2]) and np.isnan(r[3])
        assert r[4] == pytest.approx(np.log(np.exp(3.0 - 4) + 1) + 4, rel=1e-6)
        np.testing.assert_array_equal(tl.argmax(x, 0).numpy(), [0, 0, 0, 1, 2])
        np.testing.assert_array_equal(tl.argmin(x, 0).numpy(), [0, 2, 0, 1, 0])
        assert np.isnan(tl.linalg.vector_norm(x, inf, 0).numpy()[2:4]).all()
        assert np.isnan(tl.var(x, 0).numpy()[1:4]).all()


def test_argmax_one_pass_lane_cases(cpu_capability):
    """the one-pass float32 row kernel (rows of 128+ elements) on cases a lane-wise kernel can get wrong:
    +inf and -inf in one lane, overflowing values, rows of all -inf / +inf, ties inside one step of 4
    vectors and across lanes, -0.0 == 0.0, a NaN in the first step or after inf / -inf blocks; against
    numpy (first index, first NaN)"""
    rng = np.random.default_rng(23)
    inf = np.inf
    cases = []
    for n in (128, 129, 300, 4096 + 17, 8192 * 2 + 64 * 3 + 5, 70001):
        cases += [np.full(n, -inf), np.full(n, inf), rng.integers(-2, 3, n).astype(float),
                  np.where(rng.random(n) < 0.5, -0.0, 0.0), rng.standard_normal(n) * 3e38]
        a = rng.standard_normal(n)
        a[3], a[3 + 16], a[3 + 64] = inf, -inf, -inf   # lane sums turn NaN, no NaN in the row
        cases.append(a.copy())
        a[n - 1] = np.nan                              # a NaN after such a block
        cases.append(a.copy())
        b = rng.standard_normal(n)
        b[rng.integers(0, 64)] = np.nan                # a NaN in the first step
        cases.append(b)
        c = np.zeros(n)
        c[[5, 21, 37, 53]] = 2.0                       # one step: four vectors, equal lanes
        c[n - 2] = 2.0
        cases.append(c)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # the 3e38 cases overflow float32 on purpose
        cases = [a.astype(np.float32) for a in cases]
    for a in cases:
        x = T(a)
        assert tl.argmax(x).item() == a.argmax() and tl.argmin(x).item() == a.argmin(), (len(a), a[:8])
        two = np.stack([a, a[::-1].copy()])
        np.testing.assert_array_equal(tl.argmax(T(two), 1).numpy(), two.argmax(1))
        np.testing.assert_array_equal(tl.argmin(T(two), 1).numpy(), two.argmin(1))


@pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0")   # var with N - correction <= 0 (PyTorch warns too)
def test_direct_empty_and_errors():
    e = tl.empty(0, 3)
    assert np.isnan(tl.var(e, 0).numpy()).all() and tl.var(e, 0).shape == (3,)
    v, m = tl.var_mean(e, 0)
    assert np.isnan(m.numpy()).all() and m.shape == (3,)
    np.testing.assert_array_equal(tl.logsumexp(e, 0).numpy(), [-np.inf] * 3)
    np.testing.assert_array_equal(tl.linalg.vector_norm(e, 2, 0).numpy(), [0.0] * 3)
    np.testing.assert_array_equal(tl.linalg.vector_norm(e, 0, 0).numpy(), [0.0] * 3)
    assert tl.var(e, 1).shape == (0,) and tl.argmax(e, 1).shape == (0,)
    with pytest.raises(IndexError, match=r"argmax\(\): Expected reduction dim 0 to have non-zero size."):
        tl.argmax(e, 0)
    with pytest.raises(IndexError, match=r"argmin\(\): Expected reduction dim to be specified for input.numel\(\) == 0."):
        tl.argmin(e)
    with pytest.raises(IndexError, match=r"max\(\): Expected reduction dim 0 to have non-zero size."):
        tl.max(e, 0)


def test_direct_large_mean_and_2_24():
    """var with a large common offset (1e4 + noise, where a sum of squares cancels), full and dim reductions,
    within 1e-6 of float64; argmax / norm at 2^24 through the chunked path"""
    n = 1 << 24
    rng = np.random.default_rng(11)
    a = (1e4 + rng.standard_normal(n)).astype(np.float32)
    a64 = a.astype(np.float64)
    x = T(a)
    ref = a64.var(ddof=1)
    assert abs(tl.var(x).item() - ref) <= 1e-6 * ref
    v, m = tl.var_mean(x)
    assert abs(v.item() - ref) <= 1e-6 * ref and abs(m.item() - a64.mean()) <= 1e-6 * a64.mean()
    a2, x2 = a64.reshape(4096, 4096), x.view(4096, 4096)
    for d in (0, 1):
        np.testing.assert_allclose(tl.var(x2, d).numpy(), a2.var(d, ddof=1), rtol=1e-6)
    assert tl.argmax(x).item() == a.argmax() and tl.argmin(x).item() == a.argmin()
    assert abs(tl.linalg.vector_norm(x, 1).item() - np.abs(a64).sum()) <= 1e-6 * np.abs(a64).sum()


def test_direct_threads_do_not_change_results():
    a = R.standard_normal(1 << 20).astype(np.float32)
    x, x2 = T(a), T(a).view(1024, 1024)
    calls = [lambda: tl.var(x), lambda: tl.std_mean(x)[1], lambda: tl.linalg.vector_norm(x),
             lambda: tl.linalg.vector_norm(x, 1), lambda: tl.logsumexp(x, 0), lambda: tl.argmax(x),
             lambda: tl.var(x2, 0), lambda: tl.var(x2, 1), lambda: tl.logsumexp(x2, 0), lambda: tl.argmin(x2, 0),
             lambda: tl.linalg.vector_norm(x2, 2, 1)]
    n0 = tl.get_num_threads()
    try:
        tl.set_num_threads(1)
        r1 = [c().numpy() for c in calls]
        tl.set_num_threads(2)
        r2 = [c().numpy() for c in calls]
    finally:
        tl.set_num_threads(n0)
    for u, v in zip(r1, r2):
        np.testing.assert_array_equal(u, v)


def test_direct_half_and_norm_overflow():
    """half types go through a float32 copy; a float32 sum of powers beyond FLT_MAX is inf, as PyTorch (which
    accumulates float32 norms in float32): norm([1e20, 1e20]) is inf in float32, 1.414e20 in float64"""
    a = arr((5, 300))
    for dt in (tl.float16, tl.bfloat16):
        x = T(a).to(dt)
        h = x.to(tl.float64).numpy()
        close(tl.var(x, 1).to(tl.float64), h.var(1, ddof=1), rtol=1e-2, atol=1e-3)
        close(tl.linalg.vector_norm(x, 2, 1).to(tl.float64), np.sqrt((h * h).sum(1)), rtol=1e-2)
        close(tl.logsumexp(x, 1).to(tl.float64), _np_lse(h, 1), rtol=1e-2)
        np.testing.assert_array_equal(tl.argmax(x, 1).numpy(), h.argmax(1))
        np.testing.assert_array_equal(tl.max(x, 0).indices.numpy(), h.argmax(0))
    big = np.array([1e20, 1e20])
    assert tl.linalg.vector_norm(T(big.astype(np.float32))).item() == np.inf
    assert tl.linalg.vector_norm(T(big)).item() == pytest.approx(np.sqrt(2) * 1e20)
    assert tl.linalg.vector_norm(T(big.astype(np.float32)), 1).item() == pytest.approx(2e20, rel=1e-6)
    assert tl.linalg.vector_norm(T(big.astype(np.float32)), float("inf")).item() == pytest.approx(1e20, rel=1e-6)
    if torch is not None:
        tb = torch.tensor(big, dtype=torch.float32)
        assert torch.linalg.vector_norm(tb).item() == tl.linalg.vector_norm(T(big.astype(np.float32))).item()
        assert torch.linalg.vector_norm(tb, 3).item() == tl.linalg.vector_norm(T(big.astype(np.float32)), 3).item()
        for n in (2, 300):   # the scalar tail and the float trees: squares under/overflow as in PyTorch
            for v in (1e-30, 1e20, 3.0):
                x = np.full(n, v, np.float32)
                ref = torch.linalg.vector_norm(torch.from_numpy(x)).item()
                assert tl.linalg.vector_norm(T(x)).item() == pytest.approx(ref, rel=1e-6), (n, v)


# ------------------------------------------------------------------ torch

@needs_torch
@pytest.mark.parametrize("call", [
    "sum(x, (0, -1))", "mean(x, 1, True)", "prod(x, 1)", "prod(xi)", "amax(x, (1,))", "amin(x, -1, True)",
    "max(x)", "min(x)", "max(x, 1)", "min(x, 0, True)", "argmax(x)", "argmin(x, 1, True)", "argmax(x, 2)",
    "var(x, (0, 2), correction=2)", "std(x, 1, keepdim=True)", "var_mean(x, 1)", "std_mean(x)",
    "logsumexp(x, (0, 1))", "logsumexp(xi, 1)", "norm(x)", "norm(x, 1, dim=1)", "norm(x, float('inf'))",
    "linalg.vector_norm(x, 3, (1, 2), True)", "all(x)", "any(xi, 1)", "all(xb, (0, 2))", "cumsum(x, 1)",
    "cumsum(xi, 0)", "cumprod(x, -1)", "cumprod(xb, 0)", "flip(x, (0, 1))", "mean(xi)", "var(xi)", "argmax(xb)",
    "amax(x, 3)", "sum(x, (1, 1))", "max(e)", "amax(e2, 0)", "argmax(e)", "norm(xi)", "mean(x, dtype=xi.dtype)",
])
def test_vs_torch(call):
    a = arr((3, 4, 5))
    env_tl = dict(x=T(a).transpose(0, 2), xi=T(arr((3, 4, 5), np.int32)), xb=T(arr((3, 4, 5), np.bool_)),
                  e=tl.empty(0), e2=tl.empty(0, 3))
    env_t = {k: (torch.from_numpy(v.numpy().copy()) if isinstance(v, tl.Tensor) else v) for k, v in env_tl.items()}
    env_t["x"] = torch.from_numpy(a.copy()).transpose(0, 2)
    tcall = "torch." + call
    try:
        ref = eval(tcall, {"torch": torch}, env_t)
    except Exception as e:   # noqa: BLE001
        with pytest.raises(type(e)) as info:
            eval("tl." + call, {"tl": tl}, env_tl)
        assert str(info.value).split("\n")[0] == str(e).split("\n")[0]
        return
    got = eval("tl." + call, {"tl": tl}, env_tl)
    refs = ref if isinstance(ref, tuple) else (ref,)
    gots = got if isinstance(got, tuple) else (got,)
    assert len(refs) == len(gots)
    for g, r in zip(gots, refs):
        assert NAMES[g.dtype] == str(r.dtype).split(".")[-1]
        assert tuple(g.shape) == tuple(r.shape)
        np.testing.assert_allclose(g.to(tl.float64).numpy(), r.double().numpy(), rtol=1e-5, atol=1e-5)


@needs_torch
def test_gradients_vs_torch():
    a = arr((3, 4), np.float64)
    a[0, 1] = 0.0
    for expr in ("x.prod(1).sum()", "x.amax(0).sum()", "x.max()", "x.var(1).sum()", "x.std()",
                 "x.logsumexp(1).sum()", "x.norm()", "x.cumprod(1).sum()", "x.cumsum(0).sum()", "x.mean()",
                 "x.norm(p=float('inf'), dim=1).sum()", "x.flip(0)[0].sum()"):
        xt = tl.tensor(a, requires_grad=True)
        eval(expr, {}, {"x": xt}).backward()
        xr = torch.tensor(a, requires_grad=True)
        eval(expr, {"float": float}, {"x": xr}).backward()
        np.testing.assert_allclose(xt.grad.numpy(), xr.grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=expr)


# ------------------------------------------------------------------ one-pass argmax, SIMD scans

def _with_threads(n, fn):
    n0 = tl.get_num_threads()
    try:
        tl.set_num_threads(n)
        return fn()
    finally:
        tl.set_num_threads(n0)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_argmax_one_pass_lanes_ties_nan(cpu_capability, dt):
    """the float32 one-pass kernel (per-lane best and step, merged at the end; rows under 128 elements and
    float64 take the blocked kernel): every position of the best in a 64-element step (each lane and
    accumulator), ties in other lanes / steps / the tail (the first wins), -0.0 == 0.0, +-inf, NaN in the
    first step, in a later 8192-element NaN block, in the tail, and several NaNs (the first one)"""
    for n in (127, 128, 129, 191, 200, 4096, 8191, 8192 + 64 * 3 + 5, 3 * 8192 + 77):
        base = (R.standard_normal(n) - 10).astype(dt)
        for pos in sorted({0, 1, 15, 16, 31, 47, 63, 64, 65, n // 2, n - 65, n - 64, n - 1}):
            b = base.copy()
            b[pos] = 3.0
            for tie in (pos + 1, pos + 17, pos + 64, pos + 8192, n - 1):   # later ties lose
                if tie < n:
                    b[tie] = 3.0
            assert tl.argmax(T(b)).item() == pos == np.argmax(b), (n, pos)
            assert tl.argmin(T(-b)).item() == pos, (n, pos)
        z = np.zeros(n, dt)
        z[n // 3] = -0.0
        assert tl.argmax(T(z)).item() == 0 and tl.argmin(T(z)).item() == 0   # -0.0 == 0.0: the first
        c = np.full(n, -np.inf, dt)
        assert tl.argmax(T(c)).item() == 0 and tl.argmin(T(-c)).item() == 0
        c[n - 2] = np.inf
        assert tl.argmax(T(c)).item() == n - 2
        for nans in ([3], [n - 1], [n // 2, n // 2 + 1], [n - 70, 5], [8192 + 3] if n > 8200 else [n // 4]):
            b = base.copy()
            b[nans] = np.nan
            first = min(nans)
            assert tl.argmax(T(b)).item() == first and tl.argmin(T(b)).item() == first, (n, nans)
            assert np.isnan(tl.max(T(b), 0).values.item()) and tl.max(T(b), 0).indices.item() == first


def test_argmax_two_chain_steps(cpu_capability):
    """float32 rows by 64-element steps, the cases a kernel splitting the steps over two chains (even / odd
    steps, an odd last step joined to one of them; docs/REDUCTIONS.md, "Speed") gets wrong: the best in any step,
    a tie in the next step (the earlier wins), the best only in the last step or the tail, a NaN in the
    last step or in one vector of a pair; odd and even step counts; against numpy"""
    for steps in (2, 3, 4, 5, 129, 130):
        for tail in (0, 7):
            n = 64 * steps + tail
            base = R.standard_normal(n).astype(np.float32)
            cases = []
            for s in sorted({0, 1, 2, steps - 2, steps - 1} & set(range(steps))):
                for lane in (0, 17, 63):
                    b = base.copy()
                    b[64 * s + lane] = 5.0
                    if 64 * (s + 1) + 3 < n:
                        b[64 * (s + 1) + 3] = 5.0        # a tie in the next step: the other chain
                    cases.append(b)
            if tail:
                b = base.copy()
                b[n - 2] = 5.0                               # the best only in the tail
                cases.append(b)
            for pos in (64 * (steps - 1) + 9, 64 * (steps - 1) + 40, 64 * steps - 1, 16 + 64):
                b = base.copy()
                b[pos] = np.nan                              # NaN: last step, one vector of a pair
                cases.append(b)
            for b in cases:
                assert tl.argmax(T(b)).item() == np.argmax(b) and tl.argmin(T(-b)).item() == np.argmax(b), (n,)


def test_argmax_rows_threads_and_capabilities():
    """argmax / argmin / max.dim over rows, columns and a full 2^20 reduction: numpy's indices, the same at
    1 and 2 threads and at every CPU capability"""
    a = R.standard_normal((37, 4099)).astype(np.float32)
    a[5, 100] = a[5, 3000] = 9.0   # a tie in one row
    a[7, 2000] = np.nan
    a[9, 4098] = np.nan
    f = R.standard_normal(1 << 20).astype(np.float32)
    f[(1 << 19) + 3] = f[(1 << 20) - 1] = 7.0
    x, xf = T(a), T(f)
    ref = [np.argmax(a, 1), np.argmin(a, 1), np.argmax(a, 0), np.argmax(f), np.argmin(f)]

    def run():
        return [tl.argmax(x, 1).numpy(), tl.argmin(x, 1).numpy(), tl.argmax(x, 0).numpy(),
                tl.argmax(xf).numpy(), tl.argmin(xf).numpy(), tl.max(x, 1).indices.numpy()]

    before = tl.get_cpu_capability()
    try:
        for cap in ("DEFAULT", "AVX2", "AVX512"):
            tl._set_cpu_capability(cap)
            for th in (1, 2):
                got = _with_threads(th, run)
                for g, r in zip(got, ref + [ref[0]]):
                    np.testing.assert_array_equal(g, r)
    finally:
        tl._set_cpu_capability(before)


def _seq_scan(a, op, axis):
    """PyTorch's float32 / float64 scan: sequential, accumulated in float64, rounded per element"""
    f = np.cumsum if op == "cumsum" else np.cumprod
    with np.errstate(invalid="ignore"):   # inf - inf, 0 * inf
        return f(a.astype(np.float64), axis=axis).astype(a.dtype)


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_scan_simd_rows_and_columns(cpu_capability, op):
    """float32 rows (16-element SIMD steps, tails, the 65536-element chunks of long rows), float64 rows
    (the sequential loop: exactly PyTorch's), columns (the sequential loop across 512-column blocks) and the
    middle dim of a 3-D tensor: within 1 float32 ulp of the sequential float64 scan (float64: equal)"""
    for shape, dim in [((1,), 0), ((7,), 0), ((15,), 0), ((16,), 0), ((17,), 0), ((31,), 0), ((33,), 0),
                       ((1023,), 0), ((1025,), 0), ((65536,), 0), ((65537,), 0), ((3, 140001), 1),
                       ((5, 33), -1), ((1025, 3), 0), ((17, 1100), 0), ((4, 9, 515), 1), ((3, 5, 7), 2)]:
        a = R.standard_normal(shape).astype(np.float32)
        if op == "cumprod":
            a = (1 + 0.01 * a).astype(np.float32)   # products that stay in range for long rows
        got = getattr(tl, op)(T(a), dim).numpy()
        ref = _seq_scan(a, op, dim)
        ulp = np.spacing(np.abs(ref).astype(np.float32))
        assert np.all(np.abs(got.astype(np.float64) - ref) <= ulp), (shape, dim)
        assert np.count_nonzero(got != ref) <= max(1, ref.size // 1000), (shape, dim)
        a64 = a.astype(np.float64)
        np.testing.assert_array_equal(getattr(tl, op)(T(a64), dim).numpy(), _seq_scan(a64, op, dim))
    pos = np.abs(R.standard_normal(50000)).astype(np.float32)
    assert np.all(np.diff(tl.cumsum(T(pos), 0).numpy()) >= 0)   # nondecreasing for nonnegative input


@needs_torch
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_scan_vs_torch_bits(op):
    """float32 random data: the same bits as PyTorch's sequential double loop (the SIMD prefix only
    reassociates double additions); float64 always the same bits"""
    a = R.standard_normal((64, 4096)).astype(np.float32)
    if op == "cumprod":
        a = (1 + 0.01 * a).astype(np.float32)
    for dt in (np.float32, np.float64):
        b = a.astype(dt)
        for dim in (0, 1):
            got = getattr(tl, op)(T(b), dim).numpy()
            ref = getattr(torch, op)(torch.from_numpy(b), dim).numpy()
            assert np.count_nonzero(got != ref) <= (0 if dt == np.float64 else 5), (dt, dim)


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_scan_nan_inf_zero(cpu_capability, op):
    """NaN and inf propagate as in a sequential scan: inf + -inf and 0 * inf give NaN from there on"""
    for n in (5, 40, 70001):
        for dt in (np.float32, np.float64):
            a = np.ones(n, dt)
            k = n // 2
            if op == "cumsum":
                a[k], a[k + 2] = np.inf, -np.inf
            else:
                a[k], a[k + 2] = 0.0, np.inf
            got = getattr(tl, op)(T(a), 0).numpy()
            ref = _seq_scan(a, op, 0)
            np.testing.assert_array_equal(got, ref)
            assert np.isnan(got[k + 2:]).all() and not np.isnan(got[:k + 2]).any()
            b = np.ones(n, dt)
            b[3] = np.nan
            assert np.isnan(getattr(tl, op)(T(b), 0).numpy()[3:]).all()


def test_scan_threads_layouts_out_inplace():
    """1 and 2 threads give the same bits (long rows: one pass per row, or the chunk totals first with few
    rows); non-contiguous inputs, out= (contiguous, non-contiguous, other dtype), in-place on contiguous and
    transposed tensors, dtype= from integers and to float64"""
    a = R.standard_normal((3, 200003)).astype(np.float32)
    x = T(a)
    for t in (x, x[1], x[:, ::3]):
        r1 = _with_threads(1, lambda: tl.cumsum(t, -1).numpy().copy())
        r2 = _with_threads(2, lambda: tl.cumsum(t, -1).numpy().copy())
        assert r1.tobytes() == r2.tobytes()
        close(tl.cumsum(t, -1), np.cumsum(t.numpy().astype(np.float64), -1), rtol=1e-5, atol=1e-3)
    m = R.standard_normal((40, 60)).astype(np.float32)
    tm = T(m).t()   # (60, 40), non-contiguous
    for dim in (0, 1):
        close(tl.cumsum(tm, dim), _seq_scan(m.T, "cumsum", dim), rtol=1e-6)
        close(tl.cumprod(tm, dim), _seq_scan(m.T, "cumprod", dim), rtol=1e-6)
        out = tl.empty(60, 40).t().t()
        o2 = tl.empty(40, 60).t()   # a non-contiguous out
        assert tl.cumsum(tm, dim, out=o2) is o2
        close(o2, _seq_scan(m.T, "cumsum", dim), rtol=1e-6)
        assert tl.cumsum(tm, dim, out=out) is out
        close(out, _seq_scan(m.T, "cumsum", dim), rtol=1e-6)
        o64 = tl.empty(0, dtype=tl.float64)
        tl.cumsum(tm, dim, out=o64)
        close(o64, np.cumsum(m.T.astype(np.float64), dim), rtol=1e-12)
        y = T(m)
        assert y.cumprod_(dim) is y
        close(y, _seq_scan(m, "cumprod", dim), rtol=1e-6)
        yt = T(m).t()
        assert yt.cumsum_(dim) is yt
        close(yt, _seq_scan(m.T, "cumsum", dim), rtol=1e-6)
    ai = R.integers(-5, 6, (7, 300)).astype(np.int32)
    r = tl.cumsum(T(ai), 1, dtype=tl.float32)
    assert r.dtype == tl.float32
    close(r, np.cumsum(ai.astype(np.float64), 1), rtol=0, atol=0)
    r = tl.cumprod(T(m), 0, dtype=tl.float64)
    assert r.dtype == tl.float64
    np.testing.assert_array_equal(r.numpy(), np.cumprod(m.astype(np.float64), 0))
    h = R.standard_normal((5, 70)).astype(np.float16)
    close(tl.cumsum(T(h), 1), np.cumsum(h.astype(np.float64), 1).astype(np.float16), rtol=2e-3, atol=2e-3)


# ---- float32 max / min rows and half-precision leaves: the same bits on every ISA


def _every_isa(fn):
    """fn() on each supported CPU capability: the list of results"""
    before = tl.get_cpu_capability()
    out = []
    try:
        for cap in tl._supported_cpu_capabilities():
            tl._set_cpu_capability(cap)
            out.append(fn())
    finally:
        tl._set_cpu_capability(before)
    return out


@pytest.mark.parametrize("n", [63, 64, 65, 127, 128, 130, 1000, 4097, 70001])
def test_amax_rows_same_bits_every_isa(n):
    """amax / amin / max.dim rows: signed zeros (max(-0, 0) keeps one of them, by
    position), NaN at the start, in the vector part and in the tail, views that
    start off the 64-byte boundary; every ISA gives the DEFAULT variant's bits
    and numpy's values"""
    base = R.standard_normal(n + 3).astype(np.float32)
    zeros = np.where(R.random(n + 3) < 0.5, np.float32(0.0), np.float32(-0.0)).astype(np.float32)
    for data in (base, zeros, -np.abs(base)):
        for pos in (None, 0, n // 2, n - 1):
            b = data.copy()
            if pos is not None:
                b[pos] = np.nan
            for off in (0, 1, 3):
                x = T(b)[off: off + n]
                rows = T(np.stack([b[off: off + n]] * 3))
                got = _every_isa(lambda: [r.numpy().tobytes() for r in
                                          (tl.amax(x), tl.amin(x), tl.amax(rows, 1), tl.amin(rows, 1))])
                assert all(g == got[0] for g in got), (n, pos, off)
                ref = b[off: off + n]
                np.testing.assert_array_equal(tl.amax(x).numpy(), np.max(ref))
                np.testing.assert_array_equal(tl.amin(x).numpy(), np.min(ref))


@pytest.mark.parametrize("n", [1 << 18, (1 << 18) + 4097, (1 << 19) + 1, (1 << 21) + 777, (1 << 23) + 5])
def test_sum_cut_depth_threads_same_bits(n):
    """full sums cut into fewer, larger subtrees for smaller inputs (the depth
    follows the length): 1, 2 and 3 threads give the same bits as the serial
    pairwise tree, float32 / float64 / float16"""
    a = R.standard_normal(n).astype(np.float32)
    xs = [T(a), T(a.astype(np.float64)), T(a.astype(np.float16))]
    n0 = tl.get_num_threads()
    got = []
    try:
        for th in (1, 2, 3):
            tl.set_num_threads(th)
            got.append([r.numpy().tobytes() for x in xs for r in (tl.sum(x), tl.mean(x))])
    finally:
        tl.set_num_threads(n0)
    assert got[0] == got[1] == got[2]
    np.testing.assert_allclose(tl.sum(xs[1]).item(), a.astype(np.float64).sum(), rtol=1e-12,
                               atol=1e-12 * np.abs(a).astype(np.float64).sum())


@pytest.mark.parametrize("shape", [(5000, 300), (4099, 70), (4096, 4096)])
def test_sum_rows_claimed_blocks_same_bits(shape):
    """row sums into out (blocks of rows claimed by the threads) and amax of
    a long row (chunks claimed): 1, 2 and 3 threads give the same bits"""
    a = R.standard_normal(shape).astype(np.float32)
    x, x64 = T(a), T(a.astype(np.float64))
    n0 = tl.get_num_threads()
    got = []
    try:
        for th in (1, 2, 3):
            tl.set_num_threads(th)
            got.append([r.numpy().tobytes() for r in (tl.sum(x, 1), tl.mean(x, 1), tl.sum(x64, 1),
                                                       tl.amax(x.view(-1)), tl.amin(x.view(-1)))])
    finally:
        tl.set_num_threads(n0)
    assert got[0] == got[1] == got[2]
    np.testing.assert_allclose(tl.sum(x64, 1).numpy(), a.astype(np.float64).sum(1), rtol=1e-12, atol=1e-10)


def test_sum_leaf_boundaries_32768():
    """lengths around the 32768-element leaves and their pairwise splits,
    float32 / float64 / float16, on every ISA: within float64's error of the
    exact sum (float64), the float32 bar (float32), the same bits on every ISA"""
    for n in (32767, 32768, 32769, 65535, 65537, 98304 + 5, 3 * 32768 + 16):
        a = R.standard_normal(n).astype(np.float32)
        a64 = a.astype(np.float64)
        mag = np.abs(a64).sum()
        xs = (T(a), T(a64), T(a.astype(np.float16)))
        got = _every_isa(lambda: [tl.sum(x).numpy().tobytes() for x in xs])
        assert all(g == got[0] for g in got), n
        assert abs(tl.sum(xs[1]).item() - a64.sum()) <= 1e-13 * mag
        assert abs(tl.sum(xs[0]).item() - a64.sum()) <= 1e-6 * mag
        h64 = a.astype(np.float16).astype(np.float64)
        assert abs(tl.sum(xs[2].float()).item() - h64.sum()) <= 1e-6 * np.abs(h64).sum()
