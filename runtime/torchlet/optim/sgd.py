"""torch.optim.SGD with PyTorch's single-tensor (foreach=False) arithmetic."""
from __future__ import annotations

import torchlet

from .optimizer import Optimizer, _closure_loss, _to_scalar

__all__ = ["SGD", "sgd"]


def _check_lr(lr) -> None:
    if isinstance(lr, torchlet.Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if lr < 0.0:
        raise ValueError(f"Invalid learning rate: {lr}")


def _scalar(x) -> float:
    """A hyperparameter (float or 1-element tensor) as the Python number the update uses."""
    return float(x) if isinstance(x, torchlet.Tensor) else x


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        _check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach, differentiable=differentiable,
                        fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    def step(self, closure=None):
        """Perform a single optimization step (closure: re-evaluates the model, returns the loss)."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params, grads, bufs = [], [], []
            for p in group["params"]:
                if p.grad is not None:
                    params.append(p)
                    grads.append(p.grad)
                    if group["momentum"] != 0:
                        bufs.append(self.state[p].get("momentum_buffer"))
            sgd(params, grads, bufs, weight_decay=group["weight_decay"], momentum=group["momentum"],
                lr=group["lr"], dampening=group["dampening"], nesterov=group["nesterov"],
                maximize=group["maximize"])
            if group["momentum"] != 0:
                for p, buf in zip(params, bufs):
                    self.state[p]["momentum_buffer"] = buf
        return loss


def sgd(params, d_p_list, momentum_buffer_list, *, weight_decay, momentum, lr, dampening, nesterov, maximize,
        **_ignored):
    """Functional SGD (the for-loop algorithm); fills `momentum_buffer_list` in place."""
    lr = _scalar(_to_scalar(lr))
    weight_decay = _scalar(weight_decay)
    for i, param in enumerate(params):
        grad = d_p_list[i] if not maximize else -d_p_list[i]
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        if momentum != 0:
            buf = momentum_buffer_list[i]
            if buf is None:
                buf = grad.detach().clone()
                momentum_buffer_list[i] = buf
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - dampening)
            grad = grad.add(buf, alpha=momentum) if nesterov else buf
        param.add_(grad, alpha=-lr)
