"""torch.nn.Bilinear (torch/nn/modules/linear.py) over torchlet.bilinear:
weight [out, in1, in2] and bias [out] drawn from U(-1/sqrt(in1), 1/sqrt(in1))
as PyTorch's reset_parameters, PyTorch's extra_repr."""
from __future__ import annotations

import math

import torchlet

from . import init
from .modules import Module, Parameter, _factory

__all__ = ["Bilinear"]


class Bilinear(Module):
    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        fk = _factory(device, dtype)
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        self.weight = Parameter(torchlet.empty((out_features, in1_features, in2_features), **fk))
        if bias:
            self.bias = Parameter(torchlet.empty(out_features, **fk))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return torchlet.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
