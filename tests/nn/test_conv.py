"""Convolution (kernels/native/conv.c, kernels/native/conv_gemm.c,
runtime/torchlet/nn/conv.py; docs/NN.md "Convolution").

conv1d/2d/3d and conv_transpose1d/2d/3d against a direct float64 numpy
reference always (groups, stride, dilation, padding, output_padding, bias,
batch 1, odd sizes, unbatched input, non-contiguous input and weight, empty
batches, zero input channels, float16 / bfloat16 / float32 / float64, the
thread split), against torch when installed (the same configurations,
padding='same' / 'valid', gradients, second derivatives); gradchecks of
conv1d / conv2d / conv_transpose2d with the project's finite-difference
helper; PyTorch's errors; meta tensors; the modules (init bounds, repr,
padding modes, output_size, their errors)."""
import math
import os
import sys

import numpy as np
import pytest

import torchlet as tl
import torchlet.nn as nn
import torchlet.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "autograd"))
from _gradcheck_util import gradcheck, gradgradcheck  # noqa: E402

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch not installed")
R = np.random.default_rng(909)


def rn(*shape):
    return R.standard_normal(shape)


def _tup(v, nd):
    return tuple(v) if isinstance(v, (list, tuple)) else (v,) * nd


# ------------------------------------------------------------ numpy reference


