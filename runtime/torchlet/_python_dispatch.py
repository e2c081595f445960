"""The Python dispatch key: dispatch modes and ``__torch_dispatch__`` subclasses.

A call reaches the Python key when the thread has a dispatch mode (the key is
then in the thread's included set) or an argument is a subclass tensor (the
key is in that tensor's own key set, ``torchlet._subclass``). The key sits
below Autograd and ADInplaceOrView, so what arrives here has already been
recorded by autograd and decomposed by CompositeImplicitAutograd kernels.
With no mode and no subclass tensor the key is in no key set and this module
costs nothing.

At the key one boxed fallback (``tl_py_dispatch_fallback``) serves every
operator, as PyTorch's ``pythonFallback`` does:

1. the top mode of the thread's stack is popped for the duration of its
   handler, so ``func(*args)`` inside it reaches the next mode or the kernels
   (and the stack reads ``[]`` there when it was the only one);
2. if it returns NotImplemented, or there is no mode, each subclass type among
   the arguments (subclasses before their bases, then left to right) gets
   ``cls.__torch_dispatch__``;
3. all NotImplemented: PyTorch's TypeError "Multiple dispatch failed ...";
   nothing to ask at all: the call goes on below the Python key.

While a handler runs the autograd and ADInplaceOrView keys are excluded, as
in PyTorch (where autograd's kernel redispatches under
``AutoDispatchBelowADInplaceOrView``): a handler's own calls are not recorded
again and do not bump version counters twice.

The mode stack is per thread: user modes in push order, with "infra" modes
(FakeTensorMode) kept below every user mode whatever the entry order.
"""
from __future__ import annotations

import threading

from . import _boxing, _ops
from ._C import ffi, lib
from ._errors import set_pending_exception
from . import _tensor as _tensor_mod
from ._subclass import state_of
from ._tensor import Tensor

__all__ = ["push_mode", "pop_mode", "mode_stack", "top_mode", "exclude_python", "PYTHON_KEY_BIT"]

PYTHON_KEY_BIT = 1 << lib.TL_KEY_PYTHON
# what a handler runs below: every key above Python (autograd, ADInplaceOrView, ...)
_ABOVE_PYTHON = lib.tl_keyset_all() & ~((PYTHON_KEY_BIT << 1) - 1)
_AD_INPLACE_OR_VIEW_BIT = 1 << lib.TL_KEY_AD_INPLACE_OR_VIEW
_INFRA_ORDER = ("fake", "proxy", "functional")   # lowest first (PyTorch's TorchDispatchModeKey)


class _ModeState(threading.local):
    def __init__(self):
        self.user: list = []          # user modes, innermost last
        self.infra: dict = {}         # infra key -> mode
        self.in_handler: list = []    # modes whose handler is running (re-entry check)


_state = _ModeState()


def _sync_key() -> None:
    """The Python key is in the thread's included set exactly while a mode is pushed."""
    inc = lib.tl_tls_get_included()
    want = inc | PYTHON_KEY_BIT if (_state.user or _state.infra) else inc & ~PYTHON_KEY_BIT
    if want != inc:
        lib.tl_tls_set_included(want)


def mode_stack() -> list:
    """Bottom first: the infra modes, then the user modes in push order."""
    st = _state
    return [st.infra[k] for k in _INFRA_ORDER if k in st.infra] + st.user


def top_mode():
    st = _state
    if st.user:
        return st.user[-1]
    for k in reversed(_INFRA_ORDER):
        if k in st.infra:
            return st.infra[k]
    return None


def push_mode(mode) -> None:
    st = _state
    if any(m is mode for m in st.in_handler):
        raise RuntimeError(
            f"{type(mode).__name__} is being entered inside its own __torch_dispatch__: a mode is popped "
            "while its handler runs, and `with self:` there would send every call the handler makes back "
            "to the handler (endless recursion, pytorch#111014). Call func(*args, **kwargs) directly.")
    key = getattr(mode, "_mode_key", None)
    if key is not None:
        if key in st.infra:
            raise AssertionError(f"a {key} mode is already active: {st.infra[key]!r}")
        st.infra[key] = mode
    else:
        st.user.append(mode)
    _sync_key()


