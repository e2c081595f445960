"""NN operators (kernels/native/nn_ops.c, docs/NN.md):
_softmax / _log_softmax (+ _backward_data), softmax.int / log_softmax.int,
native_layer_norm (+ the tl_nn_layer_norm_backward helper), layer_norm,
rms_norm, dropout / native_dropout (+ backward), nll_loss_forward /
nll_loss_backward / nll_loss / nll_loss_nd, cross_entropy_loss, mse_loss
(+ backward), and torchlet.nn.functional over them.

Every op against a numpy reference (float64) always and against torch when
installed: shapes, negative dims, dtypes, non-contiguous inputs, 0-dim,
empty, out=, errors (types and PyTorch's messages), gradients."""
import warnings

import numpy as np
import pytest

import torchlet as tl
import torchlet.nn.functional as F
from torchlet import _ffi, _lib

from ops_helpers import BF16, needs_torch, torch

NN = tl._C._nn
R = np.random.default_rng(77)
TOL = {tl.float32: 2e-6, tl.float64: 1e-12, tl.float16: 2e-3, tl.bfloat16: 2e-2}
NPT = {tl.float32: np.float32, tl.float64: np.float64, tl.float16: np.float16, tl.bfloat16: BF16}


def T(a, dtype=None):
    a = np.asarray(a)
    t = tl.from_numpy(np.array(a, order="C"))  # (ascontiguousarray makes 0-dim arrays 1-dim)
    return t if dtype is None else t.to(dtype)


def N(t):
    """a float64 (or integer) numpy copy of a torchlet tensor"""
    if t.dtype in (tl.float16, tl.bfloat16, tl.float32):
        t = t.to(tl.float64)
    return t.numpy()


def close(t, ref, dtype=tl.float64, scale=1.0):
    tol = TOL.get(dtype, 1e-12) * scale
    np.testing.assert_allclose(N(t), ref, rtol=tol, atol=tol)


def np_softmax(x, d):
    m = np.max(x, axis=d, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(axis=d, keepdims=True)


def np_log_softmax(x, d):
    m = np.max(x, axis=d, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=d, keepdims=True))


SHAPES_DIMS = [((5,), 0), ((3, 7), 1), ((3, 7), 0), ((3, 7), -1), ((2, 3, 4), 1), ((2, 3, 4), -3),
               ((4, 1, 33), 2), ((2, 300, 3), 1), ((1, 5000), -1), ((), 0), ((), -1)]


@pytest.fixture(params=["default", "best"])
def capability(request):
    """kernel tests once per CPU capability level (the lowest and the best)"""
    best = tl.get_cpu_capability()
    if request.param == "default":
        tl._set_cpu_capability("default")
    yield request.param
    tl._set_cpu_capability(best)


# ---------------------------------------------------------------- softmax


@pytest.mark.parametrize("shape, dim", SHAPES_DIMS)
@pytest.mark.parametrize("dtype", [tl.float32, tl.float64])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_against_numpy(shape, dim, dtype, log, capability):
    x = R.standard_normal(shape) * 4
    xt = T(x, dtype)
    ref_x = N(xt)
    ref = np_log_softmax(ref_x, dim if shape else None) if log else np_softmax(ref_x, dim if shape else None)
    op = tl._log_softmax if log else tl._softmax
    r = op(xt, dim, False)
    assert r.dtype == dtype and tuple(r.shape) == shape
    close(r, ref, dtype, 4)
    # the public forms: torchlet.softmax / Tensor.softmax / F.softmax
    pub = (tl.log_softmax if log else tl.softmax)(xt, dim)
    close(pub, ref, dtype, 4)
    meth = (xt.log_softmax if log else xt.softmax)(dim)
    close(meth, ref, dtype, 4)
    close((F.log_softmax if log else F.softmax)(xt, dim), ref, dtype, 4)


@pytest.mark.parametrize("log", [False, True])
def test_softmax_non_contiguous_and_stable(log):
    x = R.standard_normal((6, 8)) * 3
    op = tl._log_softmax if log else tl._softmax
    ref = np_log_softmax if log else np_softmax
    xt = T(x)
    close(op(xt.t(), 0, False), ref(x.T, 0))           # transposed
    close(op(xt[:, ::2], 1, False), ref(x[:, ::2], 1))  # stepped
    close(op(xt[::3], -1, False), ref(x[::3], -1))
    big = x * 1e4  # max-subtracted: no overflow to inf / nan
    r = op(T(big, tl.float32), 1, False)
    assert np.isfinite(N(r)).all()
    close(r, ref(N(T(big, tl.float32)), 1), tl.float32, 10)
    # a NaN makes its whole row NaN, the other rows are untouched
    y = x.copy()
    y[2, 3] = np.nan
    r = N(op(T(y), 1, False))
    assert np.isnan(r[2]).all() and np.isfinite(np.delete(r, 2, 0)).all()


