"""Matrix products (docs/LINALG.md): mm, bmm, addmm(_), baddbmm(_), mv, dot,
matmul, linear, outer / ger, `@`.

Every result is checked against numpy (float64 / wrapping int64 reference)
and, when installed, against torch on the same inputs: shapes with 0-size
dimensions, 1x1 and odd sizes, transposed / stepped / expanded operands and
outputs (the BLAS path passes transpose flags and leading dimensions instead
of copying), batch broadcasting, every dtype, out= and in-place, Meta
tensors, PyTorch's errors (type and message), threads and fork, and the
gradients of the composites (matmul, linear) through their decomposition.
"""
import os
import warnings

import numpy as np
import pytest

import torchlet as tl

from ops_helpers import ALL, BF16, NAMES, needs_torch, torch

NUM = [d for d in ALL if d is not tl.bool]
EPS = {tl.float64: 1e-12, tl.float32: 2e-6, tl.float16: 2e-3, tl.bfloat16: 1e-2}
NP = {tl.uint8: np.uint8, tl.int8: np.int8, tl.int16: np.int16, tl.int32: np.int32, tl.int64: np.int64,
      tl.float16: np.float16, tl.float32: np.float32, tl.float64: np.float64}
R = np.random.default_rng(66)


# ---------------------------------------------------------------- helpers
def rand(shape, dt):
    """values exactly representable in dt (small integers for integer dtypes)"""
    if dt is tl.uint8:
        return R.integers(0, 16, size=shape).astype(np.int64)
    if not dt.is_floating_point:
        return R.integers(-9, 10, size=shape).astype(np.int64)
    v = R.standard_normal(size=shape)
    if dt is tl.bfloat16:
        return v.astype(np.float32).astype(BF16).astype(np.float64)
    return v.astype(NP[dt]).astype(np.float64)


def tt(a, dt):
    """torchlet tensor of dtype dt holding the numpy array a"""
    return tl.tensor(np.ascontiguousarray(a, dtype=np.float64 if dt.is_floating_point else np.int64)).to(dt)


def npv(t):
    x = t.numpy()
    return x.astype(np.float64) if x.dtype == BF16 or x.dtype.kind == "f" else x.astype(np.int64)


def ref_cast(r, dt):
    """the float64 / int64 reference in dt's value set (integers wrap)"""
    if dt.is_floating_point:
        return r
    return r.astype(np.int64).astype(NP[dt]).astype(np.int64)


def assert_close(got, ref, bound, dt):
    """got (torchlet) against the reference; bound: |a| @ |b| (+ |beta * self|)
    scales the floating tolerance"""
    assert NAMES[got.dtype] == NAMES[dt]
    g = npv(got)
    assert g.shape == np.shape(ref), (g.shape, np.shape(ref))
    if dt.is_floating_point:
        np.testing.assert_array_less(np.abs(g - ref), EPS[dt] * (np.asarray(bound) + 1e-30) + 1e-300)
    else:
        np.testing.assert_array_equal(g, ref_cast(ref, dt))


def as_torch(t):
    """the same values as a torch tensor (same dtype)"""
    x = t.numpy()
    if x.dtype == BF16:
        return torch.from_numpy(x.astype(np.float32)).to(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(x))