def np_conv(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """direct convolution: a sum over kernel taps of strided slices"""
    nd = x.ndim - 2
    s, p, d = _tup(stride, nd), _tup(padding, nd), _tup(dilation, nd)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(q, q) for q in p])
    ks = w.shape[2:]
    osz = [(xp.shape[2 + i] - d[i] * (ks[i] - 1) - 1) // s[i] + 1 for i in range(nd)]
    N, C, OC = x.shape[0], x.shape[1], w.shape[0]
    Cg, OCg = C // groups, OC // groups
    out = np.zeros((N, OC, *osz))
    for g in range(groups):
        xg, wg = xp[:, g * Cg:(g + 1) * Cg], w[g * OCg:(g + 1) * OCg]
        for k in np.ndindex(*ks):
            sl = tuple(slice(k[i] * d[i], k[i] * d[i] + s[i] * (osz[i] - 1) + 1, s[i]) for i in range(nd))
            patch = xg[(slice(None), slice(None)) + sl]
            out[:, g * OCg:(g + 1) * OCg] += np.einsum("nc...,oc->no...", patch, wg[(slice(None), slice(None)) + k])
    if b is not None:
        out += b.reshape(1, -1, *[1] * nd)
    return out


def np_conv_transpose(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """direct transposed convolution: every input element scatters its kernel, then the padding is cropped"""
    nd = x.ndim - 2
    s, p, op, d = _tup(stride, nd), _tup(padding, nd), _tup(output_padding, nd), _tup(dilation, nd)
    ks, isz = w.shape[2:], x.shape[2:]
    full = [(isz[i] - 1) * s[i] + d[i] * (ks[i] - 1) + 1 + op[i] for i in range(nd)]
    N, C, OCg = x.shape[0], x.shape[1], w.shape[1]
    Cg = C // groups
    out = np.zeros((N, OCg * groups, *full))
    for g in range(groups):
        xg, wg = x[:, g * Cg:(g + 1) * Cg], w[g * Cg:(g + 1) * Cg]
        og = out[:, g * OCg:(g + 1) * OCg]
        for k in np.ndindex(*ks):
            sl = tuple(slice(k[i] * d[i], k[i] * d[i] + s[i] * (isz[i] - 1) + 1, s[i]) for i in range(nd))
            og[(slice(None), slice(None)) + sl] += np.einsum("nc...,co->no...", xg, wg[(slice(None), slice(None)) + k])
    out = out[(slice(None), slice(None)) + tuple(slice(p[i], full[i] - p[i]) for i in range(nd))]
    if b is not None:
        out = out + b.reshape(1, -1, *[1] * nd)
    return out


# ------------------------------------------------------------ configurations

# (input shape, weight shape, bias, kwargs)
CONV = [
    ((2, 3, 9), (4, 3, 3), True, {}),
    ((1, 4, 10), (6, 2, 4), False, dict(stride=3, padding=2, dilation=2, groups=2)),
    ((3, 6, 7), (6, 1, 5), True, dict(padding=2, groups=6)),                    # depthwise
    ((2, 3, 7, 9), (5, 3, 3, 3), True, {}),
    ((1, 4, 8, 7), (6, 2, 3, 2), True, dict(stride=(2, 1), padding=(1, 2), dilation=(2, 1), groups=2)),
    ((2, 8, 6, 6), (8, 1, 3, 3), False, dict(stride=2, padding=1, groups=8)),
    ((2, 5, 6, 5), (3, 5, 1, 1), True, {}),                                      # 1x1: no im2col
    ((1, 4, 9, 9), (4, 4, 1, 1), True, dict(stride=2)),                          # 1x1 strided
    ((2, 3, 5, 5), (2, 3, 5, 5), True, {}),                                      # kernel = input
    ((2, 2, 5, 4, 6), (3, 2, 3, 2, 3), True, dict(stride=(1, 2, 2), padding=1)),
    ((1, 4, 4, 5, 3), (4, 2, 2, 3, 1), False, dict(dilation=(2, 1, 1), groups=2)),
]

TRANSPOSED = [
    ((2, 3, 5), (3, 4, 3), True, {}),
    ((1, 4, 6), (4, 2, 4), True, dict(stride=3, padding=1, output_padding=2, groups=2)),
    ((2, 4, 4, 5), (4, 3, 3, 3), True, dict(stride=2, padding=1, output_padding=1)),
    ((1, 6, 3, 4), (6, 2, 2, 3), False, dict(stride=(2, 3), padding=(0, 1), output_padding=(1, 2), groups=3,
                                              dilation=(1, 2))),
    ((2, 3, 4, 4), (3, 5, 1, 1), True, {}),                                      # 1x1: one GEMM
    ((1, 3, 4, 5), (3, 2, 1, 1), True, dict(output_padding=1, dilation=2)),     # 1x1 grown by output_padding
    ((1, 2, 3, 2, 3), (2, 3, 2, 2, 3), True, dict(stride=2, padding=(1, 0, 1), output_padding=1)),
]

FN = {3: F.conv1d, 4: F.conv2d, 5: F.conv3d}
FNT = {3: F.conv_transpose1d, 4: F.conv_transpose2d, 5: F.conv_transpose3d}


def _ids(cases):
    return [f"{i}-{len(c[0]) - 2}d" for i, c in enumerate(cases)]


def _run(fn, x, w, b, kw, dt=tl.float64):
    return fn(tl.tensor(x, dtype=dt), tl.tensor(w, dtype=dt), None if b is None else tl.tensor(b, dtype=dt), **kw)


@pytest.mark.parametrize("xs,ws,bias,kw", CONV, ids=_ids(CONV))
def test_conv_numpy(xs, ws, bias, kw):
    x, w = rn(*xs), rn(*ws)
    b = rn(ws[0]) if bias else None
    ref = np_conv(x, w, b, **kw)
    out = _run(FN[len(xs)], x, w, b, kw)
    assert out.dtype == tl.float64 and tuple(out.shape) == ref.shape
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12, atol=1e-12)
    out32 = _run(FN[len(xs)], x, w, b, kw, tl.float32)
    assert out32.dtype == tl.float32
    np.testing.assert_allclose(out32.numpy(), ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("xs,ws,bias,kw", TRANSPOSED, ids=_ids(TRANSPOSED))
def test_conv_transpose_numpy(xs, ws, bias, kw):
    x, w = rn(*xs), rn(*ws)
    b = rn(ws[1] * kw.get("groups", 1)) if bias else None
    ref = np_conv_transpose(x, w, b, **kw)
    out = _run(FNT[len(xs)], x, w, b, kw)
    assert tuple(out.shape) == ref.shape
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12, atol=1e-12)


def test_unbatched_and_noncontiguous():
    x, w, b = rn(3, 8, 7), rn(4, 3, 3, 3), rn(4)
    out = F.conv2d(tl.tensor(x), tl.tensor(w), tl.tensor(b), padding=1)
    assert tuple(out.shape) == (4, 8, 7)
    np.testing.assert_allclose(out.numpy(), np_conv(x[None], w, b, padding=1)[0], rtol=1e-12, atol=1e-12)
    # transposed spatial dims and a channel-strided weight, read through their strides
    xt = tl.tensor(rn(2, 3, 7, 8)).transpose(2, 3)
    wt = tl.tensor(rn(4, 6, 3, 3))[:, ::2]
    assert not xt.is_contiguous() and not wt.is_contiguous()
    np.testing.assert_allclose(F.conv2d(xt, wt, stride=2).numpy(), np_conv(xt.numpy(), wt.numpy(), stride=2),
                               rtol=1e-12, atol=1e-12)
    x1 = rn(4, 9)
    np.testing.assert_allclose(F.conv_transpose1d(tl.tensor(x1), tl.tensor(rn(4, 2, 3)), stride=2).shape, (2, 19))


def test_empty_and_zero_channels():
    w, b = rn(5, 3, 3, 3), rn(5)
    out = F.conv2d(tl.tensor(np.zeros((0, 3, 6, 6))), tl.tensor(w), tl.tensor(b))
    assert tuple(out.shape) == (0, 5, 4, 4)
    # no input channels: the output is the bias
    out = F.conv2d(tl.tensor(np.zeros((2, 0, 6, 6))), tl.tensor(np.zeros((5, 0, 3, 3))), tl.tensor(b))
    np.testing.assert_array_equal(out.numpy(), np.broadcast_to(b.reshape(1, 5, 1, 1), (2, 5, 4, 4)))


@pytest.mark.parametrize("dt", [tl.float16, tl.bfloat16])
def test_half_types_compute_in_float(dt):
    x, w, b = rn(2, 4, 6, 6), rn(3, 4, 3, 3), rn(3)
    xr = tl.tensor(x, dtype=dt)
    wr, br = tl.tensor(w, dtype=dt), tl.tensor(b, dtype=dt)
    out = F.conv2d(xr, wr, br, padding=1)
    assert out.dtype == dt
    ref = np_conv(xr.float().numpy().astype(np.float64), wr.float().numpy().astype(np.float64),
                  br.float().numpy().astype(np.float64), padding=1)
    np.testing.assert_allclose(out.float().numpy(), ref, rtol=2e-2, atol=5e-2 if dt is tl.bfloat16 else 1e-2)


@pytest.mark.parametrize("transposed", [False, True])
def test_thread_count_independent(transposed):
    """batch items over the pool; the weight gradient's partial sums added in batch order"""
    x = tl.tensor(rn(7, 4, 9, 8), dtype=tl.float32)
    w = tl.tensor(rn(4, 2, 3, 3), dtype=tl.float32)
    fn = (lambda a, b: F.conv_transpose2d(a, b, stride=2, groups=2)) if transposed else \
        (lambda a, b: F.conv2d(a, b, padding=1, groups=2))
    results = []
    before = tl.get_num_threads()
    try:
        for n in (1, 2, 3):
            tl.set_num_threads(n)
            xa, wa = x.detach().requires_grad_(), w.detach().requires_grad_()
            y = fn(xa, wa)
            (y * y).sum().backward()
            results.append((y.numpy(), xa.grad.numpy(), wa.grad.numpy()))
    finally:
        tl.set_num_threads(before)
    for r in results[1:]:
        np.testing.assert_array_equal(r[0], results[0][0])
        np.testing.assert_array_equal(r[1], results[0][1])
        np.testing.assert_allclose(r[2], results[0][2], rtol=1e-5, atol=1e-4)
    for n in (2, 3):  # the same split twice: the same bits
        tl.set_num_threads(n)
        try:
            xa, wa = x.detach().requires_grad_(), w.detach().requires_grad_()
            (fn(xa, wa) ** 2).sum().backward()
            again = wa.grad.numpy()
        finally:
            tl.set_num_threads(before)
        np.testing.assert_array_equal(again, results[n - 1][2])


@pytest.mark.parametrize("stride,dilation", [(1, 1), (2, 1), (1, 2)])
def test_column_blocks(stride, dilation):
    """a column matrix too large for one block (kernels/native/conv_gemm.c builds it in
    blocks of whole output rows): forward, grad_input and grad_weight against numpy"""
    x, w, b = rn(2, 64, 41, 37), rn(8, 64, 3, 3), rn(8)
    kw = dict(stride=stride, padding=1, dilation=dilation)
    xt, wt, bt = (tl.tensor(a).requires_grad_() for a in (x, w, b))
    y = F.conv2d(xt, wt, bt, **kw)
    np.testing.assert_allclose(y.detach().numpy(), np_conv(x, w, b, **kw), rtol=1e-11, atol=1e-11)
    g = rn(*y.shape)
    y.backward(tl.tensor(g))
    dx, dw = rn(*x.shape), rn(*w.shape)   # the adjoints through linearity
    np.testing.assert_allclose((xt.grad.numpy() * dx).sum(), (np_conv(dx, w, None, **kw) * g).sum(), rtol=1e-10)
    np.testing.assert_allclose((wt.grad.numpy() * dw).sum(), (np_conv(x, dw, None, **kw) * g).sum(), rtol=1e-10)
    # the transposed convolution's forward is the blocked col2im
    xs, ws = rn(1, 16, 20, 19), rn(16, 64, 3, 3)
    out = F.conv_transpose2d(tl.tensor(xs), tl.tensor(ws), stride=stride, dilation=dilation)
    np.testing.assert_allclose(out.numpy(), np_conv_transpose(xs, ws, stride=stride, dilation=dilation),
                               rtol=1e-11, atol=1e-11)


def test_single_image_blocks_over_threads():
    """a batch smaller than the thread count: the column blocks of one image go to the pool"""
    x, w, b = rn(1, 64, 30, 29), rn(8, 64, 3, 3), rn(8)
    outs = []
    before = tl.get_num_threads()
    try:
        for n in (1, 2, 3):
            tl.set_num_threads(n)
            outs.append(F.conv2d(tl.tensor(x, dtype=tl.float32), tl.tensor(w, dtype=tl.float32),
                                 tl.tensor(b, dtype=tl.float32), padding=1).numpy())
            np.testing.assert_allclose(F.conv2d(tl.tensor(x), tl.tensor(w), tl.tensor(b), padding=1).numpy(),
                                       np_conv(x, w, b, padding=1), rtol=1e-11, atol=1e-11)
    finally:
        tl.set_num_threads(before)
    for o in outs[1:]:
        np.testing.assert_array_equal(o, outs[0])


def test_meta_shapes():
    x = tl.empty(2, 4, 9, 9, device="meta")
    w = tl.empty(6, 2, 3, 3, device="meta")
    out = F.conv2d(x, w, stride=2, groups=2)
    assert out.device.type == "meta" and tuple(out.shape) == (2, 6, 4, 4)
    out = F.conv_transpose2d(x, tl.empty(4, 3, 3, 3, device="meta"), stride=2, output_padding=1)
    assert tuple(out.shape) == (2, 3, 20, 20)


# ------------------------------------------------------------ autograd


def test_grad_fn_and_gradients_numpy():
    """the gradients as the adjoints of the numpy reference: <g, conv(x, w)> differentiated"""
    x, w, b, g = rn(2, 4, 6, 5), rn(6, 2, 3, 3), rn(6), None
    xt, wt, bt = (tl.tensor(a).requires_grad_() for a in (x, w, b))
    y = F.conv2d(xt, wt, bt, stride=2, padding=1, groups=2)
    assert type(y.grad_fn).__name__ == "ConvolutionBackward0"
    g = rn(*y.shape)
    y.backward(tl.tensor(g))
    np.testing.assert_allclose(bt.grad.numpy(), g.sum(axis=(0, 2, 3)), rtol=1e-12)
    # d<g, conv(x, w)>/dw: conv of x with g's taps, checked by linearity in w
    dw = rn(*w.shape)
    lin = (np_conv(x, dw, None, stride=2, padding=1, groups=2) * g).sum()
    np.testing.assert_allclose((wt.grad.numpy() * dw).sum(), lin, rtol=1e-10)
    dx = rn(*x.shape)
    lin = (np_conv(dx, w, None, stride=2, padding=1, groups=2) * g).sum()
    np.testing.assert_allclose((xt.grad.numpy() * dx).sum(), lin, rtol=1e-10)


@pytest.mark.parametrize("name", ["conv1d", "conv2d", "conv_transpose2d"])
def test_gradcheck(name):
    if name == "conv1d":
        arrays = [rn(2, 4, 7), rn(6, 2, 3), rn(6)]
        fn = lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1, dilation=2, groups=2)  # noqa: E731
    elif name == "conv2d":
        arrays = [rn(1, 3, 5, 6), rn(2, 3, 2, 3), rn(2)]
        fn = lambda x, w, b: F.conv2d(x.transpose(2, 3), w, b, padding="same")  # noqa: E731
    else:
        arrays = [rn(2, 4, 3, 2), rn(4, 1, 3, 2), rn(2)]
        fn = lambda x, w, b: F.conv_transpose2d(x, w, b, stride=(2, 1), padding=1,  # noqa: E731
                                                output_padding=(1, 0), groups=2)
    assert gradcheck(fn, arrays)


