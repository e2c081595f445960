"""Turning the C runtime's thread-local error into the matching Python exception.

Every C entry point reports failure by returning NULL / -1 with a thread-local
error (kind + message) set; `check` / `check_ptr` raise it. The error lives in
the calling OS thread, which is the Python thread that made the cffi call.
"""
from __future__ import annotations

import warnings

from ._C import ffi, lib

_EXC = {
    lib.TL_ERR_RUNTIME: RuntimeError,
    lib.TL_ERR_VALUE: ValueError,
    lib.TL_ERR_INDEX: IndexError,
    lib.TL_ERR_TYPE: TypeError,
    lib.TL_ERR_NOT_IMPLEMENTED: NotImplementedError,
    lib.TL_ERR_MEMORY: MemoryError,
}

_kind_get = lib.tl_error_kind_get
_message = lib.tl_error_message
_clear = lib.tl_clear_error
_has_warning = lib.tl_has_warning
_take_warning = lib.tl_take_warning


def pending_error() -> BaseException:
    """The pending C error as an exception object (and clear it)."""
    kind = _kind_get()
    msg = ffi.string(_message()).decode("utf-8", "replace")
    _clear()
    if kind == lib.TL_OK:
        return RuntimeError("torchlet: a runtime call failed without reporting an error")
    return _EXC.get(kind, RuntimeError)(msg)


def raise_error():
    raise pending_error()


def check(rc: int) -> int:
    """For int-returning entry points: raise on -1 (any negative)."""
    if rc < 0:
        raise pending_error()
    return rc


def check_ptr(p):
    """For pointer-returning entry points: raise on NULL."""
    if not p:
        raise pending_error()
    return p


def flush_warnings(stacklevel: int = 3) -> None:
    """Re-raise warnings the runtime recorded on this thread as UserWarning."""
    if _has_warning():
        warnings.warn(ffi.string(_take_warning()).decode("utf-8", "replace"), UserWarning, stacklevel=stacklevel)