def assert_torch(got, want):
    """got (torchlet) against torch's result on the same inputs"""
    assert NAMES[got.dtype] == str(want.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(want.shape)
    w = want.float().numpy() if want.dtype in (torch.bfloat16, torch.float16) else want.numpy()
    g = got.numpy().astype(w.dtype) if got.numpy().dtype == BF16 else got.numpy()
    if w.dtype.kind == "f":
        tol = {8: 1e-10, 4: 1e-4, 2: 2e-2}[got.element_size()]
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(g, w)


# ---------------------------------------------------------------- mm
MM_SHAPES = [(1, 1, 1), (3, 5, 7), (0, 3, 4), (3, 0, 4), (3, 4, 0), (17, 33, 9), (65, 64, 130)]


@pytest.mark.parametrize("dt", NUM, ids=lambda d: NAMES[d])
@pytest.mark.parametrize("mkn", MM_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_mm_dtypes_shapes(dt, mkn):
    m, k, n = mkn
    a, b = rand((m, k), dt), rand((k, n), dt)
    got = tl.mm(tt(a, dt), tt(b, dt))
    assert_close(got, a @ b, np.abs(a) @ np.abs(b), dt)
    if torch is not None:
        assert_torch(got, torch.mm(as_torch(tt(a, dt)), as_torch(tt(b, dt))))


def test_mm_integer_loop_per_cpu_capability(cpu_capability):
    a, b = rand((9, 70), tl.int64), rand((70, 5), tl.int64)
    assert_close(tl.mm(tt(a, tl.int64), tt(b, tl.int64)), a @ b, None, tl.int64)


def test_mm_integers_wrap():
    a = np.full((2, 3), 100, np.int64)
    got = tl.mm(tt(a, tl.int8), tt(np.ones((3, 2)), tl.int8))
    assert npv(got).tolist() == [[44, 44], [44, 44]]  # 300 mod 256, as PyTorch
    assert npv(tl.mm(tt(a * 2, tl.uint8), tt(np.ones((3, 2)), tl.uint8))).tolist() == [[88, 88], [88, 88]]


def layouts(dt):
    """(name, a tensor, b tensor, a array, b array): transposed, stepped,
    sliced (leading dimension > columns), expanded (stride 0), single rows"""
    A, B = rand((24, 30), dt), rand((30, 26), dt)
    ta, tb = tt(A, dt), tt(B, dt)
    tat, tbt = tt(A.T, dt), tt(B.T, dt)  # contiguous transposes: .t() views are column-major
    row = rand((1, 30), dt)
    return [
        ("a.t()", tat.t(), tb, A, B),
        ("b.t()", ta, tbt.t(), A, B),
        ("both.t()", tat.t(), tbt.t(), A, B),
        ("stepped", ta[::2, ::3], tb[::3, 1::2], A[::2, ::3], B[::3, 1::2]),
        ("sliced ld", ta[3:9, 2:20], tb[2:20, 5:11], A[3:9, 2:20], B[2:20, 5:11]),
        ("expanded a", tt(row, dt).expand(5, 30), tb, np.broadcast_to(row, (5, 30)), B),
        ("single row.t()", tt(row, dt).t().t(), tbt.t(), row, B),
        ("column of a.t()", tat.t()[:, 4:5].t().t(), tt(B[4:5, :], dt), A[:, 4:5], B[4:5, :]),
        ("stepped rows of b.t()", ta[:, :15], tbt.t()[::2, :], A[:, :15], B[::2, :]),
    ]


@pytest.mark.parametrize("dt", [tl.float32, tl.float64, tl.float16, tl.int32], ids=lambda d: NAMES[d])
def test_mm_layouts(dt):
    for name, a, b, na, nb in layouts(dt):
        got = tl.mm(a, b)
        assert_close(got, na @ nb, np.abs(na) @ np.abs(nb), dt)
        if torch is not None:
            assert_torch(got, torch.mm(as_torch(a.contiguous()), as_torch(b.contiguous())))


@pytest.mark.parametrize("dt", [tl.float32, tl.float64, tl.bfloat16, tl.int16], ids=lambda d: NAMES[d])
def test_mm_out_layouts(dt):
    a, b = rand((7, 5), dt), rand((5, 6), dt)
    ta, tb = tt(a, dt), tt(b, dt)
    ref, bound = a @ b, np.abs(a) @ np.abs(b)
    outs = {"contiguous": tl.empty(7, 6, dtype=dt),
            "column-major": tl.empty(6, 7, dtype=dt).t(),
            "stepped rows": tl.empty(14, 6, dtype=dt)[::2],
            "stepped both": tl.empty(14, 12, dtype=dt)[::2, ::2],
            "empty (resized)": tl.empty(0, dtype=dt)}
    for name, out in outs.items():
        r = tl.mm(ta, tb, out=out)
        assert r is out or r.data_ptr() == out.data_ptr(), name
        assert_close(out, ref, bound, dt)
    # out= aliasing an input: the result is computed into a temporary first
    sq = tt(rand((6, 6), dt), dt)
    want = npv(sq) @ npv(sq)
    tl.mm(sq, sq, out=sq)
    assert_close(sq, want, np.abs(want) * 0 + np.abs(want).max() * 6 + 1, dt)


def test_mm_out_resize_warns_and_dtype_error():
    a, b = tl.ones(2, 3), tl.ones(3, 4)
    out = tl.empty(5)
    with pytest.warns(UserWarning, match="was resized since it had shape"):
        tl.mm(a, b, out=out)
    assert tuple(out.shape) == (2, 4) and npv(out).tolist() == [[3.0] * 4] * 2
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got double instead"):
        tl.mm(a, b, out=tl.empty(2, 4, dtype=tl.float64))


# ---------------------------------------------------------------- addmm
BETA_ALPHA = [(1, 1), (0.5, -2), (0, 1), (0, 0), (2, 0), (True, 3)]


@pytest.mark.parametrize("dt", [tl.float32, tl.float64, tl.float16, tl.bfloat16, tl.int64, tl.int32, tl.uint8],
                         ids=lambda d: NAMES[d])
@pytest.mark.parametrize("beta,alpha", BETA_ALPHA)
def test_addmm(dt, beta, alpha):
    m, k, n = 5, 6, 7
    a, b = rand((m, k), dt), rand((k, n), dt)
    # integer results take alpha and beta truncated to integers, as PyTorch
    bi, ai = (beta, alpha) if dt.is_floating_point else (int(beta), int(alpha))
    for sshape in [(n,), (1, n), (m, 1), (m, n), ()]:
        s = rand(sshape, dt)
        got = tl.addmm(tt(s, dt), tt(a, dt), tt(b, dt), beta=beta, alpha=alpha)
        ref = (bi * s if bi else 0) + ai * (a @ b)
        assert_close(got, np.broadcast_to(ref, (m, n)), np.abs(bi * s) + np.abs(ai) * (np.abs(a) @ np.abs(b)), dt)
        if torch is not None:
            assert_torch(got, torch.addmm(as_torch(tt(s, dt)), as_torch(tt(a, dt)), as_torch(tt(b, dt)),
                                          beta=beta, alpha=alpha))


def test_addmm_beta_zero_ignores_nan_and_k0():
    nan = tl.full((2, 2), float("nan"))
    got = tl.addmm(nan, tl.ones(2, 3), tl.ones(3, 2), beta=0)
    assert npv(got).tolist() == [[3.0, 3.0], [3.0, 3.0]]
    for dt in (tl.float32, tl.float64, tl.float16, tl.int64):
        # k = 0: the product is zeros, so the result is beta * self (zeros when beta is 0)
        s = tt(np.full((2, 3), 2), dt)
        e1, e2 = tl.empty(2, 0, dtype=dt), tl.empty(0, 3, dtype=dt)
        assert npv(tl.addmm(s, e1, e2, beta=3)).tolist() == [[6] * 3] * 2
        assert npv(tl.addmm(s, e1, e2, beta=0)).tolist() == [[0] * 3] * 2
        assert npv(tl.mm(e1, e2)).tolist() == [[0] * 3] * 2
    assert npv(tl.addmm(tl.full((2, 2), float("nan")), tl.empty(2, 0), tl.empty(0, 2), beta=0)).tolist() == \
        [[0.0, 0.0], [0.0, 0.0]]


@pytest.mark.parametrize("dt", [tl.float32, tl.float64, tl.float16, tl.int64], ids=lambda d: NAMES[d])
def test_addmm_inplace_and_out(dt):
    s, a, b = rand((4, 3), dt), rand((4, 5), dt), rand((5, 3), dt)
    bound = 2 * np.abs(s) + np.abs(a) @ np.abs(b)
    ts = tt(s, dt)
    v = ts._version if hasattr(ts, "_version") else None
    r = ts.addmm_(tt(a, dt), tt(b, dt), beta=2)
    assert r is ts
    if v is not None:
        assert ts._version > v
    assert_close(ts, 2 * s + a @ b, bound, dt)
    # in place on a transposed self: the BLAS writes the column-major output directly
    tsT = tt(s.T, dt).t()
    tsT.addmm_(tt(a, dt), tt(b, dt), beta=2)
    assert_close(tsT, 2 * s + a @ b, bound, dt)
    out = tl.empty(4, 3, dtype=dt)
    tl.addmm(tt(s, dt), tt(a, dt), tt(b, dt), beta=2, out=out)
    assert_close(out, 2 * s + a @ b, bound, dt)
    # in place with mat1 sharing self's memory
    sq = rand((3, 3), dt)
    t = tt(sq, dt)
    t.addmm_(t, t)
    assert_close(t, sq + sq @ sq, np.abs(sq) + np.abs(sq) @ np.abs(sq), dt)


# ---------------------------------------------------------------- bmm, baddbmm
BMM_SHAPES = [(1, 1, 1, 1), (3, 4, 5, 6), (0, 2, 3, 4), (2, 0, 3, 4), (2, 3, 0, 4), (2, 3, 4, 0), (5, 9, 17, 3)]


@pytest.mark.parametrize("dt", NUM, ids=lambda d: NAMES[d])
@pytest.mark.parametrize("bmkn", BMM_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_bmm(dt, bmkn):
    nb, m, k, n = bmkn
    a, b = rand((nb, m, k), dt), rand((nb, k, n), dt)
    got = tl.bmm(tt(a, dt), tt(b, dt))
    assert_close(got, a @ b, np.abs(a) @ np.abs(b), dt)
    if torch is not None:
        assert_torch(got, torch.bmm(as_torch(tt(a, dt)), as_torch(tt(b, dt))))


@pytest.mark.parametrize("dt", [tl.float32, tl.float64, tl.bfloat16, tl.int32], ids=lambda d: NAMES[d])
def test_bmm_layouts_and_out(dt):
    a, b = rand((4, 5, 6), dt), rand((4, 6, 3), dt)
    ref, bound = a @ b, np.abs(a) @ np.abs(b)
    ta_t = tt(np.swapaxes(a, 1, 2), dt).transpose(1, 2)        # column-major matrices
    ta_p = tt(np.transpose(a, (1, 0, 2)), dt).permute(1, 0, 2)  # batch not the outer dimension
    tb_s = tt(np.repeat(b, 2, axis=2), dt)[:, :, ::2]           # stepped columns: copied for BLAS
    for x, y in [(ta_t, tt(b, dt)), (ta_p, tt(b, dt)), (tt(a, dt), tb_s), (ta_t, tb_s)]:
        assert_close(tl.bmm(x, y), ref, bound, dt)
    # an expanded batch (stride 0) is read as it is
    one = a[:1]
    got = tl.bmm(tt(one, dt).expand(4, 5, 6), tt(b, dt))
    assert_close(got, one @ b, np.abs(one) @ np.abs(b), dt)
    for out in (tl.empty(4, 5, 3, dtype=dt), tl.empty(4, 3, 5, dtype=dt).transpose(1, 2),
                tl.empty(5, 4, 3, dtype=dt).permute(1, 0, 2), tl.empty(0, dtype=dt)):
        tl.bmm(tt(a, dt), tt(b, dt), out=out)
        assert_close(out, ref, bound, dt)


@pytest.mark.parametrize("dt", [tl.float32, tl.float64, tl.float16, tl.int64], ids=lambda d: NAMES[d])
@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 2), (0, -1)])
def test_baddbmm(dt, beta, alpha):
    a, b = rand((3, 4, 5), dt), rand((3, 5, 2), dt)
    bi, ai = (beta, alpha) if dt.is_floating_point else (int(beta), int(alpha))
    for sshape in [(2,), (4, 1), (3, 4, 2), (1, 4, 2), ()]:
        s = rand(sshape, dt)
        got = tl.baddbmm(tt(s, dt), tt(a, dt), tt(b, dt), beta=beta, alpha=alpha)
        ref = np.broadcast_to((bi * s if bi else 0) + ai * (a @ b), (3, 4, 2))
        bound = np.abs(bi * s) + np.abs(ai) * (np.abs(a) @ np.abs(b))
        assert_close(got, ref, bound, dt)
        if torch is not None:
            assert_torch(got, torch.baddbmm(as_torch(tt(s, dt)), as_torch(tt(a, dt)), as_torch(tt(b, dt)),
                                            beta=beta, alpha=alpha))
    s = rand((3, 4, 2), dt)
    ts = tt(s, dt)
    assert ts.baddbmm_(tt(a, dt), tt(b, dt), beta=beta, alpha=alpha) is ts
    assert_close(ts, (bi * s if bi else 0) + ai * (a @ b), np.abs(bi * s) + np.abs(ai) * (np.abs(a) @ np.abs(b)), dt)
    out = tl.empty(3, 4, 2, dtype=dt)
    tl.baddbmm(tt(s, dt), tt(a, dt), tt(b, dt), beta=beta, alpha=alpha, out=out)
    assert_close(out, (bi * s if bi else 0) + ai * (a @ b), np.abs(bi * s) + np.abs(ai) * (np.abs(a) @ np.abs(b)), dt)


