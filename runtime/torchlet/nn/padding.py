"""torch.nn's padding layers (torch/nn/modules/padding.py) over
torchlet.nn.functional.pad: ConstantPad1d/2d/3d, ZeroPad1d/2d/3d,
ReflectionPad1d/2d/3d, ReplicationPad1d/2d/3d, CircularPad1d/2d/3d. Padding arguments are normalized to
tuples (an int pads every side) and extra_repr is PyTorch's."""
from __future__ import annotations

from . import functional as F
from .modules import Module


def _ntuple(x, n):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,) * n


class _ConstantPadNd(Module):
    def __init__(self, value):
        super().__init__()
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    def __init__(self, padding, value):
        super().__init__(value)
        self.padding = _ntuple(padding, 2)


class ConstantPad2d(_ConstantPadNd):
    def __init__(self, padding, value):
        super().__init__(value)
        self.padding = _ntuple(padding, 4)


class ConstantPad3d(_ConstantPadNd):
    def __init__(self, padding, value):
        super().__init__(value)
        self.padding = _ntuple(padding, 6)


class ZeroPad1d(ConstantPad1d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class _ModePadNd(Module):
    mode = ""
    n = 2

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, self.n)

    def forward(self, input):
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad1d(_ModePadNd):
    mode, n = "reflect", 2


class ReflectionPad2d(_ModePadNd):
    mode, n = "reflect", 4


class ReflectionPad3d(_ModePadNd):
    mode, n = "reflect", 6


class ReplicationPad1d(_ModePadNd):
    mode, n = "replicate", 2


class ReplicationPad2d(_ModePadNd):
    mode, n = "replicate", 4


class ReplicationPad3d(_ModePadNd):
    mode, n = "replicate", 6


class CircularPad1d(_ModePadNd):
    mode, n = "circular", 2


class CircularPad2d(_ModePadNd):
    mode, n = "circular", 4


class CircularPad3d(_ModePadNd):
    mode, n = "circular", 6
