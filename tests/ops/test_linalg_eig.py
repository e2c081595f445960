"""linalg.eig / linalg.eigvals (docs/LINALG.md, "Eigenvalues of general
matrices"): LAPACK ?geev for float32 / float64 / complex64 / complex128.

Values against numpy.linalg.eig (always: the eigenvalues compared as sorted
sets, the eigenvectors through A V = V diag(L), unit norm and the largest
component real) and torch (where installed: the same order, the eigenvectors
up to phase); conjugate pairs of real inputs; batches, empty batches, 0x0,
non-contiguous inputs, out=, Meta; PyTorch's errors; gradients of real and
complex inputs against finite differences and torch.
"""
import numpy as np
import pytest

import torchlet as tl

from ops_helpers import needs_torch, torch

R = np.random.default_rng(2031)
DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
TOL = {np.float32: 1e-4, np.float64: 1e-11, np.complex64: 1e-4, np.complex128: 1e-11}


def rand(shape, dt):
    a = R.standard_normal(shape)
    if np.issubdtype(dt, np.complexfloating):
        a = a + 1j * R.standard_normal(shape)
    return a.astype(dt)


def sorted_vals(w):
    w = np.asarray(w)
    return np.sort_complex(np.round(w, 6).astype(np.complex128).ravel())


def check_decomposition(a, L, V, tol):
    a64 = a.astype(np.complex128)
    L, V = L.astype(np.complex128), V.astype(np.complex128)
    scale = max(1.0, np.abs(a64).max())
    np.testing.assert_allclose(a64 @ V, V * L[..., None, :], atol=tol * scale * 10)
    np.testing.assert_allclose(np.linalg.norm(V, axis=-2), 1, atol=tol * 10)


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(4, 4), (3, 5, 5), (2, 1, 3, 3), (1, 1), (7, 7)])
def test_against_numpy(dt, shape):
    a = rand(shape, dt)
    L, V = tl.linalg.eig(tl.from_numpy(a))
    want = {np.float32: tl.complex64, np.complex64: tl.complex64}.get(dt, tl.complex128)
    assert L.dtype is want and V.dtype is want
    assert tuple(L.shape) == shape[:-1] and tuple(V.shape) == shape
    Ln, Vn = L.numpy(), V.numpy()
    check_decomposition(a, Ln, Vn, TOL[dt])
    wn = np.linalg.eigvals(a.astype(np.complex128))
    for b in np.ndindex(*shape[:-2]):
        np.testing.assert_allclose(sorted_vals(Ln[b]), sorted_vals(wn[b]), atol=1e-3 if TOL[dt] > 1e-6 else 1e-5)
    np.testing.assert_allclose(tl.linalg.eigvals(tl.from_numpy(a)).numpy(), Ln, atol=TOL[dt], rtol=TOL[dt])


def test_conjugate_pairs_of_real_input():
    """a rotation block: eigenvalues c +- s i with conjugate eigenvectors (PyTorch's make_complex_eigenvectors)"""
    a = np.array([[0.0, -2.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 3.0]])
    L, V = tl.linalg.eig(tl.from_numpy(a))
    Ln, Vn = L.numpy(), V.numpy()
    np.testing.assert_allclose(sorted_vals(Ln), sorted_vals([2j, -2j, 3]), atol=1e-12)
    pair = np.where(Ln.imag != 0)[0]
    assert len(pair) == 2 and Ln[pair[0]].imag > 0 and pair[1] == pair[0] + 1
    np.testing.assert_allclose(Vn[:, pair[1]], Vn[:, pair[0]].conj())
    check_decomposition(a, Ln, Vn, 1e-12)


def test_non_contiguous_and_strides():
    a = rand((3, 8, 8), np.float64)
    t = tl.from_numpy(a)[:, ::2, ::2].transpose(-2, -1)
    L, V = tl.linalg.eig(t)
    check_decomposition(np.ascontiguousarray(a[:, ::2, ::2].transpose(0, 2, 1)), L.numpy(), V.numpy(), 1e-11)
    assert V.stride() == (16, 1, 4)   # Fortran-strided matrices, as PyTorch's


@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0), (0, 3, 3)])
def test_empty(shape):
    L, V = tl.linalg.eig(tl.zeros(*shape))
    assert tuple(L.shape) == shape[:-1] and tuple(V.shape) == shape and L.dtype is tl.complex64
    assert tuple(tl.linalg.eigvals(tl.zeros(*shape, dtype=tl.float64)).shape) == shape[:-1]