@pytest.mark.parametrize("dtype", [tl.float32, tl.float64])
def test_softmax_masked_rows(dtype, capability):
    """-inf scores (attention masks) give exactly 0; an all -inf row is NaN,
    like PyTorch; very negative finite scores underflow to 0 as exp does"""
    x = R.standard_normal((6, 40))
    x[:, 20:] = -np.inf
    x[1, :] = -np.inf
    x[2, 5] = -200.0
    for dim, xx in ((1, x), (0, x.T.copy())):
        for log in (False, True):
            r = N((tl.log_softmax if log else tl.softmax)(T(xx, dtype), dim))
            r = r if dim == 1 else r.T
            assert np.isnan(r[1]).all()
            ok = np.delete(np.arange(6), 1)
            tol = TOL[dtype] * 4
            if log:
                assert (r[ok][:, 20:] == -np.inf).all()
                np.testing.assert_allclose(r[ok][:, :20], np_log_softmax(x[ok][:, :20], 1), rtol=tol, atol=tol)
            else:
                assert (r[ok][:, 20:] == 0).all()
                assert r[2, 5] == 0 if dtype is tl.float32 else 0 < r[2, 5] < 1e-80
                np.testing.assert_allclose(r[ok], np_softmax(x[ok], 1), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [tl.float16, tl.bfloat16])
def test_softmax_half_types(dtype):
    if dtype is tl.bfloat16 and BF16 is None:
        pytest.skip("ml_dtypes missing")
    x = T(R.standard_normal((3, 40)), dtype)
    r = tl.softmax(x, 1)
    assert r.dtype == dtype
    close(r, np_softmax(N(x), 1), dtype)
    close(tl.log_softmax(x, 0), np_log_softmax(N(x), 0), dtype, 4)


def test_softmax_empty_dtype_out_and_errors():
    e = tl._softmax(tl.zeros(0, 5), 1, False)
    assert tuple(e.shape) == (0, 5)
    assert tuple(tl.softmax(tl.zeros(4, 0), 0).shape) == (4, 0)
    # dtype=: converted first (integers too)
    x = T(R.standard_normal((2, 5)), tl.float32)
    r = tl.softmax(x, 1, dtype=tl.float64)
    assert r.dtype == tl.float64
    close(r, np_softmax(N(x), 1))
    ri = tl.softmax(tl.arange(4), 0, dtype=tl.float32)
    close(ri, np_softmax(np.arange(4.0), 0), tl.float32)
    # out=
    out = tl.empty(2, 5)
    assert tl._softmax(x, 1, False, out=out) is out
    close(out, np_softmax(N(x), 1), tl.float32)
    out2 = tl.empty(5, 2).t()  # non-contiguous out
    tl._log_softmax(x, 1, False, out=out2)
    close(out2, np_log_softmax(N(x), 1), tl.float32)
    with pytest.raises(NotImplementedError, match=r"\"softmax_lastdim_kernel_impl\" not implemented for 'Long'"):
        tl.softmax(tl.arange(4), 0)
    with pytest.raises(NotImplementedError, match=r"\"log_softmax_kernel_impl\" not implemented for 'Long'"):
        tl._log_softmax(tl.zeros(2, 3, dtype=tl.int64), 0, False)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"):
        tl._softmax(x, 2, False)
    with pytest.raises(IndexError, match=r"expected to be in range of \[-1, 0\], but got 1"):
        tl.softmax(tl.tensor(2.0), 1)
    with pytest.raises(RuntimeError, match="softmax with half to float conversion is not supported on CPU"):
        tl._softmax(x, 0, True)
    with pytest.raises(TypeError):
        tl.softmax(x, "a")
    assert float(tl.softmax(tl.tensor(2.0), 0)) == 1.0


@pytest.mark.parametrize("shape, dim", [((3, 7), 1), ((3, 7), 0), ((2, 3, 4), 1), ((1, 700), -1)])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_backward_data(shape, dim, log, capability):
    x = R.standard_normal(shape)
    g = R.standard_normal(shape)
    if log:
        y = np_log_softmax(x, dim)
        ref = g - np.exp(y) * g.sum(dim, keepdims=True)
        r = tl._log_softmax_backward_data(T(g), T(y), dim, tl.float64)
    else:
        y = np_softmax(x, dim)
        ref = y * (g - (g * y).sum(dim, keepdims=True))
        r = tl._softmax_backward_data(T(g), T(y), dim, tl.float64)
    close(r, ref)
    r32 = (tl._log_softmax_backward_data if log else tl._softmax_backward_data)(
        T(g, tl.float32).t().contiguous().t() if len(shape) == 2 else T(g, tl.float32), T(y, tl.float32), dim,
        tl.float32)
    close(r32, ref, tl.float32, 10)
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        tl._softmax_backward_data(T(g, tl.float32), T(y), dim, tl.float32)


def test_softmax_autograd_against_numpy():
    x = R.standard_normal((3, 5))
    w = R.standard_normal((3, 5))
    xt = T(x).requires_grad_()
    (tl.softmax(xt, 1) * T(w)).sum().backward()
    y = np_softmax(x, 1)
    np.testing.assert_allclose(N(xt.grad), y * (w - (w * y).sum(1, keepdims=True)), rtol=1e-12, atol=1e-12)
    xt2 = T(x).requires_grad_()
    (tl.log_softmax(xt2, 0) * T(w)).sum().backward()
    ly = np_log_softmax(x, 0)
    np.testing.assert_allclose(N(xt2.grad), w - np.exp(ly) * w.sum(0, keepdims=True), rtol=1e-12, atol=1e-12)