def test_gradgradcheck():
    assert gradgradcheck(lambda x, w, b: F.conv1d(x, w, b, padding=1, stride=2), [rn(2, 2, 6), rn(3, 2, 3), rn(3)])


# ------------------------------------------------------------ errors


ERRORS = [
    (lambda F, tl, x, w: F.conv2d(x[0, 0], w), "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of "
                                        "size: [5, 5]"),
    (lambda F, tl, x, w: F.conv1d(x, w), "Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input of size: "
                                  "[2, 4, 5, 5]"),
    (lambda F, tl, x, w: F.conv2d(x, w[:, :3]), "Given groups=1, weight of size [6, 3, 3, 3], expected input[2, 4, 5, 5] "
                                         "to have 3 channels, but got 4 channels instead"),
    (lambda F, tl, x, w: F.conv2d(x, w[:, :2], groups=4), "Given groups=4, expected weight to be divisible by 4 at "
                                                   "dimension 0, but got weight of size [[6, 2, 3, 3]] instead"),
    (lambda F, tl, x, w: F.conv2d(x, w, groups=0), "non-positive groups is not supported"),
    (lambda F, tl, x, w: F.conv2d(x, tl.zeros(6, 4, 7, 7)), "Calculated padded input size per channel: (5 x 5). Kernel "
                                                     "size: (7 x 7). Kernel size can't be greater than actual input "
                                                     "size"),
    (lambda F, tl, x, w: F.conv2d(x, w, padding=-1), "negative padding is not supported"),
    (lambda F, tl, x, w: F.conv2d(x, w, stride=0), "non-positive stride is not supported"),
    (lambda F, tl, x, w: F.conv2d(x, w, dilation=0), "non-positive dilation is not supported"),
    (lambda F, tl, x, w: F.conv2d(x, w, stride=(1, 1, 1)), "expected stride to be a single integer value or a list of 2 "
                                                    "values to match the convolution dimensions, but got "
                                                    "stride=[1, 1, 1]"),
    (lambda F, tl, x, w: F.conv2d(x, w, tl.zeros(5)), "Given weight of size [6, 4, 3, 3], expected bias to be "
                                               "1-dimensional with 6 elements, but got bias of size [5] instead"),
    (lambda F, tl, x, w: F.conv2d(x, w, tl.zeros(6, dtype=tl.float64)), "Input type (float) and bias type (double) "
                                                                 "should be the same"),
    (lambda F, tl, x, w: F.conv2d(x.double(), w), "expected scalar type Double but found Float"),
    (lambda F, tl, x, w: F.conv2d(x, w.double()), "Input type (torch.FloatTensor) and weight type (torch.DoubleTensor) "
                                           "should be the same or input should be a MKLDNN tensor and weight is a "
                                           "dense tensor"),
    (lambda F, tl, x, w: F.conv2d(x, w, padding="same", stride=2), "padding='same' is not supported for strided "
                                                            "convolutions"),
    (lambda F, tl, x, w: F.conv2d(x, w, padding="foo"), "Invalid padding string: 'foo'"),
    (lambda F, tl, x, w: F.conv_transpose2d(x, tl.zeros(4, 3, 3, 3), stride=2, output_padding=2),
     "output padding must be smaller than either stride or dilation, but got output_padding_height: 2 "
     "output_padding_width: 2 stride_height: 2 stride_width: 2 dilation_height: 1 dilation_width: 1"),
    (lambda F, tl, x, w: F.conv_transpose1d(x[:, :, 0], tl.zeros(4, 3, 3), stride=2, output_padding=2),
     "output padding must be smaller than either stride or dilation, but got output_padding_height: 0 "
     "output_padding_width: 2 stride_height: 1 stride_width: 2 dilation_height: 1 dilation_width: 1"),
    (lambda F, tl, x, w: F.conv_transpose2d(x, tl.zeros(4, 3, 3, 3), output_padding=-1),
     "negative output_padding is not supported"),
    (lambda F, tl, x, w: F.conv_transpose2d(x, tl.zeros(5, 3, 3, 3)), "Given transposed=1, weight of size [5, 3, 3, 3], "
                                                               "expected input[2, 4, 5, 5] to have 5 channels, but "
                                                               "got 4 channels instead"),
    (lambda F, tl, x, w: F.conv_transpose2d(x, tl.zeros(4, 3, 3, 3), tl.zeros(2)),
     "Given transposed=1, weight of size [4, 3, 3, 3], expected bias to be 1-dimensional with 3 elements, but got "
     "bias of size [2] instead"),
    (lambda F, tl, x, w: F.conv_transpose2d(x[0, 0], tl.zeros(4, 3, 3, 3)), "Expected 3D (unbatched) or 4D (batched) "
                                                                      "input to conv_transpose2d, but got input of "
                                                                      "size: [5, 5]"),
    (lambda F, tl, x, w: F.conv_transpose2d(x.double(), tl.zeros(4, 3, 3, 3, dtype=tl.float64), padding=5),
     "Given input size per channel: (5 x 5). Calculated output size per channel: (-3 x -3). Output size is too "
     "small"),
    (lambda F, tl, x, w: tl.convolution(x, tl.zeros(6, 4), None, [1], [0], [1], False, [0], 1),
     "weight should have at least three dimensions"),
    (lambda F, tl, x, w: tl.convolution(x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0, 0], 1),
     "expected output_padding to be a single integer value or a list of 2 values to match the convolution "
     "dimensions, but got output_padding=[0, 0, 0]"),
    # float64: PyTorch's slow kernels check the window (its oneDNN path words it differently)
    (lambda F, tl, x, w: F.conv2d(x.double(), tl.zeros(3, 4, 0, 3, dtype=tl.float64)),
     "kernel size should be greater than zero, but got kernel_height: 0 kernel_width: 3"),
    (lambda F, tl, x, w: F.conv1d(x[:, :, 0].double(), tl.zeros(3, 4, 0, dtype=tl.float64)),
     "kernel size should be greater than zero, but got kernel_height: 1 kernel_width: 0"),
    (lambda F, tl, x, w: F.conv3d(x[None].double(), tl.zeros(3, 2, 1, 0, 3, dtype=tl.float64)),
     "kernel size should be greater than zero, but got: 1 x 0 x 3 (TxHxW)"),
    (lambda F, tl, x, w: tl.convolution(tl.zeros(1, 2, 3, 3, 3, 3), tl.zeros(3, 2, 1, 1, 1, 1), None, [1], [0], [1],
                                        False, [0], 1), "unsupported ConvNd parameters"),
    (lambda F, tl, x, w: tl.convolution(x[0], w, None, [1], [0], [1], False, [0], 1),
     "Expected 4-dimensional input for 4-dimensional weight [6, 4, 3, 3], but got 3-dimensional input of size "
     "[4, 5, 5] instead"),
]


