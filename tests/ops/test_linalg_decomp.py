"""LAPACK decompositions (docs/LINALG.md, "Decompositions"): linalg.lu_factor /
lu_factor_ex, linalg.lu, linalg.lu_solve, lu_unpack, torch.lu / lu_solve,
linalg.qr / qr, geqrf, householder_product / orgqr, ormqr, triangular_solve,
linalg.lstsq, linalg.pinv / pinverse, linalg.matrix_rank, linalg.cond,
matrix_exp, linalg.ldl_factor(_ex) / ldl_solve.

Values against numpy.linalg / scipy-free reconstructions (always) and torch
(where installed) on random matrices: batched, broadcast batches, empty
batches, 0x0, rectangular and non-contiguous inputs, float32 and float64;
the error texts; float64 gradchecks of the derivatives.yaml formulas.
"""
import numpy as np
import pytest

import torchlet as tl

from ops_helpers import needs_torch, torch

R = np.random.default_rng(2029)
TOL = {tl.float32: 3e-4, tl.float64: 1e-9}
FLOATS = [tl.float32, tl.float64]


def well(shape):
    """random matrices with a dominant diagonal (condition number ~ 1)"""
    a = R.standard_normal(shape)
    n = shape[-1]
    return a + 3 * n ** 0.5 * np.eye(n) if n else a


def T(a, dt=tl.float64):
    return tl.tensor(np.ascontiguousarray(a)).to(dt)


def N(t):
    return t.numpy().astype(np.float64)


def close(got, ref, dt=tl.float64, scale=1.0):
    np.testing.assert_allclose(N(got) if not isinstance(got, np.ndarray) else got, ref,
                               rtol=TOL[dt] * scale, atol=TOL[dt] * scale)


def noncontig(a, dt):
    """the same values through a transposed view (non-contiguous)"""
    return T(np.swapaxes(a, -1, -2), dt).transpose(-2, -1)


SQUARE = [(3, 3), (1, 1), (0, 0), (2, 4, 4), (2, 3, 5, 5), (0, 3, 3)]
RECT = [(3, 5), (5, 3), (2, 4, 2), (3, 1, 4), (0, 2), (2, 0), (2, 0, 3)]


# ---------------------------------------------------------------- LU
@pytest.mark.parametrize("dt", FLOATS, ids=str)
@pytest.mark.parametrize("shape", SQUARE + RECT, ids=str)
def test_lu_reconstructs(shape, dt):
    a = R.standard_normal(shape)
    P, L, U = tl.linalg.lu(T(a, dt))
    m, n = shape[-2:]
    k = min(m, n)
    assert P.shape == shape[:-2] + (m, m) and L.shape == shape[:-2] + (m, k) and U.shape == shape[:-2] + (k, n)
    close(N(P) @ N(L) @ N(U), a, dt, 10)
    assert np.allclose(np.triu(N(L), 1), 0) and np.allclose(np.tril(N(U), -1), 0)
    assert np.allclose(np.diagonal(N(L), axis1=-2, axis2=-1), 1)
    # partial pivoting: |L| <= 1
    assert (np.abs(N(L)) <= 1 + 1e-6).all()
    LU, piv = tl.linalg.lu_factor(T(a, dt))
    assert piv.dtype is tl.int32 and piv.shape == shape[:-2] + (k,)
    P2, L2, U2 = tl.lu_unpack(LU, piv)
    close(L2, N(L), dt), close(U2, N(U), dt), close(P2, N(P), dt)
    LU3, piv3, info = tl.linalg.lu_factor_ex(noncontig(a, dt))
    close(LU3, N(LU), dt)
    assert info.dtype is tl.int32 and info.shape == shape[:-2] and not info.numpy().any()


@needs_torch
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 5), (2, 5, 3)], ids=str)
def test_lu_factor_matches_torch(shape):
    a = R.standard_normal(shape)
    LU, piv = tl.linalg.lu_factor(T(a))
    tLU, tpiv = torch.linalg.lu_factor(torch.from_numpy(a))
    close(LU, tLU.numpy())
    assert (piv.numpy() == tpiv.numpy()).all()