@needs_torch
@pytest.mark.parametrize("dtype", [tl.float32, tl.float64])
def test_softmax_against_torch(dtype):
    x = R.standard_normal((4, 3, 9)).astype(NPT[dtype])
    for dim in (0, 1, 2, -1):
        for name in ("softmax", "log_softmax"):
            tx = torch.tensor(x, requires_grad=True)
            lx = T(x).requires_grad_()
            ty = getattr(torch, name)(tx, dim)
            ly = getattr(tl, name)(lx, dim)
            close(ly, ty.detach().double().numpy(), dtype, 4)
            gw = R.standard_normal(x.shape).astype(NPT[dtype])
            (ty * torch.tensor(gw)).sum().backward()
            (ly * T(gw)).sum().backward()
            close(lx.grad, tx.grad.double().numpy(), dtype, 10)
            assert ly.grad_fn.name() == ("LogSoftmaxBackward0" if name == "log_softmax" else "SoftmaxBackward0")


# ------------------------------------------------------------- layer_norm


def np_layer_norm(x, k, w=None, b=None, eps=1e-5):
    axes = tuple(range(x.ndim - k, x.ndim))
    m = x.mean(axis=axes, keepdims=True)
    v = ((x - m) ** 2).mean(axis=axes, keepdims=True)
    r = 1 / np.sqrt(v + eps)
    y = (x - m) * r
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y, m, r


@pytest.mark.parametrize("shape, k", [((3, 8), 1), ((2, 3, 4), 2), ((5,), 1), ((2, 1, 300), 1), ((0, 4), 1)])
@pytest.mark.parametrize("affine", [(False, False), (True, True), (True, False), (False, True)])
@pytest.mark.parametrize("dtype", [tl.float32, tl.float64])
def test_native_layer_norm_against_numpy(shape, k, affine, dtype, capability):
    x = R.standard_normal(shape) * 2 + 1
    ns = shape[len(shape) - k:]
    w = R.standard_normal(ns) if affine[0] else None
    b = R.standard_normal(ns) if affine[1] else None
    xt = T(x, dtype)
    out, mean, rstd = tl.native_layer_norm(xt, ns, None if w is None else T(w, dtype),
                                           None if b is None else T(b, dtype), 1e-5)
    ry, rm, rr = np_layer_norm(N(xt), k, None if w is None else N(T(w, dtype)), None if b is None else N(T(b, dtype)))
    assert out.dtype == mean.dtype == rstd.dtype == dtype
    assert tuple(mean.shape) == rm.shape == tuple(rstd.shape)
    close(out, ry, dtype, 8)
    close(mean, rm, dtype, 4)
    close(rstd, rr, dtype, 4)
    close(tl.layer_norm(xt, ns, None if w is None else T(w, dtype), None if b is None else T(b, dtype)), ry, dtype, 8)


def test_layer_norm_non_contiguous_half_and_errors():
    x = R.standard_normal((6, 4))
    close(F.layer_norm(T(x).t(), 6), np_layer_norm(x.T, 1)[0], scale=10)
    h = T(x, tl.float16)
    o, m, r = tl.native_layer_norm(h, [4], None, None, 1e-5)
    assert o.dtype == m.dtype == tl.float16
    close(o, np_layer_norm(N(h), 1)[0], tl.float16, 4)
    xt = T(x, tl.float32)
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[5\], expected input with shape \[\*, 5\], "
                                           r"but got input of size\[6, 4\]"):
        tl.layer_norm(xt, [5])
    with pytest.raises(RuntimeError, match=r"Expected weight to be of same shape as normalized_shape, but got "
                                           r"weight of shape \[5\] and normalized_shape = \[4\]"):
        tl.layer_norm(xt, [4], tl.ones(5))
    with pytest.raises(RuntimeError, match=r"Expected bias to be of same shape"):
        tl.layer_norm(xt, [4], None, tl.ones(5))
    with pytest.raises(RuntimeError, match=r"Expected normalized_shape to be at least 1-dimensional"):
        tl.native_layer_norm(xt, [], None, None, 1e-5)
    with pytest.raises(NotImplementedError, match=r"\"LayerNormKernelImpl\" not implemented for 'Long'"):
        tl.layer_norm(tl.zeros(2, 4, dtype=tl.int64), [4])
    with pytest.raises(RuntimeError, match=r"mixed dtype \(CPU\): expect parameter to have scalar type of Float"):
        tl.layer_norm(xt, [4], tl.ones(4, dtype=tl.float64))


def _ln_backward(g, x, ns, mean, rstd, w, b, mask):
    p = _ffi.new("tl_tensor *[3]")
    m = _ffi.new("bool[3]", mask)
    rc = _lib.tl_nn_layer_norm_backward(g._p, x._p, list(ns), len(ns), mean._p, rstd._p,
                                        _ffi.NULL if w is None else w._p, _ffi.NULL if b is None else b._p, m,
                                        p, p + 1, p + 2)
    from torchlet._errors import check
    check(rc)
    from torchlet._tensor import _wrap
    return [None if p[i] == _ffi.NULL else _wrap(p[i]) for i in range(3)]