def _err_inputs(lib):
    return lib.nn.functional, lib, lib.zeros(2, 4, 5, 5), lib.zeros(6, 4, 3, 3)


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(i):
    fn, msg = ERRORS[i]
    with pytest.raises(RuntimeError) as e:
        fn(*_err_inputs(tl))
    assert str(e.value) == msg


@needs_torch
@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_match_torch(i):
    fn, msg = ERRORS[i]
    with pytest.raises(RuntimeError) as e:
        fn(*_err_inputs(torch))
    assert str(e.value) == msg


def test_same_padding_warning():
    x, w = tl.tensor(rn(1, 2, 6)), tl.tensor(rn(3, 2, 4))
    with pytest.warns(UserWarning, match="Using padding='same' with even kernel lengths and odd dilation"):
        out = F.conv1d(x, w, padding="same")
    assert tuple(out.shape) == (1, 3, 6)
    # an even kernel pads one more on the right
    ref = np_conv(np.pad(x.numpy(), [(0, 0), (0, 0), (1, 2)]), w.numpy())
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------ against torch


def _torch_fn(fn):
    return getattr(torch.nn.functional, fn.__name__)


@needs_torch
@pytest.mark.parametrize("xs,ws,bias,kw", CONV + TRANSPOSED, ids=_ids(CONV) + [f"t{i}" for i in _ids(TRANSPOSED)])
def test_against_torch_forward_backward(xs, ws, bias, kw):
    transposed = (xs, ws, bias, kw) in TRANSPOSED
    fn = (FNT if transposed else FN)[len(xs)]
    x, w = rn(*xs), rn(*ws)
    b = rn(ws[1] * kw.get("groups", 1) if transposed else ws[0]) if bias else None
    ins = [x, w] + ([b] if bias else [])
    tls = [tl.tensor(a).requires_grad_() for a in ins]
    ths = [torch.tensor(a).requires_grad_() for a in ins]
    y = fn(*tls, **kw) if bias else fn(*tls, None, **kw)
    ty = _torch_fn(fn)(*ths, **kw) if bias else _torch_fn(fn)(*ths, None, **kw)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-10, atol=1e-10)
    g = rn(*y.shape)
    y.backward(tl.tensor(g))
    ty.backward(torch.tensor(g))
    for a, t in zip(tls, ths):
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-10)


