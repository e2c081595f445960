"""PyTorch's Python (torch/nn/functional.py, torch/nn/modules/pooling.py) for
fractional max pooling over the operators of kernels/native/fractional_pool.c:
F.fractional_max_pool2d/3d (+ `_with_indices`), FractionalMaxPool2d/3d.
Argument handling, the `_random_samples` draw and messages as PyTorch's.
Re-exported by torchlet.nn.functional and torchlet.nn."""
from __future__ import annotations

import torchlet
from torchlet._function_mode import GO as _GO, handle as _tf, watch as _tf_watch
from torchlet._generated import _nn

from .modules import Module

_TF = 0  # active torch-function modes (torchlet._function_mode)
_tf_watch(globals())


def _ntuple(x, n):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,) * n


def _samples(input, planes_dim, n):
    """PyTorch's draw: one uniform [0, 1) sample per (batch, plane, dim) in the input's dtype."""
    n_batch = 1 if input.dim() == planes_dim + 1 else input.size(0)
    return torchlet.rand(n_batch, input.size(-planes_dim - 1), n, dtype=input.dtype, device=input.device)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    if _TF and (r_ := _tf(fractional_max_pool2d_with_indices, locals())) is not _GO:
        return r_
    if output_size is None and output_ratio is None:
        raise ValueError("fractional_max_pool2d requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if len(output_ratio) > 2:  # a float raises TypeError here, as in PyTorch
            raise ValueError("fractional_max_pool2d requires output_ratio to either be a single Int or tuple of Ints.")
        _output_ratio = _ntuple(output_ratio, 2)
        output_size = [int(input.size(-2) * _output_ratio[0]), int(input.size(-1) * _output_ratio[1])]
    if _random_samples is None:
        _random_samples = _samples(input, 2, 2)
    return _nn.fractional_max_pool2d(input, kernel_size, output_size, _random_samples)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    if _TF and (r_ := _tf(fractional_max_pool2d, locals())) is not _GO:
        return r_
    r = fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio, return_indices,
                                           _random_samples)
    return r if return_indices else r[0]


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    if _TF and (r_ := _tf(fractional_max_pool3d_with_indices, locals())) is not _GO:
        return r_
    if output_size is None and output_ratio is None:
        raise ValueError("fractional_max_pool3d requires specifying either an output_size or an output_ratio")
    if output_size is None:
        _output_ratio = _ntuple(output_ratio, 3)
        output_size = [int(input.size(-3) * _output_ratio[0]), int(input.size(-2) * _output_ratio[1]),
                       int(input.size(-1) * _output_ratio[2])]
    if _random_samples is None:
        _random_samples = _samples(input, 3, 3)
    return _nn.fractional_max_pool3d(input, kernel_size, output_size, _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    if _TF and (r_ := _tf(fractional_max_pool3d, locals())) is not _GO:
        return r_
    r = fractional_max_pool3d_with_indices(input, kernel_size, output_size, output_ratio, return_indices,
                                           _random_samples)
    return r if return_indices else r[0]


class _FractionalMaxPoolNd(Module):
    n = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None):
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, self.n)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _ntuple(output_size, self.n) if output_size is not None else None
        self.output_ratio = _ntuple(output_ratio, self.n) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"FractionalMaxPool{self.n}d requires specifying either an output size, or a pooling "
                             "ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        fn = fractional_max_pool2d if self.n == 2 else fractional_max_pool3d
        return fn(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                  _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    n = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    n = 3

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None):
        if (isinstance(kernel_size, int) and kernel_size <= 0) or (
                isinstance(kernel_size, (tuple, list)) and not all(k > 0 for k in kernel_size)):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        super().__init__(kernel_size, output_size, output_ratio, return_indices, _random_samples)
