"""LAPACK solvers (docs/LINALG.md, "Solvers and factorizations"): linalg.inv /
inv_ex, inverse, linalg.solve / solve_ex (left=), linalg.det, det,
linalg.slogdet, slogdet, logdet, linalg.cholesky / cholesky_ex (upper=).

Values against numpy.linalg (always) and torch (where installed) on random
well-conditioned matrices: batched, broadcast batches, empty batches, 0x0,
non-contiguous inputs, float32 and float64; singular / not positive-definite
inputs and their LinAlgError messages; float64 gradchecks of the
derivatives.yaml formulas (solve with both operands, det of a singular
matrix, slogdet, cholesky in both triangles).
"""
import numpy as np
import pytest

import torchlet as tl
from torchlet._C import lib

from ops_helpers import needs_torch, torch

R = np.random.default_rng(2026)
TOL = {tl.float32: 2e-4, tl.float64: 1e-10}
FLOATS = [tl.float32, tl.float64]


def well(shape):
    """random matrices with a dominant diagonal (condition number ~ 1)"""
    a = R.standard_normal(shape)
    n = shape[-1]
    return a + 3 * n ** 0.5 * np.eye(n) if n else a


def spd(shape):
    a = R.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def T(a, dt=tl.float64):
    return tl.tensor(np.ascontiguousarray(a)).to(dt)


def close(got, ref, dt):
    np.testing.assert_allclose(got.numpy().astype(np.float64), ref, rtol=TOL[dt], atol=TOL[dt])


SQUARE = [(3, 3), (1, 1), (0, 0), (2, 4, 4), (2, 3, 5, 5), (0, 3, 3), (7, 7)]


@pytest.mark.parametrize("dt", FLOATS, ids=str)
@pytest.mark.parametrize("shape", SQUARE, ids=str)
def test_inv(shape, dt):
    a = well(shape)
    close(tl.linalg.inv(T(a, dt)), np.linalg.inv(a) if a.size else a, dt)
    close(tl.inverse(T(a, dt)), np.linalg.inv(a) if a.size else a, dt)
    x, info = tl.linalg.inv_ex(T(a, dt))
    assert info.dtype is tl.int32 and info.shape == shape[:-2] and not info.numpy().any()
    assert x.shape == shape


@pytest.mark.parametrize("dt", FLOATS, ids=str)
@pytest.mark.parametrize("shape", SQUARE, ids=str)
def test_det_slogdet_logdet(shape, dt):
    a = well(shape)
    if shape[-1]:
        a[..., 0, :] *= -1          # some negative determinants
    close(tl.linalg.det(T(a, dt)), np.linalg.det(a), dt)
    close(tl.det(T(a, dt)), np.linalg.det(a), dt)
    s, l = tl.linalg.slogdet(T(a, dt))
    rs, rl = np.linalg.slogdet(a)
    close(s, rs, dt)
    close(l, rl, dt)
    s2, l2 = tl.slogdet(T(a, dt))
    close(s2, rs, dt)
    with np.errstate(invalid="ignore"):
        close(tl.logdet(T(a, dt)), np.where(rs < 0, np.nan, rl), dt)


def test_det_singular():
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert tl.linalg.det(T(a)).item() == 0
    s, l = tl.linalg.slogdet(T(a))
    assert s.item() == 0 and l.item() == -np.inf


@pytest.mark.parametrize("dt", FLOATS, ids=str)
@pytest.mark.parametrize("ashape,bshape", [
    ((3, 3), (3, 2)), ((3, 3), (3,)), ((2, 4, 4), (2, 4)), ((2, 4, 4), (4, 1)), ((4, 4), (2, 3, 4, 2)),
    ((2, 1, 3, 3), (5, 3, 2)), ((0, 3, 3), (0, 3, 2)), ((0, 0), (0, 2)), ((5, 5), (5, 0))], ids=str)
def test_solve(ashape, bshape, dt):
    a, b = well(ashape), R.standard_normal(bshape)
    vec = len(bshape) == 1 or (len(ashape) - 1 == len(bshape) and bshape == ashape[:-1])
    bm = b[..., None] if vec else b
    ref = np.linalg.solve(np.broadcast_to(a, np.broadcast_shapes(a.shape[:-2], bm.shape[:-2]) + a.shape[-2:]),
                          np.broadcast_to(bm, np.broadcast_shapes(a.shape[:-2], bm.shape[:-2]) + bm.shape[-2:])) \
        if a.size and bm.size else np.zeros(np.broadcast_shapes(a.shape[:-2], bm.shape[:-2]) + bm.shape[-2:])
    ref = ref[..., 0] if vec else ref
    got = tl.linalg.solve(T(a, dt), T(b, dt))
    assert got.shape == ref.shape
    close(got, ref, dt)
    x, info = tl.linalg.solve_ex(T(a, dt), T(b, dt))
    close(x, ref, dt)
    assert info.shape == ashape[:-2]