@needs_torch
@pytest.mark.parametrize("padding,kw", [("same", {}), ("same", dict(dilation=2)), ("valid", dict(stride=2)),
                                        ("same", dict(groups=2))])
@pytest.mark.parametrize("nd", [1, 2, 3])
def test_string_padding_against_torch(nd, padding, kw):
    ks = (4, 3, 2)[:nd]
    x, w, b = rn(2, 4, *(7, 6, 5)[:nd]), rn(6, 4 // kw.get("groups", 1), *ks), rn(6)
    fn = FN[nd + 2]
    ref = _torch_fn(fn)(torch.tensor(x), torch.tensor(w), torch.tensor(b), padding=padding, **kw)
    out = fn(tl.tensor(x), tl.tensor(w), tl.tensor(b), padding=padding, **kw)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-10, atol=1e-10)


@needs_torch
def test_float32_and_unbatched_against_torch():
    x, w, b = rn(3, 11, 10).astype(np.float32), rn(5, 3, 3, 3).astype(np.float32), rn(5).astype(np.float32)
    out = F.conv2d(tl.tensor(x), tl.tensor(w), tl.tensor(b), stride=2, padding=1)
    ref = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), torch.tensor(b), stride=2, padding=1)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-5, atol=1e-5)


@needs_torch
def test_double_backward_against_torch():
    x, w, b = rn(2, 4, 5, 5), rn(4, 2, 3, 3), rn(4)

    def second(lib, fn):
        xs, ws, bs = (lib.tensor(a).requires_grad_() for a in (x, w, b))
        y = fn(xs, ws, bs, padding=1, groups=2)
        gx, gw = (lib.autograd.grad((y * y).sum(), [xs, ws], create_graph=True))
        (gx.sum() + (gw * gw).sum()).backward()
        return xs.grad.numpy(), ws.grad.numpy(), bs.grad.numpy()

    for a, t in zip(second(tl, F.conv2d), second(torch, torch.nn.functional.conv2d)):
        np.testing.assert_allclose(a, t, rtol=1e-9, atol=1e-9)


