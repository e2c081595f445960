"""The device context: `with torchlet.device("meta"):` and
`torchlet.set_default_device(d)`, built as PyTorch builds them
(torch/utils/_device.py): a TorchFunctionMode that fills a missing or None
`device=` of the factory functions and changes nothing else.

One stack holds every device context, so every reader agrees:

* `with torchlet.device(d):` pushes a DeviceContext on this thread's
  torch-function mode stack and pops it on exit;
* `set_default_device(d)` keeps exactly one DeviceContext at the **bottom** of
  that stack (replacing the previous one; `None` removes it), so a `with`
  block entered before or after it still wins while it is open, and calling it
  inside a `with` never disturbs the modes above it;
* `get_default_device()` is the device of the innermost DeviceContext on the
  stack, else cpu.

Ops on existing tensors, `*_like` functions and explicit `device=` arguments
are unaffected, as in PyTorch.
"""
from __future__ import annotations

import functools

import torchlet

from .. import _device as _dev
from .. import _function_mode as _fm
from ..overrides import TorchFunctionMode

# torch.utils._device._device_constructors(): the names, of which the ones
# torchlet defines are used (a factory declared later joins automatically)
_CONSTRUCTOR_NAMES = (
    "empty", "empty_permuted", "empty_strided", "empty_quantized", "ones", "arange", "bartlett_window",
    "blackman_window", "eye", "full", "hamming_window", "hann_window", "kaiser_window", "linspace", "logspace",
    "rand", "randn", "randint", "randperm", "range", "tril_indices", "triu_indices", "zeros", "asarray",
    "tensor", "as_tensor", "scalar_tensor",
)


@functools.lru_cache(1)
def _device_constructors():
    return {getattr(torchlet, n) for n in _CONSTRUCTOR_NAMES if hasattr(torchlet, n)}


class DeviceContext(TorchFunctionMode):
    """Fills `device=` of factory calls with `self.device` when it is missing or None."""

    def __init__(self, device) -> None:
        self.device = _dev.as_device(device)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in _device_constructors() and kwargs.get("device") is None:
            kwargs["device"] = self.device
        return func(*args, **kwargs)

    def __repr__(self):
        return f"DeviceContext({self.device!r})"


class _DefaultDeviceContext(DeviceContext):
    """The one set_default_device installs at the bottom of the stack."""


def enter_device(d) -> None:
    """torchlet.device.__enter__."""
    DeviceContext(d).__enter__()


def exit_device(d) -> None:
    """torchlet.device.__exit__: remove the innermost `with` context of this device."""
    s = _fm.stack()
    for i in range(len(s) - 1, -1, -1):
        m = s[i]
        if type(m) is DeviceContext and m.device == d:
            if i == len(s) - 1:
                _fm.pop()
            else:  # an unbalanced exit: take it out without touching the modes above
                _remove(s, i)
            return
    raise RuntimeError(f"torchlet.device('{d}').__exit__: no device context of this device is active")


def _remove(s: list, i: int) -> None:
    above = [_fm.pop() for _ in range(len(s) - 1 - i)]
    _fm.pop()
    for m in reversed(above):
        _fm.push(m)


def _insert_bottom(mode) -> None:
    s = _fm.stack()
    above = [_fm.pop() for _ in range(len(s))]
    _fm.push(mode)
    for m in reversed(above):
        _fm.push(m)


def set_default_device(device) -> None:
    """torch.set_default_device: factory calls without an explicit device use
    `device` (None: back to cpu).  Like PyTorch, this costs a little on every
    call of the Python API while it is set (a mode is active)."""
    s = _fm.stack()
    for i, m in enumerate(s):
        if type(m) is _DefaultDeviceContext:
            _remove(s, i)
            break
    if device is not None:
        _insert_bottom(_DefaultDeviceContext(device))


def get_default_device() -> _dev.device:
    """torch.get_default_device: the device of the innermost device context
    (a `with torchlet.device(...)` block or set_default_device), else cpu."""
    for m in reversed(_fm.stack()):
        if isinstance(m, DeviceContext):
            return m.device
    return _dev.CPU
