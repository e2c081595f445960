"""torchlet.library: Python kernels and operators through the dispatcher
(a subset of ``torch.library``).

    lib = torchlet.library.Library("aten", "IMPL")
    lib.impl("add.Tensor", my_add, "CPU")      # my_add(self, other, alpha) -> Tensor
    ...
    lib._destroy()                              # the previous kernels come back

A Python kernel is a *boxed* kernel: the dispatcher calls one C trampoline
(``tl_py_boxed_kernel``, an ``extern "Python"`` cffi callback declared in
build_ffi.py) whose ``ctx`` is a cffi handle to the Python callable.  The
trampoline turns the stack's arguments into Python objects, calls the
function, and pushes its result(s); an exception becomes the thread-local C
error (same exception type for the built-in ones) and the caller sees it
raised again.  Backend fallbacks (``Library.fallback``) serve every operator
at one key: they are called as ``fn(op_name, *args)``.
"""
from __future__ import annotations

import threading

from . import _device as _dev
from . import _dtype as _dt
from ._C import ffi, lib
from ._dispatch import DispatchKeySet, _key
from ._errors import check_status, raise_pending_error
from ._tensor import Tensor, _wrap

__all__ = ["Library", "impl", "define", "call", "fallthrough_kernel"]

_live = {}            # registration id -> (handle, Library) kept alive while registered
_lock = threading.Lock()

_ERR_KINDS = (
    (MemoryError, lib.TL_ERR_MEMORY),
    (NotImplementedError, lib.TL_ERR_NOT_IMPLEMENTED),
    (IndexError, lib.TL_ERR_INDEX),
    (TypeError, lib.TL_ERR_TYPE),
    (ValueError, lib.TL_ERR_VALUE),
)


def fallthrough_kernel():
    """A marker: ``lib.impl(name, fallthrough_kernel, key)`` registers a fallthrough."""
    raise NotImplementedError("fallthrough_kernel() should never be called")


# ------------------------------------------------------------------ boxing

def _from_ivalue(v):
    tag = v.tag
    if tag == lib.TL_IV_TENSOR:
        lib.tl_tensor_retain(v.u.t)
        return _wrap(v.u.t)
    if tag == lib.TL_IV_INT:
        return v.u.i
    if tag == lib.TL_IV_DOUBLE:
        return v.u.d
    if tag == lib.TL_IV_BOOL:
        return bool(v.u.i)
    if tag == lib.TL_IV_NONE:
        return None
    if tag == lib.TL_IV_INT_LIST:
        return list(ffi.unpack(v.u.ints.data, v.u.ints.len)) if v.u.ints.len else []
    if tag == lib.TL_IV_DOUBLE_LIST:
        return list(ffi.unpack(v.u.doubles.data, v.u.doubles.len)) if v.u.doubles.len else []
    if tag == lib.TL_IV_BOOL_LIST:
        return [bool(x) for x in ffi.unpack(v.u.bools.data, v.u.bools.len)] if v.u.bools.len else []
    if tag in (lib.TL_IV_TENSOR_LIST, lib.TL_IV_OPT_TENSOR_LIST):
        out = []
        for i in range(v.u.tensors.len):
            t = v.u.tensors.data[i]
            if t == ffi.NULL:
                out.append(None)
            else:
                lib.tl_tensor_retain(t)
                out.append(_wrap(t))
        return out
    if tag == lib.TL_IV_DTYPE:
        return _dt._BY_ID[v.u.i]
    if tag == lib.TL_IV_DEVICE:
        return _dev._BY_ID[v.u.device.type]
    if tag == lib.TL_IV_STRING:
        return ffi.string(v.u.s).decode()
    if tag == lib.TL_IV_COMPLEX:
        return complex(v.u.c.re, v.u.c.im)
    raise TypeError(f"torchlet.library: cannot pass a boxed value with tag {tag} to Python")


