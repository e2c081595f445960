"""Pooling: max_pool1d/2d (+ indices), avg_pool1d/2d, adaptive_avg_pool1d/2d,
adaptive_max_pool2d, their backward ops and nn modules -- against a numpy
reference always (windows written out from PyTorch's rules), against torch
where it is installed (values, indices, gradients, messages, grad_fn names,
module reprs), float64 gradients through the project's gradcheck helper."""
import math
import sys
from pathlib import Path

import numpy as np
import pytest

import torchlet
import torchlet.nn as nn
import torchlet.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "autograd"))
from _gradcheck_util import gradcheck  # noqa: E402

R = np.random.default_rng(20261205)


def _torch():
    return pytest.importorskip("torch")


def _t(a):
    return torchlet.tensor(a)


def _n(t):
    return np.asarray(t.numpy())


# ------------------------------------------------------------------ numpy reference


def _out_size(n, k, p, s, d, ceil):
    num = n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)
    o = num // s + 1
    if ceil and (o - 1) * s >= n + p:
        o -= 1
    return o


def _pair(v):
    return (v, v) if isinstance(v, int) else (tuple(v) * 2 if len(v) == 1 else tuple(v))


def np_max_pool2d(x, k, s=None, p=0, d=1, ceil=False):
    kh, kw = _pair(k)
    sh, sw = _pair(k if s is None else s)
    ph, pw = _pair(p)
    dh, dw = _pair(d)
    H, W = x.shape[-2:]
    OH, OW = _out_size(H, kh, ph, sh, dh, ceil), _out_size(W, kw, pw, sw, dw, ceil)
    lead = x.shape[:-2]
    xf = x.reshape(-1, H, W)
    y = np.zeros((xf.shape[0], OH, OW), x.dtype)
    ind = np.zeros((xf.shape[0], OH, OW), np.int64)
    for c in range(xf.shape[0]):
        for i in range(OH):
            for j in range(OW):
                best, bi = -np.inf, None
                for a in range(kh):
                    for b in range(kw):
                        h, w = i * sh - ph + a * dh, j * sw - pw + b * dw
                        if 0 <= h < H and 0 <= w < W:
                            v = xf[c, h, w]
                            if bi is None or v > best or np.isnan(v):
                                best, bi = v, h * W + w
                y[c, i, j], ind[c, i, j] = best, bi
    return y.reshape(lead + (OH, OW)), ind.reshape(lead + (OH, OW))


def np_avg_pool2d(x, k, s=None, p=0, ceil=False, count_include_pad=True, divisor=None):
    kh, kw = _pair(k)
    sh, sw = _pair(k if s is None else s)
    ph, pw = _pair(p)
    H, W = x.shape[-2:]
    OH, OW = _out_size(H, kh, ph, sh, 1, ceil), _out_size(W, kw, pw, sw, 1, ceil)
    xf = x.reshape(-1, H, W)
    y = np.zeros((xf.shape[0], OH, OW), x.dtype)
    for i in range(OH):
        for j in range(OW):
            h0, w0 = i * sh - ph, j * sw - pw
            h1, w1 = min(h0 + kh, H + ph), min(w0 + kw, W + pw)
            pool = (h1 - h0) * (w1 - w0)
            h0, w0, h1, w1 = max(h0, 0), max(w0, 0), min(h1, H), min(w1, W)
            if h0 >= h1 or w0 >= w1:
                continue
            div = divisor or (pool if count_include_pad else (h1 - h0) * (w1 - w0))
            y[:, i, j] = xf[:, h0:h1, w0:w1].sum(axis=(1, 2)) / div
    return y.reshape(x.shape[:-2] + (OH, OW))


