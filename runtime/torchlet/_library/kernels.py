"""``register_kernel`` and ``register_autocast`` for any operator."""
from __future__ import annotations

_autocast_policies: dict[tuple[str, str], object] = {}   # (qualname, device type) -> dtype


def register_kernel(op, device_types, func=None, /, *, lib=None):
    """Register ``func`` as the kernel of ``op`` for ``device_types`` ("cpu",
    ["cpu", "cuda"], or None for every device); usable as a decorator."""
    from ..library import impl
    from .custom_ops import CustomOpDef

    if isinstance(op, CustomOpDef):
        return op.register_kernel(device_types, func)
    return impl(op, "default" if device_types is None else device_types, func, lib=lib)


def register_autocast(op, device_type: str, cast_inputs, /, *, lib=None):
    """Record that ``op`` runs with its floating inputs cast to ``cast_inputs``
    under autocast on ``device_type``. torchlet has no autocast layer yet:
    the policy is kept (``autocast_policy``) for it to apply."""
    from .. import _dtype
    from ..library import _opname_of
    from .custom_ops import CustomOpDef

    if device_type not in ("cpu", "cuda"):
        raise ValueError(f"register_autocast: device_type must be 'cpu' or 'cuda', got {device_type!r}")
    if not isinstance(cast_inputs, _dtype.dtype):
        raise TypeError(f"register_autocast: cast_inputs must be a torchlet.dtype, got {type(cast_inputs).__name__}")
    qn = op._qualname if isinstance(op, CustomOpDef) else _opname_of(op)
    _autocast_policies[(qn, device_type)] = cast_inputs


def autocast_policy(op, device_type: str):
    """The dtype ``register_autocast`` recorded for (op, device type), or None."""
    from ..library import _opname_of
    return _autocast_policies.get((_opname_of(op), device_type))
