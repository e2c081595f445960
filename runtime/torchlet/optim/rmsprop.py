"""torch.optim.RMSprop with PyTorch's single-tensor (foreach=False) arithmetic."""
from __future__ import annotations

import torchlet

from .optimizer import Optimizer, _closure_loss, _steps_as_tensors, _get_scalar_dtype, _to_scalar
from .sgd import _check_lr, _scalar

__all__ = ["RMSprop", "rmsprop"]


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered, weight_decay=weight_decay,
                        capturable=capturable, foreach=foreach, maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for k, v in (("momentum", 0), ("centered", False), ("foreach", None), ("maximize", False),
                         ("differentiable", False), ("capturable", False)):
                group.setdefault(k, v)
        _steps_as_tensors(self)

    def step(self, closure=None):
        """Perform a single optimization step (closure: re-evaluates the model, returns the loss)."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params, grads, square_avgs, grad_avgs, bufs, steps = [], [], [], [], [], []
            for p in group["params"]:
                if p.grad is None:
                    continue
                params.append(p)
                grads.append(p.grad)
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = torchlet.zeros((), dtype=_get_scalar_dtype())
                    state["square_avg"] = torchlet.zeros_like(p)
                    if group["momentum"] > 0:
                        state["momentum_buffer"] = torchlet.zeros_like(p)
                    if group["centered"]:
                        state["grad_avg"] = torchlet.zeros_like(p)
                square_avgs.append(state["square_avg"])
                steps.append(state["step"])
                if group["momentum"] > 0:
                    bufs.append(state["momentum_buffer"])
                if group["centered"]:
                    grad_avgs.append(state["grad_avg"])
            rmsprop(params, grads, square_avgs, grad_avgs, bufs, steps, lr=group["lr"], alpha=group["alpha"],
                    eps=group["eps"], weight_decay=group["weight_decay"], momentum=group["momentum"],
                    centered=group["centered"], maximize=group["maximize"])
        return loss


def rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps, *, lr, alpha, eps,
            weight_decay, momentum, centered, maximize, **_ignored):
    """Functional RMSprop (the for-loop algorithm)."""
    lr = _scalar(_to_scalar(lr))
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        square_avg = square_avgs[i]
        state_steps[i] += 1
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
        if centered:
            grad_avg = grad_avgs[i]
            grad_avg.lerp_(grad, 1 - alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg = avg.add_(eps)
        if momentum > 0:
            buf = momentum_buffer_list[i]
            buf.mul_(momentum).addcdiv_(grad, avg)
            param.add_(buf, alpha=-lr)
        else:
            param.addcdiv_(grad, avg, value=-lr)
