"""The complex loops of the math ufuncs (kernels/ufunc/complex_math.h,
abs_cfloat.h, abs_cdouble.h; docs/UFUNC.md): abs (real result), exp, log,
sqrt, sin, cos, tan, sinh, cosh, tanh, sigmoid, reciprocal, rsqrt, sgn, log1p, expm1, pow;
prod, cumsum, cumprod (kernels/native/reduce_ops.c, reduce_scan.c).

Values against numpy (always, where numpy has the function) and torch (where
installed) on random data with zeros, infinities and NaNs, non-contiguous
and 0-dim inputs, in-place and out= forms; abs's dtype rules and errors;
pow (tensor and scalar exponents, a number base); gradients with complex
inputs (PyTorch's conjugate Wirtinger convention) against finite
differences and torch.
"""
import numpy as np
import pytest

import torchlet as tl

from ops_helpers import needs_torch, torch

R = np.random.default_rng(2032)
OPS = ["abs", "exp", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "sigmoid", "reciprocal", "rsqrt",
       "sgn", "log1p", "expm1"]
NUMPY = {"abs": np.abs, "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tan": np.tan,
         "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "sigmoid": lambda z: 1 / (1 + np.exp(-z)),
         "reciprocal": lambda z: 1 / z, "rsqrt": lambda z: 1 / np.sqrt(z),
         "sgn": lambda z: np.where(z == 0, 0, z / np.where(z == 0, 1, np.abs(z))), "log1p": np.log1p,
         "expm1": np.expm1}
TOL = {np.complex64: (2e-6, 1e-5), np.complex128: (1e-12, 1e-12)}
CDT = [np.complex64, np.complex128]
EDGES = [0, -0.0, 1j * np.inf, np.inf, -np.inf, complex(np.nan, 0), complex(np.inf, np.nan), complex(0, np.nan),
         complex(1, 1e30), complex(-40, 3)]


def crandn(n, dt, edges=True):
    z = (R.standard_normal(n) + 1j * R.standard_normal(n)) * 2
    if edges:
        z[:len(EDGES)] = EDGES
    return z.astype(dt)


def result_dtype(op, dt):
    return np.dtype(np.float32 if dt == np.complex64 else np.float64) if op == "abs" else np.dtype(dt)