# ------------------------------------------------------------ modules


def test_module_shapes_init_and_bias_bound():
    tl.manual_seed(0)
    m = nn.Conv2d(6, 8, 3, stride=2, padding=1, groups=2)
    assert tuple(m.weight.shape) == (8, 3, 3, 3) and tuple(m.bias.shape) == (8,)
    bound = 1 / math.sqrt(3 * 9)   # kaiming_uniform_(a=sqrt(5)) and the bias: U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    assert np.abs(m.weight.detach().numpy()).max() <= bound and np.abs(m.bias.detach().numpy()).max() <= bound
    assert np.abs(m.weight.detach().numpy()).max() > 0.8 * bound
    y = m(tl.randn(2, 6, 9, 9))
    assert tuple(y.shape) == (2, 8, 5, 5)
    t = nn.ConvTranspose2d(4, 6, 3, stride=2, groups=2, bias=False)
    assert tuple(t.weight.shape) == (4, 3, 3, 3) and t.bias is None
    assert tuple(t(tl.randn(1, 4, 5, 5)).shape) == (1, 6, 11, 11)
    assert tuple(t(tl.randn(1, 4, 5, 5), output_size=[12, 12]).shape) == (1, 6, 12, 12)
    assert tuple(nn.Conv1d(2, 3, 3)(tl.randn(2, 5)).shape) == (3, 3)
    assert tuple(nn.Conv3d(2, 3, 2)(tl.randn(1, 2, 3, 3, 3)).shape) == (1, 3, 2, 2, 2)
    assert tuple(nn.ConvTranspose1d(2, 3, 3)(tl.randn(1, 2, 4)).shape) == (1, 3, 6)
    assert tuple(nn.ConvTranspose3d(2, 3, 2)(tl.randn(1, 2, 2, 2, 2)).shape) == (1, 3, 3, 3, 3)
    assert [n for n, _ in m.named_parameters()] == ["weight", "bias"]


