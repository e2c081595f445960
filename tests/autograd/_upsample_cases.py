"""gradcheck inputs for the upsampling block of yaml/derivatives.yaml
(upsample_* and their _backward, pixel_shuffle / pixel_unshuffle,
channel_shuffle, _adaptive_avg_pool3d and its backward), merged into
test_gradcheck_yaml.CASES."""
import numpy as np

import torchlet

R = np.random.default_rng(2026)


def rn(*shape):
    return R.standard_normal(shape)


def _nn():
    return torchlet._C._nn


def _case(name, nsp, extra):
    """forward on a small input, its backward on a grad of the output's shape;
    the scale arguments (None) follow `extra` (align_corners or nothing)"""
    ins = {1: (2, 3, 4), 2: (1, 2, 3, 4), 3: (1, 2, 2, 3, 2)}[nsp]
    outs = {1: [7], 2: [5, 3], 3: [3, 2, 4]}[nsp]
    fwd = getattr(_nn(), name)
    bwd = getattr(_nn(), name + "_backward")
    full = list(ins[:2]) + outs
    return {
        name: [([rn(*ins)], lambda x: fwd(x, outs, *extra))],
        name + "_backward": [([rn(*full)], lambda g: bwd(g, outs, list(ins), *extra))],
    }


UPSAMPLE_CASES = {}
for _n, _d in (("upsample_nearest", 0), ("_upsample_nearest_exact", 0)):
    for _k in (1, 2, 3):
        UPSAMPLE_CASES.update(_case(f"{_n}{_k}d", _k, ()))
for _n, _k in (("upsample_linear1d", 1), ("upsample_bilinear2d", 2), ("upsample_bicubic2d", 2),
               ("upsample_trilinear3d", 3)):
    UPSAMPLE_CASES.update(_case(_n, _k, (True,)))
UPSAMPLE_CASES.update({
    "pixel_shuffle": [([rn(2, 8, 2, 3)], lambda x: torchlet.pixel_shuffle(x, 2))],
    "pixel_unshuffle": [([rn(1, 2, 4, 6)], lambda x: torchlet.pixel_unshuffle(x, 2))],
    "channel_shuffle": [([rn(2, 6, 3)], lambda x: torchlet.channel_shuffle(x, 3))],
    "_adaptive_avg_pool3d": [([rn(1, 2, 3, 5, 4)], lambda x: torchlet._adaptive_avg_pool3d(x, [2, 3, 3]))],
    "_adaptive_avg_pool3d_backward": [
        ([rn(1, 2, 2, 3, 3), rn(1, 2, 3, 5, 4)], lambda g, x: _nn()._adaptive_avg_pool3d_backward(g, x))],
})
