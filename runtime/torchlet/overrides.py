"""torchlet.overrides: TorchFunctionMode, PyTorch's hook on the public Python API.

A mode sees every call of the public API made while it is active, before
anything runs: the `torchlet.*` functions, Tensor methods and operators
(`a + b` is reported as `Tensor.add`, as PyTorch reports `TensorBase.add`),
`torchlet.nn.functional.*`, `torchlet.linalg.*`, `torchlet.tensor` /
`as_tensor`.  `func` is the public callable, `args` / `kwargs` what the caller
passed (keyword arguments left at their default are not listed).

    class Log(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            print(func.__name__)
            return func(*args, **(kwargs or {}))

    with Log():
        torchlet.rsqrt(x) + 1      # prints rsqrt, add

The mode is popped while its handler runs, so `func(*args, **kwargs)` inside
reaches the next mode down (innermost mode first) or the real function.  The
stack is per thread; with no mode on any thread the check costs one global
load per call (runtime/torchlet/_function_mode.py, docs/MODES.md).
"""
from __future__ import annotations

import contextlib
import warnings

from . import _C
from . import _function_mode as _fm

__all__ = ["TorchFunctionMode", "BaseTorchFunctionMode", "handle_torch_function", "has_torch_function",
           "resolve_name"]


class TorchFunctionMode:
    """Subclass and override `__torch_function__(self, func, types, args=(), kwargs=None)`;
    `with Mode():` pushes the mode on this thread's stack and returns it."""

    inner: "TorchFunctionMode"

    def __init__(self) -> None:
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        _pop_mode()

    @classmethod
    def push(cls, *args, **kwargs):
        warnings.warn("`Mode.push()` is no longer necessary and can be replaced with just `with Mode()`",
                      stacklevel=2)
        return cls(*args, **kwargs)


class BaseTorchFunctionMode(TorchFunctionMode):
    """A mode that runs every function unchanged (a base for modes that only look)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def _get_current_function_mode():
    s = _fm.stack()
    return s[-1] if s else None


def _get_current_function_mode_stack():
    """This thread's modes, bottom (outermost) first."""
    return list(_fm.stack())


def _push_mode(mode):
    _fm.push(mode)


def _pop_mode():
    return _fm.pop()


@contextlib.contextmanager
def _pop_mode_temporarily():
    old = _pop_mode()
    try:
        yield old
    finally:
        _push_mode(old)


def has_torch_function(relevant_args) -> bool:
    """Whether a call should go to handle_torch_function: a mode is active on
    this thread and torch functions are not disabled (torchlet has no Tensor
    subclass __torch_function__, so the arguments do not matter)."""
    return bool(_fm.stack()) and not _fm.disabled()


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Hand a call of a Python function of your own to the active mode (as
    PyTorch's helper of the same name); returns the mode's result."""
    r = _fm.handle_args(public_api, args, kwargs)
    if r is _fm.GO:
        return public_api(*args, **kwargs)
    return r


_NAMES: dict | None = None


def resolve_name(f):
    """The public dotted name of an API function a mode receives
    ('torchlet.Tensor.add', 'torchlet.rsqrt', 'torchlet.nn.functional.silu',
    'torchlet.linalg.vector_norm'), or None."""
    global _NAMES
    if _NAMES is None:
        import torchlet
        names = {}
        for prefix, ns in (("torchlet.linalg", torchlet.linalg), ("torchlet.nn.functional", torchlet.nn.functional),
                           ("torchlet.Tensor", torchlet.Tensor), ("torchlet", torchlet)):
            for k in dir(ns):
                v = getattr(ns, k, None)
                if callable(v) and not isinstance(v, type):
                    names.setdefault(id(v), f"{prefix}.{k}")
        _NAMES = names
    return _NAMES.get(id(f))


# ------------------------------------------------- torchlet._C counterparts


def _len_torch_function_stack() -> int:
    return len(_fm.stack())


def _get_function_stack_at(i: int):
    return _fm.stack()[i]


def _is_torch_function_mode_enabled() -> bool:
    return bool(_fm.stack()) and not _fm.disabled()


def _is_torch_function_enabled() -> bool:
    return not _fm.disabled()


class DisableTorchFunction:
    """`with torchlet._C.DisableTorchFunction():` no mode sees calls (on this thread)."""

    def __enter__(self):
        _fm.set_disabled(_fm.disabled() + 1)

    def __exit__(self, *exc):
        _fm.set_disabled(_fm.disabled() - 1)


class DisableTorchFunctionSubclass:
    """PyTorch's switch for Tensor-subclass `__torch_function__`.  torchlet
    dispatches no subclass `__torch_function__`, so inside it modes still run
    and nothing changes (as in PyTorch, where it leaves modes active)."""

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return None


for _f in (_len_torch_function_stack, _get_function_stack_at, _is_torch_function_mode_enabled,
           _is_torch_function_enabled, DisableTorchFunction, DisableTorchFunctionSubclass):
    setattr(_C, _f.__name__, _f)
_C._push_on_torch_function_stack = _push_mode
_C._pop_torch_function_stack = _pop_mode
del _f
