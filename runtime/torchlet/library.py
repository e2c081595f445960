"""torchlet.library: define operators and register kernels at run time
(PyTorch's ``torch.library``).

    lib = torchlet.library.Library("myops", "DEF")
    lib.define("scale(Tensor x, float alpha) -> Tensor")
    lib.impl("scale", scale_cpu, "CPU")
    torchlet.ops.myops.scale(x, 2.0)

Run-time operators live in the dispatcher's one operator table beside the
generated aten ones, parsed by the generator's own schema grammar
(``torchlet._schema``). A Python kernel is a *boxed* kernel: the dispatcher
calls one C trampoline (``tl_py_boxed_kernel``, an ``extern "Python"`` cffi
callback declared in build_ffi.py) whose ``ctx`` is a cffi handle to the
callable; the trampoline turns the stack into Python arguments (kwarg-only
ones as keywords), calls it and pushes its results; an exception becomes the
thread-local C error of the same type and the caller sees it raised again.

Lifetime: registrations are global. They stay when the Library object is
garbage collected, and go with ``lib._destroy()`` or at the end of a
``with Library(...) as lib:`` block (the previous kernels come back, defined
operators disappear from ``torchlet.ops``).

Custom operators (``custom_op``), fake kernels, autograd registration and
``opcheck`` are built on this module: see ``torchlet._library``.
"""
from __future__ import annotations

import sys
import threading

from . import _boxing
from . import _ops
from . import _schema as _sch
from . import _tags
from ._C import ffi, lib
from ._dispatch import DispatchKeySet, _key
from ._errors import raise_pending_error, set_pending_exception

__all__ = [
    "Library", "fallthrough_kernel", "define", "impl", "register_kernel", "register_fake",
    "register_autograd", "register_autocast", "infer_schema", "get_ctx", "opcheck", "custom_op",
    "CustomOpDef", "call", "register_c_kernel", "load_library", "c_include_dir",
]

_lock = threading.RLock()
_live: dict[int, tuple] = {}          # registration id -> (handle, Library, ...) while registered
_retired: list = []                   # handles of removed registrations (a racing call may still use one)
_def_namespaces: dict[str, str] = {}  # namespace -> where its DEF library was made
_def_sites: dict[str, str] = {}      # qualname -> where Library.define ran
_keep_alive: list["Library"] = []     # fragments made by the module-level functions

_RESERVED_NAMESPACES = ("prim",)
_DEVICE_KEYS = {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta", "privateuseone": "PrivateUse1",
                "default": "CompositeExplicitAutograd"}


def fallthrough_kernel():
    """A marker: ``lib.impl(name, fallthrough_kernel, key)`` registers a fallthrough."""
    raise NotImplementedError("fallthrough_kernel() should never be called")


def _where(depth: int = 2) -> str:
    """file:line of the user's frame that made a registration (the first outside torchlet)."""
    f = sys._getframe(depth)
    while f is not None and f.f_globals.get("__name__", "").partition(".")[0] == "torchlet":
        f = f.f_back
    return f"{f.f_code.co_filename}:{f.f_lineno}" if f is not None else "<unknown>"


# ------------------------------------------------------------------ the trampoline

@ffi.def_extern()
def tl_py_boxed_kernel(kernel, op, ks, stack):
    """The trampoline every Python kernel and fallback runs through."""
    try:
        entry = ffi.from_handle(kernel.ctx)
        fn, with_keyset, fallback, kwnames, gen, n, nret = entry
        if gen != _ops._generation:             # first call, or operators were (re)defined since
            n, nret = lib.tl_op_num_arguments(op), lib.tl_op_num_returns(op)
            kwnames = () if fallback else _kwarg_names(op)
            if not fallback and kwnames is not None:
                entry[3:] = kwnames, _ops._generation, n, nret
        args = _boxing.take_args(stack, n)      # the arguments, moved out of the stack
        if lib.tl_stack_drop(stack, n) < 0:
            return -1
        if kwnames:
            k = len(kwnames)
            kwargs = dict(zip(kwnames, args[n - k:]))
            del args[n - k:]
        else:
            kwargs = {}
        if fallback:
            args.insert(0, ffi.string(lib.tl_op_name(op)).decode())
        if with_keyset:
            args.insert(0, DispatchKeySet(ks))
        result = fn(*args, **kwargs)
        return _boxing.push_returns(stack, result, nret, op, "the kernel")
    except BaseException as e:  # noqa: BLE001 - becomes the thread-local error; the caller raises e itself
        set_pending_exception(e)
        return -1