def pop_mode(key=None):
    """Pops the top user mode (or, with none, the top infra mode); ``key`` pops that infra mode."""
    st = _state
    if key is not None:
        mode = st.infra.pop(key, None)
        if mode is None:
            raise AssertionError(f"no {key} mode is active")
    elif st.user:
        mode = st.user.pop()
    else:
        for k in reversed(_INFRA_ORDER):
            if k in st.infra:
                mode = st.infra.pop(k)
                break
        else:
            raise AssertionError("Trying to pop from an empty mode stack")
    _sync_key()
    return mode


def _pop_top():
    """(mode, infra key or None) of the top mode, popped; the Python key is left
    to the caller (the handler's call site toggles it once)."""
    st = _state
    if st.user:
        return st.user.pop(), None
    for k in reversed(_INFRA_ORDER):
        if k in st.infra:
            return st.infra.pop(k), k
    return None, None


class exclude_python:
    """Run below the Python key: subclass tensors and modes are not consulted
    (PyTorch's ``_DisableTorchDispatch`` / FakeTensor's kernel invocation)."""

    __slots__ = ("_prev",)

    def __enter__(self):
        self._prev = lib.tl_exclude_guard_enter(PYTHON_KEY_BIT)
        return self

    def __exit__(self, *exc):
        lib.tl_exclude_guard_exit(self._prev)
        return False


# ------------------------------------------------------------------ the fallback

_overloads: dict = {}            # C operator pointer -> OpOverload
_overloads_gen = -1


def _overload_of(op):
    """The OpOverload of a C operator (cached per definition generation)."""
    global _overloads_gen
    if _overloads_gen != _ops._generation:
        _overloads.clear()
        _overloads_gen = _ops._generation
    ov = _overloads.get(op)        # cffi pointers hash and compare by address
    if ov is None:
        name = ffi.string(lib.tl_op_name(op)).decode()
        ov = _ops.lookup(name if "." in name.partition("::")[2] else name + ".default")
        kwonly = sum(1 for a in ov._schema.arguments if a.kwarg_only)
        defaults = tuple((a.has_default, _ops._default_of(a)) for a in ov._schema.arguments)
        composite = bool(lib.tl_op_has_registration(op, lib.TL_KEY_COMPOSITE_IMPLICIT_AUTOGRAD))
        ov._py_fallback_info = (ov._nargs, kwonly, tuple(a.name for a in ov._schema.arguments[ov._nargs - kwonly:]),
                                len(ov._schema.returns), defaults, composite)
        _overloads[op] = ov
    return ov


def _subclass_types(values) -> tuple:
    """The subclass types among the tensors of a call, subclasses before their
    bases, otherwise in order of appearance (PyTorch's overloaded-args order)."""
    found: list = []
    for v in values:
        if isinstance(v, Tensor):
            cands = (v,)
        elif isinstance(v, (list, tuple)):
            cands = v
        else:
            continue
        for t in cands:
            if isinstance(t, Tensor) and type(t) is not Tensor:
                cls = type(t)
                if getattr(cls, "__torch_dispatch__", None) is None or cls in found:
                    continue
                if state_of(t._p) is None:
                    continue
                pos = next((i for i, c in enumerate(found) if issubclass(cls, c)), len(found))
                found.insert(pos, cls)
    return tuple(found)