@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_solve_left_false(dt):
    a, b = well((2, 4, 4)), R.standard_normal((2, 3, 4))
    ref = np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    close(tl.linalg.solve(T(a, dt), T(b, dt), left=False), ref, dt)


def test_non_contiguous():
    a, b = well((4, 4)), R.standard_normal((4, 6))
    at, bt = T(a.T.copy()).t(), T(b.T.copy()).t()      # transposed views
    assert not at.is_contiguous()
    close(tl.linalg.solve(at, bt), np.linalg.solve(a, b), tl.float64)
    close(tl.linalg.inv(at), np.linalg.inv(a), tl.float64)
    big = T(np.repeat(well((4, 4)), 2, axis=1))[:, ::2]   # stepped columns
    close(tl.linalg.det(big), np.linalg.det(big.numpy()), tl.float64)
    s = spd((5, 5))
    close(tl.linalg.cholesky(T(s).t()), np.linalg.cholesky(s), tl.float64)


@pytest.mark.parametrize("dt", FLOATS, ids=str)
@pytest.mark.parametrize("shape", [(4, 4), (1, 1), (0, 0), (3, 5, 5), (0, 2, 2)], ids=str)
def test_cholesky(shape, dt):
    a = spd(shape)
    ref = np.linalg.cholesky(a) if a.size else a
    close(tl.linalg.cholesky(T(a, dt)), ref, dt)
    close(tl.linalg.cholesky(T(a, dt), upper=True), np.swapaxes(ref, -1, -2), dt)
    L, info = tl.linalg.cholesky_ex(T(a, dt))
    close(L, ref, dt)
    assert info.shape == shape[:-2] and not info.numpy().any()


def test_cholesky_reads_one_triangle():
    a = spd((4, 4))
    low, up = np.tril(a) + np.triu(R.standard_normal((4, 4)), 1), np.triu(a) + np.tril(R.standard_normal((4, 4)), -1)
    close(tl.linalg.cholesky(T(low)), np.linalg.cholesky(a), tl.float64)
    close(tl.linalg.cholesky(T(up), upper=True), np.linalg.cholesky(a).T, tl.float64)


# ---------------------------------------------------------------- errors
def raises(exc, msg, fn, *args, **kw):
    with pytest.raises(exc) as e:
        fn(*args, **kw)
    assert str(e.value) == msg, str(e.value)


def test_linalg_error_type():
    assert issubclass(tl.linalg.LinAlgError, RuntimeError)


def test_singular_errors():
    s = np.zeros((3, 3))
    s[0, 0] = 1
    raises(tl.linalg.LinAlgError, "linalg.inv: The diagonal element 2 is zero, the inversion could not be completed "
           "because the input matrix is singular.", tl.linalg.inv, T(s))
    raises(tl.linalg.LinAlgError, "linalg.inv: (Batch element 1): The diagonal element 2 is zero, the inversion could "
           "not be completed because the input matrix is singular.", tl.linalg.inv, T(np.stack([np.eye(3), s])))
    raises(tl.linalg.LinAlgError, "torch.linalg.solve: The solver failed because the input matrix is singular.",
           tl.linalg.solve, T(s), T(np.ones((3, 2))))
    raises(tl.linalg.LinAlgError, "torch.linalg.solve: (Batch element 0): The solver failed because the input matrix "
           "is singular.", tl.linalg.solve, T(np.stack([s, s])), T(np.ones((3, 2))))
    raises(tl.linalg.LinAlgError, "linalg.cholesky: The factorization could not be completed because the input is not "
           "positive-definite (the leading minor of order 1 is not positive-definite).", tl.linalg.cholesky,
           T(-np.eye(3)))
    raises(tl.linalg.LinAlgError, "linalg.inv_ex: The diagonal element 2 is zero, the inversion could not be "
           "completed because the input matrix is singular.", tl.linalg.inv_ex, T(s), check_errors=True)
    x, info = tl.linalg.inv_ex(T(s))
    assert info.item() == 2
    L, info = tl.linalg.cholesky_ex(T(np.stack([np.eye(2), -np.eye(2)])))
    assert info.tolist() == [0, 1]