@pytest.mark.parametrize("dt", FLOATS, ids=str)
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [True, False])
@pytest.mark.parametrize("ashape,bshape", [((3, 3), (3, 2)), ((2, 4, 4), (2, 4, 3)), ((4, 4), (2, 4, 4)),
                                           ((2, 1, 3, 3), (3, 3, 3)), ((0, 0), (0, 2)), ((0, 3, 3), (0, 3, 3))],
                         ids=str)
def test_lu_solve(ashape, bshape, left, adjoint, dt):
    a = well(ashape)
    b = R.standard_normal(bshape if left else bshape[:-2] + bshape[-2:][::-1])
    LU, piv = tl.linalg.lu_factor(T(a, dt))
    x = tl.linalg.lu_solve(LU, piv, T(b, dt), left=left, adjoint=adjoint)
    op = np.swapaxes(a, -1, -2) if adjoint else a
    if left:
        ref = np.linalg.solve(op, b) if a.size and b.size else np.zeros(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:])
    else:
        ref = np.swapaxes(np.linalg.solve(np.swapaxes(op, -1, -2), np.swapaxes(b, -1, -2)), -1, -2) if a.size and b.size else np.zeros(x.shape)
    close(x, ref, dt, 10)


def test_lu_solve_legacy_and_torch_lu():
    a, b = well((2, 3, 3)), R.standard_normal((2, 3, 2))
    LU, piv = tl.lu(T(a))
    LU2, piv2, info = tl.lu(T(a), get_infos=True)
    assert info.shape == (2,) and (piv.numpy() == piv2.numpy()).all()
    close(tl.lu_solve(T(b), LU, piv), np.linalg.solve(a, b))
    close(T(b).lu_solve(LU, piv), np.linalg.solve(a, b))
    lu_m, piv_m = T(a).lu()
    close(lu_m, N(LU))


def test_lu_errors():
    with pytest.raises(RuntimeError, match=r"torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: \[3\] instead"):
        tl.linalg.lu_factor(T(np.ones(3)))
    with pytest.raises(RuntimeError, match="LU without pivoting is not implemented on the CPU"):
        tl.linalg.lu_factor(T(np.eye(3)), pivot=False)
    sing = T(np.array([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(RuntimeError, match=r"torch.linalg.lu_factor: U\[2,2\] is zero"):
        tl.linalg.lu_factor(sing)
    LU, piv, info = tl.linalg.lu_factor_ex(sing)
    assert info.item() == 2
    LU, piv = tl.linalg.lu_factor(T(np.eye(3)))
    with pytest.raises(RuntimeError, match="pivots should be a Tensor of scalar type torch.int32"):
        tl.linalg.lu_solve(LU, piv.to(tl.int64), T(np.ones((3, 1))))
    with pytest.raises(RuntimeError, match=r"Incompatible shapes of A and B for the equation AX = B \(3x3 and 2x1\)"):
        tl.linalg.lu_solve(LU, piv, T(np.ones((2, 1))))
    bad = tl.tensor(np.array([0, 9, 1], dtype=np.int32))
    with pytest.raises(RuntimeError):
        tl.linalg.lu_solve(LU, bad, T(np.ones((3, 1))))
    with pytest.raises(RuntimeError, match="pivots passed to lu_unpack must be between 1 and LU.size"):
        tl.lu_unpack(LU, bad)
    with pytest.raises(RuntimeError, match="LU_pivots is expected to be a contiguous tensor of torch.int32 dtype"):
        tl.lu_unpack(LU, piv.to(tl.int64))


# ---------------------------------------------------------------- QR
@pytest.mark.parametrize("dt", FLOATS, ids=str)
@pytest.mark.parametrize("shape", SQUARE + RECT, ids=str)
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr(shape, mode, dt):
    a = R.standard_normal(shape)
    Q, Rm = tl.linalg.qr(T(a, dt), mode=mode)
    m, n = shape[-2:]
    k = min(m, n)
    rows = m if mode == "complete" else k
    assert Rm.shape == shape[:-2] + (rows, n)
    assert np.allclose(np.tril(N(Rm), -1), 0)
    if mode == "r":
        assert Q.shape == (0,)
        return
    assert Q.shape == shape[:-2] + (m, rows)
    close(N(Q) @ N(Rm), a, dt, 10)
    close(np.swapaxes(N(Q), -1, -2) @ N(Q), np.broadcast_to(np.eye(rows), shape[:-2] + (rows, rows)), dt, 10)
    if a.ndim == 2 and a.size:
        q_np, r_np = np.linalg.qr(a, mode=mode)
        if mode == "r":
            r_np, q_np = q_np, None
        close(np.abs(N(Rm)), np.abs(r_np), dt, 10)


@needs_torch
@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 4, 4)], ids=str)
def test_qr_geqrf_match_torch(shape):
    a = R.standard_normal(shape)
    Q, Rm = tl.linalg.qr(T(a))
    tQ, tR = torch.linalg.qr(torch.from_numpy(a))
    close(Q, tQ.numpy()), close(Rm, tR.numpy())
    g, tau = tl.geqrf(T(a))
    tg, ttau = torch.geqrf(torch.from_numpy(a))
    close(g, tg.numpy()), close(tau, ttau.numpy())
    if shape[-2] >= shape[-1]:
        close(tl.linalg.householder_product(g, tau), torch.linalg.householder_product(tg, ttau).numpy())
    c = R.standard_normal(shape[:-2] + (shape[-2], 2))
    for left, tr in [(True, False), (True, True)]:
        close(tl.ormqr(g, tau, T(c), left, tr), torch.ormqr(tg, ttau, torch.from_numpy(c), left, tr).numpy())
    c = R.standard_normal(shape[:-2] + (2, shape[-2]))
    for tr in (False, True):
        close(tl.ormqr(g, tau, T(c), False, tr), torch.ormqr(tg, ttau, torch.from_numpy(c), False, tr).numpy())