def _kwarg_names(op) -> tuple | None:
    """The keyword-only argument names of an operator's schema (None while it has none defined)."""
    if op is None or not lib.tl_op_is_defined(op):
        return None
    try:
        schema = _sch.parse(ffi.string(lib.tl_op_schema(op)).decode(), "x")
    except _sch.SchemaParseError:
        return ()
    return tuple(a.name for a in schema.arguments if a.kwarg_only)


def _kernel_entry(fn, with_keyset: bool, fallback: bool) -> list:
    """What the trampoline's ctx handle points at: [fn, with_keyset, fallback, and
    the operator's kwarg names, argument and return counts cached for the definition
    generation they were read in (a fallback serves every operator: never cached)]."""
    return [fn, with_keyset, fallback, None, -1, -1, -1]


# ------------------------------------------------------------------ Library

class Library:
    """A set of registrations in one namespace (``kind``: "DEF", "IMPL" or
    "FRAGMENT"); ``dispatch_key`` is the default key of its ``impl`` calls."""

    def __init__(self, ns: str, kind: str, dispatch_key: str = ""):
        if kind not in ("DEF", "IMPL", "FRAGMENT"):
            raise ValueError(f"Unsupported kind: {kind}")
        if not isinstance(ns, str) or not ns.isidentifier():
            raise ValueError(f"Library namespace must be an identifier, got {ns!r}")
        if ns in _RESERVED_NAMESPACES and kind in ("DEF", "FRAGMENT"):
            raise ValueError(f"{ns} is a reserved namespace. Please try creating a library with another name.")
        if dispatch_key:
            _key(dispatch_key)  # an unknown key fails here, not at the first impl
        where = _where()
        if kind == "DEF":
            with _lock:
                prev = _def_namespaces.get(ns)
                if prev is None and ns == "aten":
                    prev = "torchlet's generated registrations (generated/csrc/register_all.c)"
                if prev is not None:
                    raise RuntimeError(
                        f"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; please put "
                        f"all of your definitions in a single TORCH_LIBRARY block.  If you were trying to "
                        f"specify implementations, consider using TORCH_LIBRARY_IMPL (which can be "
                        f"duplicated).  If you really intended to define operators for a single namespace in "
                        f"a distributed way, you can use TORCH_LIBRARY_FRAGMENT to explicitly indicate this.  "
                        f"Previous registration of TORCH_LIBRARY was registered at {prev}; latest "
                        f"registration was registered at {where}")
                _def_namespaces[ns] = where
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._where = where
        self._ids: list[int] = []
        self._defs: list = []          # C handles of the operators this library defined
        self._destroyed = False

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._destroy()
        return False

    def _qualname(self, name: str) -> str:
        return name if "::" in name else f"{self.ns}::{name}"

    # -- define
    def define(self, schema: str, alias_analysis: str = "", *, tags=()) -> str:
        """Define an operator: ``lib.define("scale(Tensor x, float alpha) -> Tensor")``;
        returns its name ("scale", or "scale.overload")."""
        if self._destroyed:
            raise RuntimeError(f"{self!r} was destroyed; make a new Library")
        if self.kind == "IMPL":
            raise RuntimeError(
                f'def("{schema.split("(", 1)[0]}"): Cannot define an operator inside of a TORCH_LIBRARY_IMPL '
                f"block.  All def()s should be placed in the (unique) TORCH_LIBRARY block for their "
                f"namespace.  (Error occurred while processing TORCH_LIBRARY_IMPL block at {self._where})")
        if alias_analysis not in ("", "FROM_SCHEMA", "CONSERVATIVE"):
            raise RuntimeError(f"Invalid alias_analysis type {alias_analysis}")
        if not isinstance(schema, str):
            raise TypeError(f"define(): expected the schema as a str, got {type(schema).__name__}")
        try:
            parsed = _sch.parse(schema, self.ns)
        except _sch.SchemaParseError as e:
            raise RuntimeError(_sch.caret_message(e.message, schema, e.offset, e.hint)) from None
        if parsed.name.split("::", 1)[0] != self.ns:
            raise ValueError(f"define(): the schema names namespace '{parsed.name.split('::', 1)[0]}' but this "
                             f"library is for '{self.ns}'")
        qn = parsed.name + (f".{parsed.overload_name}" if parsed.overload_name else "")
        text = str(parsed)
        with _lock:
            if lib.tl_op_find(qn.encode()) != ffi.NULL:
                raise RuntimeError(
                    f"Tried to register an operator ({text}) with the same name and overload name multiple "
                    f"times. Each overload's schema should only be registered with a single call to def(). "
                    f"Duplicate registration: registered at {_where()}. Original registration: registered at "
                    f"{_def_sites.get(qn, '<unknown>')}")
            lib.tl_clear_error()
            op = lib.tl_op_define(qn.encode(), text.encode())
            if op == ffi.NULL:
                raise_pending_error()
            self._defs.append(op)
            _def_sites[qn] = _where()
            _tags.set_tags(qn, tags if isinstance(tags, (tuple, list)) else (tags,))
            _ops.forget(qn)
        base = qn.split("::", 1)[1]
        return base

    # -- impl
    def impl(self, op_name, fn, dispatch_key: str = "", *, with_keyset: bool = False,
             allow_override: bool = True, _gated: bool = False):
        """Register ``fn`` as the kernel of ``op_name`` ("scale", "add.Tensor", an OpOverload)
        at a dispatch key (runtime or alias; default: the library's, else
        CompositeImplicitAutograd)."""
        if self._destroyed:
            raise RuntimeError(f"{self!r} was destroyed; make a new Library")
        if not callable(fn):
            raise TypeError(f"Input function is required to be a callable but found type {type(fn)}")
        if isinstance(op_name, _ops.OpOverload):
            qn = op_name.name()
        elif isinstance(op_name, str):
            qn = self._qualname(op_name)
        else:
            raise TypeError(f"impl should be passed either a name or an OpOverload object as the first "
                            f"argument; got {type(op_name).__name__}")
        key_name = dispatch_key or self.dispatch_key or "CompositeImplicitAutograd"
        key = _key(key_name)
        op = lib.tl_op_declare(qn.encode())
        if op == ffi.NULL:
            raise_pending_error()
        opname = qn.split("::", 1)[1].split(".")[0]
        if key == _key("Meta") and lib.tl_op_has_registration(op, _key("CompositeImplicitAutograd")):
            raise RuntimeError(
                f"We should not register a meta kernel directly to the operator '{opname}', because it has a "
                f"CompositeImplicitAutograd kernel in core. Instead we should let the operator decompose, and "
                f"ensure that we have meta kernels for the base ops that it decomposes into.")
        with _lock:
            if not allow_override and any(e[2] == qn and e[3] == key and e[0] is not None
                                          for e in _live.values()):
                ns = qn.split("::", 1)[0]
                raise RuntimeError(
                    f"This is not allowed since there's already a kernel registered from python overriding "
                    f"{opname}'s behavior for {key_name} dispatch key and {ns} namespace.")
            if fn is fallthrough_kernel:
                rid = lib.tl_op_register_fallthrough(op, key, b"fallthrough registered from Python")
                handle = None
            else:
                handle = ffi.new_handle(_kernel_entry(fn, with_keyset, False))
                debug = f"{getattr(fn, '__name__', type(fn).__name__)} (Python kernel)".encode()
                if _gated:   # behind the C autograd gate: Python runs only when a graph is recorded
                    inner = ffi.new("tl_kernel *", {"boxed": lib.tl_py_boxed_kernel, "ctx": handle,
                                                    "key": key})
                    handle = (handle, inner)
                    rid = lib.tl_op_register_kernel(op, key, ffi.NULL, lib.tl_autograd_gate_boxed, inner,
                                                    debug)
                else:
                    rid = lib.tl_op_register_kernel(op, key, ffi.NULL, lib.tl_py_boxed_kernel, handle, debug)
            if rid < 0:
                raise_pending_error()
            _live[rid] = (handle, self, qn, key)
            self._ids.append(rid)

    def _register_c(self, qn: str, key: int, boxed, unboxed, ctx, debug: str) -> int:
        op = lib.tl_op_declare(qn.encode())
        if op == ffi.NULL:
            raise_pending_error()
        rid = lib.tl_op_register_kernel(op, key, unboxed, boxed, ctx, debug.encode())
        if rid < 0:
            raise_pending_error()
        with _lock:
            _live[rid] = (ctx, self, qn, key)
            self._ids.append(rid)
        return rid

    def fallback(self, fn, dispatch_key: str = "", *, with_keyset: bool = False):
        """A backend fallback: ``fn(op_name, *args)`` serves every operator at the key."""
        if self.ns != "_":
            raise ValueError(f'fallback can only be registered using library fragment on the global '
                             f'namespace "_" but it is {self.ns}')
        key = _key(dispatch_key or self.dispatch_key)
        if fn is fallthrough_kernel:
            rid = lib.tl_register_backend_fallthrough(key, b"fallthrough registered from Python")
            handle = None
        else:
            handle = ffi.new_handle(_kernel_entry(fn, with_keyset, True))
            debug = f"{getattr(fn, '__name__', repr(fn))} (Python fallback)".encode()
            rid = lib.tl_register_backend_fallback(key, lib.tl_py_boxed_kernel, handle, debug)
        if rid < 0:
            raise_pending_error()
        with _lock:
            _live[rid] = (handle, self, None, key)
        self._ids.append(rid)

    # -- lifetime
    def _destroy(self) -> None:
        """Remove every registration and definition of this library (previous kernels return)."""
        with _lock:
            while self._ids:
                rid = self._ids.pop()
                lib.tl_dispatch_deregister(rid)
                # another thread may have loaded the kernel just before and be about
                # to call it: like the dispatcher's retired kernel entries, its
                # Python handle is kept for the life of the process
                _retired.append(_live.pop(rid, None))
            for op in self._defs:
                qn = ffi.string(lib.tl_op_name(op)).decode()
                lib.tl_op_undefine(op)
                _ops.forget(qn)
                _tags._runtime_tags.pop(qn, None)
                _def_sites.pop(qn, None)
            self._defs.clear()
            if self.kind == "DEF" and _def_namespaces.get(self.ns) == self._where:
                del _def_namespaces[self.ns]
            self._destroyed = True


