"""Turning the C runtime's thread-local error into the matching Python exception.

Every C entry point reports failure by returning NULL / -1 with a thread-local
error (kind + message) set; `check` / `check_ptr` raise it. The error lives in
the calling OS thread, which is the Python thread that made the cffi call.
"""
from __future__ import annotations

import sys
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
_take_parked = lib.tl_pyabi_take_parked


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


def _caller_stacklevel() -> int:
    """warnings.warn's stacklevel, from emit_warnings' caller, of the first
    frame outside torchlet (generated bindings and their Python wrappers): the
    user's line, where PyTorch's warning handler points (the caller of the
    builtin)."""
    f = sys._getframe(2)  # emit_warnings' caller: stacklevel 2 of its warnings.warn
    level = 2
    while f is not None and f.f_globals.get("__name__", "").partition(".")[0] == "torchlet":
        f = f.f_back
        level += 1
    return level


def emit_warnings() -> None:
    """Raise the warnings the runtime recorded on this thread, oldest first, as
    UserWarnings at the caller's line (an "error" filter makes it raise)."""
    while _has_warning():
        msg = ffi.string(_take_warning()).decode("utf-8", "replace")
        warnings.warn(msg, UserWarning, stacklevel=_caller_stacklevel())


def _emit_before_error() -> None:
    """Warnings recorded before a failure are shown, then the error raised (as
    PyTorch's handler); a warning turned into an exception does not replace it."""
    try:
        emit_warnings()
    except Exception:  # noqa: BLE001 - the operator's error wins
        while _has_warning():
            _take_warning()


def pending_result():
    """A functional entry point returned NULL (its binding's slow path): with
    warnings pending, they are raised and its result (parked by the cffi
    wrapper, tl_pyabi_tensor) is returned; otherwise the pending error."""
    p = _take_parked()
    if p:
        try:
            emit_warnings()
        except BaseException:
            lib.tl_tensor_release(p)
            raise
        return p
    err = pending_error()  # taken first: a warnings hook may call operators
    _emit_before_error()
    raise err


def flush_warnings(stacklevel: int = 3) -> None:
    """Re-raise warnings the runtime recorded on this thread as UserWarning
    (for hand-written callers of the C API; generated bindings use emit_warnings)."""
    while _has_warning():
        warnings.warn(ffi.string(_take_warning()).decode("utf-8", "replace"), UserWarning, stacklevel=stacklevel)