def test_qr_legacy_and_errors():
    a = R.standard_normal((5, 3))
    Q, Rm = tl.qr(T(a), some=False)
    assert Q.shape == (5, 5) and Rm.shape == (5, 3)
    Q, Rm = T(a).qr()
    assert Q.shape == (5, 3)
    close(tl.orgqr(*tl.geqrf(T(a))), N(Q))
    with pytest.raises(RuntimeError, match="qr received unrecognized mode 'full'"):
        tl.linalg.qr(T(a), mode="full")
    with pytest.raises(RuntimeError, match="input.shape\\[-2\\] must be greater than or equal to input.shape\\[-1\\]"):
        tl.linalg.householder_product(T(a.T), T(np.ones(3)))
    with pytest.raises(RuntimeError, match="torch.geqrf: input must have at least 2 dimensions."):
        tl.geqrf(T(np.ones(3)))


# ---------------------------------------------------------------- triangular_solve, lstsq
@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
@pytest.mark.parametrize("unit", [True, False])
def test_triangular_solve(upper, transpose, unit):
    a = well((2, 4, 4))
    a = np.triu(a) if upper else np.tril(a)
    b = R.standard_normal((3, 1, 4, 2))
    x, M = tl.triangular_solve(T(b), T(a), upper, transpose, unit)
    use = a.copy()
    if unit:
        idx = np.arange(4)
        use[..., idx, idx] = 1
    op = np.swapaxes(use, -1, -2) if transpose else use
    close(x, np.linalg.solve(op, b))
    close(M, np.broadcast_to(a, (3, 2, 4, 4)))


@pytest.mark.parametrize("dt", FLOATS, ids=str)
@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize("ashape,bshape", [((5, 3), (5, 2)), ((3, 5), (3, 2)), ((2, 6, 4), (2, 6, 1)),
                                           ((2, 6, 4), (2, 6)), ((4, 4), (4,)), ((0, 3), (0, 2))], ids=str)