def _dispatch(func, args: tuple, kwargs: dict, ks: int):
    """Steps 1-3 of the module docstring; returns the call's Python result."""
    tried = []
    types = _subclass_types(args + tuple(kwargs.values())) if _tensor_mod._subclassed else ()
    st = _state
    mode, key = _pop_top()
    if mode is not None:
        emptied = not (st.user or st.infra)
        if emptied:      # the last mode: its handler's calls go straight to the kernels
            inc = lib.tl_tls_get_included()
            lib.tl_tls_set_included(inc & ~PYTHON_KEY_BIT)
        prev = lib.tl_exclude_guard_enter(_ABOVE_PYTHON)
        st.in_handler.append(mode)
        try:
            r = mode.__torch_dispatch__(func, types, args, kwargs)
        finally:
            st.in_handler.pop()
            lib.tl_exclude_guard_exit(prev)
            if key is None:
                st.user.append(mode)
            else:
                st.infra[key] = mode
            if emptied:
                lib.tl_tls_set_included(inc)
        if r is not NotImplemented:
            return r
        tried.append(f"mode object {mode!r}")
    for cls in types:
        prev = lib.tl_exclude_guard_enter(_ABOVE_PYTHON)
        try:
            r = cls.__torch_dispatch__(func, types, args, kwargs)
        finally:
            lib.tl_exclude_guard_exit(prev)
        if r is not NotImplemented:
            return r
        tried.append(f"tensor subclass {cls!r}")
    if not tried:     # nothing to ask: what lies below the Python key runs
        return func.redispatch(lib.tl_keyset_below(ks, lib.TL_KEY_PYTHON), *args, **kwargs)
    lines = "".join(f"\n  - {t}" for t in tried)
    raise TypeError(f"Multiple dispatch failed for 'torchlet._ops.{func}'; all __torch_dispatch__ handlers "
                    f"returned NotImplemented:\n{lines}\n\nFor more information, try re-running with "
                    f"TORCH_LOGS=not_implemented")


def _as_python(v, _wrapped=lib.tl_tensor_is_wrapped_number):
    """A wrapped number (the 2 of `x + 2`) is handed over as the number; take_args
    already made subclass tensors their objects."""
    if isinstance(v, Tensor) and _wrapped(v._p):
        return v.item()
    return v


def _is_default(v, default) -> bool:
    has, d = default
    if not has:
        return False
    if d is None or v is None:
        return v is d
    if isinstance(v, Tensor) or isinstance(d, Tensor):
        return False
    return type(v) is type(d) and v == d


@ffi.def_extern()
def tl_py_dispatch_fallback(kernel, op, ks, stack):
    """The Python key's fallback for every operator."""
    try:
        func = _overload_of(op)
        n, kwonly, kwnames, nret, defaults, composite = func._py_fallback_info
        if composite and not lib.tl_tls_get_excluded() & _AD_INPLACE_OR_VIEW_BIT \
                and not lib.tl_op_has_registration(op, lib.TL_KEY_CPU) \
                and not getattr(top_mode(), "record_composites", False):   # (read live: registrations change)
            # grad mode off (no_grad, the backward pass) excluded the Autograd key
            # where a CompositeImplicitAutograd kernel runs; PyTorch's grad mode
            # keeps that key, so its modes see the decomposition: run it here
            # (only inference mode, which also excludes ADInplaceOrView, hands a
            # composite operator to the modes whole, as PyTorch's does; so does a
            # mode with `record_composites` set: torchlet.compile's tracer records
            # the operators a backward formula calls as they are called)
            return lib.tl_op_redispatch_boxed(op, lib.tl_keyset_below(ks, lib.TL_KEY_PYTHON), stack)
        vals = _boxing.take_args(stack, n)
        if lib.tl_stack_drop(stack, n) < 0:
            return -1
        vals = [_as_python(v) for v in vals]
        # as PyTorch hands them over: keyword-only arguments by keyword, and
        # only where they differ from their defaults; trailing positional
        # arguments equal to their defaults left out
        kwargs = {}
        npos = n - kwonly
        for j in range(npos, n):
            if not _is_default(vals[j], defaults[j]):
                kwargs[kwnames[j - npos]] = vals[j]
        while npos and _is_default(vals[npos - 1], defaults[npos - 1]):
            npos -= 1
        result = _dispatch(func, tuple(vals[:npos]), kwargs, ks)
        return _boxing.push_returns(stack, result, nret, op, "__torch_dispatch__")
    except BaseException as e:  # noqa: BLE001 - becomes the thread-local error; the caller raises it
        set_pending_exception(e)
        return -1


_fallback_id = lib.tl_register_backend_fallback(lib.TL_KEY_PYTHON, lib.tl_py_dispatch_fallback, ffi.NULL,
                                                b"torchlet._python_dispatch (modes, tensor subclasses)")
if _fallback_id < 0:
    from ._errors import raise_pending_error
    raise_pending_error()
