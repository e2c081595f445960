"""``register_kernel`` and ``register_autocast`` for any operator."""
from __future__ import annotations


def register_kernel(op, device_types, func=None, /, *, lib=None):
    """Register ``func`` as the kernel of ``op`` for ``device_types`` ("cpu",
    ["cpu", "cuda"], or None for every device); usable as a decorator."""
    from ..library import impl
    from .custom_ops import CustomOpDef

    if isinstance(op, CustomOpDef):
        return op.register_kernel(device_types, func)
    return impl(op, "default" if device_types is None else device_types, func, lib=lib)


def register_autocast(op, device_type: str, cast_inputs, /, *, lib=None):
    """Under autocast on ``device_type``, run ``op`` with its floating tensor
    inputs on that device (float64 excepted) cast to ``cast_inputs`` and
    autocast off inside (PyTorch's ``torch.library.register_autocast``): a
    kernel at the device's autocast key, reached only while autocast is on."""
    from .. import _dtype, _ops
    from .._C import lib as _lib
    from .._tensor import Tensor
    from ..library import _opname_of, impl
    from .custom_ops import CustomOpDef

    if device_type not in ("cpu", "cuda"):
        raise ValueError(f"Device type '{device_type}' does not support autocast.")
    if not isinstance(cast_inputs, _dtype.dtype):
        raise TypeError(f"register_autocast: cast_inputs must be a torchlet.dtype, got {type(cast_inputs).__name__}")
    qn = op._qualname if isinstance(op, CustomOpDef) else _opname_of(op)
    overload = _ops.lookup(qn)
    key = "AutocastCPU" if device_type == "cpu" else "AutocastCUDA"
    key_bit = 1 << _lib.tl_dispatch_key_parse(key.encode())

    def cast(v):
        if isinstance(v, Tensor):
            if v.is_floating_point() and v.device.type == device_type and v.dtype is not _dtype.float64:
                return v.to(cast_inputs)
            return v
        if isinstance(v, (list, tuple)):
            return type(v)(cast(x) for x in v)
        return v

    def autocast_kernel(*args, **kwargs):
        prev = _lib.tl_exclude_guard_enter(key_bit)     # autocast off for the call and what it runs
        try:
            return overload(*cast(args), **{k: cast(v) for k, v in kwargs.items()})
        finally:
            _lib.tl_exclude_guard_exit(prev)

    impl(qn, key, autocast_kernel, lib=lib)
