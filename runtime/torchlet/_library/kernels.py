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


_rules: list = []   # the C rules of register_autocast (kernels keep pointing at them)


def register_autocast(op, device_type: str, cast_inputs, /, *, lib=None):
    """Under autocast on ``device_type``, run ``op`` with its floating tensor
    inputs on that device (float64 excepted) cast to ``cast_inputs`` and
    autocast off inside (PyTorch's ``torch.library.register_autocast``): the
    generic autocast kernel (runtime/src/autocast.c) at the device's autocast
    key with a ``cast_to`` rule, reached only while autocast is on."""
    from .. import _dtype
    from .._C import ffi, lib as _lib, runtime_lib
    from ..library import _opname_of, register_c_kernel
    from .custom_ops import CustomOpDef

    if device_type not in ("cpu", "cuda"):
        raise ValueError(f"Device type '{device_type}' does not support autocast.")
    if not isinstance(cast_inputs, _dtype.dtype):
        raise TypeError(f"register_autocast: cast_inputs must be a torchlet.dtype, got {type(cast_inputs).__name__}")
    qn = op._qualname if isinstance(op, CustomOpDef) else _opname_of(op)
    name = ffi.new("char[]", qn.encode())
    source = ffi.new("char[]", f"register_autocast({qn!r}, {device_type!r}, {cast_inputs})".encode())
    rule = ffi.new("tl_autocast_rule *", {
        "op": name, "device": _lib.TL_CPU if device_type == "cpu" else _lib.TL_CUDA,
        "policy": _lib.TL_AUTOCAST_CAST_TO, "dtype_arg": -1, "source": source, "dtype": cast_inputs._id})
    _rules.append((rule, name, source))
    key = "AutocastCPU" if device_type == "cpu" else "AutocastCUDA"
    register_c_kernel(qn, key, ffi.addressof(runtime_lib, "tl_autocast_boxed"), ctx=int(ffi.cast("intptr_t", rule)), lib=lib,
                      name=f"autocast kernel of {qn} (cast to {cast_inputs})")
