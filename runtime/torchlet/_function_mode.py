"""The torch-function mode stack: what `torchlet.overrides.TorchFunctionMode`
pushes, and the one check every public Python entry point makes.

Cost with no mode active: each generated binding (and each hand-written
function that takes part) starts with

    if _TF and (r_ := _tf(func, locals())) is not _GO:
        return r_

where `_TF` is a global of the binding's own module: the number of modes on
the stacks of all threads.  It is 0 unless some thread has entered a mode, so
the operator path pays one global load and a truth test.  `watch(globals())`
registers a module whose `_TF` is kept equal to that count.

Only when `_TF` is nonzero is the thread-local stack read.  The top mode is
popped while its `__torch_function__` runs (PyTorch's rule), so calling
`func(*args, **kwargs)` inside reaches the next mode down or the real function.
This module imports nothing from torchlet: the generated bindings load it first.
"""
from __future__ import annotations

import threading

GO = object()  # "no mode on this thread: run the function itself"
_NOTHING = object()

_tls = threading.local()
_lock = threading.Lock()
_active = 0  # modes on all threads' stacks
_watched: list[dict] = []


def watch(module_globals: dict) -> None:
    """Keep `module_globals['_TF']` equal to the number of active modes."""
    _watched.append(module_globals)
    module_globals["_TF"] = _active


def _count(delta: int) -> None:
    global _active
    with _lock:
        _active += delta
        for g in _watched:
            g["_TF"] = _active


def stack() -> list:
    """This thread's mode stack (bottom first); the live list."""
    try:
        return _tls.stack
    except AttributeError:
        _tls.stack = s = []
        return s


def push(mode) -> None:
    stack().append(mode)
    _count(1)


def pop():
    s = stack()
    if not s:
        raise RuntimeError("trying to pop from empty mode stack")
    mode = s.pop()
    _count(-1)
    return mode


def disabled() -> int:
    return getattr(_tls, "disabled", 0)


def set_disabled(n: int) -> None:
    _tls.disabled = n


# ------------------------------------------------------------ the call path


def _spec(func):
    """How to turn a function's locals() back into (args, kwargs) as the user
    wrote them: positional parameters (trailing ones left at their default
    dropped), *args, keyword-only ones that differ from their default, **kwargs."""
    spec = _SPECS.get(func)
    if spec is None:
        co = func.__code__
        npos, nkw = co.co_argcount, co.co_kwonlyargcount
        names = co.co_varnames
        i = npos + nkw
        var = names[i] if co.co_flags & 0x04 else None
        varkw = names[i + (var is not None)] if co.co_flags & 0x08 else None
        defaults = func.__defaults__ or ()
        spec = (names[:npos], npos - len(defaults), defaults, names[npos:i], func.__kwdefaults__ or {}, var, varkw)
        _SPECS[func] = spec
    return spec


_SPECS: dict = {}


def _rebuild(func, loc: dict):
    pos, first_default, defaults, kwonly, kwdefaults, var, varkw = _spec(func)
    args = [loc[n] for n in pos]
    if var is not None and loc[var]:
        args.extend(loc[var])
    else:
        while len(args) > first_default and args[-1] is defaults[len(args) - 1 - first_default]:
            args.pop()
    kwargs = {}
    for n in kwonly:
        v = loc[n]
        if v is not kwdefaults.get(n, _NOTHING):
            kwargs[n] = v
    if varkw is not None:
        kwargs.update(loc[varkw])
    return tuple(args), kwargs


def handle(func, loc: dict):
    """A binding's entry check: `func` is the public callable, `loc` its
    locals() on entry.  GO when this thread has no mode (or they are disabled)."""
    s = stack()
    if not s or disabled():
        return GO
    args, kwargs = _rebuild(func, loc)
    return _call_top(s, func, args, kwargs)


def handle_args(func, args: tuple, kwargs: dict | None = None):
    """The same for callers that already hold args (the operator dunders)."""
    s = stack()
    if not s or disabled():
        return GO
    return _call_top(s, func, args, kwargs or {})


def _call_top(s: list, func, args, kwargs):
    mode = s.pop()
    _count(-1)
    try:
        r = mode.__torch_function__(func, (), args, kwargs)
    finally:
        s.append(mode)
        _count(1)
    if r is NotImplemented:
        raise TypeError(f"Multiple dispatch failed for '{_public_name(func)}'; all __torch_function__ handlers "
                        f"returned NotImplemented:\n\n  - mode object {mode!r}\n")
    return r


def _public_name(func) -> str:
    from .overrides import resolve_name  # (error path only: overrides imports torchlet)
    r = resolve_name(func)
    if r is not None:
        return r
    name = getattr(func, "__name__", repr(func))
    co = getattr(func, "__code__", None)
    if co is not None and co.co_argcount and co.co_varnames[0] == "self":
        return f"torchlet.Tensor.{name}"
    mod = getattr(func, "__module__", "") or ""
    if mod.startswith("torchlet._generated") or mod.startswith("torchlet._factory"):
        return f"torchlet.{name}"
    return f"{mod}.{name}" if mod else name
