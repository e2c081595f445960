"""gradcheck inputs for the 3-d pooling, fold / unfold, max_unpool,
embedding_bag and multilabel_margin_loss block of yaml/derivatives.yaml,
merged into test_gradcheck_yaml.CASES. Pooled inputs have distinct values
(no tied maxima); the unpooling indices are those of a max pool, so no two
inputs share an output."""
import numpy as np

import torchlet

R = np.random.default_rng(3303)


def rn(*shape):
    return R.standard_normal(shape)


def _distinct(*shape):
    return R.permutation(np.arange(int(np.prod(shape)), dtype=np.float64)).reshape(shape) * 0.1 + R.uniform(0, 0.01, shape)


def _nn():
    return torchlet._C._nn


_X3 = _distinct(1, 2, 5, 4, 6)


def _ind3(x, *args):
    return _nn().max_pool3d_with_indices(torchlet.tensor(x), *args)[1]


def _ind2(x, *args):
    return _nn().max_pool2d_with_indices(torchlet.tensor(x), *args)[1]


_XP2 = _distinct(2, 3, 6, 4)
_XP3 = _distinct(1, 2, 4, 4, 6)
_MLM_T = np.array([[3, 0, -1, 1], [1, 2, 3, -1], [0, -1, 2, 1]])
_EB_I = np.array([1, 4, 2, 2, 0, 3, 4, 1])
_EB_O = np.array([0, 3, 3, 6])

NN3D_CASES = {
    "max_pool3d_with_indices": [
        ([_distinct(1, 2, 5, 4, 6)], lambda x: _nn().max_pool3d_with_indices(x, [3, 2, 2], [2, 1, 2], [1, 1, 0],
                                                                            [1, 1, 1], False)[0]),
        ([_distinct(2, 4, 5, 5)], lambda x: _nn().max_pool3d_with_indices(x, 2, [], 0, [1, 2, 1], True)[0])],
    "max_pool3d_with_indices_backward": [
        ([rn(1, 2, 3, 5, 3), _X3], lambda g, x: _nn().max_pool3d_with_indices_backward(
            g, x, [3, 2, 2], [2, 1, 2], [1, 1, 0], [1, 1, 1], False,
            _ind3(_X3, [3, 2, 2], [2, 1, 2], [1, 1, 0], [1, 1, 1], False)))],
    "avg_pool3d": [
        ([rn(1, 2, 5, 4, 6)], lambda x: _nn().avg_pool3d(x, [3, 2, 2], [2, 1, 2], [1, 1, 0], True, False)),
        ([rn(2, 4, 5, 5)], lambda x: _nn().avg_pool3d(x, 2, [], 1, False, True, 3))],
    "avg_pool3d_backward": [
        ([rn(1, 2, 3, 5, 3), rn(1, 2, 5, 4, 6)], lambda g, x: _nn().avg_pool3d_backward(
            g, x, [3, 2, 2], [2, 1, 2], [1, 1, 0], True, False, None))],
    "adaptive_max_pool3d": [([_distinct(1, 2, 5, 4, 6)], lambda x: _nn().adaptive_max_pool3d(x, [2, 3, 4])[0])],
    "adaptive_max_pool3d_backward": [
        ([rn(1, 2, 2, 3, 4), _X3], lambda g, x: _nn().adaptive_max_pool3d_backward(
            g, x, _nn().adaptive_max_pool3d(torchlet.tensor(_X3), [2, 3, 4])[1]))],
    "im2col": [([rn(2, 3, 5, 6)], lambda x: _nn().im2col(x, [2, 3], [1, 2], [1, 0], [2, 1])),
               ([rn(2, 4, 5)], lambda x: _nn().im2col(x, [3, 3], [1, 1], [1, 1], [1, 1]))],
    "col2im": [([rn(2, 12, 12)], lambda x: _nn().col2im(x, [5, 6], [2, 2], [1, 2], [1, 0], [2, 1]))],
    "max_unpool2d": [([rn(2, 3, 3, 2)], lambda x: _nn().max_unpool2d(x, _ind2(_XP2, 2, [], 0, 1, False), [6, 4]))],
    "max_unpool3d": [([rn(1, 2, 2, 2, 3)], lambda x: _nn().max_unpool3d(
        x, _ind3(_XP3, 2, [], 0, 1, False), [4, 4, 6], [2, 2, 2], [0, 0, 0]))],
    "multilabel_margin_loss_forward": [
        ([rn(3, 4)], lambda x: _nn().multilabel_margin_loss_forward(x, torchlet.tensor(_MLM_T), 1)[0]),
        ([rn(3, 4)], lambda x: _nn().multilabel_margin_loss_forward(x, torchlet.tensor(_MLM_T), 0)[0]),
        ([rn(4)], lambda x: _nn().multilabel_margin_loss_forward(x, torchlet.tensor(_MLM_T[0]), 2)[0])],
    "_embedding_bag": [
        ([rn(5, 3)], lambda w: torchlet._embedding_bag(w, torchlet.tensor(_EB_I), torchlet.tensor(_EB_O),
                                                       False, 0)[0]),
        ([rn(5, 3)], lambda w: torchlet._embedding_bag(w, torchlet.tensor(_EB_I), torchlet.tensor(_EB_O),
                                                       False, 1, False, None, False, 2)[0]),
        ([_distinct(5, 3)], lambda w: torchlet._embedding_bag(w, torchlet.tensor(_EB_I), torchlet.tensor(_EB_O),
                                                              False, 2)[0]),
        ([rn(5, 3), rn(8)], lambda w, p: torchlet._embedding_bag(w, torchlet.tensor(_EB_I), torchlet.tensor(_EB_O),
                                                                 False, 0, False, p, False, 4)[0])],
}
