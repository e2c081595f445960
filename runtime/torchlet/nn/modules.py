"""A minimal torch.nn: Module (parameter registry, __call__ -> forward,
parameters(), zero_grad()), Parameter, and the layers the seed workloads use
(Linear, LayerNorm, RMSNorm, SiLU). Initialisation follows PyTorch's
defaults (Linear: U(-1/sqrt(in), 1/sqrt(in)) for weight and bias)."""
from __future__ import annotations

import math

import torchlet

from . import functional as F


def Parameter(data, requires_grad=True):  # noqa: N802  (torch.nn.Parameter)
    """A leaf tensor that requires grad (torchlet has no Parameter subclass:
    Module treats every Tensor attribute that requires grad as a parameter)."""
    t = data.detach()
    t.requires_grad_(requires_grad)
    return t


class Module:
    def __init__(self):
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "_params", {})
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        if isinstance(value, Module):
            self._modules[name] = value
        elif isinstance(value, torchlet.Tensor) and value.requires_grad:
            self._params[name] = value
        object.__setattr__(self, name, value)

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def named_parameters(self, prefix=""):
        for n, p in self._params.items():
            yield prefix + n, p
        for mn, m in self._modules.items():
            yield from m.named_parameters(prefix + mn + ".")

    def parameters(self):
        for _, p in self.named_parameters():
            yield p

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    p.grad.zero_()

    def train(self, mode=True):
        object.__setattr__(self, "training", mode)
        for m in self._modules.values():
            m.train(mode)
        return self

    def eval(self):
        return self.train(False)


def _uniform(shape, bound, dtype):
    return torchlet.rand(*shape, dtype=dtype) * (2 * bound) - bound


class Linear(Module):
    def __init__(self, in_features, out_features, bias=True, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1.0 / math.sqrt(in_features) if in_features > 0 else 0.0
        self.weight = Parameter(_uniform((out_features, in_features), bound, dtype))
        self.bias = Parameter(_uniform((out_features,), bound, dtype)) if bias else None

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, dtype=None):
        super().__init__()
        self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps = eps
        self.weight = Parameter(torchlet.ones(self.normalized_shape, dtype=dtype)) if elementwise_affine else None
        self.bias = Parameter(torchlet.zeros(self.normalized_shape, dtype=dtype)) if elementwise_affine and bias else None

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)


class RMSNorm(Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, dtype=None):
        super().__init__()
        self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps = eps
        self.weight = Parameter(torchlet.ones(self.normalized_shape, dtype=dtype)) if elementwise_affine else None

    def forward(self, input):
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)


class SiLU(Module):
    def forward(self, input):
        return F.silu(input)
