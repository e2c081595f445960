"""Antialiased interpolation: _upsample_bilinear2d_aa / _upsample_bicubic2d_aa
(+ backward) and F.interpolate(..., antialias=True). Against a numpy
reference of PIL's separable filter (float64) always; against torch where
installed (float64 / float32 values and gradients, uint8 exactly, messages);
float64 gradients and second derivatives by finite differences."""
import sys
from pathlib import Path

import numpy as np
import pytest

import torchlet
import torchlet.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "autograd"))
from _same_error import assert_same_error  # noqa: E402
from _gradcheck_util import gradcheck, gradgradcheck  # noqa: E402

R = np.random.default_rng(20261209)


def _torch():
    return pytest.importorskip("torch")


def _n(t):
    return np.asarray(t.numpy())


def np_aa_matrix(n_in, n_out, cubic, align):
    """[n_out, n_in] resampling matrix of PIL's antialiased filter"""
    scale = ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0) if align else n_in / n_out
    support = (2.0 if cubic else 1.0) * (scale if scale >= 1.0 else 1.0)
    inv = 1.0 / scale if scale >= 1.0 else 1.0

    def filt(x):
        x = abs(x)
        if cubic:
            a = -0.5
            return ((a + 2) * x - (a + 3)) * x * x + 1 if x < 1 else (((a * x - 5 * a) * x + 8 * a) * x - 4 * a
                                                                       if x < 2 else 0.0)
        return 1.0 - x if x < 1 else 0.0
    m = np.zeros((n_out, n_in))
    for o in range(n_out):
        c = scale * (o + 0.5)
        lo, hi = max(int(c - support + 0.5), 0), min(int(c + support + 0.5), n_in)
        w = np.array([filt((j - c + 0.5) * inv) for j in range(lo, hi)])
        m[o, lo:hi] = w / w.sum() if w.sum() != 0 else w
    return m


CASES = [((1, 2, 12, 15), (5, 7)), ((2, 3, 9, 8), (4, 16)), ((1, 1, 6, 6), (6, 3)), ((1, 2, 20, 11), (3, 11))]


@pytest.mark.parametrize("shape, size", CASES)
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_aa_numpy(shape, size, mode, align_corners):
    x = R.standard_normal(shape)
    got = F.interpolate(torchlet.tensor(x), size=size, mode=mode, align_corners=align_corners, antialias=True)
    mh = np_aa_matrix(shape[2], size[0], mode == "bicubic", align_corners)
    mw = np_aa_matrix(shape[3], size[1], mode == "bicubic", align_corners)
    if size[0] == shape[2]:
        mh = np.eye(shape[2])
    if size[1] == shape[3]:
        mw = np.eye(shape[3])
    np.testing.assert_allclose(_n(got), np.einsum("oh,nchw,pw->ncop", mh, x, mw), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape, size", CASES[:3])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_aa_gradcheck(shape, size, mode):
    x = R.standard_normal(shape)
    assert gradcheck(lambda t: F.interpolate(t, size=size, mode=mode, antialias=True), [x])


def test_aa_gradgradcheck():
    x = R.standard_normal((1, 2, 7, 6))
    assert gradgradcheck(lambda t: F.interpolate(t * t, size=(3, 4), mode="bilinear", antialias=True), [x])


@pytest.mark.parametrize("shape, size", CASES)
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "float32", "uint8"])
def test_aa_against_torch(shape, size, mode, align_corners, dtype):
    torch = _torch()
    x = R.integers(0, 256, shape).astype(dtype) if dtype == "uint8" else R.standard_normal(shape).astype(dtype)
    diff = dtype != "uint8"
    tx = torch.tensor(x, requires_grad=diff)
    lx = torchlet.tensor(x, requires_grad=diff)
    to = torch.nn.functional.interpolate(tx, size=size, mode=mode, align_corners=align_corners, antialias=True)
    lo = F.interpolate(lx, size=size, mode=mode, align_corners=align_corners, antialias=True)
    if dtype == "uint8":
        np.testing.assert_array_equal(_n(lo), to.numpy())
        return
    tol = 1e-12 if dtype == "float64" else 2e-6
    np.testing.assert_allclose(_n(lo), to.detach().numpy(), rtol=tol, atol=tol)
    assert type(lo.grad_fn).__name__ == type(to.grad_fn).__name__
    g = R.standard_normal(tuple(to.shape)).astype(dtype)
    to.backward(torch.tensor(g))
    lo.backward(torchlet.tensor(g))
    np.testing.assert_allclose(_n(lx.grad), tx.grad.numpy(), rtol=tol, atol=tol)


def test_aa_scale_factor_against_torch():
    torch = _torch()
    x = R.standard_normal((1, 2, 13, 9))
    for sf in (0.37, (0.5, 1.9)):
        want = torch.nn.functional.interpolate(torch.tensor(x), scale_factor=sf, mode="bilinear", antialias=True)
        got = F.interpolate(torchlet.tensor(x), scale_factor=sf, mode="bilinear", antialias=True)
        np.testing.assert_allclose(_n(got), want.numpy(), rtol=1e-12, atol=1e-12)


ERRORS = [
    lambda m, x: m._C._nn._upsample_bilinear2d_aa(x.half(), [2, 2], False),
    lambda m, x: m._C._nn._upsample_bicubic2d_aa(x.int(), [2, 2], False),
    lambda m, x: m.ops.aten._upsample_bilinear2d_aa_backward(x.byte(), [5, 5], [2, 3, 8, 8], False),
    lambda m, x: m._C._nn._upsample_bilinear2d_aa(x, [2, 2, 2], False),
    lambda m, x: m._C._nn._upsample_bicubic2d_aa(x[0], [2, 2], False),
    lambda m, x: m.nn.functional.interpolate(x[0], size=4, mode="linear", antialias=True),
]


@pytest.mark.parametrize("fn", ERRORS)
def test_aa_errors_match_torch(fn):
    assert_same_error(fn, (2, 3, 5, 5))
