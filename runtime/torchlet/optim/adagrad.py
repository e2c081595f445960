"""torch.optim.Adagrad with PyTorch's single-tensor (foreach=False) arithmetic
(dense gradients; the state is created in the constructor, as PyTorch's)."""
from __future__ import annotations

import torchlet

from .optimizer import Optimizer, _closure_loss, _get_scalar_dtype, _get_value, _to_scalar
from .sgd import _check_lr, _scalar

__all__ = ["Adagrad", "adagrad"]


class Adagrad(Optimizer):
    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_lr(lr)
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p)

    def _init_state(self, p) -> None:
        state = self.state[p]
        state["step"] = torchlet.tensor(0.0, dtype=_get_scalar_dtype())
        state["sum"] = torchlet.full_like(p, self.defaults["initial_accumulator_value"])

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("fused", None)
        for s in self.state.values():
            if "step" in s and not isinstance(s["step"], torchlet.Tensor):
                s["step"] = torchlet.tensor(float(s["step"]), dtype=_get_scalar_dtype())

    def step(self, closure=None):
        """Perform a single optimization step (closure: re-evaluates the model, returns the loss)."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params, grads, sums, steps = [], [], [], []
            for p in group["params"]:
                if p.grad is None:
                    continue
                params.append(p)
                grads.append(p.grad)
                if len(self.state[p]) == 0:
                    self._init_state(p)
                sums.append(self.state[p]["sum"])
                steps.append(self.state[p]["step"])
            adagrad(params, grads, sums, steps, lr=group["lr"], weight_decay=group["weight_decay"],
                    lr_decay=group["lr_decay"], eps=group["eps"], maximize=group["maximize"])
        return loss


def adagrad(params, grads, state_sums, state_steps, *, lr, weight_decay, lr_decay, eps, maximize, **_ignored):
    """Functional Adagrad (the for-loop algorithm)."""
    lr = _scalar(_to_scalar(lr))
    for param, grad, state_sum, step_t in zip(params, grads, state_sums, state_steps):
        step_t += 1
        step = _get_value(step_t)
        grad = grad if not maximize else -grad
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        clr = lr / (1 + (step - 1) * lr_decay)
        state_sum.addcmul_(grad, grad, value=1)
        std = state_sum.sqrt().add_(eps)
        param.addcdiv_(grad, std, value=-clr)
