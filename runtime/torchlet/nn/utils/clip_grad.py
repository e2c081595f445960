"""torch.nn.utils.clip_grad: the total norm of the gradients (the norm of
the per-tensor norms, torchlet.linalg.vector_norm) and rescaling them in
place by min(1, max_norm / (total + 1e-6)); clamping them elementwise."""
from __future__ import annotations

import functools
import types
import warnings

import torchlet


def _no_grad(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with torchlet.no_grad():
            return fn(*args, **kwargs)
    return wrapper


def _as_list(tensors) -> list:
    return [tensors] if isinstance(tensors, torchlet.Tensor) else list(tensors)


@_no_grad
def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return torchlet.tensor(0.0)
    if foreach:
        raise RuntimeError(f"foreach=True was passed, but can't use the foreach API on {tensors[0].device.type} "
                           "tensors")
    norms = [torchlet.linalg.vector_norm(g, norm_type) for g in tensors]
    total = torchlet.linalg.vector_norm(torchlet.stack([n.to(tensors[0].device) for n in norms]), norm_type)
    if error_if_nonfinite and bool(torchlet.logical_or(total.isnan(), total.isinf())):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so "
                           "it cannot be clipped. To disable this error and scale the gradients by the non-finite "
                           "norm anyway, set `error_if_nonfinite=False`")
    return total


@_no_grad
def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None) -> None:
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    clip_coef = float(max_norm) / (total_norm + 1e-6)
    clip_coef_clamped = torchlet.clamp(clip_coef, max=1.0)
    for g in grads:
        g.mul_(clip_coef_clamped.to(g.device))


@_no_grad
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Rescale the gradients so that their total `norm_type` norm is at most
    `max_norm`; returns the total norm before clipping."""
    if isinstance(parameters, torchlet.Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and len(parameters) == 0:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=3)
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@_no_grad
def clip_grad_value_(parameters, clip_value, foreach=None) -> None:
    """Clamp every gradient elementwise into [-clip_value, clip_value]."""
    clip_value = float(clip_value)
    for p in _as_list(parameters):
        if p.grad is not None:
            p.grad.clamp_(min=-clip_value, max=clip_value)