def test_baddbmm_beta_zero_ignores_nan():
    got = tl.baddbmm(tl.full((2, 2, 2), float("nan")), tl.ones(2, 2, 3), tl.ones(2, 3, 2), beta=0)
    assert npv(got).tolist() == [[[3.0, 3.0]] * 2] * 2


# ---------------------------------------------------------------- mv, dot, outer
@pytest.mark.parametrize("dt", NUM, ids=lambda d: NAMES[d])
def test_mv_dot_outer(dt):
    for m, k in [(1, 1), (5, 7), (0, 3), (3, 0), (33, 65)]:
        a, v = rand((m, k), dt), rand((k,), dt)
        got = tl.mv(tt(a, dt), tt(v, dt))
        assert_close(got, a @ v, np.abs(a) @ np.abs(v), dt)
        assert_close(tt(a, dt).mv(tt(v, dt)), a @ v, np.abs(a) @ np.abs(v), dt)
        w = rand((k,), dt)
        d = tl.dot(tt(v, dt), tt(w, dt))
        assert d.dim() == 0
        assert_close(d, np.array(v @ w), np.array(np.abs(v) @ np.abs(w)), dt)
        o = tl.outer(tt(v, dt), tt(w, dt))
        assert_close(o, np.outer(v, w), np.abs(np.outer(v, w)), dt)
        assert_close(tl.ger(tt(v, dt), tt(w, dt)), np.outer(v, w), np.abs(np.outer(v, w)), dt)
        if torch is not None:
            assert_torch(got, torch.mv(as_torch(tt(a, dt)), as_torch(tt(v, dt))))
            assert_torch(d, torch.dot(as_torch(tt(v, dt)), as_torch(tt(w, dt))))


