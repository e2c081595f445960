"""Grad mode and inference mode: thread-local, kept in C (tl_autograd.h).

Grad mode off is the dispatcher's thread-local exclusion of the Autograd keys,
so operators called under ``no_grad`` skip their autograd kernels entirely;
``inference_mode`` also excludes ADInplaceOrView. Each class works as a
context manager and as a function decorator (with or without parentheses for
``no_grad``, ``enable_grad`` and ``inference_mode``), like PyTorch's.
"""
from __future__ import annotations

import functools
import inspect

from .._C import lib

__all__ = [
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
]

_guard_grad = lib.tl_grad_mode_guard_enter
_guard_inference = lib.tl_inference_mode_guard_enter
_guard_exit = lib.tl_autograd_mode_guard_exit


def is_grad_enabled() -> bool:
    """True when operators record autograd history on this thread."""
    return bool(lib.tl_grad_mode_is_enabled())


def is_inference_mode_enabled() -> bool:
    return bool(lib.tl_inference_mode_is_enabled())


class _DecoratorContextManager:
    """Context manager usable as a decorator: each call of the decorated
    function runs inside a fresh instance."""

    def __call__(self, func):
        if inspect.isclass(func):
            raise RuntimeError(f"{type(self).__name__} cannot decorate a class")
        if inspect.isgeneratorfunction(func):
            return self._wrap_generator(func)

        @functools.wraps(func)
        def decorate_context(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)

        return decorate_context

    def _wrap_generator(self, func):
        @functools.wraps(func)
        def generator_context(*args, **kwargs):
            gen = func(*args, **kwargs)
            try:
                with self.clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    except BaseException as e:  # noqa: BLE001  (forwarded into the generator)
                        with self.clone():
                            response = gen.throw(e)
                    else:
                        with self.clone():
                            response = gen.send(request)
            except StopIteration as e:
                return e.value

        return generator_context

    def clone(self):
        return self.__class__()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """Also usable as ``@no_grad`` without parentheses."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecoratorContextManager):
    """Disable gradient recording on this thread inside the block."""

    def __init__(self) -> None:
        self._prev = []

    def __enter__(self) -> None:
        self._prev.append(_guard_grad(0))

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        _guard_exit(self._prev.pop())


class enable_grad(_NoParamDecoratorContextManager):
    """Enable gradient recording inside the block (e.g. within no_grad)."""

    def __init__(self) -> None:
        self._prev = []

    def __enter__(self) -> None:
        self._prev.append(_guard_grad(1))

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        _guard_exit(self._prev.pop())


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode on or off. Takes effect immediately (so it also works as a
    plain function call); as a context manager, the previous mode comes back on
    exit."""

    def __init__(self, mode: bool) -> None:
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled(): argument 'mode' must be bool, not {type(mode).__name__}")
        self.prev = is_grad_enabled()
        self.mode = mode
        lib.tl_grad_mode_set_enabled(mode)

    def __call__(self, func):
        lib.tl_grad_mode_set_enabled(self.prev)
        return super().__call__(func)

    def __enter__(self) -> None:
        lib.tl_grad_mode_set_enabled(self.mode)

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        lib.tl_grad_mode_set_enabled(self.prev)

    def clone(self):
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    """Like no_grad, and also skips view/in-place bookkeeping (excludes the
    ADInplaceOrView key). ``inference_mode(False)`` turns it off inside."""

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # @inference_mode without parentheses

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode
        self._prev = []

    def __enter__(self) -> None:
        self._prev.append(_guard_inference(1 if self.mode else 0))

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        _guard_exit(self._prev.pop())

    def clone(self):
        return self.__class__(self.mode)