REPRS = [
    (lambda lib: lib.nn.Conv2d(3, 4, 3, stride=2, padding=1, bias=False),
     "Conv2d(3, 4, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), bias=False)"),
    (lambda lib: lib.nn.Conv2d(4, 4, (3, 5), dilation=2, groups=2, padding="same"),
     "Conv2d(4, 4, kernel_size=(3, 5), stride=(1, 1), padding=same, dilation=(2, 2), groups=2)"),
    (lambda lib: lib.nn.ConvTranspose2d(4, 4, 3, stride=2, output_padding=1),
     "ConvTranspose2d(4, 4, kernel_size=(3, 3), stride=(2, 2), output_padding=(1, 1))"),
    (lambda lib: lib.nn.Conv1d(4, 4, 3, padding_mode="reflect"),
     "Conv1d(4, 4, kernel_size=(3,), stride=(1,), padding_mode=reflect)"),
    (lambda lib: lib.nn.Conv3d(2, 4, 3, padding=(1, 0, 1)),
     "Conv3d(2, 4, kernel_size=(3, 3, 3), stride=(1, 1, 1), padding=(1, 0, 1))"),
]


@pytest.mark.parametrize("i", range(len(REPRS)))
def test_module_repr(i):
    make, text = REPRS[i]
    assert repr(make(tl)) == text
    if torch is not None:
        assert repr(make(torch)) == text