@pytest.mark.parametrize("shape, k", [((4, 6), 1), ((2, 3, 5), 2), ((3, 257), 1)])
@pytest.mark.parametrize("dtype", [tl.float32, tl.float64])
def test_layer_norm_backward_helper_against_numpy(shape, k, dtype, capability):
    x = R.standard_normal(shape)
    ns = shape[len(shape) - k:]
    w, b, g = R.standard_normal(ns), R.standard_normal(ns), R.standard_normal(shape)
    xt, wt, bt, gt = (T(a, dtype) for a in (x, w, b, g))
    _, mean, rstd = tl.native_layer_norm(xt, ns, wt, bt, 1e-5)
    gi, gw, gb = _ln_backward(gt, xt, ns, mean, rstd, wt, bt, [True, True, True])
    # reference: the analytic gradient in float64
    x, w, g = N(xt), N(wt), N(gt)
    axes = tuple(range(x.ndim - k, x.ndim))
    n = int(np.prod(ns))
    _, m, r = np_layer_norm(x, k)
    xhat = (x - m) * r
    gwx = g * w
    ref_gi = r * (gwx - gwx.mean(axes, keepdims=True) - xhat * (gwx * xhat).mean(axes, keepdims=True))
    lead = tuple(range(x.ndim - k))
    close(gi, ref_gi, dtype, 50)
    close(gw, (g * xhat).sum(lead), dtype, 50 * n)
    close(gb, g.sum(lead), dtype, 50 * n)
    # masked-off outputs and absent weight / bias are None
    gi2, gw2, gb2 = _ln_backward(gt, xt, ns, mean, rstd, None, None, [True, True, True])
    assert gw2 is None and gb2 is None
    close(gi2, r * (g - g.mean(axes, keepdims=True) - xhat * (g * xhat).mean(axes, keepdims=True)), dtype, 50)
    assert _ln_backward(gt, xt, ns, mean, rstd, wt, bt, [False, True, False])[0::2] == [None, None]


def test_layer_norm_autograd_against_numpy():
    """layer_norm records NativeLayerNormBackward0 (its fused backward)"""
    x = R.standard_normal((3, 5))
    w, b, g = R.standard_normal(5), R.standard_normal(5), R.standard_normal((3, 5))
    xt, wt, bt = (T(a).requires_grad_() for a in (x, w, b))
    y = F.layer_norm(xt, (5,), wt, bt)
    assert y.grad_fn.name() == "NativeLayerNormBackward0"
    close(y, np_layer_norm(x, 1, w, b)[0], scale=10)
    (y * T(g)).sum().backward()
    _, m, r = np_layer_norm(x, 1)
    xhat = (x - m) * r
    gwx = g * w
    close(xt.grad, r * (gwx - gwx.mean(1, keepdims=True) - xhat * (gwx * xhat).mean(1, keepdims=True)), scale=100)
    close(wt.grad, (g * xhat).sum(0), scale=100)
    close(bt.grad, g.sum(0), scale=100)


@needs_torch
def test_layer_norm_against_torch():
    x = R.standard_normal((2, 3, 8)).astype(np.float32)
    w, b = R.standard_normal(8).astype(np.float32), R.standard_normal(8).astype(np.float32)
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    lx, lw, lb = (T(a).requires_grad_() for a in (x, w, b))
    ty = torch.nn.functional.layer_norm(tx, (8,), tw, tb)
    ly = F.layer_norm(lx, (8,), lw, lb)
    close(ly, ty.detach().double().numpy(), tl.float32, 4)
    g = R.standard_normal(x.shape).astype(np.float32)
    (ty * torch.tensor(g)).sum().backward()
    (ly * T(g)).sum().backward()
    for a, t in ((lx, tx), (lw, tw), (lb, tb)):
        close(a.grad, t.grad.double().numpy(), tl.float32, 50)
    # the backward helper against torch's native_layer_norm_backward
    o, m, r = torch.native_layer_norm(tx.detach(), [8], tw.detach(), tb.detach(), 1e-5)
    ref = torch.ops.aten.native_layer_norm_backward(torch.tensor(g), tx.detach(), [8], m, r, tw.detach(),
                                                    tb.detach(), [True, True, True])
    _, lm, lr = tl.native_layer_norm(T(x), [8], T(w), T(b), 1e-5)
    got = _ln_backward(T(g), T(x), [8], lm, lr, T(w), T(b), [True, True, True])
    for a, t in zip(got, ref):
        close(a, t.double().numpy(), tl.float32, 50)


# --------------------------------------------------------------- rms_norm


