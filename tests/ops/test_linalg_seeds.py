"""The speed paths behind the Linear seeds and bmm (docs/LINALG.md, "Seeds"):
bmm / baddbmm split over the thread pool one matrix per thread, the
column-major gradients of mm_mat1_backward / mm_mat2_backward (nn.Linear's
weight.grad stored without a layout copy), and silu's fused backward
(silu_backward), against numpy always and torch when installed.
"""
from __future__ import annotations

import numpy as np
import pytest

import torchlet as tl

from ops_helpers import needs_torch, torch

R = np.random.default_rng(6606)
NN = tl._C._nn


def f32(*shape):
    return R.standard_normal(shape).astype(np.float32)


class threads:
    """run a block on n torchlet threads"""

    def __init__(self, n):
        self.n = n

    def __enter__(self):
        self.before = tl.get_num_threads()
        tl.set_num_threads(self.n)

    def __exit__(self, *exc):
        tl.set_num_threads(self.before)


# ---------------------------------------------------------------- bmm over the pool
# (batch, m, k, n): batches below, at and above the thread count, odd sizes
BATCHES = [(1, 3, 4, 5), (2, 7, 15, 17), (3, 31, 33, 1), (7, 1, 9, 33), (33, 17, 8, 16), (5, 64, 0, 3), (0, 3, 4, 5)]


def bmm_ref(a, b):
    return np.matmul(a.astype(np.float64), b.astype(np.float64))


