"""torchlet.autocast (PyTorch's torch.amp.autocast_mode) and the thread-local
autocast state (torch.is_autocast_enabled, get_autocast_dtype, ...).

The state lives in C (runtime/src/autocast.c): "enabled for cpu" is
AutocastCPU being absent from the thread's excluded dispatch keys, and the
dtype, cache flag and nesting depth are thread-local too, so autocast in one
thread never affects another.
"""
from __future__ import annotations

import functools
import warnings

from .._C import lib
from .._device import device as _device
from .._dtype import _BY_ID, bfloat16, dtype as _dtype_cls, float16
from .._errors import raise_pending_error

__all__ = ["autocast_decorator", "autocast", "is_autocast_available"]

_DEVICES = {"cpu": lib.TL_CPU, "cuda": lib.TL_CUDA}


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast is available for ``device_type`` (cpu, cuda)."""
    return device_type in _DEVICES


def _device_id(device_type) -> int:
    if not isinstance(device_type, str):
        raise TypeError(f"expected a device type (str), got {type(device_type).__name__}")
    d = _DEVICES.get(device_type)
    if d is None:
        _device(device_type)  # PyTorch's parse error for a name that is no device type
        raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
    return d


def _checked(rc):
    if rc < 0:
        raise_pending_error()
    return rc


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for ``device_type`` in this thread (no argument: cuda, as in PyTorch)."""
    return bool(_checked(lib.tl_autocast_is_enabled(_device_id("cuda" if device_type is None else device_type))))


def set_autocast_enabled(device_type, enabled=None) -> None:
    """``set_autocast_enabled(device_type, enabled)``; the one-argument form sets cuda (PyTorch's legacy form)."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    if not isinstance(enabled, bool):
        raise TypeError(f"set_autocast_enabled(): argument 'enabled' must be bool, not {type(enabled).__name__}")
    _checked(lib.tl_autocast_set_enabled(_device_id(device_type), enabled))


def get_autocast_dtype(device_type: str):
    """The lower-precision dtype autocast uses on ``device_type`` (bfloat16 on cpu, float16 on cuda)."""
    return _BY_ID[_checked(lib.tl_autocast_get_dtype(_device_id(device_type)))]


def set_autocast_dtype(device_type: str, dtype) -> None:
    if not isinstance(dtype, _dtype_cls):
        raise TypeError(f"set_autocast_dtype(): argument 'dtype' must be torchlet.dtype, not {type(dtype).__name__}")
    _checked(lib.tl_autocast_set_dtype(_device_id(device_type), dtype._id))


def is_autocast_cache_enabled() -> bool:
    return bool(lib.tl_autocast_is_cache_enabled())


def set_autocast_cache_enabled(enabled: bool) -> None:
    if not isinstance(enabled, bool):
        raise TypeError(f"set_autocast_cache_enabled(): argument 'enabled' must be bool, not {type(enabled).__name__}")
    lib.tl_autocast_set_cache_enabled(enabled)


def clear_autocast_cache() -> None:
    """Drop every cached cast (autocast's outermost exit does this)."""
    lib.tl_autocast_clear_cache()


def autocast_increment_nesting() -> int:
    return lib.tl_autocast_increment_nesting()


def autocast_decrement_nesting() -> int:
    return lib.tl_autocast_decrement_nesting()


def autocast_decorator(autocast_instance, func):
    @functools.wraps(func)
    def decorate_autocast(*args, **kwargs):
        with autocast_instance:
            return func(*args, **kwargs)

    return decorate_autocast


class autocast:
    """Run the enclosed region (or the decorated function) with autocast.

    In the region, operators listed in yaml/autocast.yaml run in the policy's
    precision (``torchlet.amp.policy(device_type)``): matrix products in
    ``dtype`` (default bfloat16 on cpu), losses and reductions in float32,
    ``cat``/``stack`` in the widest input type. Other operators run in their
    inputs' dtypes. Nesting restores the outer state on exit; leaving the
    outermost region clears the cast cache.
    """

    def __init__(self, device_type: str, dtype=None, enabled: bool = True, cache_enabled: bool | None = None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = device_type
        self._dev = _device_id(device_type)
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        if not isinstance(self.fast_dtype, _dtype_cls):
            raise TypeError(f"autocast: expected dtype to be a torchlet.dtype, got {type(self.fast_dtype).__name__}")
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None else bool(cache_enabled)
        if enabled and device_type == "cuda" and not _cuda_available():
            # PyTorch's behaviour without a CUDA driver or device
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.")
            enabled = False
        if device_type == "cpu":
            # PyTorch's text, dtype names included, so filters written for it match
            if self.fast_dtype not in (bfloat16, float16) and enabled:
                warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                              "CPU Autocast only supports dtypes of torch.bfloat16, torch.float16 currently.")
                enabled = False
        self._enabled = bool(enabled)
        self._saved: list[tuple] = []  # a stack: one instance may be entered again (decorator, recursion)

    def __enter__(self):
        self._saved.append((is_autocast_cache_enabled(), is_autocast_enabled(self.device),
                            get_autocast_dtype(self.device)))
        set_autocast_enabled(self.device, self._enabled)
        set_autocast_dtype(self.device, self.fast_dtype)
        autocast_increment_nesting()
        set_autocast_cache_enabled(self._cache_enabled)

    def __exit__(self, exc_type, exc_val, exc_tb):
        prev_cache, prev_enabled, prev_dtype = self._saved.pop()
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        set_autocast_enabled(self.device, prev_enabled)
        set_autocast_dtype(self.device, prev_dtype)
        set_autocast_cache_enabled(prev_cache)
        return False

    def __call__(self, func):
        return autocast_decorator(self, func)


def _cuda_available() -> bool:
    from .. import cuda
    return cuda.is_available()