def test_rms_norm_against_numpy():
    x = R.standard_normal((3, 6))
    w = R.standard_normal(6)
    ref = x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * w
    close(F.rms_norm(T(x), 6, T(w), 1e-6), ref)
    close(tl.rms_norm(T(x), [6], eps=1e-6), ref / w)
    # eps=None: the dtype's machine epsilon
    x32 = T(x, tl.float32)
    r = tl.rms_norm(x32, [6])
    assert r.dtype == tl.float32
    e = np.finfo(np.float32).eps
    close(r, N(x32) / np.sqrt((N(x32) ** 2).mean(-1, keepdims=True) + e), tl.float32, 4)
    h = T(x, tl.float16)
    assert tl.rms_norm(h, [6]).dtype == tl.float16
    with pytest.raises(RuntimeError, match="Given normalized_shape"):
        tl.rms_norm(T(x), [4])
    xt, wt = T(x).requires_grad_(), T(w).requires_grad_()
    F.rms_norm(xt, (6,), wt, 1e-6).sum().backward()
    rr = 1 / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6)
    close(wt.grad, (x * rr).sum(0), scale=100)
    gx = w * rr - x * rr ** 3 * (x * w).sum(-1, keepdims=True) / 6
    close(xt.grad, gx, scale=100)


@needs_torch
def test_rms_norm_against_torch():
    x = R.standard_normal((2, 4, 6)).astype(np.float32)
    w = R.standard_normal(6).astype(np.float32)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    lx, lw = T(x).requires_grad_(), T(w).requires_grad_()
    ty = torch.nn.functional.rms_norm(tx, (6,), tw)
    ly = F.rms_norm(lx, (6,), lw)
    close(ly, ty.detach().double().numpy(), tl.float32, 4)
    ty.sum().backward()
    ly.sum().backward()
    close(lx.grad, tx.grad.double().numpy(), tl.float32, 50)
    close(lw.grad, tw.grad.double().numpy(), tl.float32, 50)


# ---------------------------------------------------------------- dropout