def _fragment(ns: str) -> Library:
    lb = Library(ns, "FRAGMENT")
    _keep_alive.append(lb)
    return lb


def _split_qualname(qualname: str) -> tuple[str, str]:
    if not isinstance(qualname, str):
        raise TypeError(f"expected an operator name like 'mylib::op', got {type(qualname).__name__}")
    ns, sep, name = qualname.partition("::")
    if not sep or not ns or not name:
        raise ValueError(f"expected the operator name to look like 'namespace::name', got {qualname!r}")
    return ns, name


def define(qualname: str, schema: str, *, lib: Library | None = None, tags=()):
    """``torchlet.library.define("mylib::foo", "(Tensor x) -> Tensor")``."""
    ns, name = _split_qualname(qualname)
    if not isinstance(schema, str) or not schema.lstrip().startswith("("):
        raise ValueError(
            f"define(qualname, schema, ...): expected schema to look like e.g. \"(Tensor x) -> Tensor\" but "
            f"got \"{schema}\"")
    lb = lib if lib is not None else _fragment(ns)
    lb.define(name + schema.lstrip(), tags=tags)


def _keys_for(types) -> list[str]:
    keys = [types] if isinstance(types, str) else list(types)
    out = []
    for t in keys:
        if not isinstance(t, str):
            raise TypeError(f"expected a device type string, got {type(t).__name__}")
        base = t.split(":")[0]
        out.append(_DEVICE_KEYS.get(base, t))
    return out