def test_meta():
    L, V = tl.linalg.eig(tl.empty(2, 5, 5, device="meta"))
    assert L.device.type == "meta" and tuple(V.shape) == (2, 5, 5) and V.dtype is tl.complex64
    assert tuple(tl.linalg.eigvals(tl.empty(4, 4, dtype=tl.float64, device="meta")).shape) == (4,)


def test_out():
    a = rand((2, 3, 3), np.float64)
    w, v = tl.empty(0, dtype=tl.complex128), tl.empty(0, dtype=tl.complex128)
    r = tl.linalg.eig(tl.from_numpy(a), out=(w, v))
    L, V = tl.linalg.eig(tl.from_numpy(a))
    assert r[0] is w and r[1] is v
    np.testing.assert_array_equal(w.numpy(), L.numpy())
    np.testing.assert_array_equal(v.numpy(), V.numpy())
    o = tl.empty(0, dtype=tl.complex128)
    assert tl.linalg.eigvals(tl.from_numpy(a), out=o) is o
    np.testing.assert_array_equal(o.numpy(), L.numpy())


@needs_torch
@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
def test_against_torch(dt):
    a = rand((3, 6, 6), dt)
    L, V = tl.linalg.eig(tl.from_numpy(a))
    Lt, Vt = torch.linalg.eig(torch.from_numpy(a))
    np.testing.assert_allclose(L.numpy(), Lt.numpy(), atol=TOL[dt] * 10, rtol=TOL[dt])
    # eigenvectors up to a phase per column: compare the projectors v v^H
    P = np.einsum("...ij,...kj->...jik", V.numpy(), V.numpy().conj())
    Pt = np.einsum("...ij,...kj->...jik", Vt.numpy(), Vt.numpy().conj())
    np.testing.assert_allclose(P, Pt, atol=TOL[dt] * 100)
    np.testing.assert_allclose(tl.linalg.eigvals(tl.from_numpy(a)).numpy(), Lt.numpy(), atol=TOL[dt] * 10,
                               rtol=TOL[dt])


ERROR_CASES = [
    ("1-d", lambda m: m.linalg.eig(m.ones(3))),
    ("non-square", lambda m: m.linalg.eig(m.ones(2, 3))),
    ("nan", lambda m: m.linalg.eig(m.tensor([[1.0, float("nan")], [0.0, 1.0]]))),
    ("inf", lambda m: m.linalg.eig(m.full((2, 2), float("inf"), dtype=m.float64))),
    ("int", lambda m: m.linalg.eig(m.ones(2, 2, dtype=m.int64))),
    ("half", lambda m: m.linalg.eig(m.ones(2, 2, dtype=m.float16))),   # torch warns: ComplexHalf
    ("bfloat16", lambda m: m.linalg.eigvals(m.ones(2, 2, dtype=m.bfloat16))),
    ("eigvals non-square", lambda m: m.linalg.eigvals(m.ones(4, 2, 3))),
    ("eigvals int", lambda m: m.linalg.eigvals(m.ones(2, 2, dtype=m.int32))),
    ("out dtype", lambda m: m.linalg.eig(m.ones(2, 2), out=(m.empty(0), m.empty(0, dtype=m.complex64)))),
    ("out vectors dtype", lambda m: m.linalg.eig(m.ones(2, 2), out=(m.empty(0, dtype=m.complex64),
                                                                  m.empty(0, dtype=m.int64)))),
    ("eigvals out dtype", lambda m: m.linalg.eigvals(m.ones(2, 2), out=m.empty(0))),
]

ERRORS = {"1-d": (RuntimeError, "linalg.eig: The input tensor A must have at least 2 dimensions."),
          "non-square": (RuntimeError, "linalg.eig: A must be batches of square matrices, but they are 2 by 3 "
                                       "matrices"),
          "nan": (RuntimeError, "torch.linalg.eig: input tensor should not contain infs or NaNs."),
          "int": (RuntimeError, "Unknown Complex ScalarType for Long"),
          "half": (NotImplementedError, "\"linalg_eig_out_cpu\" not implemented for 'Half'"),
          "eigvals out dtype": (RuntimeError, "torch.linalg.eigvals: Expected eigenvalues to be safely castable "
                                              "from ComplexFloat dtype, but got eigenvalues with dtype Float")}