@pytest.mark.parametrize("dt", [tl.float32, tl.float64, tl.float16, tl.int64], ids=lambda d: NAMES[d])
def test_mv_dot_layouts_and_out(dt):
    A, V = rand((12, 18), dt), rand((36,), dt)
    ta, tv = tt(A, dt), tt(V, dt)
    tat = tt(A.T, dt).t()
    cases = [(ta[:, ::2], tv[::4], A[:, ::2], V[::4]), (tat, tv[::2], A, V[::2]),
             (ta[::3, 1:10], tv[3:12], A[::3, 1:10], V[3:12]),
             (tt(A[:1], dt).expand(4, 18), tv[:18], np.broadcast_to(A[:1], (4, 18)), V[:18])]
    for a, v, na, nv in cases:
        assert_close(tl.mv(a, v), na @ nv, np.abs(na) @ np.abs(nv), dt)
        out = tl.empty(na.shape[0] * 2, dtype=dt)[::2]
        tl.mv(a, v, out=out)
        assert_close(out, na @ nv, np.abs(na) @ np.abs(nv), dt)
    for x, y, nx, ny in [(tv[::2], tv[1::2], V[::2], V[1::2]), (tv[::3], tt(V[:1], dt).expand(12), V[::3],
                                                                 np.broadcast_to(V[:1], (12,)))]:
        assert_close(tl.dot(x, y), np.array(nx @ ny), np.array(np.abs(nx) @ np.abs(ny)), dt)
        out = tl.empty((), dtype=dt)
        assert tl.dot(x, y, out=out) is out
        assert_close(out, np.array(nx @ ny), np.array(np.abs(nx) @ np.abs(ny)), dt)
    o = tl.empty(5, 4, dtype=dt)
    tl.outer(tv[:5], tv[5:9], out=o)
    assert_close(o, np.outer(V[:5], V[5:9]), np.abs(np.outer(V[:5], V[5:9])), dt)


