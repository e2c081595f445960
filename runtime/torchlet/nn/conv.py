"""Convolution layers as PyTorch's torch/nn/modules/conv.py: Conv1d / Conv2d /
Conv3d and ConvTranspose1d / ConvTranspose2d / ConvTranspose3d over the
``conv*`` / ``conv_transpose*`` operators (yaml block "convolution").

PyTorch's init (kaiming_uniform_ with a=sqrt(5), the bias from U(-1/sqrt(fan_in),
1/sqrt(fan_in))), argument checks, ``output_size=`` of the transposed layers
and ``extra_repr``. ``padding_mode`` 'reflect' / 'replicate' / 'circular' pad
with ``index_select`` over computed source positions (torchlet has no
``F.pad``): the values and gradients are PyTorch's, the autograd node is
``IndexSelectBackward0`` where PyTorch records its padding node.
"""
from __future__ import annotations

import math
from itertools import repeat

import torchlet

from . import functional as F
from . import init
from .modules import Module, Parameter

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]


def _ntuple(n):
    def parse(x):
        if isinstance(x, (list, tuple)):
            return tuple(x)
        return tuple(repeat(x, n))

    return parse


_single, _pair, _triple = _ntuple(1), _ntuple(2), _ntuple(3)


def _reverse_repeat_tuple(t, n):
    return tuple(x for x in reversed(t) for _ in range(n))


def _pad_positions(mode, size, left, right):
    """source index of every padded position along one dim (PyTorch's checks)"""
    if mode == "reflect":
        if left >= size or right >= size:
            return None
        return list(range(left, 0, -1)) + list(range(size)) + list(range(size - 2, size - 2 - right, -1))
    if mode == "replicate":
        return [0] * left + list(range(size)) + [size - 1] * right
    if left > size or right > size:
        raise RuntimeError("Padding value causes wrapping around more than once.")
    return list(range(size - left, size)) + list(range(size)) + list(range(right))


def _pad(input, pad, mode):
    """F.pad(input, pad, mode) for mode reflect / replicate / circular; pad as
    PyTorch's (last dim first, left then right)"""
    out = input
    nd = len(pad) // 2
    for i in range(nd):
        left, right = pad[2 * i], pad[2 * i + 1]
        if left == 0 and right == 0:
            continue
        dim = input.dim() - 1 - i
        idx = _pad_positions(mode, out.shape[dim], left, right)
        if idx is None:
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, "
                               f"but got: padding ({left}, {right}) at dimension {dim} of input "
                               f"{list(input.shape)}")
        out = out.index_select(dim, torchlet.tensor(idx, dtype=torchlet.int64, device=input.device))
    return out


class _ConvNd(Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed, output_padding,
                 groups, bias, padding_mode, device=None, dtype=None):
        super().__init__()
        factory_kwargs = {"device": device, "dtype": dtype}
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(f"padding_mode must be one of {valid_padding_modes}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(self.padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1)):
                    total_padding = d * (k - 1)
                    left_pad = total_padding // 2
                    self._reversed_padding_repeated_twice[2 * i] = left_pad
                    self._reversed_padding_repeated_twice[2 * i + 1] = total_padding - left_pad
        else:
            self._reversed_padding_repeated_twice = _reverse_repeat_tuple(self.padding, 2)
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = Parameter(torchlet.empty(shape, **factory_kwargs))
        if bias:
            self.bias = Parameter(torchlet.empty(out_channels, **factory_kwargs))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)


class _ConvForward(_ConvNd):
    """Conv1d/2d/3d: a padding mode other than zeros pads first, then convolves unpadded"""

    _tuple = staticmethod(_pair)
    _conv = staticmethod(F.conv2d)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        t = self._tuple
        super().__init__(in_channels, out_channels, t(kernel_size), t(stride),
                         padding if isinstance(padding, str) else t(padding), t(dilation), False, t(0), groups, bias,
                         padding_mode, device=device, dtype=dtype)

    def _conv_forward(self, input, weight, bias):
        if self.padding_mode != "zeros":
            return self._conv(_pad(input, self._reversed_padding_repeated_twice, self.padding_mode), weight, bias,
                              self.stride, self._tuple(0), self.dilation, self.groups)
        return self._conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_ConvForward):
    _tuple = staticmethod(_single)
    _conv = staticmethod(F.conv1d)


class Conv2d(_ConvForward):
    _tuple = staticmethod(_pair)
    _conv = staticmethod(F.conv2d)


class Conv3d(_ConvForward):
    _tuple = staticmethod(_triple)
    _conv = staticmethod(F.conv3d)


class _ConvTransposeNd(_ConvNd):
    _tuple = staticmethod(_pair)
    _conv = staticmethod(F.conv_transpose2d)
    _nd = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {self.__class__.__name__}')
        t = self._tuple
        super().__init__(in_channels, out_channels, t(kernel_size), t(stride), t(padding), t(dilation), True,
                         t(output_padding), groups, bias, padding_mode, device=device, dtype=dtype)

    def _output_padding(self, input, output_size, stride, padding, kernel_size, num_spatial_dims, dilation=None):
        if output_size is None:
            return _single(self.output_padding)
        has_batch_dim = input.dim() == num_spatial_dims + 2
        num_non_spatial_dims = 2 if has_batch_dim else 1
        if len(output_size) == num_non_spatial_dims + num_spatial_dims:
            output_size = output_size[num_non_spatial_dims:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, output_size must have "
                             f"{num_spatial_dims} or {num_non_spatial_dims + num_spatial_dims} elements (got "
                             f"{len(output_size)})")
        min_sizes, max_sizes = [], []
        for d in range(num_spatial_dims):
            dim_size = ((input.size(d + num_non_spatial_dims) - 1) * stride[d] - 2 * padding[d]
                        + (dilation[d] if dilation is not None else 1) * (kernel_size[d] - 1) + 1)
            min_sizes.append(dim_size)
            max_sizes.append(min_sizes[d] + stride[d] - 1)
        for i in range(len(output_size)):
            if output_size[i] < min_sizes[i] or output_size[i] > max_sizes[i]:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from "
                                 f"{min_sizes} to {max_sizes} (for an input of "
                                 f"{torchlet.Size(input.size()[2:])})")
        return [output_size[d] - min_sizes[d] for d in range(num_spatial_dims)]

    def forward(self, input, output_size=None):
        if self.padding_mode != "zeros":
            raise ValueError(f"Only `zeros` padding mode is supported for {self.__class__.__name__}")
        output_padding = self._output_padding(input, output_size, self.stride, self.padding, self.kernel_size,
                                              self._nd, self.dilation)
        return self._conv(input, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups,
                          self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    _tuple = staticmethod(_single)
    _conv = staticmethod(F.conv_transpose1d)
    _nd = 1


class ConvTranspose2d(_ConvTransposeNd):
    _tuple = staticmethod(_pair)
    _conv = staticmethod(F.conv_transpose2d)
    _nd = 2


class ConvTranspose3d(_ConvTransposeNd):
    _tuple = staticmethod(_triple)
    _conv = staticmethod(F.conv_transpose3d)
    _nd = 3