def test_lstsq(ashape, bshape, driver, dt):
    a, b = R.standard_normal(ashape), R.standard_normal(bshape)
    if driver == "gels" and ashape[-2] < ashape[-1]:
        pass   # gels: the minimum-norm solution of a full-rank wide system, as the others
    sol, res, rank, sv = tl.linalg.lstsq(T(a, dt), T(b, dt), driver=driver)
    vec = len(bshape) == len(ashape) - 1
    bb = b[..., None] if vec else b
    ref = np.linalg.pinv(a) @ bb if a.size else np.zeros(ashape[:-2] + (ashape[-1], bb.shape[-1]))
    close(sol, ref[..., 0] if vec else ref, dt, 30)
    m, n = ashape[-2:]
    d = driver or "gelsy"
    if m > n and d != "gelsy":
        r = ((a @ ref - bb) ** 2).sum(-2)
        close(res, r[..., 0] if vec else r, dt, 30)
    else:
        assert res.shape == (0,)
    if d == "gels":
        assert rank.shape == (0,)
    else:
        assert rank.dtype is tl.int64 and (rank.numpy() == min(m, n)).all()
    if d in ("gelsd", "gelss"):
        close(sv, np.linalg.svd(a, compute_uv=False) if a.size else np.zeros(ashape[:-2] + (min(m, n),)), dt, 10)
    else:
        assert sv.shape == (0,)


def test_lstsq_errors():
    with pytest.raises(RuntimeError, match="parameter `driver` should be one of"):
        tl.linalg.lstsq(T(np.eye(3)), T(np.ones((3, 1))), driver="gesv")
    with pytest.raises(RuntimeError, match="input.size\\(-2\\) should match other.size\\(-2\\)"):
        tl.linalg.lstsq(T(np.eye(3)), T(np.ones((2, 1))))


# ---------------------------------------------------------------- pinv, matrix_rank, cond
@pytest.mark.parametrize("dt", FLOATS, ids=str)
@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (2, 4, 4), (0, 3), (2, 0, 0)], ids=str)
def test_pinv_rank(shape, dt):
    a = R.standard_normal(shape)
    close(tl.linalg.pinv(T(a, dt)), np.linalg.pinv(a) if a.size else np.zeros(shape[:-2] + shape[-2:][::-1]), dt, 30)
    close(tl.pinverse(T(a, dt)), np.linalg.pinv(a) if a.size else np.zeros(shape[:-2] + shape[-2:][::-1]), dt, 30)
    r = tl.linalg.matrix_rank(T(a, dt))
    assert r.dtype is tl.int64 and (r.numpy() == (np.linalg.matrix_rank(a) if a.size else 0)).all()
    low = R.standard_normal((6, 2)) @ R.standard_normal((2, 5))
    assert tl.linalg.matrix_rank(T(low, dt)).item() == 2
    assert tl.linalg.matrix_rank(T(low, dt), atol=1e3).item() == 0
    sym = low @ low.T
    assert tl.linalg.matrix_rank(T(sym, dt), hermitian=True).item() == 2
    close(tl.linalg.pinv(T(sym, dt), hermitian=True), np.linalg.pinv(sym, hermitian=True), dt, 1e4)


@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", float("inf"), float("-inf"), 1, -1])
def test_cond(p):
    a = R.standard_normal((2, 4, 4))
    close(tl.linalg.cond(T(a), p), np.linalg.cond(a, p), scale=1e3)
    assert tl.linalg.cond(T(np.zeros((2, 0, 0))), p).shape == (2,)
    if p not in (None, 2, -2):
        with pytest.raises(RuntimeError, match="must be batches of square matrices"):
            tl.linalg.cond(T(np.ones((2, 3))), p)


def test_cond_singular_is_inf():
    s = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert np.isinf(tl.linalg.cond(T(s), 1).item())


# ---------------------------------------------------------------- matrix_exp, LDL
def expm_ref(a):
    """exp(A) by a long Taylor series after scaling (float64)"""
    n = a.shape[-1]
    s = max(0, int(np.ceil(np.log2(max(np.abs(a).sum(-2).max(), 1e-300)))) + 1)
    x = a / 2 ** s
    term, out = np.broadcast_to(np.eye(n), a.shape).copy(), np.broadcast_to(np.eye(n), a.shape).copy()
    for k in range(1, 30):
        term = term @ x / k
        out = out + term
    for _ in range(s):
        out = out @ out
    return out