def _push(stack, x) -> int:
    if isinstance(x, Tensor):
        return lib.tl_stack_push_tensor(stack, x._p)
    if x is None:
        return lib.tl_stack_push_none(stack)
    if isinstance(x, bool):
        return lib.tl_stack_push_bool(stack, x)
    if isinstance(x, int):
        return lib.tl_stack_push_int(stack, x)
    if isinstance(x, float):
        return lib.tl_stack_push_double(stack, x)
    if isinstance(x, (list, tuple)) and all(isinstance(t, Tensor) for t in x):
        return lib.tl_stack_push_tensor_list(stack, [t._p for t in x], len(x))
    if isinstance(x, (list, tuple)) and x and all(type(i) is bool for i in x):  # bool[N] (output_mask)
        return lib.tl_stack_push_bool_list(stack, [int(i) for i in x], len(x))
    if isinstance(x, (list, tuple)) and all(type(i) is int for i in x):
        return lib.tl_stack_push_int_list(stack, list(x), len(x))
    if isinstance(x, _dt.dtype):
        return lib.tl_stack_push_dtype(stack, x._id)
    raise TypeError(f"torchlet.library: a kernel returned {type(x).__name__}, which cannot be boxed")


def _set_error(e: BaseException) -> None:
    kind = lib.TL_ERR_RUNTIME
    for cls, k in _ERR_KINDS:
        if isinstance(e, cls):
            kind = k
            break
    msg = str(e) if str(e) else type(e).__name__
    lib.tl_set_error(kind, b"%s", ffi.new("char[]", msg.encode("utf-8", "replace")))


@ffi.def_extern()
def tl_py_boxed_kernel(kernel, op, ks, stack):
    """The trampoline every Python kernel and fallback runs through."""
    try:
        entry = ffi.from_handle(kernel.ctx)
        n = lib.tl_op_num_arguments(op)
        args = [_from_ivalue(lib.tl_stack_peek(stack, d)) for d in range(n - 1, -1, -1)]
        if lib.tl_stack_drop(stack, n) < 0:
            return -1
        fn, with_keyset, fallback = entry
        if fallback:
            args.insert(0, ffi.string(lib.tl_op_name(op)).decode())
        if with_keyset:
            args.insert(0, DispatchKeySet(ks))
        result = fn(*args)
        nret = lib.tl_op_num_returns(op)
        if nret == 0:
            return 0
        results = (result,) if nret == 1 else tuple(result)
        if len(results) != nret:
            raise RuntimeError(f"kernel returned {len(results)} values, the schema has {nret}")
        for r in results:
            if _push(stack, r) < 0:
                return -1
        return 0
    except BaseException as e:  # noqa: BLE001 - becomes the thread-local error
        _set_error(e)
        return -1


# ------------------------------------------------------------------ Library