def test_dot_out_resizes_with_warning():
    out = tl.empty(3)
    with pytest.warns(UserWarning, match="was resized"):
        tl.dot(tl.ones(3), tl.ones(3), out=out)
    assert out.dim() == 0 and out.item() == 3.0


# ---------------------------------------------------------------- matmul
MATMUL_SHAPES = [
    ((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 5)), ((3, 4), (4, 5)),
    ((2, 3, 4), (4,)), ((4,), (2, 4, 5)), ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (5, 4, 2)), ((1, 3, 4), (6, 2, 4, 5)), ((2, 3, 4), (2, 4, 5)),
    ((0, 3, 4), (4, 5)), ((2, 3, 0), (0, 5)), ((3, 0), (2, 0, 5)), ((2, 3, 4), (1, 4, 0)),
]


@pytest.mark.parametrize("dt", [tl.float32, tl.float64, tl.bfloat16, tl.int64], ids=lambda d: NAMES[d])
@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_matmul_dims(dt, sa, sb):
    a, b = rand(sa, dt), rand(sb, dt)
    ref, bound = np.matmul(a, b), np.matmul(np.abs(a), np.abs(b))
    got = tl.matmul(tt(a, dt), tt(b, dt))
    assert_close(got, ref, bound, dt)
    assert_close(tt(a, dt) @ tt(b, dt), ref, bound, dt)
    assert_close(tt(a, dt).matmul(tt(b, dt)), ref, bound, dt)
    out = tl.empty(0, dtype=dt)
    r = tl.matmul(tt(a, dt), tt(b, dt), out=out)
    assert r is out or r.data_ptr() == out.data_ptr()
    assert_close(out, ref, bound, dt)
    if torch is not None:
        assert_torch(got, torch.matmul(as_torch(tt(a, dt)), as_torch(tt(b, dt))))


def test_matmul_non_contiguous_batches():
    """batched operands that cannot be folded into one mm (a transposed batch,
    a stepped batch) and a folded one; the result's values and layout as torch's"""
    a, b = rand((3, 4, 5, 6), tl.float64), rand((6, 2), tl.float64)
    ta = tt(np.transpose(a, (1, 0, 2, 3)), tl.float64).permute(1, 0, 2, 3)
    for x, nx in [(ta, a), (tt(a, tl.float64)[:, ::2], a[:, ::2])]:
        got = tl.matmul(x, tt(b, tl.float64))
        assert_close(got, np.matmul(nx, b), np.matmul(np.abs(nx), np.abs(b)), tl.float64)
    c = rand((5, 4, 6), tl.float64)
    got = tl.matmul(tt(b.T, tl.float64), tt(c, tl.float64).transpose(1, 2))  # 2-D @ 3-D
    assert_close(got, np.matmul(b.T, np.swapaxes(c, 1, 2)), np.matmul(np.abs(b.T), np.abs(np.swapaxes(c, 1, 2))),
                 tl.float64)
    if torch is not None:
        w = torch.matmul(torch.from_numpy(b.T), torch.from_numpy(c).transpose(1, 2))
        assert tuple(got.stride()) == tuple(w.stride())


def test_matmul_operator():
    a, b = tt(rand((3, 4), tl.float32), tl.float32), tt(rand((4, 2), tl.float32), tl.float32)
    np.testing.assert_array_equal(a.__matmul__(b).numpy(), tl.matmul(a, b).numpy())
    np.testing.assert_array_equal((a @ b).numpy(), tl.mm(a, b).numpy())
    with pytest.raises(TypeError):
        a @ 2  # __matmul__ returns NotImplemented for a number, as PyTorch


# ---------------------------------------------------------------- linear
def _linear_cases(dt):
    x3 = rand((2, 3, 4), dt)
    w, bias = rand((5, 4), dt), rand((5,), dt)
    return [
        ("2-D + bias", tt(x3[0], dt), x3[0], bias),
        ("3-D contiguous + bias", tt(x3, dt), x3, bias),
        ("3-D transposed + bias", tt(np.swapaxes(x3, 0, 1), dt).transpose(0, 1), x3, bias),
        ("1-D + bias", tt(x3[0, 0], dt), x3[0, 0], bias),
        ("2-D no bias", tt(x3[1], dt), x3[1], None),
        ("3-D no bias", tt(x3, dt), x3, None),
        ("2-D + 2-D bias", tt(x3[0], dt), x3[0], rand((3, 5), dt)),
    ], w


