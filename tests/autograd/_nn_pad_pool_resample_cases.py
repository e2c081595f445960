"""gradcheck inputs for the NN block at the end of yaml/derivatives.yaml
(3-d reflection / replication padding, fractional max pooling, antialiased
upsampling), merged into test_gradcheck_yaml.CASES. Pooled inputs have
distinct values (no tied maxima); the fractional pools get fixed samples."""
import torchlet

from _nn3d_cases import R, _distinct, _nn, rn  # the same input builders


def _u(*shape):
    return torchlet.tensor(R.uniform(0, 1, shape))


_U2, _U3 = _u(2, 3, 2), _u(1, 2, 3)
_XF2, _XF3 = _distinct(2, 3, 7, 6), _distinct(1, 2, 5, 6, 7)


def _fmp2(x):
    return _nn().fractional_max_pool2d(torchlet.tensor(x), [2, 3], [4, 3], _U2)[1]


def _fmp3(x):
    return _nn().fractional_max_pool3d(torchlet.tensor(x), [2, 2, 3], [3, 4, 4], _U3)[1]


PAD_POOL_RESAMPLE_CASES = {
    "reflection_pad3d": [
        ([rn(1, 2, 3, 4, 5)], lambda x: _nn().reflection_pad3d(x, [2, 1, 3, 0, 1, 2])),
        ([rn(2, 4, 3, 5)], lambda x: _nn().reflection_pad3d(x.transpose(1, 3), [-1, 2, 1, 1, 0, -1]))],
    "replication_pad3d": [([rn(1, 2, 3, 4, 5)], lambda x: _nn().replication_pad3d(x, [2, 5, 3, -1, 0, 2]))],
    "reflection_pad3d_backward": [([rn(1, 2, 6, 7, 8), rn(1, 2, 3, 4, 5)], lambda g, x: _nn().reflection_pad3d_backward(
        g, x, [2, 1, 3, 0, 1, 2]))],
    "replication_pad3d_backward": [([rn(1, 2, 6, 7, 8), rn(1, 2, 3, 4, 5)],
                                    lambda g, x: _nn().replication_pad3d_backward(g, x, [2, 1, 3, 0, 1, 2]))],
    "fractional_max_pool2d": [([_distinct(2, 3, 7, 6)], lambda x: _nn().fractional_max_pool2d(x, [2, 3], [4, 3],
                                                                                            _U2)[0])],
    "fractional_max_pool3d": [([_distinct(1, 2, 5, 6, 7)], lambda x: _nn().fractional_max_pool3d(
        x, [2, 2, 3], [3, 4, 4], _U3)[0])],
    "fractional_max_pool2d_backward": [([rn(2, 3, 4, 3), _XF2], lambda g, x: _nn().fractional_max_pool2d_backward(
        g, x, [2, 3], [4, 3], _fmp2(_XF2)))],
    "fractional_max_pool3d_backward": [([rn(1, 2, 3, 4, 4), _XF3], lambda g, x: _nn().fractional_max_pool3d_backward(
        g, x, [2, 2, 3], [3, 4, 4], _fmp3(_XF3)))],
    "_upsample_bilinear2d_aa": [
        ([rn(2, 2, 9, 7)], lambda x: _nn()._upsample_bilinear2d_aa(x, [4, 11], False)),
        ([rn(1, 2, 6, 8)], lambda x: _nn()._upsample_bilinear2d_aa(x, [3, 3], True, 0.5, 0.4))],
    "_upsample_bicubic2d_aa": [([rn(2, 2, 9, 7)], lambda x: _nn()._upsample_bicubic2d_aa(x, [4, 11], False))],
    "_upsample_bilinear2d_aa_backward": [([rn(2, 2, 4, 11)], lambda g: _nn()._upsample_bilinear2d_aa_backward(
        g, [4, 11], [2, 2, 9, 7], False))],
    "_upsample_bicubic2d_aa_backward": [([rn(2, 2, 4, 11)], lambda g: _nn()._upsample_bicubic2d_aa_backward(
        g, [4, 11], [2, 2, 9, 7], False))],
}
