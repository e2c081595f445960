"""Interpolation: the upsample_* operators (nearest, nearest-exact, linear,
bilinear, bicubic, trilinear; .vec overloads and _backward), F.interpolate,
F.upsample / upsample_nearest / upsample_bilinear and the nn.Upsample layers
-- against a numpy reference always (PyTorch's index and weight rules written
out per dim), against torch where it is installed (values, gradients,
messages), float64 gradients through the project's gradcheck helper."""
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import torchlet
import torchlet.nn as nn
import torchlet.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "autograd"))
from _gradcheck_util import gradcheck  # noqa: E402

R = np.random.default_rng(20261205)


def _n(t):
    return np.asarray(t.numpy())


# ------------------------------------------------------------------ numpy reference (float64)


def _taps(n_in, n_out, mode, align, scale=None):
    """per output index, the (input index, weight) pairs of one spatial dim"""
    sc = (1.0 / scale) if scale else n_in / n_out
    if mode == "nearest":
        return [[(min(int(np.floor(np.float32(o) * np.float32(sc))), n_in - 1), 1.0)] for o in range(n_out)]
    if mode == "nearest-exact":
        return [[(min(int(np.floor((o + 0.5) * np.float32(sc))), n_in - 1), 1.0)] for o in range(n_out)]
    if align:
        sc = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    taps = []
    for o in range(n_out):
        real = sc * o if align else sc * (o + 0.5) - 0.5
        if mode == "linear":
            real = max(real, 0.0)
            i = min(int(np.floor(real)), n_in - 1)
            lam = min(max(real - i, 0.0), 1.0)
            taps.append([(i, 1 - lam), (i + (1 if i < n_in - 1 else 0), lam)])
        else:
            i = int(np.floor(real))
            t = real - i
            A = -0.75

            def c1(x):
                return ((A + 2) * x - (A + 3)) * x * x + 1

            def c2(x):
                return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A
            w = [c2(t + 1), c1(t), c1(1 - t), c2(2 - t)]
            taps.append([(min(max(i - 1 + j, 0), n_in - 1), w[j]) for j in range(4)])
    return taps


def np_interp(x, out_sizes, mode, align=False):
    """separable interpolation: one matrix product per spatial dim"""
    y = x.astype(np.float64)
    nsp = len(out_sizes)
    kind = "linear" if mode in ("linear", "bilinear", "trilinear") else "cubic" if mode == "bicubic" else mode
    for k in range(nsp):
        ax = x.ndim - nsp + k
        n_in = y.shape[ax]
        M = np.zeros((out_sizes[k], n_in))
        for o, taps in enumerate(_taps(n_in, out_sizes[k], kind, align)):
            for i, w in taps:
                M[o, i] += w
        y = np.moveaxis(np.tensordot(M, np.moveaxis(y, ax, 0), axes=(1, 0)), 0, ax)
    return y


CASES = [
    ("nearest", (2, 3, 5), (9,)), ("nearest", (2, 3, 4, 5), (8, 3)), ("nearest", (1, 2, 3, 4, 2), (5, 7, 4)),
    ("nearest-exact", (2, 3, 5), (7,)), ("nearest-exact", (2, 2, 4, 5), (3, 9)),
    ("nearest-exact", (1, 2, 3, 4, 2), (5, 2, 3)),
    ("linear", (2, 3, 5), (11,)), ("linear", (2, 3, 7), (3,)), ("bilinear", (2, 3, 4, 5), (7, 3)),
    ("bilinear", (1, 1, 6, 6), (6, 6)), ("trilinear", (1, 2, 3, 4, 2), (5, 7, 4)),
    ("bicubic", (2, 3, 4, 5), (9, 4)), ("bicubic", (1, 2, 7, 3), (3, 8)),
]


@pytest.mark.parametrize("mode,shape,size", CASES)
@pytest.mark.parametrize("align", [False, True])
def test_interpolate_numpy(mode, shape, size, align):
    if align and mode.startswith("nearest"):
        pytest.skip("align_corners applies to the interpolating modes")
    x = R.standard_normal(shape)
    ac = align if not mode.startswith("nearest") else None
    y = F.interpolate(torchlet.tensor(x), size=size, mode=mode, align_corners=ac)
    np.testing.assert_allclose(_n(y), np_interp(x, size, mode, align), rtol=1e-12, atol=1e-12)
    y32 = F.interpolate(torchlet.tensor(x.astype(np.float32)), size=size, mode=mode, align_corners=ac)
    assert y32.dtype == torchlet.float32
    np.testing.assert_allclose(_n(y32), np_interp(x, size, mode, align), rtol=1e-5, atol=1e-5)