@pytest.mark.parametrize("dt", [tl.float32, tl.float64, tl.float16], ids=lambda d: NAMES[d])
def test_linear(dt):
    import torchlet.nn.functional as F
    cases, w = _linear_cases(dt)
    for name, x, nx, bias in cases:
        ref = np.matmul(nx, w.T) + (bias if bias is not None else 0)
        bound = np.matmul(np.abs(nx), np.abs(w.T)) + (np.abs(bias) if bias is not None else 0)
        tb = tt(bias, dt) if bias is not None else None
        got = tl._C._nn.linear(x, tt(w, dt), tb)
        assert_close(got, ref, bound, dt)
        assert_close(F.linear(x, tt(w, dt), tb), ref, bound, dt)
        out = tl.empty(0, dtype=dt)
        tl._C._nn.linear(x, tt(w, dt), tb, out=out)
        assert_close(out, ref, bound, dt)
        if torch is not None:
            assert_torch(got, torch.nn.functional.linear(as_torch(x.contiguous()), as_torch(tt(w, dt)),
                                                         as_torch(tb) if tb is not None else None))


# ---------------------------------------------------------------- Meta
def test_meta_shapes():
    m = lambda *s, dt=tl.float32: tl.empty(*s, dtype=dt, device="meta")  # noqa: E731
    for got, shape in [(tl.mm(m(2, 3), m(3, 4)), (2, 4)), (tl.bmm(m(5, 2, 3), m(5, 3, 4)), (5, 2, 4)),
                       (tl.addmm(m(4), m(2, 3), m(3, 4)), (2, 4)), (tl.mv(m(2, 3), m(3)), (2,)),
                       (tl.baddbmm(m(4), m(5, 2, 3), m(5, 3, 4)), (5, 2, 4)),
                       (tl.matmul(m(7, 2, 3), m(3, 4)), (7, 2, 4))]:
        assert got.device.type == "meta" and tuple(got.shape) == shape
    with pytest.raises(RuntimeError, match="mat1 and mat2 shapes cannot be multiplied"):
        tl.mm(m(2, 3), m(2, 3))