def test_dropout_semantics_and_seed():
    x = tl.ones(200, 500)
    assert tl.dropout(x, 0.3, False)._p == x._p  # train=False: the input itself
    assert F.dropout(x, 0.3, training=False) is x
    close(tl.dropout(x, 0.0, True), np.ones((200, 500)))
    close(tl.dropout(x, 1.0, True), np.zeros((200, 500)))
    tl.manual_seed(5)
    a = N(tl.dropout(x, 0.25, True))
    kept = a != 0
    assert abs(kept.mean() - 0.75) < 0.01          # 1e5 draws: 3 sigma ~ 0.004
    np.testing.assert_allclose(a[kept], 1 / 0.75)  # survivors scaled
    tl.manual_seed(5)
    np.testing.assert_array_equal(N(tl.dropout(x, 0.25, True)), a)  # reproducible
    assert not np.array_equal(N(tl.dropout(x, 0.25, True)), a)      # the generator moved on
    y = tl.ones(3, 4)
    assert F.dropout(y, 0.5, inplace=True) is y
    with pytest.raises(RuntimeError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        tl.dropout(x, 1.5, True)
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got -0.1"):
        F.dropout(x, -0.1)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        tl.dropout(tl.arange(3), 0.5, True)


def test_native_dropout_and_backward():
    x = T(R.standard_normal((50, 40)))
    tl.manual_seed(1)
    out, mask = tl.native_dropout(x, 0.4, True)
    assert mask.dtype == tl.bool and out.dtype == tl.float64
    m = N(mask)
    close(out, N(x) * m / 0.6)
    assert abs(m.mean() - 0.6) < 0.05
    o2, m2 = tl.native_dropout(x, 0.4, False)
    close(o2, N(x))
    assert N(m2).all()
    g = T(R.standard_normal((50, 40)))
    close(tl.native_dropout_backward(g, mask, 1 / 0.6), N(g) * m / 0.6)
    # dropout's gradient: the same mask, scaled
    xt = T(R.standard_normal((30, 30))).requires_grad_()
    y = F.dropout(xt, 0.5)
    y.sum().backward()
    yk = N(y) != 0
    np.testing.assert_allclose(N(xt.grad), np.where(yk, 2.0, 0.0))


# ---------------------------------------------------------------- nll_loss


def np_nll(x, t, w=None, reduction=1, ignore=-100):
    x = np.atleast_2d(x)
    t = np.atleast_1d(t)
    C = x.shape[1]
    w = np.ones(C) if w is None else w
    keep = t != ignore
    tt = np.where(keep, t, 0)
    per = np.where(keep, -w[tt] * x[np.arange(len(t)), tt], 0.0)
    tw = np.where(keep, w[tt], 0.0).sum()
    if reduction == 0:
        return per, 0.0
    if reduction == 2:
        return per.sum(), tw
    return per.sum() / tw, tw


@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("dtype", [tl.float32, tl.float64])
def test_nll_loss_forward_backward_against_numpy(reduction, weighted, dtype):
    x = R.standard_normal((6, 4))
    t = np.array([0, 3, 1, -100, 3, 2])
    w = R.uniform(0.5, 2, 4) if weighted else None
    xt = T(x, dtype)
    out, tw = NN.nll_loss_forward(xt, T(t), None if w is None else T(w, dtype), reduction, -100)
    ref, rtw = np_nll(N(xt), t, None if w is None else N(T(w, dtype)), reduction)
    assert out.dtype == tw.dtype == dtype
    assert tuple(out.shape) == np.shape(ref) and tuple(tw.shape) == ()
    close(out, ref, dtype, 4)
    close(tw, rtw, dtype, 4)
    # backward: d out / d x
    g = R.standard_normal(6) if reduction == 0 else np.array(1.7)
    gi = NN.nll_loss_backward(T(g, dtype), xt, T(t), None if w is None else T(w, dtype), reduction, -100, tw)
    ww = np.ones(4) if w is None else N(T(w, dtype))
    ref_gi = np.zeros((6, 4))
    for i, c in enumerate(t):
        if c != -100:
            ref_gi[i, c] = -ww[c] * (g[i] if reduction == 0 else g / (rtw if reduction == 1 else 1))
    close(gi, ref_gi, dtype, 4)
    assert gi.dtype == dtype and tuple(gi.shape) == (6, 4)


def test_nll_loss_shapes_and_errors():
    x = T(R.standard_normal((3, 4)), tl.float32)
    t = tl.tensor([0, 2, 1])
    # 1-D input with a 0-dim target; all ignored -> nan; empty batch
    v = R.standard_normal(4)
    o, tw = NN.nll_loss_forward(T(v), tl.tensor(2), None, 1, -100)
    close(o, -v[2])
    assert np.isnan(float(NN.nll_loss_forward(x, tl.tensor([-100, -100, -100]), None, 1, -100)[0]))
    e = NN.nll_loss_forward(tl.zeros(0, 4), tl.zeros(0, dtype=tl.int64), None, 2, -100)
    assert float(e[0]) == 0.0
    # uint8 targets
    close(NN.nll_loss(x, t.to(tl.uint8)), np_nll(N(x), [0, 2, 1])[0], tl.float32)
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Int"):
        NN.nll_loss(x, t.to(tl.int32))
    with pytest.raises(RuntimeError, match=r"size mismatch \(got input: \[3, 4\], target: \[2\]\)"):
        NN.nll_loss(x, tl.tensor([0, 1]))
    with pytest.raises(IndexError, match="Target 5 is out of bounds."):
        NN.nll_loss(x, tl.tensor([0, 1, 5]))
    with pytest.raises(IndexError, match="Target -1 is out of bounds."):
        NN.nll_loss(x, tl.tensor([0, 1, -1]))
    with pytest.raises(RuntimeError, match="input tensor should be 1D or 2D"):
        NN.nll_loss_forward(tl.zeros(2, 3, 4), t, None, 1, -100)
    with pytest.raises(RuntimeError, match="0D or 1D target tensor expected, multi-target not supported"):
        NN.nll_loss(x, tl.zeros(3, 1, dtype=tl.int64))
    with pytest.raises(RuntimeError, match=r"weight tensor should be defined either for all 4 classes or no "
                                           r"classes but got weight tensor of shape: \[3\]"):
        NN.nll_loss(x, t, tl.ones(3))
    with pytest.raises(NotImplementedError, match="\"nll_loss_out_frame\" not implemented for 'Long'"):
        NN.nll_loss(x.to(tl.int64), t)
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        NN.nll_loss(x, t, tl.ones(4, dtype=tl.float64))
    with pytest.raises(ValueError, match="batch is not a valid value for reduction"):
        F.nll_loss(x, t, reduction="batch")


def test_nll_loss_nd_and_functional():
    x = R.standard_normal((2, 3, 4, 5))  # N, C, d1, d2
    t = R.integers(0, 3, (2, 4, 5))
    t[0, 1, 2] = -100
    flat_x = np.moveaxis(x, 1, -1).reshape(-1, 3)
    for red, name in ((0, "none"), (1, "mean"), (2, "sum")):
        ref = np_nll(flat_x, t.reshape(-1), reduction=red)[0]
        got = F.nll_loss(T(x), T(t), reduction=name)
        close(got, ref.reshape(t.shape) if red == 0 else ref)
    with pytest.raises(ValueError, match=r"Expected input batch_size \(2\) to match target batch_size \(3\)"):
        F.nll_loss(T(x), T(t[:1].repeat(3, 0)))


# ----------------------------------------------------------- cross_entropy


def test_cross_entropy_against_numpy():
    x = R.standard_normal((5, 4))
    t = np.array([1, 0, 3, 3, -100])
    lp = np_log_softmax(x, 1)
    for red, name in ((0, "none"), (1, "mean"), (2, "sum")):
        close(F.cross_entropy(T(x), T(t), reduction=name), np_nll(lp, t, reduction=red)[0])
    w = R.uniform(0.5, 2, 4)
    close(F.cross_entropy(T(x), T(t), T(w)), np_nll(lp, t, w)[0])
    # label smoothing: (1 - e) * nll + e * mean over classes of -log p (ignored rows excluded)
    e = 0.2
    keep = t != -100
    smooth = -lp.sum(1) / 4
    nll = np_nll(lp, t, reduction=0)[0]
    per = (1 - e) * nll + e * np.where(keep, smooth, 0)
    close(F.cross_entropy(T(x), T(t), label_smoothing=e), per.sum() / keep.sum())
    close(F.cross_entropy(T(x), T(t), label_smoothing=e, reduction="none"), per)
    # no batch dim
    close(F.cross_entropy(T(x[0]), tl.tensor(2)), -lp[0, 2])


def test_loss_gradients_against_numpy():
    """cross_entropy / nll_loss backward: softmax - onehot, weighted, ignored rows zero"""
    x = R.standard_normal((5, 4))
    t = np.array([1, 0, 3, 3, -100])
    w = R.uniform(0.5, 2, 4)
    keep = t != -100
    onehot = np.zeros((5, 4))
    onehot[np.arange(5)[keep], t[keep]] = 1
    p = np_softmax(x, 1)
    for weight, red in ((None, "mean"), (w, "mean"), (w, "sum"), (None, "none")):
        xt = T(x).requires_grad_()
        loss = F.cross_entropy(xt, T(t), None if weight is None else T(weight), reduction=red)
        assert loss.grad_fn is not None
        loss.sum().backward()
        rw = (np.ones(4) if weight is None else weight)[np.where(keep, t, 0)] * keep
        denom = rw.sum() if red == "mean" else 1.0
        close(xt.grad, (p - onehot) * rw[:, None] / denom, scale=100)
    lp = T(np_log_softmax(x, 1)).requires_grad_()
    F.nll_loss(lp, T(t), reduction="sum").backward()
    close(lp.grad, -onehot)


@needs_torch
def test_losses_against_torch():
    x = R.standard_normal((6, 5)).astype(np.float32)
    t = np.array([0, 4, 2, 2, 1, -100])
    w = R.uniform(0.5, 2, 5).astype(np.float32)
    tf = torch.nn.functional
    for kw in ({}, {"reduction": "sum"}, {"reduction": "none"}, {"label_smoothing": 0.1},
               {"label_smoothing": 0.3, "reduction": "sum"}):
        tx = torch.tensor(x, requires_grad=True)
        lx = T(x).requires_grad_()
        ref = tf.cross_entropy(tx, torch.tensor(t), **kw)
        got = F.cross_entropy(lx, T(t), **kw)
        close(got, ref.detach().double().numpy(), tl.float32, 4)
        ref.sum().backward()
        got.sum().backward()
        close(lx.grad, tx.grad.double().numpy(), tl.float32, 10)
    ref = tf.cross_entropy(torch.tensor(x), torch.tensor(t), weight=torch.tensor(w))
    close(F.cross_entropy(T(x), T(t), weight=T(w)), ref.double().numpy(), tl.float32, 4)
    lp = tf.log_softmax(torch.tensor(x), 1)
    ref = tf.nll_loss(lp, torch.tensor(t), weight=torch.tensor(w), reduction="sum")
    close(F.nll_loss(T(lp.numpy()), T(t), weight=T(w), reduction="sum"), ref.double().numpy(), tl.float32, 4)
    y = R.standard_normal((6, 5)).astype(np.float32)
    for red in ("mean", "sum", "none"):
        tx = torch.tensor(x, requires_grad=True)
        lx = T(x).requires_grad_()
        ref = tf.mse_loss(tx, torch.tensor(y), reduction=red)
        got = F.mse_loss(lx, T(y), reduction=red)
        close(got, ref.detach().double().numpy(), tl.float32, 4)
        ref.sum().backward()
        got.sum().backward()
        close(lx.grad, tx.grad.double().numpy(), tl.float32, 4)


# ---------------------------------------------------------------- mse_loss


def test_mse_loss_against_numpy():
    a, b = R.standard_normal((3, 4)), R.standard_normal((3, 4))
    d2 = (a - b) ** 2
    close(NN.mse_loss(T(a), T(b)), d2.mean())
    close(NN.mse_loss(T(a), T(b), 2), d2.sum())
    close(NN.mse_loss(T(a), T(b), 0), d2)
    close(NN.mse_loss(T(a).t(), T(b).t(), 0), d2.T)  # non-contiguous
    assert NN.mse_loss(T(a, tl.float32), T(b)).dtype == tl.float64        # promotes
    assert NN.mse_loss(T(a, tl.float32), T(b).to(tl.int64), 0).dtype == tl.float32
    assert np.isnan(float(NN.mse_loss(tl.zeros(0), tl.zeros(0))))
    out = tl.empty(0, dtype=tl.float64)
    assert NN.mse_loss(T(a), T(b), 0, out=out) is out
    close(out, d2)
    with pytest.raises(NotImplementedError, match="\"mse_cpu\" not implemented for 'Long'"):
        NN.mse_loss(tl.arange(3), tl.arange(3))
    with pytest.raises(ValueError, match="3 is not a valid value for reduction"):
        NN.mse_loss(T(a), T(b), 3)
    # F.mse_loss broadcasts with PyTorch's warning
    with pytest.warns(UserWarning, match="Using a target size"):
        r = F.mse_loss(T(a), T(b[0]))
    close(r, ((a - b[0]) ** 2).mean())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.mse_loss(T(a), T(b))
    with pytest.raises(RuntimeError, match="The size of tensor a"), pytest.warns(UserWarning):
        F.mse_loss(T(a), T(b[:2, :3]))
    # backward op and its double backward (built from differentiable ops)
    g = R.standard_normal(())
    close(NN.mse_loss_backward(T(g), T(a), T(b), 1), 2 * (a - b) * g / 12)
    at = T(a).requires_grad_()
    gsum = NN.mse_loss(at, T(b), 2)
    gsum.backward()
    close(at.grad, 2 * (a - b))


def test_functional_namespace():
    """torchlet.nn.functional and torchlet._C._nn mirror torch's split"""
    assert not hasattr(tl, "silu") and not hasattr(tl, "mse_loss") and not hasattr(tl, "nll_loss")
    assert hasattr(tl, "softmax") and hasattr(tl, "layer_norm") and hasattr(tl, "dropout")
    x = T(R.standard_normal((2, 3)))
    close(F.silu(x), N(x) / (1 + np.exp(-N(x))))
    y = x.clone()
    assert F.silu(y, inplace=True) is y
    close(F.relu(x), np.maximum(N(x), 0))
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax has been deprecated"):
        r = F.softmax(x)
    close(r, np_softmax(N(x), 1))
    with pytest.warns(UserWarning, match="Implicit dimension choice for log_softmax"):
        F.log_softmax(T(R.standard_normal(3)))
    with pytest.raises(TypeError):
        NN.mse_loss(x)
    with pytest.raises(TypeError, match="must be Tensor"):
        NN.mse_loss(x, "a")


def test_nn_modules():
    """torchlet.nn: Linear / LayerNorm / RMSNorm / SiLU over the functional ops,
    parameters registered, gradients reach them, zero_grad clears them"""
    nn = tl.nn
    tl.manual_seed(0)
    lin = nn.Linear(5, 3)
    assert tuple(lin.weight.shape) == (3, 5) and tuple(lin.bias.shape) == (3,)
    w = N(lin.weight)
    assert np.abs(w).max() <= 1 / np.sqrt(5) and w.std() > 0  # U(-1/sqrt(in), 1/sqrt(in))
    x = T(R.standard_normal((4, 5)), tl.float32)
    close(lin(x), N(x) @ w.T + N(lin.bias), tl.float32, 10)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = nn.LayerNorm(5)
            self.rms = nn.RMSNorm(3, eps=1e-6)
            self.lin = lin
            self.act = nn.SiLU()

        def forward(self, x):
            return self.rms(self.act(self.lin(self.norm(x))))

    m = Block()
    names = [n for n, _ in m.named_parameters()]
    assert names == ["norm.weight", "norm.bias", "rms.weight", "lin.weight", "lin.bias"]
    y = m(x)
    h = F.silu(F.linear(F.layer_norm(x, 5), lin.weight, lin.bias))
    close(y, N(F.rms_norm(h, 3, eps=1e-6)), tl.float32, 10)
    y.sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    with pytest.raises(NotImplementedError, match='missing the required "forward" function'):
        nn.Module()(x)


def test_functional_wrappers_against_numpy():
    """torchlet.nn.functional's thin wrappers over operators declared elsewhere"""
    x = R.standard_normal((3, 4))
    xt = T(x)
    close(F.linear(xt, T(x[:2]), T(x[0, :2])), x @ x[:2].T + x[0, :2])
    close(F.linear(xt, T(x[:2])), x @ x[:2].T)
    close(F.leaky_relu(xt, 0.1), np.where(x > 0, x, 0.1 * x))
    close(F.elu(xt), np.where(x > 0, x, np.exp(x) - 1))
    close(F.hardtanh(xt, -0.5, 0.5), np.clip(x, -0.5, 0.5))
    close(F.softplus(xt), np.log1p(np.exp(x)), scale=10)
    close(F.mish(xt), x * np.tanh(np.log1p(np.exp(x))), scale=10)
    close(F.sigmoid(xt), 1 / (1 + np.exp(-x)))
    close(F.tanh(xt), np.tanh(x))
    y = xt.clone()
    assert F.leaky_relu(y, 0.2, inplace=True) is y
    close(y, np.where(x > 0, x, 0.2 * x))
    w = R.standard_normal((10, 3))
    idx = np.array([[1, 2], [9, 0]])
    close(F.embedding(T(idx), T(w)), w[idx])
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        F.embedding(T(idx), T(w), padding_idx=10)


@needs_torch
def test_functional_against_torch():
    x = R.standard_normal((3, 4)).astype(np.float32)
    tx, lx = torch.tensor(x), T(x)
    tf = torch.nn.functional
    for name, kw in (("gelu", {}), ("gelu", {"approximate": "tanh"}), ("silu", {}), ("relu", {}),
                     ("leaky_relu", {"negative_slope": 0.3}), ("elu", {"alpha": 0.5}), ("mish", {}),
                     ("softplus", {"beta": 2.0}), ("hardtanh", {}), ("log_softmax", {"dim": 0}),
                     ("softmax", {"dim": -1}), ("rms_norm", {"normalized_shape": (4,)}),
                     ("layer_norm", {"normalized_shape": (4,)})):
        close(getattr(F, name)(lx, **kw), getattr(tf, name)(tx, **kw).double().numpy(), tl.float32, 8)