def test_argument_errors():
    raises(RuntimeError, "linalg.inv: A must be batches of square matrices, but they are 2 by 3 matrices",
           tl.linalg.inv, T(np.ones((2, 3))))
    raises(RuntimeError, "linalg.inv: The input tensor A must have at least 2 dimensions.", tl.linalg.inv,
           T(np.ones(3)))
    raises(RuntimeError, "linalg.inv: Expected a floating point or complex tensor as input. Got Long",
           tl.linalg.inv, tl.ones(3, 3, dtype=tl.int64))
    raises(RuntimeError, "linalg.det: A must be batches of square matrices, but they are 2 by 3 matrices",
           tl.linalg.det, T(np.ones((2, 3))))
    raises(RuntimeError, "linalg.slogdet: The input tensor A must have at least 2 dimensions.", tl.linalg.slogdet,
           T(np.ones(3)))
    raises(RuntimeError, "linalg.solve: Incompatible shapes of A and B for the equation AX = B (3x3 and 4x1)",
           tl.linalg.solve, T(np.eye(3)), T(np.ones(4)))
    raises(RuntimeError, "linalg.solve: Incompatible shapes of A and B for the equation AX = B (3x3 and 4x5)",
           tl.linalg.solve, T(np.eye(3)), T(np.ones((4, 5))))
    raises(RuntimeError, "linalg.solve: Expected A and B to have the same dtype, but found A of type Float and B of "
           "type Double instead", tl.linalg.solve, T(np.eye(3), tl.float32), T(np.ones(3)))
    raises(RuntimeError, "linalg.cholesky: A must be batches of square matrices, but they are 2 by 3 matrices",
           tl.linalg.cholesky, T(np.ones((2, 3))))


@needs_torch
@pytest.mark.parametrize("case", ["inv", "solve", "det", "slogdet", "cholesky", "logdet"])
def test_against_torch(case):
    a = well((3, 4, 4))
    a[1, 0] *= -1
    b = R.standard_normal((3, 4, 2))
    s = spd((3, 4, 4))
    ta, tb, ts = torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(s)
    la, lb, ls = T(a), T(b), T(s)
    got, ref = {
        "inv": lambda: (tl.linalg.inv(la), torch.linalg.inv(ta)),
        "solve": lambda: (tl.linalg.solve(la, lb), torch.linalg.solve(ta, tb)),
        "det": lambda: (tl.linalg.det(la), torch.linalg.det(ta)),
        "slogdet": lambda: (tl.linalg.slogdet(la)[1], torch.linalg.slogdet(ta)[1]),
        "cholesky": lambda: (tl.linalg.cholesky(ls, upper=True), torch.linalg.cholesky(ts, upper=True)),
        "logdet": lambda: (tl.logdet(la), torch.logdet(ta)),
    }[case]()
    np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- gradients
def rg(a):
    return T(a).requires_grad_()


GRAD_CASES = [
    ("inv", lambda: [rg(well((3, 3)))], lambda a: tl.linalg.inv(a)),
    ("inv batched", lambda: [rg(well((2, 3, 3)))], lambda a: tl.linalg.inv_ex(a)[0]),
    ("solve", lambda: [rg(well((3, 3))), rg(R.standard_normal((3, 2)))], lambda a, b: tl.linalg.solve(a, b)),
    ("solve vector", lambda: [rg(well((2, 3, 3))), rg(R.standard_normal((2, 3)))],
     lambda a, b: tl.linalg.solve(a, b)),
    ("solve broadcast A", lambda: [rg(well((3, 3))), rg(R.standard_normal((2, 3, 2)))],
     lambda a, b: tl.linalg.solve(a, b)),
    ("solve left=False", lambda: [rg(well((3, 3))), rg(R.standard_normal((2, 3)))],
     lambda a, b: tl.linalg.solve(a, b, left=False)),
    ("det", lambda: [rg(well((2, 3, 3)))], lambda a: tl.linalg.det(a)),
    ("det singular", lambda: [rg(np.array([[1.0, 2.0, 0.5], [2.0, 4.0, 1.0], [0.3, -1.0, 2.0]]))],
     lambda a: tl.linalg.det(a)),
    ("slogdet", lambda: [rg(well((2, 3, 3)))], lambda a: tl.linalg.slogdet(a)[1]),
    ("logdet", lambda: [rg(spd((3, 3)))], lambda a: tl.logdet(a)),
    ("cholesky", lambda: [rg(spd((3, 3)))], lambda a: tl.linalg.cholesky(a)),
    ("cholesky upper", lambda: [rg(spd((2, 3, 3)))], lambda a: tl.linalg.cholesky(a, upper=True)),
]


