"""pixel_shuffle / pixel_unshuffle / channel_shuffle (+ nn.PixelShuffle /
PixelUnshuffle / ChannelShuffle), adaptive_avg_pool3d (+ AdaptiveAvgPool3d):
against a numpy reshape / transpose always, against torch where installed
(values, messages), float64 gradients through the gradcheck helper."""
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


def np_pixel_shuffle(x, r):
    *b, c, h, w = x.shape
    y = x.reshape(*b, c // (r * r), r, r, h, w)
    nb = len(b)
    y = y.transpose(*range(nb), nb, nb + 3, nb + 1, nb + 4, nb + 2)
    return y.reshape(*b, c // (r * r), h * r, w * r)


def np_pixel_unshuffle(x, r):
    *b, c, h, w = x.shape
    y = x.reshape(*b, c, h // r, r, w // r, r)
    nb = len(b)
    y = y.transpose(*range(nb), nb, nb + 2, nb + 4, nb + 1, nb + 3)
    return y.reshape(*b, c * r * r, h // r, w // r)


@pytest.mark.parametrize("shape,r", [((1, 4, 2, 3), 2), ((2, 3, 18, 2, 5), 3), ((9, 1, 1), 3), ((0, 4, 2, 2), 2)])
def test_pixel_shuffle_numpy(shape, r):
    x = R.standard_normal(shape)
    y = F.pixel_shuffle(torchlet.tensor(x), r)
    np.testing.assert_array_equal(y.numpy(), np_pixel_shuffle(x, r))
    back = F.pixel_unshuffle(y, r)
    np.testing.assert_array_equal(back.numpy(), x)
    np.testing.assert_array_equal(back.numpy(), np_pixel_unshuffle(np_pixel_shuffle(x, r), r))


def test_noncontiguous_and_ints():
    x = R.integers(0, 100, (2, 4, 6, 3)).astype(np.int32)
    t = torchlet.tensor(x).transpose(2, 3)
    np.testing.assert_array_equal(F.pixel_shuffle(t, 2).numpy(), np_pixel_shuffle(x.transpose(0, 1, 3, 2), 2))
    np.testing.assert_array_equal(F.pixel_unshuffle(t, 3).numpy(), np_pixel_unshuffle(x.transpose(0, 1, 3, 2), 3))


def test_gradcheck():
    x = torchlet.tensor(R.standard_normal((2, 8, 2, 3)), requires_grad=True)
    assert gradcheck(lambda a: F.pixel_shuffle(a, 2), [x])
    y = torchlet.tensor(R.standard_normal((1, 2, 4, 6)), requires_grad=True)
    assert gradcheck(lambda a: F.pixel_unshuffle(a, 2), [y])


def test_errors_and_modules():
    x = torchlet.randn(1, 3, 4, 4)
    with pytest.raises(RuntimeError, match="divisible by the square of upscale_factor"):
        F.pixel_shuffle(x, 2)
    with pytest.raises(RuntimeError, match="at least 3 dimensions"):
        F.pixel_unshuffle(torchlet.randn(4, 4), 2)
    with pytest.raises(RuntimeError, match="expects height to be divisible"):
        F.pixel_unshuffle(torchlet.randn(1, 3, 3, 4), 2)
    assert repr(nn.PixelShuffle(3)) == "PixelShuffle(upscale_factor=3)"
    assert repr(nn.PixelUnshuffle(2)) == "PixelUnshuffle(downscale_factor=2)"
    assert tuple(nn.PixelUnshuffle(2)(x).shape) == (1, 12, 2, 2)


def test_against_torch():
    torch = pytest.importorskip("torch")
    x = R.standard_normal((2, 3, 8, 4, 6))
    for fn, r in (("pixel_shuffle", 2), ("pixel_unshuffle", 2)):
        np.testing.assert_array_equal(getattr(torchlet, fn)(torchlet.tensor(x), r).numpy(),
                                      getattr(torch, fn)(torch.tensor(x), r).numpy())
    for bad in ((torchlet.randn(1, 3, 4, 4), torch.randn(1, 3, 4, 4)),):
        with pytest.raises(RuntimeError) as e1:
            F.pixel_shuffle(bad[0], 0)
        with pytest.raises(RuntimeError) as e2:
            torch.nn.functional.pixel_shuffle(bad[1], 0)
        assert str(e1.value) == str(e2.value)


@pytest.mark.parametrize("shape,g", [((2, 6, 3, 4), 3), ((1, 4, 5), 2), ((3, 6, 1, 2, 2), 6), ((0, 4, 2), 2)])
def test_channel_shuffle_numpy(shape, g):
    x = R.standard_normal(shape)
    y = F.channel_shuffle(torchlet.tensor(x), g)
    n, c = shape[:2]
    ref = x.reshape(n, g, c // g, *shape[2:]).swapaxes(1, 2).reshape(shape)
    np.testing.assert_array_equal(y.numpy(), ref)
    t = torchlet.tensor(R.standard_normal((2, 6, 3)), requires_grad=True)
    assert gradcheck(lambda a: F.channel_shuffle(a, 3), [t])


def test_channel_shuffle_errors_module():
    with pytest.raises(RuntimeError, match="Number of channels must be divisible by groups. Got 5 channels and 2"):
        F.channel_shuffle(torchlet.randn(1, 5, 2), 2)
    with pytest.raises(RuntimeError, match="at least 3 dimensions"):
        F.channel_shuffle(torchlet.randn(4, 4), 2)
    assert repr(nn.ChannelShuffle(2)) == "ChannelShuffle(groups=2)"
    torch = pytest.importorskip("torch")
    x = R.standard_normal((2, 6, 3, 4))
    np.testing.assert_array_equal(nn.ChannelShuffle(2)(torchlet.tensor(x)).numpy(),
                                  torch.nn.ChannelShuffle(2)(torch.tensor(x)).numpy())


def np_adaptive_avg_pool3d(x, os_):
    *b, T, H, W = x.shape
    y = np.zeros((*b, *os_))
    for ot in range(os_[0]):
        t0, t1 = ot * T // os_[0], -(-(ot + 1) * T // os_[0])
        for oh in range(os_[1]):
            h0, h1 = oh * H // os_[1], -(-(oh + 1) * H // os_[1])
            for ow in range(os_[2]):
                w0, w1 = ow * W // os_[2], -(-(ow + 1) * W // os_[2])
                y[..., ot, oh, ow] = x[..., t0:t1, h0:h1, w0:w1].mean(axis=(-1, -2, -3))
    return y


@pytest.mark.parametrize("shape,os_", [((2, 3, 5, 7, 6), (2, 3, 4)), ((3, 4, 4, 5), (3, 2, 7)),
                                       ((1, 2, 3, 3, 3), (1, 1, 1))])
def test_adaptive_avg_pool3d(shape, os_):
    x = R.standard_normal(shape)
    y = F.adaptive_avg_pool3d(torchlet.tensor(x), os_)
    np.testing.assert_allclose(y.numpy(), np_adaptive_avg_pool3d(x, os_), rtol=1e-12, atol=1e-14)
    y32 = nn.AdaptiveAvgPool3d(os_)(torchlet.tensor(x.astype(np.float32)).transpose(-1, -2))
    np.testing.assert_allclose(y32.numpy(), np_adaptive_avg_pool3d(x.swapaxes(-1, -2), os_), rtol=1e-5, atol=1e-6)
    t = torchlet.tensor(R.standard_normal((1, 2, 3, 4, 3)), requires_grad=True)
    assert gradcheck(lambda a: F.adaptive_avg_pool3d(a, (2, 3, 2)), [t])


def test_adaptive_avg_pool3d_errors():
    with pytest.raises(RuntimeError, match="output_size must be 3"):
        torchlet._C._nn.adaptive_avg_pool3d(torchlet.randn(1, 2, 3, 3, 3), [2, 2])
    with pytest.raises(ValueError, match="Input dimension should be at least 4"):
        F.adaptive_avg_pool3d(torchlet.randn(2, 3, 3), (1, 2, 2))
    with pytest.raises(RuntimeError, match="Expected 4D or 5D tensor"):
        torchlet._C._nn.adaptive_avg_pool3d(torchlet.randn(2, 3, 3), [1, 2, 2])
    with pytest.raises(RuntimeError, match="non-zero size for non-batch dimensions"):
        F.adaptive_avg_pool3d(torchlet.randn(1, 0, 3, 3, 3), 2)
    assert repr(nn.AdaptiveAvgPool3d((2, None, 3))) == "AdaptiveAvgPool3d(output_size=(2, None, 3))"


# ------------------------------------------------------------------ channel-wise and alpha dropout


def test_feature_dropout_channels():
    torchlet.manual_seed(3)
    x = torchlet.tensor(R.standard_normal((4, 8, 3, 5)))
    y = F.dropout2d(x, 0.5).numpy()
    xn = x.numpy()
    for n in range(4):
        for c in range(8):
            # each channel is wholly dropped or wholly scaled by 1 / (1 - p)
            assert np.allclose(y[n, c], 0) or np.allclose(y[n, c], 2 * xn[n, c])
    with pytest.warns(UserWarning, match="Received a 3-D input to dropout3d"):
        assert F.dropout3d(x[0], 0.3, training=False) is not None
    np.testing.assert_array_equal(F.dropout1d(x[0, :, 0], 0.4, training=False).numpy(), xn[0, :, 0])
    assert tuple(F.dropout3d(torchlet.ones(2, 3, 2, 2), 0.5).shape) == (2, 3, 2, 2)


def test_alpha_dropout_statistics():
    torchlet.manual_seed(4)
    x = torchlet.tensor(R.standard_normal(200000))
    y = F.alpha_dropout(x, 0.3, training=True).numpy()
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02  # SELU's fixed point kept
    f = F.feature_alpha_dropout(torchlet.ones(4, 6, 3, 3), 0.5, True).numpy()
    a = 1 / np.sqrt((1.7580993408473766 ** 2 * 0.5 + 1) * 0.5)
    np.testing.assert_allclose(np.unique(f), sorted([a + 1.7580993408473766 * a * 0.5,
                                                     -1.7580993408473766 * a * 0.5]), rtol=1e-6)
    np.testing.assert_array_equal(F.alpha_dropout(torchlet.ones(5), 1.0, True).numpy(), np.zeros(5))


def test_dropout_nd_checks_modules():
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        F.dropout2d(torchlet.ones(2, 2, 2), 1.5)
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input"):
        F.dropout1d(torchlet.ones(2, 2, 2, 2))
    with pytest.warns(UserWarning, match="Received a 3D input to dropout2d"):
        F.dropout2d(torchlet.ones(2, 2, 2))
    assert repr(nn.Dropout2d(0.2)) == "Dropout2d(p=0.2, inplace=False)"
    m = nn.AlphaDropout(0.5)
    m.eval()
    x = torchlet.randn(3, 4)
    np.testing.assert_array_equal(m(x).numpy(), x.numpy())
    for cls in (nn.Dropout1d, nn.Dropout3d, nn.FeatureAlphaDropout):
        assert repr(cls(0.1)) == f"{cls.__name__}(p=0.1, inplace=False)"


# ------------------------------------------------------------------ bilinear


def test_bilinear_numpy_grad():
    x1, x2 = R.standard_normal((2, 3, 4)), R.standard_normal((2, 3, 5))
    w, b = R.standard_normal((6, 4, 5)), R.standard_normal(6)
    y = F.bilinear(torchlet.tensor(x1), torchlet.tensor(x2), torchlet.tensor(w), torchlet.tensor(b))
    np.testing.assert_allclose(y.numpy(), np.einsum("...i,oij,...j->...o", x1, w, x2) + b, rtol=1e-12, atol=1e-12)
    yi = torchlet.bilinear(torchlet.ones(2, 3, dtype=torchlet.int32), torchlet.ones(2, 2, dtype=torchlet.int32),
                           torchlet.ones(4, 3, 2, dtype=torchlet.int32))
    assert yi.dtype == torchlet.int32 and int(yi[0, 0]) == 6
    ts = [torchlet.tensor(R.standard_normal(s), requires_grad=True) for s in ((3, 2), (3, 4), (5, 2, 4), (5,))]
    assert gradcheck(lambda a, c, ww, bb: F.bilinear(a, c, ww, bb), ts)


def test_bilinear_errors_module():
    with pytest.raises(RuntimeError, match="input1 size does not match weight size: got 3 but expected 4"):
        F.bilinear(torchlet.randn(2, 3), torchlet.randn(2, 5), torchlet.randn(6, 4, 5))
    with pytest.raises(RuntimeError, match="input batch dimensions do not match: got 2 and 3"):
        F.bilinear(torchlet.randn(2, 4), torchlet.randn(3, 5), torchlet.randn(6, 4, 5))
    m = nn.Bilinear(3, 4, 5)
    assert repr(m) == "Bilinear(in1_features=3, in2_features=4, out_features=5, bias=True)"
    torch = pytest.importorskip("torch")
    t = torch.nn.Bilinear(3, 4, 5)
    t.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in m.state_dict().items()})
    x1, x2 = R.standard_normal((7, 3)).astype(np.float32), R.standard_normal((7, 4)).astype(np.float32)
    np.testing.assert_allclose(m(torchlet.tensor(x1), torchlet.tensor(x2)).detach().numpy(),
                               t(torch.tensor(x1), torch.tensor(x2)).detach().numpy(), rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------ triplet_margin_with_distance_loss


@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_triplet_margin_with_distance_loss(swap, reduction):
    a, p, n = (R.standard_normal((5, 4)) for _ in range(3))

    def dist(x, y):
        return np.sqrt(((x - y + 1e-6) ** 2).sum(-1))
    dn = np.minimum(dist(a, n), dist(p, n)) if swap else dist(a, n)
    ref = np.maximum(0.5 + dist(a, p) - dn, 0)
    ref = ref.mean() if reduction == "mean" else ref.sum() if reduction == "sum" else ref
    got = F.triplet_margin_with_distance_loss(torchlet.tensor(a), torchlet.tensor(p), torchlet.tensor(n),
                                              margin=0.5, swap=swap, reduction=reduction)
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-10)
    m = nn.TripletMarginWithDistanceLoss(distance_function=lambda x, y: (x - y).abs().sum(-1), margin=0.5,
                                         swap=swap, reduction=reduction)
    l1 = np.abs(a - p).sum(-1) + 0.5 - (np.minimum(np.abs(a - n).sum(-1), np.abs(p - n).sum(-1)) if swap
                                         else np.abs(a - n).sum(-1))
    l1 = np.maximum(l1, 0)
    l1 = l1.mean() if reduction == "mean" else l1.sum() if reduction == "sum" else l1
    np.testing.assert_allclose(m(torchlet.tensor(a), torchlet.tensor(p), torchlet.tensor(n)).numpy(), l1,
                               rtol=1e-10)
    ts = [torchlet.tensor(v, requires_grad=True) for v in (a, p, n)]
    assert gradcheck(lambda x, y, z: F.triplet_margin_with_distance_loss(x, y, z, swap=swap, reduction="sum"), ts)


def test_triplet_margin_with_distance_loss_errors():
    x = torchlet.randn(3, 2)
    with pytest.raises(ValueError, match="margin must be greater than 0, got 0"):
        F.triplet_margin_with_distance_loss(x, x, x, margin=0)
    with pytest.raises(RuntimeError, match="anchor 2D, positive 2D, and negative 1D inputs"):
        F.triplet_margin_with_distance_loss(x, x, x[0])
    with pytest.raises(ValueError, match="expected margin to be greater than 0"):
        nn.TripletMarginWithDistanceLoss(margin=-1)
