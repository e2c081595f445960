"""Tensor's CPython methods: ``x.view(2, 3)``, ``x.t()`` and ``x[i]`` as C
functions (runtime/python/fastcall.c, the module ``torchlet._C_fast``
inside ``_C.abi3.so``), the first base class of ``torchlet.Tensor``.

A plain call (ints only, no keywords) runs the same C entry point as the
generated binding without a Python frame or the cffi wrapper (a result that
is a subclass tensor becomes its subclass object, ``_subclass.rewrap``, as
in the bindings); every other call goes to the Python function the method
replaces (the generated ``_TensorOps.view`` / ``.t``, ``_indexing.getitem``),
and an active torch-function mode is told first, with ``Tensor.view`` itself
as the function. The C side reads and makes cffi pointers by cffi's object
layout, so ``enable`` checks that layout against cffi's own objects and
leaves every call on the Python path when it does not match.

``TORCHLET_NO_FAST_METHODS=1`` keeps every call on the Python path (the
methods then only forward), for comparisons and tests.
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys

from . import _C

NAME = "torchlet._C_fast"


def _load():
    """The module from the library that holds torchlet._C (None when this
    build has none: the Tensor class then has no C base)."""
    if NAME in sys.modules:
        return sys.modules[NAME]
    loader = importlib.machinery.ExtensionFileLoader(NAME, _C.__file__)
    spec = importlib.util.spec_from_file_location(NAME, _C.__file__, loader=loader)
    try:
        module = importlib.util.module_from_spec(spec)
    except ImportError:  # a library built before runtime/python/ existed
        return None
    sys.modules[NAME] = module
    loader.exec_module(module)
    return module


_mod = _load()
TensorBase = _mod.TensorBase if _mod is not None else None
enabled = False


class _ModeCount:
    """Registered with torchlet._function_mode.watch like a module's globals:
    the mode count reaches C on every change."""

    def __setitem__(self, key, value):
        _mod._set_tf(value)


_python = [None, None, None]  # the Python paths of view, t, getitem


def setup(Tensor, ffi, pending_result, python_view, python_t) -> None:
    """Right after the Tensor class is made: the references the C methods use."""
    from . import _function_mode
    _mod._setup(type(ffi.cast("tl_tensor *", 0)), ffi.typeof("tl_tensor *"), Tensor, pending_result,
                _function_mode.handle_args, _function_mode.GO)
    _python[:2] = python_view, python_t
    _mod._set_python(*_python)
    _function_mode.watch(_ModeCount())
    enable(ffi)


def set_getitem(getitem) -> None:
    """Once torchlet._indexing is loaded: where ``x[idx]`` goes when it is not the plain case."""
    _python[2] = getitem
    _mod._set_python(*_python)


def layout_ok(ffi) -> bool:
    """The C side's idea of a cffi pointer agrees with cffi's: its size and
    weakref offset, the address read from a pointer cffi made, and a pointer
    made in C as cffi sees it (type, address)."""
    cdata = type(ffi.cast("tl_tensor *", 0))
    size, weak = _mod._layout()
    if cdata.__basicsize__ != size or cdata.__weakrefoffset__ != weak or cdata.__itemsize__ != 0:
        return False
    for addr in (0x1000, 0x7FFF_F000_1230):
        if _mod._address_of(ffi.cast("tl_tensor *", addr)) != addr:
            return False
        p = _mod._pointer_at(addr)
        if type(p) is not cdata or ffi.typeof(p) is not ffi.typeof("tl_tensor *") or \
                int(ffi.cast("uintptr_t", p)) != addr:
            return False
    return True


def enable(ffi) -> bool:
    """Turn the C paths on (after the layout check); whether they are."""
    global enabled
    enabled = _mod is not None and os.environ.get("TORCHLET_NO_FAST_METHODS") != "1" and layout_ok(ffi)
    _mod._enable(enabled)
    return enabled


def set_enabled(on: bool) -> None:
    """For tests: the C paths on (when the layout check passes) or off."""
    global enabled
    enabled = bool(on) and layout_ok(_C.ffi)
    _mod._enable(enabled)


def mark_subclassed(rewrap) -> None:
    """From the first tensor subclass instance on, a result whose C tensor
    carries a subclass state is handed to ``rewrap`` (torchlet._subclass)."""
    if _mod is not None:
        _mod._set_rewrap(rewrap)
