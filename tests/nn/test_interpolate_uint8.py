"""uint8 bilinear / bicubic interpolation (F.interpolate on uint8 images):
PyTorch's fixed-point resampler. Exact against torch where installed (sizes,
scale factors, align_corners, channel counts on both sides of PyTorch's
4-channel vector path, non-contiguous inputs); always within one of the
float computation rounded (numpy-free: torchlet's own float path)."""
import numpy as np
import pytest

import torchlet
import torchlet.nn.functional as F

R = np.random.default_rng(20261208)


def _torch():
    return pytest.importorskip("torch")


def _n(t):
    return np.asarray(t.numpy())


CASES = [  # input shape, kwargs
    ((1, 3, 8, 9), {"size": (16, 13)}),
    ((2, 3, 10, 12), {"size": (5, 7)}),
    ((1, 5, 7, 6), {"size": (11, 4)}),
    ((2, 1, 9, 9), {"scale_factor": 1.7}),
    ((1, 4, 6, 11), {"scale_factor": (0.6, 2.3)}),
    ((1, 3, 12, 10), {"size": (12, 23)}),
    ((1, 2, 1, 5), {"size": (4, 1)}),
    ((1, 6, 31, 17), {"size": (9, 40)}),
]


@pytest.mark.parametrize("shape, kw", CASES)
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_uint8_interpolate_against_torch(shape, kw, mode, align_corners):
    torch = _torch()
    x = R.integers(0, 256, shape).astype(np.uint8)
    want = torch.nn.functional.interpolate(torch.tensor(x), mode=mode, align_corners=align_corners, **kw)
    got = F.interpolate(torchlet.tensor(x), mode=mode, align_corners=align_corners, **kw)
    assert got.dtype == torchlet.uint8
    np.testing.assert_array_equal(_n(got), want.numpy())
    # non-contiguous (channels-last strides) input
    xt = torchlet.tensor(np.ascontiguousarray(x.transpose(0, 2, 3, 1))).permute(0, 3, 1, 2)
    np.testing.assert_array_equal(_n(F.interpolate(xt, mode=mode, align_corners=align_corners, **kw)), want.numpy())


@pytest.mark.parametrize("shape, kw", CASES)
def test_uint8_bilinear_near_float(shape, kw):
    x = R.integers(0, 256, shape).astype(np.uint8)
    got = _n(F.interpolate(torchlet.tensor(x), mode="bilinear", **kw)).astype(np.int64)
    ref = _n(F.interpolate(torchlet.tensor(x.astype(np.float64)), mode="bilinear", **kw))
    assert np.abs(got - np.clip(np.round(ref), 0, 255)).max() <= 1


def test_uint8_same_size_is_a_copy():
    x = R.integers(0, 256, (1, 3, 5, 6)).astype(np.uint8)
    for mode in ("bilinear", "bicubic"):
        np.testing.assert_array_equal(_n(F.interpolate(torchlet.tensor(x), size=(5, 6), mode=mode)), x)


def test_uint8_upsample_bilinear_alias():
    torch = _torch()
    x = R.integers(0, 256, (1, 3, 5, 6)).astype(np.uint8)
    with pytest.warns(UserWarning):
        want = torch.nn.functional.upsample_bilinear(torch.tensor(x), scale_factor=2)
    with pytest.warns(UserWarning):
        got = F.upsample_bilinear(torchlet.tensor(x), scale_factor=2)
    np.testing.assert_array_equal(_n(got), want.numpy())