@pytest.mark.parametrize("nthreads", [1, 2])
@pytest.mark.parametrize("bmkn", BATCHES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_bmm_split_over_threads(nthreads, bmkn, dt):
    nb, m, k, n = bmkn
    a, b = f32(nb, m, k).astype(dt), f32(nb, k, n).astype(dt)
    tol = 1e-5 if dt == "float32" else 1e-12
    with threads(nthreads):
        got = tl.bmm(tl.from_numpy(a), tl.from_numpy(b)).numpy()
    np.testing.assert_allclose(got, bmm_ref(a, b), rtol=tol, atol=tol * 10)
    if torch is not None:
        np.testing.assert_allclose(got, torch.bmm(torch.from_numpy(a), torch.from_numpy(b)).numpy(),
                                   rtol=tol, atol=tol * 10)


@pytest.mark.parametrize("nthreads", [1, 2])
def test_bmm_split_layouts(nthreads):
    """transposed, permuted, stepped and expanded operands; out= that BLAS
    writes in place (column-major: C^T = B^T A^T) or through a temporary"""
    a, b = f32(6, 9, 5), f32(6, 5, 7)
    want = bmm_ref(a, b)
    at = tl.from_numpy(np.ascontiguousarray(np.swapaxes(a, 1, 2))).transpose(1, 2)
    ap = tl.from_numpy(np.ascontiguousarray(np.transpose(a, (1, 0, 2)))).permute(1, 0, 2)
    bs = tl.from_numpy(np.repeat(b, 2, axis=2))[:, :, ::2]
    with threads(nthreads):
        for x, y in [(at, tl.from_numpy(b)), (ap, tl.from_numpy(b)), (tl.from_numpy(a), bs), (at, bs)]:
            np.testing.assert_allclose(tl.bmm(x, y).numpy(), want, rtol=1e-5, atol=1e-5)
        one = tl.from_numpy(a[:1]).expand(6, 9, 5)     # batch stride 0 input
        np.testing.assert_allclose(tl.bmm(one, tl.from_numpy(b)).numpy(), bmm_ref(np.broadcast_to(a[:1], a.shape), b),
                                   rtol=1e-5, atol=1e-5)
        for out in (tl.empty(6, 9, 7), tl.empty(6, 7, 9).transpose(1, 2), tl.empty(9, 6, 7).permute(1, 0, 2),
                    tl.empty(6, 9, 14)[:, :, ::2]):
            r = tl.bmm(tl.from_numpy(a), tl.from_numpy(b), out=out)
            assert r is out
            np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("nthreads", [1, 2])
@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, -2), (0, 1), (0, 0.25)])
def test_baddbmm_split_beta_alpha(nthreads, beta, alpha):
    a, b, s = f32(5, 6, 4), f32(5, 4, 3), f32(5, 6, 3)
    s_in = np.where(R.random(s.shape) < 0.2, np.nan, s).astype(np.float32) if beta == 0 else s
    want = (beta * s.astype(np.float64) if beta else 0) + alpha * bmm_ref(a, b)
    with threads(nthreads):
        got = tl.baddbmm(tl.from_numpy(s_in), tl.from_numpy(a), tl.from_numpy(b), beta=beta, alpha=alpha)
        ts = tl.from_numpy(s_in.copy())
        assert ts.baddbmm_(tl.from_numpy(a), tl.from_numpy(b), beta=beta, alpha=alpha) is ts
        bias = tl.from_numpy(s[0, 0])                  # broadcast self: copied into the output first
        gb = tl.baddbmm(bias, tl.from_numpy(a), tl.from_numpy(b), beta=beta, alpha=alpha)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)   # beta == 0: NaN in self ignored
    np.testing.assert_allclose(ts.numpy(), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(gb.numpy(), (beta * s[0, 0].astype(np.float64) if beta else 0) + alpha * bmm_ref(a, b),
                               rtol=1e-5, atol=1e-5)


def test_bmm_split_matches_one_thread_bitwise():
    """one matrix per thread runs the same single-threaded kernel as the
    one-thread path: results independent of the thread count"""
    a, b = f32(32, 128, 64), f32(32, 64, 128)
    ta, tb = tl.from_numpy(a), tl.from_numpy(b)
    with threads(1):
        one = tl.bmm(ta, tb).numpy()
    with threads(2):
        two = tl.bmm(ta, tb).numpy()
    np.testing.assert_array_equal(one, two)
    np.testing.assert_allclose(one, bmm_ref(a, b), rtol=1e-4, atol=1e-4)


def test_bmm_split_half_types():
    a, b = f32(4, 5, 6), f32(4, 6, 3)
    with threads(2):
        for dt in (tl.float16, tl.bfloat16):
            got = tl.bmm(tl.from_numpy(a).to(dt), tl.from_numpy(b).to(dt)).to(tl.float32).numpy()
            np.testing.assert_allclose(got, bmm_ref(a, b), rtol=2e-2, atol=5e-2)


# ---------------------------------------------------------------- mm backward layouts
def test_linear_weight_grad_is_stored_contiguous():
    """weight.t() is column-major: its gradient is computed column-major, so
    weight.grad comes out contiguous (no layout copy), as in PyTorch"""
    x, w, b, g = f32(7, 5), f32(3, 5), f32(3), f32(7, 3)
    ts = [tl.from_numpy(v).requires_grad_() for v in (x, w, b)]
    NN.linear(*ts).backward(tl.from_numpy(g))
    assert ts[1].grad.is_contiguous() and ts[0].grad.is_contiguous()
    x64, w64, g64 = (v.astype(np.float64) for v in (x, w, g))
    np.testing.assert_allclose(ts[1].grad.numpy(), g64.T @ x64, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ts[0].grad.numpy(), g64 @ w64, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ts[2].grad.numpy(), g64.sum(0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("alpha", [1, 2.5])
@pytest.mark.parametrize("layout", ["row", "col1", "col2", "both"])
def test_mm_backward_layouts(layout, alpha):
    """every branch of mm_mat1_backward / mm_mat2_backward, alpha-scaled, against numpy"""
    a, b, s, g = f32(4, 6), f32(6, 3), f32(4, 3), f32(4, 3)
    la = tl.from_numpy(np.ascontiguousarray(a.T)).requires_grad_() if layout in ("col1", "both") else \
        tl.from_numpy(a).requires_grad_()
    lb = tl.from_numpy(np.ascontiguousarray(b.T)).requires_grad_() if layout in ("col2", "both") else \
        tl.from_numpy(b).requires_grad_()
    m1 = la.t() if layout in ("col1", "both") else la
    m2 = lb.t() if layout in ("col2", "both") else lb
    tl.addmm(tl.from_numpy(s), m1, m2, alpha=alpha).backward(tl.from_numpy(g))
    g64 = g.astype(np.float64)
    ga, gb = alpha * g64 @ b.T.astype(np.float64), alpha * a.T.astype(np.float64) @ g64
    np.testing.assert_allclose(la.grad.numpy(), ga.T if layout in ("col1", "both") else ga, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(lb.grad.numpy(), gb.T if layout in ("col2", "both") else gb, rtol=1e-5, atol=1e-5)
    assert la.grad.is_contiguous() and lb.grad.is_contiguous()


@pytest.mark.parametrize("layout", ["col1", "col2"])
def test_mm_backward_layouts_gradcheck_double_backward(layout):
    a = tl.tensor(R.standard_normal((3, 4))).requires_grad_()
    b = tl.tensor(R.standard_normal((4, 2))).requires_grad_()
    if layout == "col1":
        fn = lambda x, y: tl.mm(x.t().contiguous().t(), y)   # noqa: E731
    else:
        fn = lambda x, y: tl.mm(x, y.t().contiguous().t())   # noqa: E731
    assert tl.autograd.gradcheck(fn, [a, b])
    assert tl.autograd.gradgradcheck(fn, [a, b])


@needs_torch
def test_linear_seed_gradients_match_torch():
    x, w, b, g = f32(9, 6), f32(5, 6), f32(5), f32(9, 5)
    ts = [tl.from_numpy(v).requires_grad_() for v in (x, w, b)]
    ps = [torch.from_numpy(v).requires_grad_() for v in (x, w, b)]
    (NN.silu(NN.linear(*ts)) * tl.from_numpy(g)).sum().backward()
    (torch.nn.functional.silu(torch.nn.functional.linear(*ps)) * torch.from_numpy(g)).sum().backward()
    for t, p in zip(ts, ps):
        assert t.grad.stride() == p.grad.stride()
        np.testing.assert_allclose(t.grad.numpy(), p.grad.numpy(), rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- silu_backward
def silu_grad_ref(g, x):
    g, x = g.astype(np.float64), x.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        s = 1 / (1 + np.exp(-x))
        return g * s * (1 + x * (1 - s))


@pytest.mark.parametrize("n", [1, 7, 15, 16, 17, 31, 33, 1023, 1025])
@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_silu_backward_values(n, dt):
    g, x = (f32(n) * 4).astype(dt), (f32(n) * 4).astype(dt)
    got = NN.silu_backward(tl.from_numpy(g), tl.from_numpy(x))
    assert got.dtype == (tl.float32 if dt == "float32" else tl.float64)
    tol = 2e-6 if dt == "float32" else 1e-14
    np.testing.assert_allclose(got.numpy(), silu_grad_ref(g, x), rtol=tol, atol=tol)
    if torch is not None:
        want = torch.ops.aten.silu_backward(torch.from_numpy(g), torch.from_numpy(x)).numpy()
        np.testing.assert_allclose(got.numpy(), want, rtol=tol, atol=tol)


def test_silu_backward_special_values():
    x = np.array([0.0, -0.0, 1e-30, -100.0, 100.0, -1e30, 88.0, -88.0, np.inf, -np.inf, np.nan], np.float32)
    g = np.ones_like(x)
    got = NN.silu_backward(tl.from_numpy(g), tl.from_numpy(x)).numpy()
    np.testing.assert_allclose(got, silu_grad_ref(g, x).astype(np.float32), rtol=1e-6, atol=1e-30)
    assert np.isnan(got[-3:]).all()        # inf * 0 and nan, as PyTorch's formula gives
    if torch is not None:
        want = torch.ops.aten.silu_backward(torch.from_numpy(g), torch.from_numpy(x)).numpy()
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-30)


def test_silu_backward_layouts_broadcast_out():
    g, x = f32(5, 4), f32(4, 5)
    want = silu_grad_ref(g, x.T)
    got = NN.silu_backward(tl.from_numpy(g), tl.from_numpy(x).t())            # transposed self
    np.testing.assert_allclose(got.numpy(), want, rtol=2e-6, atol=2e-6)
    got = NN.silu_backward(tl.from_numpy(g)[::2], tl.from_numpy(x).t()[::2])  # stepped
    np.testing.assert_allclose(got.numpy(), want[::2], rtol=2e-6, atol=2e-6)
    row = f32(5)
    got = NN.silu_backward(tl.from_numpy(row), tl.from_numpy(x))              # grad broadcast
    np.testing.assert_allclose(got.numpy(), silu_grad_ref(np.broadcast_to(row, x.shape), x), rtol=2e-6, atol=2e-6)
    out = tl.empty(5, 4)
    r = NN.silu_backward(tl.from_numpy(g), tl.from_numpy(x).t(), out=out)
    assert r is out
    np.testing.assert_allclose(out.numpy(), want, rtol=2e-6, atol=2e-6)
    z = NN.silu_backward(tl.tensor(2.0), tl.tensor(0.5))                         # 0-dim
    assert z.shape == () and abs(float(z) - silu_grad_ref(np.array(2.0), np.array(0.5))) < 1e-6
    assert NN.silu_backward(tl.empty(0, 3), tl.empty(0, 3)).shape == (0, 3)
    # float64 self with float32 grad: the promoted dtype, as PyTorch
    assert NN.silu_backward(tl.from_numpy(g), tl.from_numpy(g.astype(np.float64))).dtype == tl.float64


@pytest.mark.parametrize("dt", [tl.float16, tl.bfloat16])
def test_silu_backward_half(dt):
    g, x = f32(33), f32(33) * 3
    got = NN.silu_backward(tl.from_numpy(g).to(dt), tl.from_numpy(x).to(dt))
    assert got.dtype == dt
    gq = tl.from_numpy(g).to(dt).to(tl.float32).numpy()
    xq = tl.from_numpy(x).to(dt).to(tl.float32).numpy()
    np.testing.assert_allclose(got.to(tl.float32).numpy(), silu_grad_ref(gq, xq), rtol=1e-2, atol=1e-2)


def test_silu_backward_errors():
    with pytest.raises(NotImplementedError, match="\"silu_backward_cpu\" not implemented for 'Long'"):
        NN.silu_backward(tl.ones(3, dtype=tl.int64), tl.ones(3, dtype=tl.int64))
    with pytest.raises(RuntimeError):
        NN.silu_backward(tl.ones(3), tl.ones(4))


@pytest.mark.parametrize("create_graph", [False, True])
def test_silu_gradients(create_graph):
    """silu's backward: the fused kernel without grad mode, the composite
    under create_graph (so second derivatives exist), same values"""
    x = tl.tensor(R.standard_normal((4, 3)) * 3).requires_grad_()
    g = tl.tensor(R.standard_normal((4, 3)))
    (gx,) = tl.autograd.grad(NN.silu(x), [x], g, create_graph=create_graph)
    np.testing.assert_allclose(gx.numpy(), silu_grad_ref(g.numpy(), x.detach().numpy()), rtol=1e-12, atol=1e-12)
    assert gx.requires_grad == create_graph
    if create_graph:
        (ggx,) = tl.autograd.grad(gx.sum(), [x])
        xv, gv = x.detach().numpy(), g.numpy()
        s = 1 / (1 + np.exp(-xv))
        np.testing.assert_allclose(ggx.numpy(), gv * s * (1 - s) * (2 + xv * (1 - 2 * s)), rtol=1e-10, atol=1e-12)


def test_silu_gradgradcheck():
    x = tl.tensor(R.standard_normal((2, 3))).requires_grad_()
    assert tl.autograd.gradcheck(NN.silu, [x])
    assert tl.autograd.gradgradcheck(NN.silu, [x])


@needs_torch
def test_silu_double_backward_matches_torch():
    xv, gv = R.standard_normal((3, 4)), R.standard_normal((3, 4))
    x, px = tl.tensor(xv).requires_grad_(), torch.from_numpy(xv).requires_grad_()
    g, pg = tl.tensor(gv).requires_grad_(), torch.from_numpy(gv).requires_grad_()
    (gx,) = tl.autograd.grad(NN.silu(x), [x], g, create_graph=True)
    (pgx,) = torch.autograd.grad(torch.nn.functional.silu(px), [px], pg, create_graph=True)
    a = tl.autograd.grad((gx * gx).sum(), [x, g])
    b = torch.autograd.grad((pgx * pgx).sum(), [px, pg])
    for u, v in zip(a, b):
        np.testing.assert_allclose(u.numpy(), v.detach().numpy(), rtol=1e-10, atol=1e-12)



# ---------------------------------------------------------------- small float32 products
# attention-sized products (K <= 256, M*N*K around 2^18..2^21, partial
# panels) through OpenBLAS: layouts, beta/alpha, out=, threads
SMALL = [(128, 64, 128), (33, 256, 64), (64, 37, 128), (35, 129, 64), (32, 256, 128), (512, 16, 64)]


def small_ref(a, b, s=None, beta=0, alpha=1):
    return (beta * s.astype(np.float64) if beta else 0) + alpha * (a.astype(np.float64) @ b.astype(np.float64))


@pytest.mark.parametrize("mkn", SMALL, ids=lambda s: "x".join(map(str, s)))
def test_small_products_every_capability(cpu_capability, mkn):
    m, k, n = mkn
    a, b = f32(m, k), f32(k, n)
    got = tl.mm(tl.from_numpy(a), tl.from_numpy(b)).numpy()
    np.testing.assert_allclose(got, small_ref(a, b), rtol=1e-5, atol=1e-4)
    # transposed and stepped operands (A read at any strides, B packed)
    at = tl.from_numpy(np.ascontiguousarray(a.T)).t()
    bt = tl.from_numpy(np.ascontiguousarray(b.T)).t()
    ast = tl.from_numpy(np.repeat(a, 2, axis=1))[:, ::2]
    bst = tl.from_numpy(np.pad(b, ((0, 0), (0, 5))))[:, :n]
    for x, y in [(at, tl.from_numpy(b)), (tl.from_numpy(a), bt), (at, bt), (ast, bst)]:
        np.testing.assert_allclose(tl.mm(x, y).numpy(), small_ref(a, b), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("nthreads", [1, 2])
@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, -2), (0, 1), (0, 0.25)])
def test_small_products_beta_alpha_out(nthreads, beta, alpha):
    a, b, s = f32(70, 64), f32(64, 128), f32(70, 128)
    s_in = np.where(R.random(s.shape) < 0.2, np.nan, s).astype(np.float32) if beta == 0 else s
    want = small_ref(a, b, s, beta, alpha)
    with threads(nthreads):
        got = tl.addmm(tl.from_numpy(s_in), tl.from_numpy(a), tl.from_numpy(b), beta=beta, alpha=alpha)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-4)   # beta == 0: NaN ignored
        ts = tl.from_numpy(s_in.copy())
        ts.addmm_(tl.from_numpy(a), tl.from_numpy(b), beta=beta, alpha=alpha)
        np.testing.assert_allclose(ts.numpy(), want, rtol=1e-5, atol=1e-4)
        row = tl.from_numpy(s[0])                                              # broadcast self
        np.testing.assert_allclose(tl.addmm(row, tl.from_numpy(a), tl.from_numpy(b), beta=beta, alpha=alpha).numpy(),
                                   small_ref(a, b, np.broadcast_to(s[0], s.shape), beta, alpha), rtol=1e-5, atol=1e-4)
        # out= row-major with a row stride > N, and column-major (computed as C^T = B^T A^T)
        for out in (tl.empty(70, 200)[:, :128], tl.empty(128, 70).t()):
            tl.addmm(tl.from_numpy(s), tl.from_numpy(a), tl.from_numpy(b), beta=beta or 1, alpha=alpha, out=out)
            np.testing.assert_allclose(out.numpy(), small_ref(a, b, s, beta or 1, alpha), rtol=1e-5, atol=1e-4)


def test_small_products_aliasing_out():
    """addmm_(self, self, b): the output is an input, so it goes through a
    temporary before the kernel writes"""
    a, b = f32(64, 64), f32(64, 64)
    ta = tl.from_numpy(a.copy())
    ta.addmm_(ta, tl.from_numpy(b))
    np.testing.assert_allclose(ta.numpy(), small_ref(a, b, a, 1, 1), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("nthreads", [1, 2])
def test_small_products_batched_and_threads_agree(nthreads):
    a, b = f32(9, 128, 64), f32(9, 64, 128)
    with threads(nthreads):
        got = tl.bmm(tl.from_numpy(a), tl.from_numpy(b)).numpy()
        kt = tl.from_numpy(np.ascontiguousarray(np.swapaxes(b, 1, 2))).transpose(1, 2)   # q @ k^T shape
        got_t = tl.bmm(tl.from_numpy(a), kt).numpy()
        one = tl.mm(tl.from_numpy(a[0]), tl.from_numpy(b[0])).numpy()           # one matrix, rows split
    np.testing.assert_allclose(got, bmm_ref(a, b), rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(got_t, got)
    np.testing.assert_array_equal(one, got[0])          # each element one k-ordered chain, any split
    with threads(1):
        np.testing.assert_array_equal(tl.bmm(tl.from_numpy(a), tl.from_numpy(b)).numpy(), got)


@needs_torch
def test_small_products_match_torch():
    a, b = f32(4, 128, 64), f32(4, 64, 128)
    got = tl.bmm(tl.from_numpy(a), tl.from_numpy(b)).numpy()
    np.testing.assert_allclose(got, torch.bmm(torch.from_numpy(a), torch.from_numpy(b)).numpy(), rtol=1e-5, atol=1e-4)


def test_small_products_special_values():
    a, b = f32(64, 64), f32(64, 64)
    a[3, 5], b[7, 9] = np.inf, np.nan
    got = tl.mm(tl.from_numpy(a), tl.from_numpy(b)).numpy()
    with np.errstate(invalid="ignore", over="ignore"):
        want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    fin = np.isfinite(want)
    np.testing.assert_allclose(got[fin], want[fin], rtol=1e-5, atol=1e-4)
