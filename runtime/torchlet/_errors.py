"""Turning the C runtime's thread-local error into the matching Python exception.

Every C entry point reports failure by returning NULL / -1 with a thread-local
error (kind + message) set; `check` / `check_ptr` raise it. The error lives in
the calling OS thread, which is the Python thread that made the cffi call.

The other way round, Python code that C calls back (an autograd.Function's
backward run by the C engine) reports an exception with
`set_pending_exception`: it becomes the thread-local C error of the matching
kind, and the exception object itself is kept, so the Python caller of the C
entry point raises that very object (its type, message and traceback).
"""
from __future__ import annotations

import sys
import threading
import warnings

from ._C import ffi, lib

class OutOfMemoryError(RuntimeError):
    """torchlet.cuda.OutOfMemoryError: a CUDA allocation failed after the
    caching allocator gave its cached blocks back (PyTorch's
    torch.cuda.OutOfMemoryError, a RuntimeError)."""


OutOfMemoryError.__module__ = "torchlet.cuda"


class _LinAlgError(RuntimeError):
    """torchlet.linalg.LinAlgError: a LAPACK factorization or solve met a
    singular / not positive-definite matrix (PyTorch's torch._C._LinAlgError,
    a RuntimeError, exported as torch.linalg.LinAlgError)."""


_LinAlgError.__module__ = "torchlet._C"

_EXC = {
    lib.TL_ERR_LINALG: _LinAlgError,
    lib.TL_ERR_CUDA_OOM: OutOfMemoryError,
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


_held = threading.local()   # .exc: (exception, kind, message bytes) from set_pending_exception


def pending_error() -> BaseException:
    """The pending C error as an exception object (and clear it): the Python
    exception itself when it came from set_pending_exception on this thread
    and is still the pending error."""
    kind = _kind_get()
    raw = ffi.string(_message())
    _clear()
    held = getattr(_held, "exc", None)
    if held is not None:
        _held.exc = None
        # the C message is the held one, possibly truncated (2 KiB)
        if held[1] == kind and raw and held[2].startswith(raw):
            return held[0]
    if kind == lib.TL_OK:
        return RuntimeError("torchlet: a runtime call failed without reporting an error")
    return _EXC.get(kind, RuntimeError)(raw.decode("utf-8", "replace"))


def set_pending_exception(e: BaseException) -> None:
    """Make `e` the pending C error of this thread (for Python code called from
    C that must return its failure value): kind from its class (RuntimeError
    for anything unlisted), message str(e) or the class name; pending_error
    gives back `e` itself."""
    kind = lib.TL_ERR_RUNTIME
    for k, cls in reversed(_EXC.items()):   # subclasses of RuntimeError (NotImplementedError) first
        if cls is not RuntimeError and isinstance(e, cls):
            kind = k
            break
    msg = (str(e) or type(e).__name__).encode("utf-8", "replace")
    lib.tl_set_error(kind, b"%s", ffi.new("char[]", msg))
    _held.exc = (e, kind, msg)


def check(rc: int) -> int:
    """For int-returning entry points: raise on -1 (any negative)."""
    if rc < 0:
        raise_pending_error()
    return rc


def check_ptr(p):
    """For pointer-returning entry points: raise on NULL."""
    if not p:
        raise_pending_error()
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


def raise_pending_error():
    """Raise the pending C error, after the warnings recorded before it (as
    PyTorch's handler shows them); the error is taken first because a
    warnings hook may call operators."""
    err = pending_error()
    _emit_before_error()
    raise err


def _emit_keeping(p):
    """Raise the pending warnings for a call that returned the tensor ``p``
    (released if a warning turns into an exception); ``p``."""
    try:
        emit_warnings()
    except BaseException:
        lib.tl_tensor_release(p)
        raise
    return p


def pending_result():
    """A functional entry point returned NULL (its binding's slow path): with
    warnings pending, they are raised and its result (parked by the cffi
    wrapper, tl_pyabi_tensor) is returned; otherwise the pending error."""
    p = _take_parked()
    if p:
        return _emit_keeping(p)
    raise_pending_error()


def take_result(p):
    """The tensor a C call made by hand-written code returned (not a generated
    binding: _tensor._wrap, _rt, tests): NULL is the result the cffi wrapper
    parked while warnings are pending, or the error (pending_result); an entry
    point without the wrapper (out= / in-place entries) returns its result with
    the warnings still pending, and they are raised here, so none is left for
    the next call to find."""
    if not p:
        return pending_result()
    if _has_warning():
        _emit_keeping(p)
    return p


def check_status(rc: int) -> int:
    """An int status of a hand-written C call that may run operators
    (backward, boxed calls): a negative one raises the error after the warnings
    recorded before it; on success the warnings recorded during it are raised."""
    if rc < 0:
        raise_pending_error()
    if _has_warning():
        emit_warnings()
    return rc