@pytest.mark.parametrize("dt", FLOATS, ids=str)
@pytest.mark.parametrize("shape,scale", [((3, 3), 1.0), ((2, 4, 4), 5.0), ((1, 1), 0.01), ((0, 0), 1.0),
                                         ((2, 0, 0), 1.0), ((5, 5), 40.0)], ids=str)
def test_matrix_exp(shape, scale, dt):
    a = R.standard_normal(shape) * scale / max(shape[-1], 1)
    ref = expm_ref(a) if a.size else a
    close(tl.linalg.matrix_exp(T(a, dt)), ref, dt, 1e3 if scale > 10 else 10)
    close(tl.matrix_exp(noncontig(a, dt)), ref, dt, 1e3 if scale > 10 else 10)


@pytest.mark.parametrize("dt", FLOATS, ids=str)
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (0, 0), (1, 1)], ids=str)
def test_ldl(shape, dt):
    a = R.standard_normal(shape)
    a = a + np.swapaxes(a, -1, -2)   # symmetric indefinite
    b = R.standard_normal(shape[:-1] + (2,))
    LD, piv = tl.linalg.ldl_factor(T(a, dt))
    assert piv.dtype is tl.int32 and piv.shape == shape[:-1]
    assert np.allclose(np.triu(N(LD), 1), 0)
    x = tl.linalg.ldl_solve(LD, piv, T(b, dt))
    close(x, np.linalg.solve(a, b) if a.size else b, dt, 100)
    LD2, piv2, info = tl.linalg.ldl_factor_ex(T(a, dt))
    assert info.shape == shape[:-2]


@needs_torch
def test_ldl_matches_torch():
    a = R.standard_normal((2, 4, 4))
    a = a + np.swapaxes(a, -1, -2)
    LD, piv = tl.linalg.ldl_factor(T(a))
    tLD, tpiv = torch.linalg.ldl_factor(torch.from_numpy(a))
    close(LD, tLD.numpy())
    assert (piv.numpy() == tpiv.numpy()).all()


# ---------------------------------------------------------------- gradients
def rg(a):
    return T(a).requires_grad_()


