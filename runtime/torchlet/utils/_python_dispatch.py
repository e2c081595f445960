"""``TorchDispatchMode``: intercept every operator that reaches the Python
dispatch key (PyTorch's ``torch.utils._python_dispatch``).

    class LogOps(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            print(func)                          # an OpOverload: aten.mm.default
            return func(*args, **(kwargs or {}))

    with LogOps():
        model(x)

A mode sees calls after autograd and after CompositeImplicitAutograd
decomposition (``F.linear`` shows up as ``aten.t.default, aten.mm.default``),
including the backward pass's operators. It is popped while its handler runs.
See docs/DISPATCHER.md ("Dispatch modes") and torchlet._python_dispatch.
"""
from __future__ import annotations

import contextlib
import warnings

from .._python_dispatch import mode_stack, pop_mode, push_mode, top_mode

__all__ = ["TorchDispatchMode", "_get_current_dispatch_mode", "_get_current_dispatch_mode_stack",
           "_disable_current_modes", "_push_mode", "_pop_mode", "_pop_mode_temporarily"]


class TorchDispatchMode:
    """Base class of dispatch modes: override ``__torch_dispatch__``."""

    def __init__(self, _dispatch_key=None):
        if _dispatch_key is not None:
            raise NotImplementedError("torchlet: a TorchDispatchMode for one dispatch key is not supported")

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError()

    def __enter__(self):
        push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        pop_mode(getattr(self, "_mode_key", None))
        return False

    @classmethod
    def push(cls, *args, **kwargs):
        warnings.warn("`Mode.push()` is no longer necessary and can be replaced with just `with Mode()`",
                      stacklevel=2)
        return cls(*args, **kwargs)

    @classmethod
    def is_infra_mode(cls) -> bool:
        return False


def _get_current_dispatch_mode():
    """The mode a call would reach first (None with an empty stack)."""
    return top_mode()


def _get_current_dispatch_mode_stack() -> list:
    """The thread's modes, bottom first (infra modes such as FakeTensorMode below user modes)."""
    return mode_stack()


def _push_mode(mode) -> None:
    push_mode(mode)


def _pop_mode(k=None):
    return pop_mode(k)


@contextlib.contextmanager
def _pop_mode_temporarily(k=None):
    old = pop_mode(k)
    try:
        yield old
    finally:
        push_mode(old)


@contextlib.contextmanager
def _disable_current_modes():
    """Pop every mode of this thread for the block; they come back at its end."""
    popped = []
    try:
        while top_mode() is not None:
            popped.append(pop_mode(getattr(top_mode(), "_mode_key", None)))
        yield popped
    finally:
        for mode in reversed(popped):
            push_mode(mode)