def _opname_of(op) -> str:
    from ._library.custom_ops import CustomOpDef
    if isinstance(op, CustomOpDef):
        return op._qualname
    if isinstance(op, _ops.OpOverload):
        return op.name()
    if isinstance(op, _ops.OpOverloadPacket):
        return op._qualified_op_name
    if isinstance(op, str):
        _split_qualname(op)
        return op
    raise TypeError(f"expected an operator (a 'ns::name' string, OpOverload or CustomOpDef), got "
                    f"{type(op).__name__}")


def impl(qualname, types, func=None, *, lib: Library | None = None):
    """``torchlet.library.impl("mylib::foo", "cpu", fn)`` or as a decorator;
    ``types``: device types ("cpu", "cuda", "meta"), "default"
    (CompositeExplicitAutograd) or dispatch key names."""
    qn = _opname_of(qualname)
    keys = _keys_for(types)

    def register(f):
        ns, name = _split_qualname(qn)
        lb = lib if lib is not None else _fragment(ns)
        for k in keys:
            lb.impl(name, f, k)
        return f

    return register(func) if func is not None else register


def call(qualname: str, *args):
    """Call an operator boxed through the dispatcher with every argument of the
    schema in order, defaults included: ``call("aten::add.Tensor", a, b, 1)``.
    ``torchlet.ops`` is the keyword-aware spelling of the same call."""
    op = lib.tl_op_find(qualname.encode())
    if op == ffi.NULL:
        raise_pending_error()
    nargs = lib.tl_op_num_arguments(op)
    if len(args) != nargs:
        raise TypeError(f"{qualname} takes {nargs} arguments ({len(args)} given)")
    return _ops.lookup(qualname)(*args)