def test_noncontiguous_and_dtypes():
    x = R.standard_normal((3, 2, 6, 5))
    t = torchlet.tensor(x).transpose(0, 1)
    y = F.interpolate(t, size=(4, 9), mode="bilinear")
    np.testing.assert_allclose(_n(y), np_interp(x.transpose(1, 0, 2, 3), (4, 9), "bilinear"), rtol=1e-12)
    xi = R.integers(0, 255, (2, 3, 4, 5)).astype(np.uint8)
    yi = F.interpolate(torchlet.tensor(xi), scale_factor=2)
    assert yi.dtype == torchlet.uint8
    np.testing.assert_array_equal(_n(yi), xi.repeat(2, axis=2).repeat(2, axis=3))
    yh = F.interpolate(torchlet.tensor(x.astype(np.float16)), size=(7, 7), mode="bicubic")
    assert yh.dtype == torchlet.float16
    np.testing.assert_allclose(_n(yh).astype(np.float64), np_interp(x, (7, 7), "bicubic"), rtol=1e-2, atol=1e-2)
    e = F.interpolate(torchlet.zeros(0, 3, 4, 5), size=(2, 2), mode="bilinear")
    assert tuple(e.shape) == (0, 3, 2, 2)


@pytest.mark.parametrize("mode,shape,size", CASES)
def test_backward_numpy(mode, shape, size):
    """the gradient is the transposed interpolation matrix applied to grad"""
    x = R.standard_normal(shape)
    g = R.standard_normal(shape[:2] + tuple(size))
    t = torchlet.tensor(x, requires_grad=True)
    ac = None if mode.startswith("nearest") else False
    F.interpolate(t, size=size, mode=mode, align_corners=ac).backward(torchlet.tensor(g))
    # <grad, interp(e_i)> for every basis input: through the numpy forward
    ref = np.zeros(x.size)
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = 1
        ref[i] = (np_interp(e.reshape(shape), size, mode) * g).sum()
    np.testing.assert_allclose(_n(t.grad).ravel(), ref, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("mode,shape,size", [c for c in CASES if c[1][0] * c[1][1] <= 6])
def test_gradcheck(mode, shape, size):
    ac = None if mode.startswith("nearest") else True
    x = torchlet.tensor(R.standard_normal(shape), requires_grad=True)
    assert gradcheck(lambda a: F.interpolate(a, size=size, mode=mode, align_corners=ac), [x])


def test_ops_and_vec_overloads():
    x = torchlet.tensor(R.standard_normal((2, 3, 4, 5)))
    a = torchlet._C._nn.upsample_bilinear2d(x, [6, 7], False)
    b = torchlet._C._nn.upsample_bilinear2d(x, None, False, [1.5, 1.4])
    assert tuple(a.shape) == tuple(b.shape) == (2, 3, 6, 7)
    g = torchlet._C._nn.upsample_bilinear2d_backward(a, [6, 7], [2, 3, 4, 5], False)
    assert tuple(g.shape) == (2, 3, 4, 5)
    n = torchlet._C._nn.upsample_nearest1d(x[0], [10])
    np.testing.assert_array_equal(_n(n), _n(x[0]).repeat(2, axis=-1))


def test_errors():
    x = torchlet.randn(1, 2, 3, 4)
    with pytest.raises(ValueError, match="align_corners option can only be set"):
        F.interpolate(x, size=3, align_corners=True)
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        F.interpolate(x, size=3, scale_factor=2)
    with pytest.raises(ValueError, match="either size or scale_factor"):
        F.interpolate(x)
    with pytest.raises(NotImplementedError, match="Got 4D input, but linear mode needs 3D input"):
        F.interpolate(x, size=3, mode="linear")
    with pytest.raises(RuntimeError, match="Input and output sizes should be greater than 0"):
        torchlet._C._nn.upsample_bilinear2d(x, [0, 2], False)
    with pytest.raises(RuntimeError, match="Expected grad_output to have the same shape as output"):
        torchlet._C._nn.upsample_nearest2d_backward(x, [3, 3], [1, 2, 3, 4])
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        torchlet._C._nn.upsample_bilinear2d(torchlet.ones(1, 1, 2, 2, dtype=torchlet.int64), [3, 3], False)


def test_modules_and_aliases():
    x = torchlet.randn(1, 2, 3, 4)
    m = nn.Upsample(scale_factor=2, mode="bilinear")
    assert repr(m) == "Upsample(scale_factor=2.0, mode='bilinear')"
    assert tuple(m(x).shape) == (1, 2, 6, 8)
    assert repr(nn.UpsamplingNearest2d(size=(5, 5))) == "UpsamplingNearest2d(size=(5, 5), mode='nearest')"
    up = nn.UpsamplingBilinear2d(scale_factor=2)(x)
    np.testing.assert_allclose(_n(up), np_interp(_n(x), (6, 8), "bilinear", True), rtol=1e-5, atol=1e-6)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        F.upsample_nearest(x, scale_factor=2)
    assert "upsample_nearest` is deprecated" in str(w[0].message)


# ------------------------------------------------------------------ against torch

TORCH_CASES = [
    ("nearest", (2, 3, 5), dict(scale_factor=1.7)), ("nearest", (2, 3, 4, 5), dict(size=(7, 3))),
    ("nearest", (1, 2, 3, 4, 2), dict(scale_factor=(1.5, 0.7, 2.3))),
    ("nearest-exact", (2, 3, 5), dict(scale_factor=0.6)), ("nearest-exact", (2, 3, 4, 5), dict(size=(9, 2))),
    ("nearest-exact", (1, 2, 3, 4, 2), dict(size=(5, 5, 5))),
    ("linear", (2, 3, 5), dict(scale_factor=2.5)), ("linear", (2, 3, 5), dict(size=5, align_corners=True)),
    ("bilinear", (2, 3, 4, 5), dict(scale_factor=(1.3, 0.6))), ("bilinear", (2, 3, 4, 5), dict(size=(4, 5))),
    ("bilinear", (2, 3, 4, 5), dict(scale_factor=1.1, recompute_scale_factor=False)),
    ("bilinear", (2, 3, 4, 5), dict(scale_factor=1.7, recompute_scale_factor=True, align_corners=True)),
    ("bicubic", (2, 3, 4, 5), dict(scale_factor=2.2)), ("bicubic", (2, 3, 6, 5), dict(size=(3, 4), align_corners=True)),
    ("trilinear", (1, 2, 3, 4, 2), dict(scale_factor=1.6)), ("trilinear", (1, 2, 3, 4, 2), dict(size=(2, 6, 3),
                                                                                              align_corners=True)),
    ("bicubic", (1, 2, 3, 5), dict(scale_factor=1.1, recompute_scale_factor=False)),
    ("nearest", (1, 2, 3, 2), dict(scale_factor=2.3)), ("linear", (1, 2, 3), dict(scale_factor=1.1)),
    ("area", (2, 3, 8), dict(size=3)), ("area", (2, 3, 6, 7), dict(scale_factor=0.5)),
]


@pytest.mark.parametrize("mode,shape,kw", TORCH_CASES)
@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_against_torch(mode, shape, kw, dt):
    torch = pytest.importorskip("torch")
    x = R.standard_normal(shape).astype(dt)
    g = None
    tx = torch.tensor(x, requires_grad=True)
    ty = torch.nn.functional.interpolate(tx, mode=mode, **kw)
    g = R.standard_normal(tuple(ty.shape)).astype(dt)
    ty.backward(torch.tensor(g))
    lx = torchlet.tensor(x, requires_grad=True)
    ly = F.interpolate(lx, mode=mode, **kw)
    ly.backward(torchlet.tensor(g))
    tol = 1e-12 if dt == "float64" else 1e-5
    assert tuple(ly.shape) == tuple(ty.shape)
    np.testing.assert_allclose(_n(ly), ty.detach().numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(_n(lx.grad), tx.grad.numpy(), rtol=tol, atol=tol)