@pytest.mark.parametrize("name,make,fn", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradcheck(name, make, fn):
    inputs = make()
    if name.startswith("cholesky"):  # symmetric perturbations only: the input's upper triangle is not read
        f = fn
        fn = lambda a: f((a + a.transpose(-2, -1)) / 2)  # noqa: E731
    assert tl.autograd.gradcheck(fn, inputs)


def test_gradgradcheck_inv_det():
    a = rg(well((3, 3)))
    assert tl.autograd.gradgradcheck(lambda x: tl.linalg.inv(x), [a])
    assert tl.autograd.gradgradcheck(lambda x: tl.linalg.det(x), [a])


# ---------------------------------------------------------------- composites
@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5, 7, -1, -2, -3, -5])
def test_matrix_power(n):
    a = well((2, 3, 3)) / 3
    ref = np.linalg.matrix_power(a, n)
    close(tl.linalg.matrix_power(T(a), n), ref, tl.float64)


def test_matrix_power_integer():
    a = R.integers(-3, 4, size=(3, 3))
    got = tl.linalg.matrix_power(tl.tensor(a), 5)
    assert got.dtype is tl.int64 and (got.numpy() == np.linalg.matrix_power(a, 5)).all()


def test_tensorinv_tensorsolve():
    a = well((6, 6)).reshape(6, 2, 3)
    close(tl.linalg.tensorinv(T(a), ind=1), np.linalg.tensorinv(a, ind=1), tl.float64)
    a4 = well((6, 6)).reshape(2, 3, 6)
    b = R.standard_normal((2, 3))
    close(tl.linalg.tensorsolve(T(a4), T(b)), np.linalg.tensorsolve(a4, b), tl.float64)
    a5 = np.moveaxis(a4, 2, 0)
    close(tl.linalg.tensorsolve(T(a5), T(b), dims=(0,)), np.linalg.tensorsolve(a5, b, axes=(0,)), tl.float64)
    raises(RuntimeError, "Expected a strictly positive integer for 'ind', but got 0", tl.linalg.tensorinv, T(a), ind=0)


def test_cholesky_top_level():
    s = spd((2, 4, 4))
    lib.tl_reset_warn_once()   # re-arm the TL_WARN_ONCE sites
    with pytest.warns(UserWarning, match="torch.cholesky is deprecated"):
        got = tl.cholesky(T(s))
    close(got, np.linalg.cholesky(s), tl.float64)
    close(tl.cholesky(T(s), upper=True), np.swapaxes(np.linalg.cholesky(s), -1, -2), tl.float64)
    raises(tl.linalg.LinAlgError, "cholesky: (Batch element 1): The factorization could not be completed because the "
           "input is not positive-definite (the leading minor of order 1 is not positive-definite).", tl.cholesky,
           T(np.stack([np.eye(2), -np.eye(2)])))


# ---------------------------------------------------------------- eigh, solve_triangular
@pytest.mark.parametrize("dt", FLOATS, ids=str)
@pytest.mark.parametrize("shape", [(4, 4), (1, 1), (0, 0), (3, 5, 5), (0, 2, 2)], ids=str)
def test_eigh(shape, dt):
    a = R.standard_normal(shape)
    s = a + np.swapaxes(a, -1, -2)
    for uplo in ("L", "U"):
        w, V = tl.linalg.eigh(T(s, dt), UPLO=uplo)
        close(w, np.linalg.eigvalsh(s, UPLO=uplo) if s.size else np.zeros(shape[:-1]), dt)
        v = V.numpy().astype(np.float64)
        close(tl.tensor((v * w.numpy()[..., None, :]) @ np.swapaxes(v, -1, -2)), s, dt)   # V diag(w) V^T = A
        close(tl.linalg.eigvalsh(T(s, dt), UPLO=uplo), w.numpy(), dt)


def test_eigh_reads_one_triangle_and_errors():
    s = spd((4, 4))
    low = np.tril(s) + np.triu(R.standard_normal((4, 4)), 1)
    close(tl.linalg.eigvalsh(T(low)), np.linalg.eigvalsh(s), tl.float64)
    raises(RuntimeError, "Expected UPLO argument to be 'L' or 'U', but got X", tl.linalg.eigh, T(s), UPLO="X")