def register_c_kernel(qualname, dispatch_key: str, boxed, *, unboxed=None, ctx=None,
                      lib: Library | None = None, name: str | None = None) -> int:
    """Register a compiled kernel for ``qualname`` at ``dispatch_key``.

    ``boxed`` is a C function of type ``tl_boxed_fn`` (runtime/include/tl_dispatch.h):
    a cffi function pointer, a ctypes function pointer, or its address as an int.
    ``unboxed`` (optional) is the operator's C ABI function (docs/OPERATOR_ABI.md),
    used by generated entry points instead of boxing. ``ctx`` is an address handed
    to the kernel as ``kernel->ctx``. Returns the registration id."""
    qn = _opname_of(qualname)
    ns, _ = _split_qualname(qn)
    key = _key(dispatch_key)

    def fnptr(p, ctype):
        if p is None:
            return ffi.NULL
        if isinstance(p, ffi.CData):
            return ffi.cast(ctype, p)
        addr = p if isinstance(p, int) else _ctypes_address(p)
        if not addr:
            raise ValueError("register_c_kernel: a NULL function pointer")
        return ffi.cast(ctype, addr)

    b = fnptr(boxed, "tl_boxed_fn")
    if b == ffi.NULL:
        raise ValueError("register_c_kernel: the boxed function is required")
    u = fnptr(unboxed, "void *")
    c = ffi.NULL if ctx is None else ffi.cast("void *", ctx if isinstance(ctx, int) else _ctypes_address(ctx))
    lb = lib if lib is not None else _fragment(ns)
    return lb._register_c(qn, key, b, u, c, name or f"C kernel of {qn}")


def _ctypes_address(p) -> int:
    import ctypes
    return ctypes.cast(p, ctypes.c_void_p).value or 0


# ------------------------------------------------------------------ operator libraries in C

_runtime_global = None                # the RTLD_GLOBAL re-open of torchlet._C (kept: never closed)
_loaded_libraries: dict[str, object] = {}   # real path -> ctypes.CDLL of each loaded library


def _make_runtime_global():
    """Re-open torchlet._C's own shared object with RTLD_GLOBAL | RTLD_NOLOAD.

    Python loaded it RTLD_LOCAL, so its symbols (tl_stack_pop_tensor, tl_op_define,
    ...) are invisible to libraries loaded later. RTLD_NOLOAD finds the copy that is
    already mapped and only promotes it to the global scope: never a second runtime."""
    global _runtime_global
    if _runtime_global is None:
        import ctypes
        import os
        from . import _C
        try:
            _runtime_global = ctypes.CDLL(_C.__file__, mode=os.RTLD_GLOBAL | os.RTLD_NOLOAD)
        except OSError as e:
            raise RuntimeError(f"load_library: could not make torchlet's runtime ({_C.__file__}) visible to "
                               f"other libraries: {e}") from None
    return _runtime_global


def load_library(path):
    """Load a shared library of operators into the process and return its
    ``ctypes.CDLL`` handle (``torchlet.ops.load_library`` is the same function,
    PyTorch's spelling).

    The library calls torchlet's C API (runtime/include, see ``c_include_dir``)
    without linking anything: first torchlet._C's symbols are made global
    (RTLD_NOLOAD, the loaded copy), then the library is loaded, its ``tl_*``
    references resolve to that runtime and its constructors run. A constructor
    may define operators and register kernels itself (``tl_op_define`` +
    ``tl_op_register_kernel``); exported kernels can be registered from Python
    with ``register_c_kernel(qualname, key, handle.my_kernel)``. Loading the same
    file again returns the same handle (its constructors do not run again).
    A library cannot be unloaded. See docs/EXTENDING.md, "Kernels in C"."""
    import ctypes
    import os
    real = os.path.realpath(os.fspath(path))
    with _lock:
        handle = _loaded_libraries.get(real)
        if handle is None:
            _make_runtime_global()
            handle = ctypes.CDLL(real)       # OSError when it cannot be loaded (as torch)
            _loaded_libraries[real] = handle
    return handle


def c_include_dir() -> str:
    """The directory of torchlet's C headers (tl_dispatch.h, tl_ivalue.h, tl_tensor.h,
    tl_error.h ...), for ``gcc -I`` when compiling a kernel library."""
    import os
    d = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "include")
    if not os.path.isfile(os.path.join(d, "tl_dispatch.h")):
        raise RuntimeError(f"torchlet's C headers are not at {d}: c_include_dir() needs the source tree "
                           f"(an editable install, pip install -e .)")
    return d


# The custom-operator layer (torchlet._library) builds on the Library above.
from ._library.custom_ops import CustomOpDef, custom_op  # noqa: E402
from ._library.fake_impl import get_ctx, register_fake  # noqa: E402
from ._library.autograd import register_autograd  # noqa: E402
from ._library.infer_schema import infer_schema  # noqa: E402
from ._library.kernels import register_autocast, register_kernel  # noqa: E402
from ._library.opcheck import opcheck  # noqa: E402