# ---------------------------------------------------------------- errors
def errors(lib):
    f, d = lib.float32, lib.float64
    o = lambda *s, dt=f: lib.ones(*s, dtype=dt)  # noqa: E731
    return [
        (lambda: lib.mm(o(2, 3), o(4, 5)), RuntimeError, "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"),
        (lambda: lib.mm(o(2, 3), o(3, 2, dt=d)), RuntimeError,
         "expected m1 and m2 to have the same dtype, but got: float != double"),
        (lambda: lib.mm(o(2, 3, dt=lib.bool), o(3, 2, dt=lib.bool)), NotImplementedError,
         "\"addmm_impl_cpu_\" not implemented for 'Bool'"),
        (lambda: lib.mm(o(3), o(3, 2)), RuntimeError, "self must be a matrix"),
        (lambda: lib.mm(o(2, 3), o(3)), RuntimeError, "mat2 must be a matrix"),
        (lambda: lib.bmm(o(2, 3), o(2, 3, 4)), RuntimeError, "batch1 must be a 3D tensor"),
        (lambda: lib.bmm(o(2, 2, 3), o(2, 3)), RuntimeError, "batch2 must be a 3D tensor"),
        (lambda: lib.bmm(o(2, 2, 3), o(3, 3, 4)), RuntimeError,
         "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [3, 3]."),
        (lambda: lib.bmm(o(2, 2, 3), o(2, 3, 4, dt=d)), RuntimeError, "expected scalar type Float but found Double"),
        (lambda: lib.bmm(o(2, 2, 3, dt=lib.bool), o(2, 3, 4, dt=lib.bool)), NotImplementedError,
         "\"bmm\" not implemented for 'Bool'"),
        (lambda: lib.addmm(o(3), o(2, 3), o(3, 2)), RuntimeError,
         "The expanded size of the tensor (2) must match the existing size (3) at non-singleton dimension 1.  "
         "Target sizes: [2, 2].  Tensor sizes: [3]"),
        (lambda: lib.addmm(o(2, 2), o(2, 3), o(4, 5)), RuntimeError,
         "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"),
        (lambda: lib.addmm(o(2, 2, dt=d), o(2, 3), o(3, 2)), RuntimeError,
         "self and mat2 must have the same dtype, but got Double and Float"),
        (lambda: lib.addmm(o(2, 2), o(2, 3, dt=d), o(3, 2)), RuntimeError,
         "mat1 and mat2 must have the same dtype, but got Double and Float"),
        (lambda: lib.addmm(o(2, 2), o(3), o(3, 2)), RuntimeError, "mat1 must be a matrix, got 1-D tensor"),
        (lambda: lib.addmm(o(2, 2), o(2, 3), o(3)), RuntimeError, "mat2 must be a matrix, got 1-D tensor"),
        (lambda: o(2, 1).addmm_(o(2, 3), o(3, 2)), RuntimeError,
         "Bad in-place call: input tensor size [2, 1] and output tensor size [2, 2] should match"),
        (lambda: lib.baddbmm(o(2, 2, 3, dt=d), o(2, 2, 3), o(2, 3, 3)), RuntimeError,
         "Input dtypes must be the same, got: input double, batch1: float, batch2: float"),
        (lambda: lib.baddbmm(o(4, 2, 3), o(2, 2, 3), o(2, 3, 3)), RuntimeError,
         "The expanded size of the tensor (2) must match the existing size (4) at non-singleton dimension 0.  "
         "Target sizes: [2, 2, 3].  Tensor sizes: [4, 2, 3]"),
        (lambda: lib.baddbmm(o(2, 2, 3), o(2, 2, 3), o(3, 3, 3)), RuntimeError,
         "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [3, 3]."),
        (lambda: o(1, 2, 3).baddbmm_(o(2, 2, 3), o(2, 3, 3)), RuntimeError,
         "Bad in-place call: input tensor size [1, 2, 3] and output tensor size [2, 2, 3] should match"),
        (lambda: lib.mv(o(2, 3), o(4)), RuntimeError, "size mismatch, got input (2), mat (2x3), vec (4)"),
        (lambda: lib.mv(o(2, 3), o(3, 1)), RuntimeError, "vector + matrix @ vector expected, got 1, 2, 2"),
        (lambda: lib.mv(o(3), o(3)), RuntimeError, "vector + matrix @ vector expected, got 1, 1, 1"),
        (lambda: lib.mv(o(2, 3), o(3, dt=d)), RuntimeError,
         "addmv input tensors must have the same dtype, but got Double, Float, and Double"),
        (lambda: lib.mv(o(2, 3), o(3), out=lib.empty(2, dtype=d)), RuntimeError,
         "addmv input tensors must have the same dtype, but got Double, Float, and Float"),
        (lambda: lib.mv(o(2, 3, dt=lib.bool), o(3, dt=lib.bool)), NotImplementedError,
         "\"addmv_impl_cpu\" not implemented for 'Bool'"),
        (lambda: lib.dot(o(3), o(4)), RuntimeError,
         "inconsistent tensor size, expected tensor [3] and src [4] to have the same number of elements, but got 3 "
         "and 4 elements respectively"),
        (lambda: lib.dot(o(3, 1), o(3)), RuntimeError, "1D tensors expected, but got 2D and 1D tensors"),
        (lambda: lib.dot(o(3), o(3, dt=d)), RuntimeError,
         "dot : expected both vectors to have same dtype, but found Float and Double"),
        (lambda: lib.dot(o(3, dt=lib.bool), o(3, dt=lib.bool)), NotImplementedError,
         "\"dot\" not implemented for 'Bool'"),
        (lambda: lib.dot(o(3), o(3), out=lib.empty((), dtype=d)), RuntimeError,
         "result dtype Double does not match input dtype Float"),
        (lambda: lib.matmul(o(()), o(4)), RuntimeError,
         "both arguments to matmul need to be at least 1D, but they are 0D and 1D"),
        (lambda: lib.matmul(o(2, 3, 4), o(3, 5, 6)), RuntimeError,
         "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"),
        (lambda: lib.matmul(o(2, 3, 4), o(4, 6, dt=d)), RuntimeError,
         "expected m1 and m2 to have the same dtype, but got: float != double"),
        (lambda: lib.matmul(o(2, 3), o(3, 4), out=lib.empty(2, dtype=d)), RuntimeError,
         "Expected out tensor to have dtype float, but got double instead"),
        (lambda: lib.outer(o(3), o(2, 2)), RuntimeError, "outer: Expected 1-D argument vec2, but got 2-D"),
        (lambda: lib.outer(o(3, 1), o(2)), RuntimeError, "outer: Expected 1-D argument self, but got 2-D"),
        (lambda: lib._C._nn.linear(o(()), o(3)), RuntimeError,
         "both arguments to linear need to be at least 1D, but they are 0D and 1D"),
        (lambda: lib._C._nn.linear(o(2, 3), o(4, 5)), RuntimeError,
         "mat1 and mat2 shapes cannot be multiplied (2x3 and 5x4)"),
    ]


@pytest.mark.parametrize("i", range(len(errors(tl))))
def test_errors(i):
    fn, exc, msg = errors(tl)[i]
    with pytest.raises(exc) as e:
        fn()
    assert str(e.value) == msg
    if torch is not None:
        tfn, texc, _ = errors(torch)[i]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(texc) as te:
                tfn()
        assert str(te.value).split("\n")[0] == msg