GRAD_CASES = [
    ("lu square", lambda: [rg(well((3, 3)))], lambda a: tl.linalg.lu(a)[1:]),
    ("lu wide", lambda: [rg(R.standard_normal((2, 3, 5)))], lambda a: tl.linalg.lu(a)[1:]),
    ("lu tall", lambda: [rg(R.standard_normal((5, 3)))], lambda a: tl.linalg.lu(a)[1:]),
    ("lu_factor", lambda: [rg(well((2, 3, 3)))], lambda a: tl.linalg.lu_factor(a)[0]),
    ("lu_factor wide", lambda: [rg(R.standard_normal((3, 4)))], lambda a: tl.linalg.lu_factor_ex(a)[0]),
    ("lu_unpack", lambda: [rg(R.standard_normal((4, 3)))], lambda a: tl.lu_unpack(a, tl.linalg.lu_factor(a.detach())[1])[1:]),
    ("lu_solve", lambda: [rg(well((3, 3))), rg(R.standard_normal((3, 2)))],
     lambda a, b: tl.linalg.lu_solve(*tl.linalg.lu_factor(a), b)),
    ("lu_solve adjoint", lambda: [rg(well((3, 3))), rg(R.standard_normal((3, 2)))],
     lambda a, b: tl.linalg.lu_solve(*tl.linalg.lu_factor(a), b, adjoint=True)),
    ("lu_solve right", lambda: [rg(well((3, 3))), rg(R.standard_normal((2, 3)))],
     lambda a, b: tl.linalg.lu_solve(*tl.linalg.lu_factor(a), b, left=False)),
    ("lu_solve right adjoint", lambda: [rg(well((3, 3))), rg(R.standard_normal((2, 3)))],
     lambda a, b: tl.linalg.lu_solve(*tl.linalg.lu_factor(a), b, left=False, adjoint=True)),
    ("qr tall", lambda: [rg(R.standard_normal((5, 3)))], lambda a: tl.linalg.qr(a)),
    ("qr wide", lambda: [rg(R.standard_normal((2, 3, 5)))], lambda a: tl.linalg.qr(a)),
    ("qr complete square", lambda: [rg(R.standard_normal((4, 4)))], lambda a: tl.linalg.qr(a, "complete")),
    ("householder_product", lambda: [rg(R.standard_normal((5, 3))), rg(R.standard_normal(2))],
     lambda a, t: tl.linalg.householder_product(a, t)),
    ("ormqr", lambda: [rg(R.standard_normal((2, 4, 3))), rg(R.standard_normal((2, 3))), rg(R.standard_normal((2, 4, 2)))],
     lambda a, t, c: tl.ormqr(a, t, c, True, False)),
    ("ormqr right transpose", lambda: [rg(R.standard_normal((4, 3))), rg(R.standard_normal(3)), rg(R.standard_normal((2, 4)))],
     lambda a, t, c: tl.ormqr(a, t, c, False, True)),
    ("ormqr wide input", lambda: [rg(R.standard_normal((2, 5))), rg(R.standard_normal(2)), rg(R.standard_normal((2, 3)))],
     lambda a, t, c: tl.ormqr(a, t, c, True, True)),
    ("householder_product no reflectors", lambda: [rg(R.standard_normal((4, 2)))],
     lambda a: tl.linalg.householder_product(a, T(np.zeros(0)))),
    ("triangular_solve", lambda: [rg(R.standard_normal((2, 3, 2))), rg(well((3, 3)))],
     lambda b, a: tl.triangular_solve(b, a, True, False, False)[0]),
    ("triangular_solve transpose unit", lambda: [rg(R.standard_normal((3, 2))), rg(well((3, 3)))],
     lambda b, a: tl.triangular_solve(b, a, False, True, True)),
    ("lstsq", lambda: [rg(R.standard_normal((5, 3))), rg(R.standard_normal((5, 2)))],
     lambda a, b: tl.linalg.lstsq(a, b).solution),
    ("lstsq residuals", lambda: [rg(R.standard_normal((5, 3))), rg(R.standard_normal((5,)))],
     lambda a, b: tl.linalg.lstsq(a, b, driver="gelsd")[:2]),
    ("pinv", lambda: [rg(R.standard_normal((3, 5)))], lambda a: tl.linalg.pinv(a)),
    ("pinv tall", lambda: [rg(R.standard_normal((2, 5, 3)))], lambda a: tl.linalg.pinv(a)),
    ("cond", lambda: [rg(well((3, 3)))], lambda a: tl.linalg.cond(a)),
    ("cond fro", lambda: [rg(well((3, 3)))], lambda a: tl.linalg.cond(a, "fro")),
    ("matrix_exp", lambda: [rg(R.standard_normal((2, 3, 3)))], lambda a: tl.linalg.matrix_exp(a)),
]


@pytest.mark.parametrize("name,make,fn", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradcheck(name, make, fn):
    assert tl.autograd.gradcheck(fn, make())


def test_gradgradcheck_matrix_exp_lu_solve():
    a = rg(R.standard_normal((3, 3)) / 2)
    assert tl.autograd.gradgradcheck(lambda x: tl.linalg.matrix_exp(x), [a])
    b = rg(well((3, 3)))
    assert tl.autograd.gradgradcheck(lambda x: tl.linalg.lu(x)[2], [b])


def test_qr_mode_r_not_differentiable():
    a = rg(R.standard_normal((3, 3)))
    _, r = tl.linalg.qr(a, mode="r")
    with pytest.raises(RuntimeError, match="The derivative of linalg.qr depends on Q"):
        r.sum().backward()
    with pytest.raises(NotImplementedError, match="geqrf"):
        tl.geqrf(a)[0].sum().backward()