def _adaptive_windows(n, o):
    return [(i * n // o, -(-(i + 1) * n // o)) for i in range(o)]


def np_adaptive(x, oh, ow, op):
    H, W = x.shape[-2:]
    xf = x.reshape(-1, H, W)
    y = np.zeros((xf.shape[0], oh, ow), x.dtype)
    ind = np.zeros((xf.shape[0], oh, ow), np.int64)
    for i, (h0, h1) in enumerate(_adaptive_windows(H, oh)):
        for j, (w0, w1) in enumerate(_adaptive_windows(W, ow)):
            win = xf[:, h0:h1, w0:w1].reshape(xf.shape[0], -1)
            if op == "avg":
                y[:, i, j] = win.mean(axis=1)
            else:
                a = np.argmax(win, axis=1)
                y[:, i, j] = win[np.arange(win.shape[0]), a]
                ind[:, i, j] = (h0 + a // (w1 - w0)) * W + w0 + a % (w1 - w0)
    shape = x.shape[:-2] + (oh, ow)
    return y.reshape(shape), ind.reshape(shape)


# ------------------------------------------------------------------ forward vs numpy

MAX_CFGS = [  # (shape, kernel, stride, padding, dilation, ceil_mode)
    ((2, 3, 7, 6), 2, None, 0, 1, False),
    ((2, 3, 7, 6), 3, 2, 1, 1, False),
    ((2, 3, 7, 6), 3, 2, 1, 1, True),
    ((1, 2, 9, 8), (3, 2), (2, 1), (1, 0), (2, 1), True),
    ((3, 5, 5), 2, 1, 1, 2, False),
    ((2, 4, 11, 13), 3, 3, 1, 1, True),
    ((1, 1, 1, 1), 1, None, 0, 1, False),
]


@pytest.mark.parametrize("shape, k, s, p, d, ceil", MAX_CFGS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_pool2d_numpy(shape, k, s, p, d, ceil, dtype):
    x = R.standard_normal(shape).astype(dtype)
    y, ind = F.max_pool2d(_t(x), k, s, p, d, ceil_mode=ceil, return_indices=True)
    ry, rind = np_max_pool2d(x, k, s, p, d, ceil)
    np.testing.assert_array_equal(_n(y), ry)
    np.testing.assert_array_equal(_n(ind), rind)
    assert y.dtype == _t(x).dtype and ind.dtype == torchlet.int64
    np.testing.assert_array_equal(_n(F.max_pool2d(_t(x), k, s, p, d, ceil)), ry)


def test_max_pool2d_nan_ties_noncontiguous_and_ints():
    x = R.standard_normal((2, 3, 6, 6))
    x[0, 0, 1, 1] = np.nan
    x[1, 2, :2, :2] = 5.0  # a tie: the first in window order wins
    y, ind = F.max_pool2d(_t(x), 2, return_indices=True)
    ry, rind = np_max_pool2d(x, 2)
    np.testing.assert_array_equal(_n(y), ry)
    np.testing.assert_array_equal(_n(ind), rind)
    for fill in (-np.inf, np.nan):  # every window equal: the first in-bounds element (NaN: the last NaN)
        xf = np.full((1, 2, 7, 9), fill)
        for k, s, p, d, c in ((3, 2, 1, 1, True), (2, 1, 1, 2, False)):
            yf, indf = F.max_pool2d(_t(xf), k, s, p, d, c, return_indices=True)
            np.testing.assert_array_equal(_n(indf), np_max_pool2d(xf, k, s, p, d, c)[1])
    xt = _t(R.standard_normal((2, 6, 5, 3))).permute(0, 3, 1, 2)
    np.testing.assert_array_equal(_n(F.max_pool2d(xt, 2, 1)), np_max_pool2d(_n(xt), 2, 1)[0])
    xi = R.integers(-50, 50, (2, 3, 5, 5))
    for dt in (torchlet.int64, torchlet.int32, torchlet.uint8):
        t = _t(np.abs(xi) if dt == torchlet.uint8 else xi).to(dt)
        got = F.max_pool2d(t, 2)
        assert got.dtype == dt
        np.testing.assert_array_equal(_n(got), np_max_pool2d(_n(t), 2)[0])
    h = F.max_pool2d(_t(x).half(), 2)
    assert h.dtype == torchlet.float16
    np.testing.assert_array_equal(_n(h.float()), np_max_pool2d(_n(_t(x).half().float()), 2)[0])


def test_max_pool2d_empty_batch():
    y, ind = F.max_pool2d(torchlet.zeros(0, 3, 4, 4), 2, return_indices=True)
    assert tuple(y.shape) == (0, 3, 2, 2) and tuple(ind.shape) == (0, 3, 2, 2)


AVG_CFGS = [  # (shape, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
    ((2, 3, 7, 6), 2, None, 0, False, True, None),
    ((2, 3, 7, 6), 3, 2, 1, False, True, None),
    ((2, 3, 7, 6), 3, 2, 1, True, False, None),
    ((2, 3, 7, 6), 3, 2, 1, True, True, None),
    ((1, 2, 9, 8), (3, 2), (2, 1), (1, 1), True, False, 5),
    ((3, 5, 5), 2, 1, 1, False, True, None),
    ((2, 2, 5, 5), 4, 3, 2, True, False, None),
]


@pytest.mark.parametrize("shape, k, s, p, ceil, cip, div", AVG_CFGS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_avg_pool2d_numpy(shape, k, s, p, ceil, cip, div, dtype):
    x = R.standard_normal(shape).astype(dtype)
    y = F.avg_pool2d(_t(x), k, s, p, ceil, cip, div)
    np.testing.assert_allclose(_n(y), np_avg_pool2d(x, k, s, p, ceil, cip, div), rtol=1e-5, atol=1e-6)


def test_avg_pool2d_int64_and_out():
    x = R.integers(-20, 20, (2, 3, 5, 5))
    y = F.avg_pool2d(_t(x), 2)
    assert y.dtype == torchlet.int64
    ref = x.reshape(6, 5, 5)[:, :4, :4].reshape(6, 2, 2, 2, 2).sum(axis=(2, 4))
    np.testing.assert_array_equal(_n(y).reshape(6, 2, 2), np.trunc(ref / 4).astype(np.int64))
    out = torchlet.empty(2, 3, 2, 2)
    r = torchlet._C._nn.avg_pool2d(_t(R.standard_normal((2, 3, 5, 5)).astype(np.float32)), 2, out=out)
    assert r is out


@pytest.mark.parametrize("shape, os", [((2, 3, 7, 6), (3, 4)), ((3, 5, 5), (5, 5)), ((2, 3, 7, 6), (1, 1)),
                                       ((1, 2, 4, 9), (6, 2)), ((2, 3, 7, 6), (None, 2)), ((2, 3, 5, 5), 3)])
def test_adaptive_numpy(shape, os):
    x = R.standard_normal(shape)
    oh, ow = (os, os) if isinstance(os, int) else (os[0] or shape[-2], os[1] or shape[-1])
    ra, _ = np_adaptive(x, oh, ow, "avg")
    np.testing.assert_allclose(_n(F.adaptive_avg_pool2d(_t(x), os)), ra, rtol=1e-12, atol=1e-12)
    rm, ri = np_adaptive(x, oh, ow, "max")
    y, ind = F.adaptive_max_pool2d(_t(x), os, return_indices=True)
    np.testing.assert_array_equal(_n(y), rm)
    np.testing.assert_array_equal(_n(ind), ri)
    np.testing.assert_array_equal(_n(nn.AdaptiveMaxPool2d(os)(_t(x))), rm)


def test_1d_forms_numpy():
    x = R.standard_normal((2, 3, 11))
    y, ind = F.max_pool1d(_t(x), 3, 2, 1, return_indices=True)
    ry, rind = np_max_pool2d(x[:, :, None, :], (1, 3), (1, 2), (0, 1))
    np.testing.assert_array_equal(_n(y), ry[:, :, 0])
    np.testing.assert_array_equal(_n(ind), rind[:, :, 0])
    np.testing.assert_array_equal(_n(F.max_pool1d(_t(x[0]), 2)), np_max_pool2d(x[0][:, None, :], (1, 2))[0][:, 0])
    np.testing.assert_allclose(_n(F.avg_pool1d(_t(x), 3, 2, 1, True, False)),
                               np_avg_pool2d(x[:, :, None, :], (1, 3), (1, 2), (0, 1), True, False)[:, :, 0])
    np.testing.assert_allclose(_n(F.adaptive_avg_pool1d(_t(x), 4)), np_adaptive(x[:, :, None, :], 1, 4, "avg")[0][:, :, 0])
    ym, im = F.adaptive_max_pool1d(_t(x), 4, return_indices=True)
    rm, ri = np_adaptive(x[:, :, None, :], 1, 4, "max")
    np.testing.assert_array_equal(_n(ym), rm[:, :, 0])
    np.testing.assert_array_equal(_n(im), ri[:, :, 0])


# ------------------------------------------------------------------ backward

def test_backward_numpy():
    x = R.standard_normal((2, 3, 7, 6))
    t = torchlet.tensor(x, requires_grad=True)
    y, ind = F.max_pool2d(t, 3, 2, 1, return_indices=True)
    g = R.standard_normal(tuple(y.shape))
    y.backward(_t(g))
    ref = np.zeros((6, 42))
    for c in range(6):
        np.add.at(ref[c], _n(ind).reshape(6, -1)[c], g.reshape(6, -1)[c])
    np.testing.assert_allclose(_n(t.grad), ref.reshape(x.shape))
    # avg: the gradient is the transpose of the (linear) forward
    t2 = torchlet.tensor(x, requires_grad=True)
    y2 = F.avg_pool2d(t2, 3, 2, 1, True, False)
    g2 = R.standard_normal(tuple(y2.shape))
    y2.backward(_t(g2))
    e = np.eye(42).reshape(42, 1, 1, 7, 6)
    cols = np.stack([np_avg_pool2d(e[i], 3, 2, 1, True, False).reshape(-1) for i in range(42)])  # 42 x out
    np.testing.assert_allclose(_n(t2.grad).reshape(6, 42), g2.reshape(6, -1) @ cols.T, rtol=1e-10)


GRAD_CASES = [
    (lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True), (2, 3, 7, 6)),
    (lambda x: F.max_pool2d(x, (2, 3), 1, (1, 1), 2), (1, 2, 6, 7)),
    (lambda x: F.max_pool1d(x, 3, 2, 1), (2, 3, 9)),
    (lambda x: F.avg_pool2d(x, 3, 2, 1, True, False), (2, 3, 7, 6)),
    (lambda x: F.avg_pool2d(x, 2, 1, 1, False, True, 3), (3, 5, 4)),
    (lambda x: F.avg_pool1d(x, 3, 2, 1), (2, 3, 9)),
    (lambda x: F.adaptive_avg_pool2d(x, (3, 4)), (2, 3, 7, 6)),
    (lambda x: F.adaptive_avg_pool2d(x, 1), (2, 3, 5, 4)),
    (lambda x: F.adaptive_avg_pool1d(x, 4), (2, 3, 9)),
    (lambda x: F.adaptive_max_pool2d(x, (3, 2)), (2, 3, 7, 6)),
    (lambda x: F.adaptive_max_pool1d(x, 4), (2, 3, 9)),
    (lambda x: F.max_pool2d(x.transpose(-1, -2), 2), (2, 3, 6, 5)),
]


@pytest.mark.parametrize("fn, shape", GRAD_CASES)
def test_gradcheck(fn, shape):
    x = R.permutation(np.arange(math.prod(shape), dtype=np.float64)).reshape(shape) * 0.1
    assert gradcheck(fn, [x])


# ------------------------------------------------------------------ errors


ERRORS = [
    (lambda m, x: m.nn.functional.max_pool2d(x, 0), RuntimeError, "stride should not be zero"),
    (lambda m, x: m.nn.functional.max_pool2d(x, 2, 1, dilation=0), RuntimeError, "dilation should be greater"),
    (lambda m, x: m.nn.functional.max_pool2d(x, 2, 1, padding=2), RuntimeError, "pad should be at most half"),
    (lambda m, x: m.nn.functional.max_pool2d(x, (2, 2, 2)), RuntimeError, "max_pool2d: kernel_size must either"),
    (lambda m, x: m.nn.functional.max_pool2d(x[0, 0], 2), RuntimeError, "non-empty 3D or 4D"),
    (lambda m, x: m.nn.functional.max_pool2d(x[:, :, :1, :1], 3), RuntimeError, "Output size is too small"),
    (lambda m, x: m.nn.functional.max_pool2d(x[:, :0], 2), RuntimeError, "Expected 3D or 4D (batch mode) tensor"),
    (lambda m, x: m.nn.functional.max_pool2d(x > 0, 2), NotImplementedError, "\"max_pool2d\" not implemented for 'Bool'"),
    (lambda m, x: m.nn.functional.avg_pool2d(x, 2, divisor_override=0), RuntimeError, "divisor must be not zero"),
    (lambda m, x: m.nn.functional.avg_pool2d(x.int(), 2), NotImplementedError, "\"avg_pool2d\" not implemented for 'Int'"),
    (lambda m, x: m.nn.functional.avg_pool2d(x[0, 0], 2), IndexError, "Dimension out of range"),
    (lambda m, x: m.nn.functional.adaptive_avg_pool2d(x[0, 0], 2), RuntimeError, "Expected 3D or 4D tensor, but got [5, 5]"),
    (lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, (-1, 2)), RuntimeError, "but received {-1, 2}"),
    (lambda m, x: m.nn.functional.adaptive_avg_pool2d(x.long(), 2), NotImplementedError, "not implemented for 'Long'"),
    (lambda m, x: m.nn.functional.adaptive_max_pool2d(x[0, 0], 2), RuntimeError, "Expected 3D or 4D tensor, but got: [5, 5]"),
    (lambda m, x: m.nn.functional.adaptive_avg_pool1d(x, 2), RuntimeError, "Expected 2 to 3 dimensions, but got 4-dimensional"),
    (lambda m, x: m.nn.functional.max_pool1d(x, 2), RuntimeError, "max_pool1d: Expected 2D or 3D"),
    (lambda m, x: m.nn.functional.max_pool1d(x[0], 2, padding=2), RuntimeError, "max_pool1d() padding should be at most"),
    (lambda m, x: m.nn.functional.avg_pool1d(x, 2), RuntimeError, "while checking arguments for avg_pool1d"),
    (lambda m, x: m.nn.functional.adaptive_max_pool1d(x, 2), RuntimeError, "for adaptive_max_pool1d"),
    (lambda m, x: m.nn.functional.adaptive_max_pool1d(x[0, :, :0], 2), RuntimeError, "adaptive_max_pool1d(): Expected"),
]


@pytest.mark.parametrize("fn, exc, msg", ERRORS)
def test_errors(fn, exc, msg):
    x = torchlet.ones(2, 3, 5, 5)
    with pytest.raises(exc) as e:
        fn(torchlet, x)
    assert msg in str(e.value)


def _same_error_as_torch(fn):
    """fn(module, x) raises the same exception type and first message line
    in torch and torchlet"""
    torch = _torch()
    with pytest.raises(Exception) as te:
        fn(torch, torch.ones(2, 3, 5, 5))
    with pytest.raises(Exception) as le:
        fn(torchlet, torchlet.ones(2, 3, 5, 5))
    assert type(le.value) is type(te.value)
    assert str(le.value).split("\n")[0] == str(te.value).split("\n")[0]


@pytest.mark.parametrize("fn, exc, msg", ERRORS)
def test_errors_match_torch(fn, exc, msg):
    _same_error_as_torch(fn)


# ------------------------------------------------------------------ against torch

TORCH_CASES = [
    lambda m, x: m.nn.functional.max_pool2d(x, 3, 2, 1, ceil_mode=True, return_indices=True),
    lambda m, x: m.nn.functional.max_pool2d(x, (2, 3), (1, 2), (1, 1), (2, 1)),
    lambda m, x: m.nn.functional.max_pool1d(x.flatten(2), 4, 3, 2, 2, True, True),
    lambda m, x: m.nn.functional.avg_pool2d(x, 3, 2, 1, True, False),
    lambda m, x: m.nn.functional.avg_pool2d(x, (3, 2), 1, (1, 0), False, True, 4),
    lambda m, x: m.nn.functional.avg_pool1d(x.flatten(2), 5, 2, 2, True, True),
    lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, (4, 3)),
    lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, 1),
    lambda m, x: m.nn.functional.adaptive_avg_pool1d(x.flatten(2), 7),
    lambda m, x: m.nn.functional.adaptive_max_pool2d(x, (5, 2), True),
    lambda m, x: m.nn.functional.adaptive_max_pool1d(x.flatten(2), 5, True),
]


@pytest.mark.parametrize("case", range(len(TORCH_CASES)))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_against_torch(case, dtype):
    torch = _torch()
    x = R.standard_normal((2, 3, 9, 8)).astype(dtype)
    tx = torch.tensor(x, requires_grad=True)
    lx = torchlet.tensor(x, requires_grad=True)
    to = TORCH_CASES[case](torch, tx)
    lo = TORCH_CASES[case](torchlet, lx)
    to, lo = (to, lo) if isinstance(to, tuple) else ((to,), (lo,))
    for a, b in zip(to, lo):
        assert tuple(a.shape) == tuple(b.shape) and str(a.dtype) == str(b.dtype).replace("torchlet", "torch")
        np.testing.assert_allclose(_n(b), a.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert type(lo[0].grad_fn).__name__ == type(to[0].grad_fn).__name__
    g = R.standard_normal(tuple(to[0].shape)).astype(dtype)
    to[0].backward(torch.tensor(g))
    lo[0].backward(torchlet.tensor(g))
    np.testing.assert_allclose(_n(lx.grad), tx.grad.numpy(), rtol=1e-5, atol=1e-5)


MODULES = [
    ("MaxPool2d", (3,), {"stride": 2, "padding": 1}),
    ("MaxPool2d", ((2, 3),), {"dilation": 2, "ceil_mode": True, "return_indices": True}),
    ("MaxPool1d", (3,), {}),
    ("AvgPool2d", (3,), {"stride": 2, "padding": 1, "count_include_pad": False}),
    ("AvgPool2d", (2,), {"divisor_override": 3}),
    ("AvgPool1d", (3,), {"stride": 2}),
    ("AdaptiveAvgPool2d", ((2, None),), {}),
    ("AdaptiveAvgPool1d", (3,), {}),
    ("AdaptiveMaxPool2d", (2,), {"return_indices": True}),
    ("AdaptiveMaxPool1d", (4,), {}),
]


@pytest.mark.parametrize("name, args, kw", MODULES)
def test_modules_against_torch(name, args, kw):
    torch = _torch()
    tm, lm = getattr(torch.nn, name)(*args, **kw), getattr(nn, name)(*args, **kw)
    assert repr(lm) == repr(tm)
    x = R.standard_normal((2, 3, 8, 7) if "2d" in name else (2, 3, 9)).astype(np.float32)
    to, lo = tm(torch.tensor(x)), lm(torchlet.tensor(x))
    to, lo = (to, lo) if isinstance(to, tuple) else ((to,), (lo,))
    for a, b in zip(to, lo):
        np.testing.assert_allclose(_n(b), a.numpy(), rtol=1e-6, atol=1e-6)


# ================================================================== normalization


def np_batch_norm(x, rm, rv, w, b, training, momentum, eps):
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    if training:
        mean, var = x.mean(axis=axes), x.var(axis=axes)
        n = x.size // x.shape[1]
        if rm is not None:
            rm = momentum * mean + (1 - momentum) * rm
            rv = momentum * var * n / (n - 1) + (1 - momentum) * rv
    else:
        mean, var = rm, rv
    y = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps)
    if w is not None:
        y = y * w.reshape(shape)
    if b is not None:
        y = y + b.reshape(shape)
    return y, rm, rv


def np_group_norm(x, G, w, b, eps):
    N, C = x.shape[:2]
    xg = x.reshape(N, G, -1)
    y = ((xg - xg.mean(axis=2, keepdims=True)) / np.sqrt(xg.var(axis=2, keepdims=True) + eps)).reshape(x.shape)
    shape = (1, C) + (1,) * (x.ndim - 2)
    if w is not None:
        y = y * w.reshape(shape)
    if b is not None:
        y = y + b.reshape(shape)
    return y


@pytest.mark.parametrize("shape", [(4, 3, 5, 6), (5, 4), (3, 2, 7), (2, 3, 1, 1)])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_batch_norm_numpy(shape, affine, dtype):
    x = (R.standard_normal(shape) * 2 + 0.5).astype(dtype)
    C = shape[1]
    w = R.uniform(0.5, 1.5, C).astype(dtype) if affine else None
    b = R.standard_normal(C).astype(dtype) if affine else None
    rm, rv = R.standard_normal(C).astype(dtype), R.uniform(0.5, 2, C).astype(dtype)
    trm, trv = _t(rm.copy()), _t(rv.copy())
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    y = F.batch_norm(_t(x), trm, trv, None if w is None else _t(w), None if b is None else _t(b), True, 0.3, 1e-5)
    ry, rrm, rrv = np_batch_norm(x.astype(np.float64), rm, rv, w, b, True, 0.3, 1e-5)
    np.testing.assert_allclose(_n(y), ry, **tol)
    np.testing.assert_allclose(_n(trm), rrm, **tol)
    np.testing.assert_allclose(_n(trv), rrv, **tol)
    ye = F.batch_norm(_t(x), trm, trv, None if w is None else _t(w), None if b is None else _t(b), False)
    np.testing.assert_allclose(_n(ye), np_batch_norm(x.astype(np.float64), rrm, rrv, w, b, False, 0, 1e-5)[0], **tol)
    # no running statistics: batch statistics, nothing updated
    yn = F.batch_norm(_t(x).transpose(0, 1).transpose(0, 1), None, None, None, None, True)
    np.testing.assert_allclose(_n(yn), np_batch_norm(x.astype(np.float64), None, None, None, None, True, 0, 1e-5)[0],
                               **tol)


def test_native_batch_norm_outputs():
    x = R.standard_normal((4, 3, 5))
    out, sm, si = torchlet.native_batch_norm(_t(x), None, None, None, None, True, 0.1, 1e-5)
    np.testing.assert_allclose(_n(sm), x.mean(axis=(0, 2)))
    np.testing.assert_allclose(_n(si), 1 / np.sqrt(x.var(axis=(0, 2)) + 1e-5))
    rm, rv = torchlet.zeros(3, dtype=torchlet.float64), torchlet.ones(3, dtype=torchlet.float64)
    out, sm, si = torchlet.native_batch_norm(_t(x), None, None, rm, rv, False, 0.1, 1e-5)
    assert tuple(sm.shape) == (0,) and tuple(si.shape) == (0,)
    o2 = torchlet._native_batch_norm_legit_no_training(_t(x), None, None, rm, rv, 0.1, 1e-5)
    np.testing.assert_array_equal(_n(o2[0]), _n(out))
    # the overload that mutates its running statistics is reached through torchlet.ops
    o3 = torchlet.ops.aten._native_batch_norm_legit.default(_t(x), None, None, rm, rv, True, 0.5, 1e-5)
    np.testing.assert_allclose(_n(rm), 0.5 * x.mean(axis=(0, 2)))
    o4 = torchlet._native_batch_norm_legit(_t(x), None, None, True, 0.5, 1e-5)
    np.testing.assert_allclose(_n(o4[0]), _n(o3[0]))


@pytest.mark.parametrize("shape, G", [((2, 6, 5, 4), 3), ((3, 4, 7), 2), ((2, 4), 4), ((2, 6, 3, 3), 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_group_norm_numpy(shape, G, dtype):
    x = (R.standard_normal(shape) * 3 - 1).astype(dtype)
    C = shape[1]
    w, b = R.uniform(0.5, 1.5, C).astype(dtype), R.standard_normal(C).astype(dtype)
    # float32: x * (rstd * w) + (b - mean * rstd * w), as PyTorch's kernel (one-element groups: rstd ~ 316)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(_n(F.group_norm(_t(x), G, _t(w), _t(b))), np_group_norm(x.astype(np.float64), G, w, b, 1e-5),
                               **tol)
    np.testing.assert_allclose(_n(nn.GroupNorm(G, C, affine=False)(_t(x))),
                               np_group_norm(x.astype(np.float64), G, None, None, 1e-5), **tol)
    out, mean, rstd = torchlet.native_group_norm(_t(x), None, None, shape[0], C, x.size // (shape[0] * C), G, 1e-5)
    assert tuple(mean.shape) == (shape[0], G) and tuple(rstd.shape) == (shape[0], G)


def test_instance_norm_numpy():
    x = R.standard_normal((3, 4, 5, 6))
    rm, rv = torchlet.zeros(4, dtype=torchlet.float64), torchlet.ones(4, dtype=torchlet.float64)
    y = F.instance_norm(_t(x), rm, rv, momentum=0.2)
    ref = (x - x.mean(axis=(2, 3), keepdims=True)) / np.sqrt(x.var(axis=(2, 3), keepdims=True) + 1e-5)
    np.testing.assert_allclose(_n(y), ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(_n(rm), 0.2 * x.mean(axis=(2, 3)).mean(axis=0), rtol=1e-10)
    np.testing.assert_allclose(_n(rv), 0.8 + 0.2 * x.var(axis=(2, 3), ddof=1).mean(axis=0), rtol=1e-10)


NORM_GRAD_CASES = [
    (lambda x, w, b: F.batch_norm(x, None, None, w, b, True), (4, 3, 3, 2)),
    (lambda x, w, b: F.batch_norm(x, torchlet.tensor([0.1, -0.2, 0.3], dtype=torchlet.float64),
                                  torchlet.tensor([1.5, 0.5, 2.0], dtype=torchlet.float64), w, b, False), (4, 3, 3, 2)),
    (lambda x, w, b: F.batch_norm(x.transpose(0, 2).transpose(0, 2), None, None, w, b, True), (5, 3, 4)),
    (lambda x, w, b: F.group_norm(x, 3, w, b), (2, 3, 4, 3)),
    (lambda x, w, b: F.group_norm(x, 1, w, b), (3, 3, 5)),
    (lambda x, w, b: F.instance_norm(x, weight=w, bias=b), (2, 3, 4, 3)),
]


@pytest.mark.parametrize("fn, shape", NORM_GRAD_CASES)
def test_norm_gradcheck(fn, shape):
    x = R.standard_normal(shape) * 2 + 0.3
    C = shape[1]
    assert gradcheck(fn, [x, R.uniform(0.5, 1.5, C), R.standard_normal(C)])


def test_batch_norm_modules_running_stats_match_torch():
    torch = _torch()
    for momentum in (0.1, None):
        tm, lm = torch.nn.BatchNorm2d(3, momentum=momentum), nn.BatchNorm2d(3, momentum=momentum)
        assert repr(lm) == repr(tm)
        for step in range(4):
            x = (R.standard_normal((4, 3, 5, 5)) * (step + 1) + step).astype(np.float32)
            to, lo = tm(torch.tensor(x)), lm(torchlet.tensor(x))
            np.testing.assert_allclose(_n(lo), to.detach().numpy(), rtol=1e-4, atol=1e-5)
            for name in ("running_mean", "running_var"):
                np.testing.assert_allclose(_n(getattr(lm, name)), getattr(tm, name).numpy(), rtol=1e-5, atol=1e-6)
            assert int(lm.num_batches_tracked.item()) == int(tm.num_batches_tracked.item())
        tm.eval(), lm.eval()
        x = R.standard_normal((2, 3, 4, 4)).astype(np.float32)
        np.testing.assert_allclose(_n(lm(torchlet.tensor(x))), tm(torch.tensor(x)).detach().numpy(), rtol=1e-5,
                                   atol=1e-5)
    assert sorted(k for k in lm.state_dict()) == sorted(tm.state_dict())


NORM_MODULES = [
    ("BatchNorm1d", (3,), {}, (4, 3)),
    ("BatchNorm1d", (3,), {"affine": False, "track_running_stats": False}, (4, 3, 5)),
    ("BatchNorm2d", (3,), {"eps": 1e-3, "momentum": 0.3}, (2, 3, 4, 5)),
    ("InstanceNorm1d", (3,), {}, (2, 3, 6)),
    ("InstanceNorm1d", (3,), {"affine": True, "track_running_stats": True}, (3, 6)),
    ("InstanceNorm2d", (3,), {"affine": True}, (2, 3, 4, 5)),
    ("GroupNorm", (2, 4), {}, (2, 4, 3, 3)),
    ("GroupNorm", (4, 4), {"eps": 1e-3, "affine": False}, (3, 4, 5)),
    ("GroupNorm", (2, 4), {"bias": False}, (3, 4, 5)),
    ("BatchNorm2d", (3,), {"bias": False, "momentum": None}, (2, 3, 4, 5)),
]


@pytest.mark.parametrize("name, args, kw, shape", NORM_MODULES)
def test_norm_modules_against_torch(name, args, kw, shape):
    torch = _torch()
    tm, lm = getattr(torch.nn, name)(*args, **kw), getattr(nn, name)(*args, **kw)
    assert repr(lm) == repr(tm)
    x = R.standard_normal(shape).astype(np.float32)
    tx, lx = torch.tensor(x, requires_grad=True), torchlet.tensor(x, requires_grad=True)
    to, lo = tm(tx), lm(lx)
    np.testing.assert_allclose(_n(lo), to.detach().numpy(), rtol=1e-4, atol=1e-5)
    assert type(lo.grad_fn).__name__ == type(to.grad_fn).__name__
    g = R.standard_normal(shape).astype(np.float32)
    to.backward(torch.tensor(g))
    lo.backward(torchlet.tensor(g))
    np.testing.assert_allclose(_n(lx.grad), tx.grad.numpy(), rtol=1e-3, atol=1e-4)
    for p_l, p_t in zip(lm.parameters(), tm.parameters()):
        np.testing.assert_allclose(_n(p_l.grad), p_t.grad.numpy(), rtol=1e-3, atol=1e-4)
    for (nl, bl), (nt, bt) in zip(lm.named_buffers(), tm.named_buffers()):
        assert nl == nt
        np.testing.assert_allclose(_n(bl), bt.numpy(), rtol=1e-5, atol=1e-6)


NORM_ERRORS = [
    (lambda m, x: m.nn.functional.batch_norm(x[:1, :, 0, 0], m.zeros(3), m.ones(3), training=True), ValueError,
     "Expected more than 1 value per channel when training"),
    (lambda m, x: m.nn.functional.batch_norm(x, m.zeros(2), m.ones(3)), RuntimeError,
     "running_mean should contain 3 elements not 2"),
    (lambda m, x: m.nn.functional.batch_norm(x, m.zeros(3), m.ones(3), m.ones(2)), RuntimeError,
     "weight should contain 3 elements not 2"),
    (lambda m, x: m.nn.functional.batch_norm(x.double(), m.zeros(3), m.ones(3)), RuntimeError, "mixed dtype (CPU)"),
    (lambda m, x: m.native_batch_norm(x.int(), None, None, None, None, True, 0.1, 1e-5), NotImplementedError,
     "\"batch_norm\" not implemented for 'Int'"),
    (lambda m, x: m.nn.functional.group_norm(x, 2), RuntimeError,
     "Expected number of channels in input to be divisible by num_groups"),
    (lambda m, x: m.nn.functional.group_norm(x, 3, m.ones(2)), RuntimeError,
     "Expected weight to be a vector of size equal to the number of channels"),
    (lambda m, x: m.nn.functional.instance_norm(x[:, :, :1, :1]), ValueError,
     "Expected more than 1 spatial element when training"),
    (lambda m, x: m.nn.BatchNorm2d(3)(x[0]), ValueError, "expected 4D input (got 3D input)"),
    (lambda m, x: m.nn.GroupNorm(2, 3), ValueError, "num_channels (3) must be divisible by num_groups (2)"),
]


@pytest.mark.parametrize("fn, exc, msg", NORM_ERRORS)
def test_norm_errors(fn, exc, msg):
    with pytest.raises(exc) as e:
        fn(torchlet, torchlet.ones(2, 3, 5, 5))
    assert msg in str(e.value)


@pytest.mark.parametrize("fn, exc, msg", [e for e in NORM_ERRORS if e[1] is not ValueError])
def test_norm_errors_match_torch(fn, exc, msg):
    _same_error_as_torch(fn)


# ================================================================== padding

NP_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def np_pad(x, pad, mode, value=0.0):
    """numpy's pad with PyTorch's pad order (pairs from the last dim); negative pads crop"""
    widths = [(0, 0)] * x.ndim
    for i in range(len(pad) // 2):
        widths[x.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    crop = tuple(slice(max(-lo, 0), x.shape[d] - max(-hi, 0)) for d, (lo, hi) in enumerate(widths))
    x = x[crop]
    pos = [(max(lo, 0), max(hi, 0)) for lo, hi in widths]
    kw = {"constant_values": value} if mode == "constant" else {}
    return np.pad(x, pos, mode=NP_MODES[mode], **kw)


PAD_CASES = [  # (shape, pad, mode)
    ((2, 3, 5, 6), (1, 2), "constant"),
    ((2, 3, 5, 6), (1, 2, 0, 3, 1, 1), "constant"),
    ((2, 3, 5, 6), (-1, 2, 2, -2), "constant"),
    ((2, 3, 5, 6), (-1, -2), "constant"),
    ((3, 7), (2, 3), "reflect"),
    ((2, 3, 7), (3, 1), "reflect"),
    ((3, 5, 6), (2, 1, 4, 3), "reflect"),
    ((2, 3, 5, 6), (5, 0, 1, 2), "reflect"),
    ((2, 3, 5, 6), (-1, 2, 1, -2), "reflect"),
    ((2, 3, 7), (3, 5), "replicate"),
    ((2, 3, 5, 6), (4, 1, 7, 2), "replicate"),
    ((2, 3, 5, 6), (-2, 3, 1, -1), "replicate"),
    ((2, 3, 7), (3, 2), "circular"),
    ((2, 3, 5, 6), (2, 1, 3, 5), "circular"),
    ((2, 3, 5, 6), (-2, 1, 1, -3), "circular"),
]


@pytest.mark.parametrize("shape, pad, mode", PAD_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pad_numpy(shape, pad, mode, dtype):
    x = R.standard_normal(shape).astype(dtype)
    kw = {"value": 1.5} if mode == "constant" else {}
    y = F.pad(_t(x), pad, mode, **kw)
    np.testing.assert_array_equal(_n(y), np_pad(x, pad, mode, 1.5))
    # non-contiguous input
    xt = _t(np.ascontiguousarray(np.swapaxes(x, -1, -2))).transpose(-1, -2)
    np.testing.assert_array_equal(_n(F.pad(xt, pad, mode, **kw)), np_pad(x, pad, mode, 1.5))


def test_constant_pad_to_empty():
    y = torchlet.constant_pad_nd(torchlet.ones(2, 3, 5, 5), (-5, 0, 1, 0))
    assert tuple(y.shape) == (2, 3, 6, 0)


def test_pad_other_dtypes():
    x = R.integers(-9, 9, (2, 3, 4, 5))
    for mode in ("constant", "reflect", "replicate"):
        got = F.pad(_t(x), (1, 2, 2, 1), mode)
        assert got.dtype == torchlet.int64
        np.testing.assert_array_equal(_n(got), np_pad(x, (1, 2, 2, 1), mode))
    h = F.pad(_t(x[0]).half(), (1, 1), "reflect")
    np.testing.assert_array_equal(_n(h.float()), np_pad(x[0].astype(np.float32), (1, 1), "reflect"))


@pytest.mark.parametrize("shape, pad, mode", PAD_CASES)
def test_pad_gradcheck(shape, pad, mode):
    x = R.standard_normal(shape)
    assert gradcheck(lambda t: F.pad(t, pad, mode), [x])


def test_pad_backward_ops_gradgradcheck():
    from _gradcheck_util import gradgradcheck
    for mode in ("reflect", "replicate"):
        assert gradgradcheck(lambda t: F.pad(t * t, (2, 1, 1, 3), mode), [R.standard_normal((2, 2, 4, 5))])
        assert gradgradcheck(lambda t: F.pad(t * t, (2, 1), mode), [R.standard_normal((2, 4, 5))])


PAD_ERRORS = [
    (lambda m, x: m.nn.functional.pad(x, (1, 2, 3)), RuntimeError, "Padding length must be divisible by 2"),
    (lambda m, x: m.nn.functional.pad(x, (1,) * 10), RuntimeError, "Padding length should be less than or equal"),
    (lambda m, x: m.nn.functional.pad(x, (1, 1), mode="bogus"), NotImplementedError, "Unrecognised padding mode bogus"),
    (lambda m, x: m.nn.functional.pad(x, (1, 1), mode="reflect"), NotImplementedError, "Padding size 2 is not supported"),
    (lambda m, x: m.nn.functional.pad(x, (1, 1, 1, 1), mode="replicate", value=1.0), RuntimeError,
     "Padding mode \"replicate\" doesn't take in value argument"),
    (lambda m, x: m._C._nn.reflection_pad2d(x, (5, 1, 0, 0)), RuntimeError, "Argument #4: Padding size should be less"),
    (lambda m, x: m._C._nn.reflection_pad2d(x, (1, 1, 0, 5)), RuntimeError, "Argument #6: Padding size should be less"),
    (lambda m, x: m._C._nn.reflection_pad2d(x[0, 0], (1, 1, 1, 1)), RuntimeError, "Expected 3D or 4D (batch mode)"),
    (lambda m, x: m._C._nn.replication_pad2d(x[:, :0], (1, 1, 1, 1)), RuntimeError, "Expected 3D or 4D (batch mode)"),
    (lambda m, x: m._C._nn.reflection_pad1d(x[0], (1, 1, 1, 1)), RuntimeError, "padding size is expected to be 2"),
    (lambda m, x: m.constant_pad_nd(x, (1, 2, 3)), RuntimeError, "Length of pad must be even"),
    (lambda m, x: m.constant_pad_nd(x, (-3, -3, 1, 0)), RuntimeError, "narrow(): length must be non-negative."),
    (lambda m, x: m.constant_pad_nd(x, (-6, 0, 1, 0)), RuntimeError, "narrow(): length must be non-negative."),
]


@pytest.mark.parametrize("fn, exc, msg", PAD_ERRORS)
def test_pad_errors(fn, exc, msg):
    with pytest.raises(exc) as e:
        fn(torchlet, torchlet.ones(2, 3, 5, 5))
    assert msg in str(e.value)


@pytest.mark.parametrize("fn, exc, msg", PAD_ERRORS)
def test_pad_errors_match_torch(fn, exc, msg):
    _same_error_as_torch(fn)


@pytest.mark.parametrize("shape, pad, mode", PAD_CASES)
def test_pad_against_torch(shape, pad, mode):
    torch = _torch()
    x = R.standard_normal(shape)
    tx, lx = torch.tensor(x, requires_grad=True), torchlet.tensor(x, requires_grad=True)
    to, lo = torch.nn.functional.pad(tx, pad, mode), F.pad(lx, pad, mode)
    np.testing.assert_array_equal(_n(lo), to.detach().numpy())
    if mode != "circular":  # circular: cat / narrow nodes here, PyTorch's own _pad_circular node
        assert type(lo.grad_fn).__name__ == type(to.grad_fn).__name__
    g = R.standard_normal(tuple(to.shape))
    to.backward(torch.tensor(g))
    lo.backward(torchlet.tensor(g))
    np.testing.assert_allclose(_n(lx.grad), tx.grad.numpy(), rtol=1e-12, atol=1e-12)


PAD_MODULES = [
    ("ZeroPad2d", (2,), (2, 3, 4, 5)), ("ZeroPad1d", ((1, 2),), (2, 3, 4)), ("ConstantPad1d", (3, 2.5), (2, 3, 4)),
    ("ConstantPad2d", ((1, 0, 2, 3), -1.0), (2, 3, 4, 5)), ("ReflectionPad1d", (2,), (2, 3, 4)),
    ("ReflectionPad2d", ((1, 2, 3, 0),), (2, 3, 4, 5)), ("ReplicationPad1d", ((3, 1),), (3, 4)),
    ("ReplicationPad2d", (2,), (3, 4, 5)), ("CircularPad1d", (2,), (2, 3, 4)), ("CircularPad2d", ((1, 0, 2, 3),), (2, 3, 4, 5)),
]


@pytest.mark.parametrize("name, args, shape", PAD_MODULES)
def test_pad_modules_against_torch(name, args, shape):
    torch = _torch()
    tm, lm = getattr(torch.nn, name)(*args), getattr(nn, name)(*args)
    assert repr(lm) == repr(tm)
    x = R.standard_normal(shape).astype(np.float32)
    np.testing.assert_array_equal(_n(lm(torchlet.tensor(x))), tm(torch.tensor(x)).numpy())


# ================================================================== Python composites


def test_one_hot():
    idx = np.array([[0, 3, 1], [2, 2, 0]])
    got = F.one_hot(_t(idx))
    assert got.dtype == torchlet.int64
    np.testing.assert_array_equal(_n(got), np.eye(4, dtype=np.int64)[idx])
    np.testing.assert_array_equal(_n(F.one_hot(_t(idx), 6)), np.eye(6, dtype=np.int64)[idx])
    for bad, msg in [(_t(idx).int(), "LongTensor"), (_t(idx) - 1, "non-negative")]:
        with pytest.raises(RuntimeError, match=msg):
            F.one_hot(bad)
    with pytest.raises(RuntimeError, match="smaller than num_classes"):
        F.one_hot(_t(idx), 3)


def test_normalize_cosine_pairwise_lrn_numpy():
    a, b = R.standard_normal((4, 5, 3)), R.standard_normal((5, 3))
    np.testing.assert_allclose(_n(F.normalize(_t(a))), a / np.linalg.norm(a, axis=1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(_n(F.normalize(_t(a), p=1.0, dim=-1)), a / np.abs(a).sum(-1, keepdims=True), rtol=1e-12)
    bb = np.broadcast_to(b, a.shape)
    cos = (a * bb).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(bb, axis=1))
    np.testing.assert_allclose(_n(F.cosine_similarity(_t(a), _t(b))), cos, rtol=1e-12)
    np.testing.assert_allclose(_n(F.pairwise_distance(_t(a), _t(b))), np.linalg.norm(a - b + 1e-6, axis=-1), rtol=1e-12)
    x = R.standard_normal((2, 6, 3, 4))
    sq = np.pad(x * x, ((0, 0), (2, 2), (0, 0), (0, 0)))
    div = (1 + 1e-4 * np.stack([sq[:, c:c + 5].mean(1) for c in range(6)], 1)) ** 0.75
    np.testing.assert_allclose(_n(F.local_response_norm(_t(x), 5)), x / div, rtol=1e-12)


COMPOSITES = [
    lambda m, a, b: m.nn.functional.normalize(a, dim=-1),
    lambda m, a, b: m.nn.functional.cosine_similarity(a, b, dim=-1),
    lambda m, a, b: m.nn.functional.pairwise_distance(a, b, p=3.0, keepdim=True),
    lambda m, a, b: m.nn.functional.local_response_norm(a, 3, 1e-2, 0.5, 2.0),
    lambda m, a, b: m.nn.functional.local_response_norm(a.reshape(2, 3, 2, 2), 2),
]


@pytest.mark.parametrize("case", range(len(COMPOSITES)))
def test_composites_against_torch(case):
    torch = _torch()
    a, b = R.standard_normal((2, 3, 4)), R.standard_normal((3, 4))
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    la, lb = torchlet.tensor(a, requires_grad=True), torchlet.tensor(b, requires_grad=True)
    to, lo = COMPOSITES[case](torch, ta, tb), COMPOSITES[case](torchlet, la, lb)
    np.testing.assert_allclose(_n(lo), to.detach().numpy(), rtol=1e-10, atol=1e-12)
    g = R.standard_normal(tuple(to.shape))
    to.backward(torch.tensor(g))
    lo.backward(torchlet.tensor(g))
    np.testing.assert_allclose(_n(la.grad), ta.grad.numpy(), rtol=1e-8, atol=1e-10)


def test_batch_norm_of_a_1d_input_raises_pytorchs_index_error():
    """input.size(1) of a 1-d input: PyTorch's IndexError, from the runtime's dim wrapping"""
    with pytest.raises(IndexError, match=r"^Dimension out of range \(expected to be in range of \[-1, 0\], but got 1\)$"):
        F.batch_norm(torchlet.ones(4), None, None, training=True)
