"""torchlet.nn.init: PyTorch's in-place parameter initialisers.

Each fills its tensor without recording autograd history, through the
tensor's own `uniform_` / `normal_` (PyTorch's CPU kernels and generator
stream: the same seed gives PyTorch's weights); on a meta tensor that is a
metadata-only no-op, so layers built under `with torchlet.device("meta"):`
initialise without allocating. A CUDA tensor (no CUDA random kernels yet) is
drawn on the host and copied in.
"""
from __future__ import annotations

import math
import warnings

import torchlet
from torchlet._function_mode import GO as _GO, handle as _tf, watch as _tf_watch

__all__ = ["calculate_gain", "uniform_", "normal_", "constant_", "ones_", "zeros_", "kaiming_uniform_",
           "kaiming_normal_", "xavier_uniform_", "xavier_normal_"]

# uniform_, normal_, constant_ and kaiming_uniform_ are reported to torch-function
# modes as themselves (their draws and copies are not), as PyTorch's are
_TF = 0
_tf_watch(globals())

_LINEAR_FNS = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")


def calculate_gain(nonlinearity, param=None):
    if nonlinearity in _LINEAR_FNS or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _draw(tensor, fn, generator):
    kw = {"dtype": tensor.dtype, "device": tensor.device}
    if generator is not None:
        kw["generator"] = generator
    return fn(tuple(tensor.shape), **kw)


def _on_host(tensor) -> bool:
    return tensor.device.type not in ("cpu", "meta")


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """U(a, b)."""
    if _TF and (r_ := _tf(uniform_, locals())) is not _GO:
        return r_
    with torchlet.no_grad():
        if _on_host(tensor):
            return tensor.copy_(_draw(tensor, torchlet.rand, generator) * (b - a) + a)
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """N(mean, std^2)."""
    if _TF and (r_ := _tf(normal_, locals())) is not _GO:
        return r_
    with torchlet.no_grad():
        if _on_host(tensor):
            return tensor.copy_(_draw(tensor, torchlet.randn, generator) * std + mean)
        return tensor.normal_(mean, std, generator=generator)


def constant_(tensor, val):
    if _TF and (r_ := _tf(constant_, locals())) is not _GO:
        return r_
    with torchlet.no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    return constant_(tensor, 1.0)


def zeros_(tensor):
    with torchlet.no_grad():
        return tensor.zero_()


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = 1
    for s in tuple(tensor.shape)[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _empty_warning(tensor) -> bool:
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return True
    return False


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """U(-bound, bound), bound = gain * sqrt(3 / fan) (He et al., 2015)."""
    if _TF and (r_ := _tf(kaiming_uniform_, locals())) is not _GO:
        return r_
    if _empty_warning(tensor):
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    if _empty_warning(tensor):
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))
    return normal_(tensor, 0.0, std, generator)


def xavier_uniform_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)
