"""torch.nn.utils.parameters_to_vector / vector_to_parameters."""
from __future__ import annotations

import torchlet


def _check_param_device(param, old):
    dev = param.device
    if old is not None and dev != old:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return dev


def parameters_to_vector(parameters):
    """One 1-D tensor of every parameter, flattened, in order (a copy)."""
    dev, vec = None, []
    for p in parameters:
        dev = _check_param_device(p, dev)
        vec.append(p.reshape(-1))
    return torchlet.cat(vec)


def vector_to_parameters(vec, parameters) -> None:
    """Make each parameter a view of its slice of `vec` (as PyTorch's `param.data = ...`):
    afterwards they share vec's memory; requires_grad is kept."""
    from ..modules import _adopt
    if not isinstance(vec, torchlet.Tensor):
        from ..modules import _typename
        raise TypeError(f"expected torch.Tensor, but got: {_typename(vec)}")
    dev, pointer = None, 0
    for p in parameters:
        dev = _check_param_device(p, dev)
        n = p.numel()
        rg = p.requires_grad
        _adopt(p, vec[pointer:pointer + n].view(tuple(p.shape)).detach())
        p.requires_grad_(rg)
        pointer += n