@pytest.mark.parametrize("dt", FLOATS, ids=str)
@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [True, False])
def test_solve_triangular(dt, upper, left, unit):
    a = well((2, 4, 4))
    tri = np.triu(a) if upper else np.tril(a)
    ref_a = tri.copy()
    if unit:   # the diagonal is not read: ones
        ref_a[..., np.arange(4), np.arange(4)] = 1
    b = R.standard_normal((3, 1, 4, 2) if left else (3, 1, 2, 4))
    ref = np.linalg.solve(ref_a, b) if left else np.swapaxes(
        np.linalg.solve(np.swapaxes(ref_a, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    close(tl.linalg.solve_triangular(T(a, dt), T(b, dt), upper=upper, left=left, unitriangular=unit), ref, dt)


GRAD_CASES_2 = [
    ("eigh values", lambda: [rg(R.standard_normal((3, 3)))], lambda a: tl.linalg.eigvalsh(a + a.mT)),
    ("eigh vectors", lambda: [rg(R.standard_normal((2, 3, 3)))],
     lambda a: (lambda wv: (wv[0], wv[1] * wv[1][..., :1, :].sign()))(tl.linalg.eigh(a + a.mT))),
    ("solve_triangular", lambda: [rg(well((3, 3))), rg(R.standard_normal((3, 2)))],
     lambda a, b: tl.linalg.solve_triangular(a, b, upper=True)),
    ("solve_triangular right unit", lambda: [rg(well((3, 3))), rg(R.standard_normal((2, 2, 3)))],
     lambda a, b: tl.linalg.solve_triangular(a, b, upper=False, left=False, unitriangular=True)),
]


@pytest.mark.parametrize("name,make,fn", GRAD_CASES_2, ids=[c[0] for c in GRAD_CASES_2])
def test_gradcheck_eigh_triangular(name, make, fn):
    assert tl.autograd.gradcheck(fn, make())


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 4, 4), (0, 3, 2)], ids=str)
@pytest.mark.parametrize("some", [True, False])
def test_svd_top_level(shape, some):
    a = R.standard_normal(shape)
    U, S, V = tl.svd(T(a), some=some)
    k = min(shape[-2:])
    close(S, np.linalg.svd(a, compute_uv=False) if a.size else np.zeros(shape[:-2] + (k,)), tl.float64)
    u, v = U.numpy()[..., :k], V.numpy()[..., :k]
    close(tl.tensor((u * S.numpy()[..., None, :]) @ np.swapaxes(v, -1, -2)), a, tl.float64)
    assert U.shape[-1] == (k if some else shape[-2]) and V.shape[-1] == (k if some else shape[-1])
    U0, S0, V0 = tl.svd(T(a), compute_uv=False)
    assert U0.shape == shape[:-1] + (shape[-2],) and V0.shape == shape[:-2] + (shape[-1],) * 2
    assert not U0.numpy().any() and not V0.numpy().any()
    raises(RuntimeError, "linalg.svd: input should have at least 2 dimensions, but has 1 dimensions instead", tl.svd,
           T(np.ones(3)))


def test_svd_top_level_gradcheck():
    assert tl.autograd.gradcheck(lambda a: tl.svd(a)[1], [rg(R.standard_normal((4, 3)))])


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_inverse(upper):
    s = spd((2, 4, 4))
    L = np.linalg.cholesky(s)
    f = np.swapaxes(L, -1, -2) if upper else L
    b = R.standard_normal((3, 1, 4, 2))
    close(tl.cholesky_solve(T(b), T(f), upper=upper), np.linalg.solve(s, b), tl.float64)
    close(tl.cholesky_inverse(T(f), upper=upper), np.linalg.inv(s), tl.float64)
    # the factor's other triangle is not read: perturb the triangle only (PyTorch's triangular-input wrapper)
    tri = (lambda y: y.triu()) if upper else (lambda y: y.tril())  # noqa: E731
    inputs = [rg(b[0]), rg(f)]
    assert tl.autograd.gradcheck(lambda x, y: tl.cholesky_solve(x, tri(y), upper=upper), inputs)
    assert tl.autograd.gradcheck(lambda y: tl.cholesky_inverse(tri(y), upper=upper), [rg(f)])


def test_cholesky_solve_errors():
    raises(RuntimeError, "Expected b and A to have the same dtype, but found b of type Float and A of type Double "
           "instead.", tl.cholesky_solve, T(np.ones((3, 2)), tl.float32), T(np.eye(3)))
    raises(RuntimeError, "Incompatible matrix sizes for cholesky_solve: each A matrix is 3 by 3 but each b matrix is "
           "4 by 2", tl.cholesky_solve, T(np.ones((4, 2))), T(np.eye(3)))
    raises(RuntimeError, "b should have at least 2 dimensions, but has 1 dimensions instead", tl.cholesky_solve,
           T(np.ones(3)), T(np.eye(3)))
    raises(RuntimeError, "cholesky_inverse: A must be batches of square matrices, but they are 2 by 3 matrices",
           tl.cholesky_inverse, T(np.ones((2, 3))))