@pytest.mark.parametrize("dt", CDT, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", OPS)
def test_against_numpy_finite(op, dt):
    z = crandn(257, dt, edges=False)
    got = getattr(tl, op)(tl.from_numpy(z)).numpy()
    assert got.dtype == result_dtype(op, dt)
    rtol, atol = TOL[dt]
    with np.errstate(all="ignore"):
        want = NUMPY[op](z.astype(np.complex128))
    np.testing.assert_allclose(got, want.astype(got.dtype), rtol=rtol * 5, atol=atol * 5)


@needs_torch
@pytest.mark.parametrize("dt", CDT, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", OPS)
def test_against_torch_with_edges(op, dt):
    z = crandn(301, dt)
    got = getattr(tl, op)(tl.from_numpy(z)).numpy()
    want = getattr(torch, op)(torch.from_numpy(z)).numpy()
    assert got.dtype == want.dtype
    rtol, atol = TOL[dt]
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


@needs_torch
@pytest.mark.parametrize("op", OPS)
def test_non_contiguous_zero_dim_inplace_out(op):
    z = crandn(64, np.complex128).reshape(8, 8)
    f, ft = getattr(tl, op), getattr(torch, op)
    got = f(tl.from_numpy(z)[::2, 1::3].transpose(0, 1)).numpy()
    want = ft(torch.from_numpy(z)[::2, 1::3].transpose(0, 1)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, equal_nan=True)
    s = np.array(0.3 - 1.2j)
    np.testing.assert_allclose(f(tl.from_numpy(s)).numpy(), ft(torch.from_numpy(s)).numpy(), rtol=1e-12)
    if op != "abs":   # in-place and out= keep the complex dtype
        t = tl.from_numpy(z.copy())
        assert getattr(t, op + "_")() is t
        np.testing.assert_allclose(t.numpy(), ft(torch.from_numpy(z)).numpy(), rtol=1e-12, atol=1e-12, equal_nan=True)
        o = tl.empty(0, dtype=tl.complex128)
        assert f(tl.from_numpy(z), out=o) is o
        np.testing.assert_allclose(o.numpy(), ft(torch.from_numpy(z)).numpy(), rtol=1e-12, atol=1e-12,
                                   equal_nan=True)


@needs_torch
def test_abs_dtypes_and_errors():
    z = crandn(10, np.complex64)
    for out_dt in (tl.float32, tl.float64, tl.complex64):   # the real result cast into out
        o = tl.empty(0, dtype=out_dt)
        tl.abs(tl.from_numpy(z), out=o)
        ot = torch.empty(0, dtype=getattr(torch, str(out_dt).split(".")[-1]))
        torch.abs(torch.from_numpy(z), out=ot)
        np.testing.assert_allclose(o.numpy(), ot.numpy(), rtol=1e-6, equal_nan=True)
    for f in (lambda m: m.abs(m.from_numpy(z.copy()), out=m.empty(0, dtype=m.int32)),
              lambda m: m.from_numpy(z.copy()).abs_()):
        with pytest.raises(RuntimeError) as want:
            f(torch)
        with pytest.raises(RuntimeError) as got:
            f(tl)
        assert str(got.value) == str(want.value)


# ---------------------------------------------------------------- gradients

def _grad(m, op, z, w):
    x = m.from_numpy(z.copy()).requires_grad_(True)
    y = getattr(m, op)(x)
    loss = (m.view_as_real(y) * m.from_numpy(w)).sum() if y.is_complex() else (y * m.from_numpy(w[..., 0])).sum()
    return m.autograd.grad(loss, [x])[0].numpy()


@pytest.mark.parametrize("op", OPS)
def test_gradient_finite_differences(op):
    z = crandn(6, np.complex128, edges=False) + 0.5
    w = R.standard_normal((6, 2))
    g = _grad(tl, op, z, w)

    def loss(v):
        y = getattr(tl, op)(tl.from_numpy(v)).numpy()
        return (y.real * w[:, 0] + y.imag * w[:, 1]).sum() if np.iscomplexobj(y) else (y * w[:, 0]).sum()

    eps = 1e-7
    for i in range(6):
        for unit in (1, 1j):
            d = np.zeros_like(z)
            d[i] = eps * unit
            fd = (loss(z + d) - loss(z - d)) / (2 * eps)
            np.testing.assert_allclose(fd, (np.conj(g[i]) * unit).real, rtol=1e-5, atol=1e-6)


@needs_torch
@pytest.mark.parametrize("op", OPS)
def test_gradients_match_torch(op):
    z = crandn(40, np.complex128, edges=False).reshape(5, 8)
    w = R.standard_normal((5, 8, 2))
    np.testing.assert_allclose(_grad(tl, op, z, w), _grad(torch, op, z, w), rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- pow

POW_CASES = [("z ** e", lambda m, z, y, r, e: z ** e),
             ("z ** y", lambda m, z, y, r, e: z ** y),
             ("r ** y", lambda m, z, y, r, e: r ** y),
             ("z ** r", lambda m, z, y, r, e: z ** r),
             ("2 ** y", lambda m, z, y, r, e: 2 ** y),
             ("(1 + 1j) ** r", lambda m, z, y, r, e: (1 + 1j) ** r),
             ("r ** (0.5 + 1j)", lambda m, z, y, r, e: r ** (0.5 + 1j))]
EXPONENTS = [0, 1, 2, 3, -2, 0.5, -0.5, -1, 2.5, 1j, 1 + 1j, 2 + 0j]


def _pow_check(f, e, dt):
    z, y = crandn(64, dt), crandn(64, dt, edges=False)
    r = R.standard_normal(64).astype(np.float32 if dt == np.complex64 else np.float64)
    got = f(tl, *(tl.from_numpy(v.copy()) for v in (z, y, r)), e).numpy()
    want = f(torch, *(torch.from_numpy(v.copy()) for v in (z, y, r)), e).numpy()
    assert got.dtype == want.dtype
    rtol, atol = TOL[dt]
    np.testing.assert_allclose(got, want, rtol=rtol * 4, atol=atol * 4, equal_nan=True)


@needs_torch
@pytest.mark.parametrize("dt", CDT, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("e", EXPONENTS, ids=str)
def test_pow_scalar_exponents_against_torch(e, dt):
    """the fast paths (0, 1, 2, 3, -2, 0.5, -0.5, -1) and cpow, with zeros, infinities and NaN in the base"""
    _pow_check(POW_CASES[0][1], e, dt)


@needs_torch
@pytest.mark.parametrize("dt", CDT, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name,f", POW_CASES[1:], ids=[c[0] for c in POW_CASES[1:]])
def test_pow_forms_against_torch(name, f, dt):
    _pow_check(f, None, dt)


@needs_torch
@pytest.mark.parametrize("name,f", POW_CASES, ids=[c[0] for c in POW_CASES])
def test_pow_gradients_match_torch(name, f):
    z, y = crandn(12, np.complex128, edges=False), crandn(12, np.complex128, edges=False)
    r = np.abs(R.standard_normal(12)) + 0.1
    w = R.standard_normal((12, 2))

    def grads(m):
        xs = [m.from_numpy(v.copy()).requires_grad_(True) for v in (z, y, r)]
        out = f(m, *xs, 2.5 - 0.5j)
        gs = m.autograd.grad((m.view_as_real(out) * m.from_numpy(w)).sum(), xs, allow_unused=True)
        return [None if g is None else g.numpy() for g in gs]

    for g, gt in zip(grads(tl), grads(torch)):
        assert (g is None) == (gt is None)
        if g is not None:
            assert g.dtype == gt.dtype
            np.testing.assert_allclose(g, gt, rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- prod, cumsum, cumprod

REDUCE_CASES = [("prod", lambda m, x: m.prod(x)), ("prod dim", lambda m, x: m.prod(x, 1)),
                ("prod keepdim", lambda m, x: m.prod(x, -1, keepdim=True)),
                ("prod dtype", lambda m, x: m.prod(x.real, 0, dtype=m.complex128)),
                ("cumsum", lambda m, x: m.cumsum(x, 0)), ("cumsum last", lambda m, x: m.cumsum(x, 2)),
                ("cumsum strided", lambda m, x: m.cumsum(x.transpose(0, 2), 1)),
                ("cumprod", lambda m, x: m.cumprod(x, 1)), ("cumprod 0", lambda m, x: m.cumprod(x, 0))]


@pytest.mark.parametrize("dt", CDT, ids=lambda d: np.dtype(d).name)
def test_scans_and_prod_against_numpy(dt):
    z = crandn(60, dt, edges=False).reshape(3, 5, 4)
    rtol = 1e-5 if dt == np.complex64 else 1e-12
    np.testing.assert_allclose(tl.prod(tl.from_numpy(z), 1).numpy(), np.prod(z.astype(np.complex128), 1), rtol=rtol)
    np.testing.assert_allclose(tl.cumsum(tl.from_numpy(z), 2).numpy(), np.cumsum(z.astype(np.complex128), 2),
                               rtol=rtol, atol=rtol)
    np.testing.assert_allclose(tl.cumprod(tl.from_numpy(z), 0).numpy(), np.cumprod(z.astype(np.complex128), 0),
                               rtol=rtol)
    assert tl.prod(tl.from_numpy(z)).dtype is (tl.complex64 if dt == np.complex64 else tl.complex128)


@needs_torch
@pytest.mark.parametrize("dt", CDT, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name,f", REDUCE_CASES, ids=[c[0] for c in REDUCE_CASES])
def test_scans_and_prod_against_torch(name, f, dt):
    z = crandn(60, dt, edges=False).reshape(3, 5, 4)
    got, want = f(tl, tl.from_numpy(z.copy())).numpy(), f(torch, torch.from_numpy(z.copy())).numpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=2e-6 if dt == np.complex64 else 1e-12, atol=1e-6)


GRAD_REDUCE_CASES = [c for c in REDUCE_CASES if c[0] != "prod dtype"]   # torch's backward refuses real -> complex


@needs_torch
@pytest.mark.parametrize("zeros", [False, True], ids=["no zeros", "zeros"])
@pytest.mark.parametrize("name,f", GRAD_REDUCE_CASES, ids=[c[0] for c in GRAD_REDUCE_CASES])
def test_scans_and_prod_gradients_match_torch(name, f, zeros):
    z = crandn(60, np.complex128, edges=False).reshape(3, 5, 4)
    if zeros:   # prod's and cumprod's backward without division
        z[1, 2, 3] = z[2, 0, 1] = z[0, 4, 0] = 0
    w = None
    grads = []
    for m in (tl, torch):
        x = m.from_numpy(z.copy()).requires_grad_(True)
        out = f(m, x)
        if w is None:
            w = R.standard_normal(tuple(out.shape) + (2,))
        grads.append(m.autograd.grad((m.view_as_real(out) * m.from_numpy(w)).sum(), [x])[0].numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, atol=1e-12)