# ---------------------------------------------------------------- threads, fork, the library
def test_threads_agree():
    a, b = rand((300, 200), tl.float32), rand((200, 150), tl.float32)
    ta, tb = tt(a, tl.float32), tt(b, tl.float32)
    before = tl.get_num_threads()
    try:
        tl.set_num_threads(1)
        one = tl.mm(ta, tb).numpy()
        tl.set_num_threads(2)
        two = tl.mm(ta, tb).numpy()
        bm = tl.bmm(tt(np.stack([a, a]), tl.float32), tt(np.stack([b, b]), tl.float32)).numpy()
    finally:
        tl.set_num_threads(before)
    np.testing.assert_allclose(one, a @ b, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(two, one, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(bm[1], one, rtol=1e-5, atol=1e-4)


def test_concurrent_callers():
    """products from several Python threads at once, each on a 2-thread BLAS team"""
    import threading
    a = rand((200, 200), tl.float32)
    ta, want = tt(a, tl.float32), a @ a
    bad = []
    before = tl.get_num_threads()
    tl.set_num_threads(2)

    def work():
        for _ in range(10):
            if not np.allclose(npv(tl.mm(ta, ta)), want, rtol=1e-4, atol=1e-3):
                bad.append(1)
    try:
        ths = [threading.Thread(target=work) for _ in range(3)]
        for t in ths:
            t.start()
        for t in ths:
            t.join()
    finally:
        tl.set_num_threads(before)
    assert not bad


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_fork_after_threaded_blas():
    """OpenBLAS's pool is stopped around fork and started again on demand; the
    child (one thread, torchlet's fork handler) multiplies correctly"""
    a, b = rand((256, 256), tl.float32), rand((256, 256), tl.float32)
    ta, tb = tt(a, tl.float32), tt(b, tl.float32)
    before = tl.get_num_threads()
    tl.set_num_threads(2)
    try:
        want = tl.mm(ta, tb).numpy()
        pid = os.fork()
        if pid == 0:  # child: never return into pytest
            code = 1
            try:
                ok = np.allclose(tl.mm(ta, tb).numpy(), want, rtol=1e-5, atol=1e-4)
                code = 0 if ok and tl.get_num_threads() == 1 else 2
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.WEXITSTATUS(status) == 0
        np.testing.assert_array_equal(tl.mm(ta, tb).numpy(), want)  # the parent's pool works again
    finally:
        tl.set_num_threads(before)


def test_vendor_blas_is_loaded():
    from torchlet import _blas
    assert "OpenBLAS" in _blas.config()
    maps = open("/proc/self/maps").read() if os.path.exists("/proc/self/maps") else "libscipy_openblas"
    assert "libscipy_openblas" in maps


# ---------------------------------------------------------------- gradients of the composites
GRAD_CASES = [
    ("matmul 1-D.1-D", [(4,), (4,)], lambda a, b: tl.matmul(a, b)),
    ("matmul 2-D.1-D", [(3, 4), (4,)], lambda a, b: tl.matmul(a, b)),
    ("matmul 1-D.2-D", [(4,), (4, 2)], lambda a, b: tl.matmul(a, b)),
    ("matmul 3-D.2-D (folded)", [(2, 3, 4), (4, 2)], lambda a, b: tl.matmul(a, b)),
    ("matmul 2-D.3-D", [(3, 4), (2, 4, 2)], lambda a, b: tl.matmul(a, b)),
    ("matmul broadcast", [(2, 1, 3, 4), (3, 4, 2)], lambda a, b: a @ b),
    ("matmul 3-D.1-D", [(2, 3, 4), (4,)], lambda a, b: tl.matmul(a, b)),
    ("matmul transposed", [(4, 3), (2, 4)], lambda a, b: tl.matmul(a.t(), b.t())),
    ("linear 2-D", [(3, 4), (5, 4), (5,)], lambda x, w, b: tl._C._nn.linear(x, w, b)),
    ("linear 3-D", [(2, 3, 4), (5, 4), (5,)], lambda x, w, b: tl._C._nn.linear(x, w, b)),
    ("linear 3-D transposed", [(3, 2, 4), (5, 4), (5,)], lambda x, w, b: tl._C._nn.linear(x.transpose(0, 1), w, b)),
    ("linear no bias", [(3, 4), (5, 4)], lambda x, w: tl._C._nn.linear(x, w)),
    ("outer", [(3,), (2,)], lambda a, b: tl.outer(a, b)),
]


@pytest.mark.parametrize("name,shapes,fn", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_composite_gradcheck(name, shapes, fn):
    inputs = [tl.tensor(R.standard_normal(s)).requires_grad_() for s in shapes]
    assert tl.autograd.gradcheck(fn, inputs)


@needs_torch
def test_linear_gradients_match_torch():
    x, w, b = R.standard_normal((2, 3, 4)), R.standard_normal((5, 4)), R.standard_normal(5)
    ts = [tl.tensor(v).requires_grad_() for v in (x, w, b)]
    ps = [torch.from_numpy(v).requires_grad_() for v in (x, w, b)]
    g = R.standard_normal((2, 3, 5))
    tl._C._nn.linear(*ts).backward(tl.tensor(g))
    torch.nn.functional.linear(*ps).backward(torch.from_numpy(g))
    for t, p in zip(ts, ps):
        np.testing.assert_allclose(t.grad.numpy(), p.grad.numpy(), rtol=1e-10, atol=1e-12)