class Library:
    """A set of registrations in one namespace (``kind``: "DEF", "IMPL" or
    "FRAGMENT").  Registrations live until ``_destroy()`` (or the object is
    garbage collected)."""

    def __init__(self, ns: str, kind: str, dispatch_key: str = ""):
        if kind not in ("DEF", "IMPL", "FRAGMENT"):
            raise ValueError("Unsupported kind: ", kind)
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._ids: list[int] = []

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})"

    def _qualname(self, name: str) -> str:
        return name if "::" in name else f"{self.ns}::{name}"

    def define(self, schema: str, alias_analysis: str = "", *, tags=()) -> str:
        """Define a new operator from its schema: ``lib.define("myop(Tensor x) -> Tensor")``."""
        if self.kind == "IMPL":
            raise RuntimeError("define() is not allowed on an IMPL library")
        opname = schema.split("(", 1)[0].strip()
        if lib.tl_op_define(self._qualname(opname).encode(), schema.encode()) == ffi.NULL:
            raise_pending_error()
        return opname

    def impl(self, op_name: str, fn, dispatch_key: str = "", *, with_keyset: bool = False):
        """Register ``fn`` as the kernel of ``op_name`` ("add.Tensor") for a
        dispatch key (runtime or alias key; default: the library's)."""
        key = _key(dispatch_key or self.dispatch_key or "CompositeImplicitAutograd")
        qn = self._qualname(op_name)
        op = lib.tl_op_find(qn.encode())
        if op == ffi.NULL:
            raise_pending_error()
        if fn is fallthrough_kernel:
            rid = lib.tl_op_register_fallthrough(op, key, b"fallthrough registered from Python")
            handle = None
        else:
            handle = ffi.new_handle((fn, with_keyset, False))
            debug = f"{getattr(fn, '__name__', repr(fn))} (Python kernel)".encode()
            rid = lib.tl_op_register_kernel(op, key, ffi.NULL, lib.tl_py_boxed_kernel, handle, debug)
        if rid < 0:
            raise_pending_error()
        with _lock:
            _live[rid] = (handle, self)
        self._ids.append(rid)
        return fn

    def fallback(self, fn, dispatch_key: str = "", *, with_keyset: bool = False):
        """A backend fallback: ``fn(op_name, *args)`` serves every operator at the key."""
        key = _key(dispatch_key or self.dispatch_key)
        if fn is fallthrough_kernel:
            rid = lib.tl_register_backend_fallthrough(key, b"fallthrough registered from Python")
            handle = None
        else:
            handle = ffi.new_handle((fn, with_keyset, True))
            debug = f"{getattr(fn, '__name__', repr(fn))} (Python fallback)".encode()
            rid = lib.tl_register_backend_fallback(key, lib.tl_py_boxed_kernel, handle, debug)
        if rid < 0:
            raise_pending_error()
        with _lock:
            _live[rid] = (handle, self)
        self._ids.append(rid)
        return fn

    def _destroy(self) -> None:
        """Remove every registration of this library (previous kernels return)."""
        while self._ids:
            rid = self._ids.pop()
            lib.tl_dispatch_deregister(rid)
            # the kernel entry stays on the dispatcher's retired list, but its
            # ctx is never called again once deregistered
            with _lock:
                _live.pop(rid, None)

    def __del__(self):
        try:
            self._destroy()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


_default_libs: dict[str, Library] = {}


def impl(qualname: str, types, func=None, *, lib: Library | None = None):
    """``torchlet.library.impl("aten::add.Tensor", "CPU", fn)`` or as a decorator."""
    keys = [types] if isinstance(types, str) else list(types)

    def register(f):
        ns, _, name = qualname.partition("::")
        lb = lib or _default_libs.setdefault(ns, Library(ns, "FRAGMENT"))
        for k in keys:
            lb.impl(name, f, k)
        return f

    return register(func) if func is not None else register


def define(qualname: str, schema: str, *, lib: Library | None = None):
    """``torchlet.library.define("mylib::foo", "(Tensor x) -> Tensor")``."""
    ns, _, name = qualname.partition("::")
    lb = lib or _default_libs.setdefault(ns, Library(ns, "FRAGMENT"))
    return lb.define(name + schema if schema.startswith("(") else schema)


def call(qualname: str, *args):
    """Call an operator boxed through the dispatcher: every argument of the
    schema, in order (defaults included), as Python values ->
    the result (a tuple when the schema returns several values).

    ``torchlet.library.call("aten::add.Tensor", a, b, 1)`` runs the same
    kernel as ``a + b``; operators defined with ``Library.define`` have no
    generated binding and are called this way."""
    op = lib.tl_op_find(qualname.encode())
    if op == ffi.NULL:
        raise_pending_error()
    nargs = lib.tl_op_num_arguments(op)
    if len(args) != nargs:
        raise TypeError(f"{qualname} takes {nargs} arguments ({len(args)} given)")
    st = ffi.new("tl_stack *")
    lib.tl_stack_init(st)
    try:
        for x in args:
            if _push(st, x) < 0:
                raise_pending_error()
        check_status(lib.tl_op_call_boxed(op, st))  # its warnings, before an error or the result
        n = lib.tl_stack_size(st)
        out = tuple(_from_ivalue(lib.tl_stack_peek(st, d)) for d in range(n - 1, -1, -1))
    finally:
        lib.tl_stack_free(st)
    if len(out) == 1:
        return out[0]
    return out if out else None