@needs_torch
@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("nd,padding", [(1, 2), (2, (1, 2)), (2, "same"), (3, 1)])
def test_padding_modes_against_torch(mode, nd, padding):
    cls = {1: "Conv1d", 2: "Conv2d", 3: "Conv3d"}[nd]
    m = getattr(nn, cls)(2, 3, 3, padding=padding, padding_mode=mode, dtype=tl.float64)
    tm = getattr(torch.nn, cls)(2, 3, 3, padding=padding, padding_mode=mode, dtype=torch.float64)
    with torch.no_grad():
        tm.weight.copy_(torch.tensor(m.weight.detach().numpy()))
        tm.bias.copy_(torch.tensor(m.bias.detach().numpy()))
    x = rn(2, 2, *(5, 4, 3)[:nd])
    xt, tx = tl.tensor(x).requires_grad_(), torch.tensor(x).requires_grad_()
    y, ty = m(xt), tm(tx)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-10, atol=1e-10)
    g = rn(*y.shape)
    y.backward(tl.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(xt.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(m.weight.grad.numpy(), tm.weight.grad.numpy(), rtol=1e-10, atol=1e-10)


MODULE_ERRORS = [
    (lambda lib: lib.nn.Conv2d(3, 4, 3, groups=0), ValueError, "groups must be a positive integer"),
    (lambda lib: lib.nn.Conv2d(3, 4, 3, groups=2), ValueError, "in_channels must be divisible by groups"),
    (lambda lib: lib.nn.Conv2d(4, 3, 3, groups=2), ValueError, "out_channels must be divisible by groups"),
    (lambda lib: lib.nn.Conv2d(3, 4, 3, padding="full"), ValueError, "Invalid padding string 'full', should be one "
                                                                     "of "),   # then a set, in hash order
    (lambda lib: lib.nn.Conv2d(3, 4, 3, padding="same", stride=2), ValueError,
     "padding='same' is not supported for strided convolutions"),
    (lambda lib: lib.nn.ConvTranspose2d(3, 4, 3, padding_mode="reflect"), ValueError,
     'Only "zeros" padding mode is supported for ConvTranspose2d'),
    (lambda lib: lib.nn.ConvTranspose2d(3, 4, 3, stride=2)(lib.zeros(1, 3, 4, 4), output_size=[13, 13]), ValueError,
     "requested an output size of [13, 13], but valid sizes range from [9, 9] to [10, 10] (for an input of "
     "{}[4, 4])"),
    (lambda lib: lib.nn.Conv1d(2, 2, 3, padding=3, padding_mode="reflect")(lib.zeros(1, 2, 3)), RuntimeError,
     "Argument #4: Padding size should be less than the corresponding input dimension, but got: padding (3, 3) at "
     "dimension 2 of input [1, 2, 3]"),
]


@pytest.mark.parametrize("i", range(len(MODULE_ERRORS)))
def test_module_errors(i):
    make, typ, msg = MODULE_ERRORS[i]
    libs = [tl] + ([torch] if torch is not None else [])
    for lib in libs:
        with pytest.raises(typ) as e:
            make(lib)
        size = "torch.Size(" if lib is torch else "torchlet.Size("
        expected = msg.replace("{}[4, 4]", size + "[4, 4])").replace("{}", "")
        if "{}" in msg:
            expected = msg.replace("{}[4, 4])", size + "[4, 4]))")
        if expected.endswith("of "):
            assert str(e.value) in (expected + "{'same', 'valid'}", expected + "{'valid', 'same'}")
        else:
            assert str(e.value) == expected, lib.__name__