@pytest.mark.parametrize("name,f", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors(name, f):
    with pytest.raises(Exception) as got:
        f(tl)
    if name in ERRORS:
        typ, msg = ERRORS[name]
        assert type(got.value) is typ and str(got.value) == msg
    if torch is not None:
        with pytest.raises(Exception) as want:
            f(torch)
        assert type(got.value).__name__ == type(want.value).__name__
        assert str(got.value) == str(want.value).split("\n")[0]


# ---------------------------------------------------------------- gradients

def _loss(m, L, V, wl, wv):
    """a real loss invariant under the eigenvectors' phases (|V|), as PyTorch's OpInfo"""
    return (m.view_as_real(L) * m.from_numpy(wl)).sum() + (m.abs(V) * m.from_numpy(wv)).sum()


@pytest.mark.parametrize("dt", [np.float64, np.complex128], ids=["float64", "complex128"])
def test_gradient_finite_differences(dt):
    a = rand((2, 4, 4), dt)
    wl, wv = R.standard_normal((2, 4, 2)), R.standard_normal((2, 4, 4))

    def f(x):
        with tl.no_grad():
            L, V = tl.linalg.eig(tl.from_numpy(x))
            return _loss(tl, L, V, wl, wv).item()

    x = tl.from_numpy(a.copy()).requires_grad_(True)
    L, V = tl.linalg.eig(x)
    g, = tl.autograd.grad(_loss(tl, L, V, wl, wv), [x])
    g = g.numpy()
    eps = 1e-6
    for idx in [(0, 0, 0), (0, 1, 2), (1, 3, 1), (1, 2, 2)]:
        for unit in ([1, 1j] if np.iscomplexobj(a) else [1]):
            d = np.zeros_like(a)
            d[idx] = eps * unit
            fd = (f(a + d) - f(a - d)) / (2 * eps)
            # PyTorch's convention: dL = Re(conj(grad) * dA)
            np.testing.assert_allclose(fd, (np.conj(g[idx]) * unit).real, atol=1e-6)


@needs_torch
@pytest.mark.parametrize("dt", [np.float64, np.complex128], ids=["float64", "complex128"])
def test_gradients_match_torch(dt):
    a = rand((3, 5, 5), dt)
    wl, wv = R.standard_normal((3, 5, 2)), R.standard_normal((3, 5, 5))
    x = tl.from_numpy(a.copy()).requires_grad_(True)
    L, V = tl.linalg.eig(x)
    g, = tl.autograd.grad(_loss(tl, L, V, wl, wv), [x])
    xt = torch.from_numpy(a.copy()).requires_grad_(True)
    Lt, Vt = torch.linalg.eig(xt)
    gt, = torch.autograd.grad(_loss(torch, Lt, Vt, wl, wv), [xt])
    np.testing.assert_allclose(g.numpy(), gt.numpy(), atol=1e-9)
    # eigvals: through eig when the input requires grad
    x = tl.from_numpy(a.copy()).requires_grad_(True)
    g, = tl.autograd.grad((tl.view_as_real(tl.linalg.eigvals(x)) * tl.from_numpy(wl)).sum(), [x])
    xt = torch.from_numpy(a.copy()).requires_grad_(True)
    gt, = torch.autograd.grad((torch.view_as_real(torch.linalg.eigvals(xt)) * torch.from_numpy(wl)).sum(), [xt])
    np.testing.assert_allclose(g.numpy(), gt.numpy(), atol=1e-9)


@needs_torch
def test_phase_dependent_loss_raises():
    """a loss that depends on the eigenvectors' phase: PyTorch's error"""
    a = rand((3, 3), np.complex128)
    x = tl.from_numpy(a.copy()).requires_grad_(True)
    L, V = tl.linalg.eig(x)
    with pytest.raises(RuntimeError) as got:
        tl.autograd.grad(tl.view_as_real(V).sum(), [x])
    xt = torch.from_numpy(a.copy()).requires_grad_(True)
    Lt, Vt = torch.linalg.eig(xt)
    with pytest.raises(RuntimeError) as want:
        torch.autograd.grad(torch.view_as_real(Vt).sum(), [xt])
    assert str(got.value) == str(want.value).split("\n")[0]
