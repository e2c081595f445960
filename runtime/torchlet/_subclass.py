"""Tensor subclasses whose operator calls reach Python (PyTorch's
``__torch_dispatch__`` subclasses: FakeTensor, wrapper subclasses).

A subclass instance is an ordinary ``Tensor`` object over a C tensor, plus
Python state: its class and its ``__dict__``. The state is tied to the C
tensor through the tensor's ``py_slot`` (``tl_tensor_set_py_slot``), which
also puts the Python dispatch key in the tensor's key set, so every operator
called with it reaches the Python key's fallback (``_python_dispatch``).

Why the state and not the object: the C tensor outlives its Python object
whenever autograd saved it or a kernel returned it, and a C reference to the
object would be a cycle the garbage collector cannot see. So the slot holds
(class, ``__dict__``) and ``wrap`` rebuilds an object around the same C tensor
and the same dict when the first one is gone; while it lives, ``wrap`` returns
that very object (a weak map keyed by the C tensor's address).

With no subclass instance ever made, nothing here runs: the generated
bindings test one module flag (``_gen_ops._subclassed``) before asking a result
for its slot.
"""
from __future__ import annotations

import itertools
import weakref

from ._C import ffi, lib
from ._tensor import Tensor

__all__ = ["attach", "wrap", "state_of", "is_subclass_tensor"]

_states: dict[int, tuple[type, dict]] = {}              # slot token -> (class, __dict__)
_objects: "weakref.WeakValueDictionary[int, Tensor]" = weakref.WeakValueDictionary()
_tokens = itertools.count(1)
_new = Tensor.__new__
_slot_of = lib.tl_tensor_py_slot
_NULL = ffi.NULL


@ffi.def_extern()
def tl_py_slot_release(slot):
    """The C tensor holding this slot died (or the slot was replaced)."""
    try:
        _states.pop(int(ffi.cast("intptr_t", slot)), None)
    except (AttributeError, TypeError):   # interpreter shutdown: the module's globals are gone
        pass


lib.tl_set_py_slot_release(lib.tl_py_slot_release)


def _address(p) -> int:
    return int(ffi.cast("intptr_t", p))


def _mark_live() -> None:
    """From now on results may be subclass tensors: the bindings look at slots."""
    from . import _tensor
    _tensor._mark_subclassed()


def attach(obj: Tensor) -> Tensor:
    """Make ``obj`` (an instance of a Tensor subclass with its ``_p`` set) a
    subclass tensor: its class and ``__dict__`` travel with the C tensor."""
    cls = type(obj)
    if cls is Tensor:
        raise TypeError("attach: expected an instance of a Tensor subclass")
    token = next(_tokens)
    _states[token] = (cls, obj.__dict__)
    _mark_live()
    lib.tl_tensor_set_py_slot(obj._p, ffi.cast("void *", token))
    _objects[_address(obj._p)] = obj
    return obj


def state_of(p):
    """(class, __dict__) of a C tensor with a slot, else None."""
    slot = _slot_of(p)
    if slot == _NULL:
        return None
    return _states.get(int(ffi.cast("intptr_t", slot)))


def is_subclass_tensor(t) -> bool:
    return isinstance(t, Tensor) and _slot_of(t._p) != _NULL


def wrap(p) -> Tensor:
    """The Python object for a new reference ``p``: the live subclass object of
    that C tensor (the reference is dropped), one rebuilt from its state, or a
    plain Tensor."""
    slot = _slot_of(p)
    if slot != _NULL:
        addr = _address(p)
        obj = _objects.get(addr)
        if obj is not None:
            lib.tl_tensor_release(p)
            return obj
        st = _states.get(int(ffi.cast("intptr_t", slot)))
        if st is not None:
            cls, d = st
            obj = _new(cls)
            obj._p = p
            obj.__dict__ = d
            _objects[addr] = obj
            return obj
    t = _new(Tensor)
    t._p = p
    return t


def rewrap(t: Tensor) -> Tensor:
    """A plain Tensor object whose C tensor is a subclass tensor -> the subclass object."""
    if _slot_of(t._p) == _NULL:
        return t
    lib.tl_tensor_retain(t._p)
    return wrap(t._p)


def detached_like(src: Tensor, r: Tensor) -> Tensor:
    """``src.detach()`` for a subclass tensor: the detached C tensor ``r`` (a
    plain view) as an instance of src's class with a copy of its state
    (detach runs in C, not as an operator its ``__torch_dispatch__`` sees)."""
    if state_of(src._p) is None:
        return r
    obj = _new(type(src))
    lib.tl_tensor_retain(r._p)
    obj._p = r._p
    obj.__dict__.update(src.__dict__)
    return attach(obj)


def make_wrapper_subclass(cls, size, *, strides=None, storage_offset=None, dtype=None, device=None,
                          requires_grad=False, **_ignored):
    """``Tensor._make_wrapper_subclass``: an instance of ``cls`` with the given
    metadata and no data of its own (its C tensor lives on meta); calls with it
    reach ``cls.__torch_dispatch__``. ``device`` is what ``.device`` reports."""
    from . import _dtype as _dt
    from ._device import as_device
    from ._generated._ops import empty_strided
    if not (isinstance(cls, type) and issubclass(cls, Tensor)) or cls is Tensor:
        raise TypeError("_make_wrapper_subclass: expected a subclass of torchlet.Tensor")
    size = tuple(size)
    if strides is None:
        strides, acc = [], 1
        for s in reversed(size):
            strides.append(acc)
            acc *= max(s, 1)
        strides = tuple(reversed(strides))
    meta = empty_strided(size, tuple(strides), dtype=dtype or _dt.get_default_dtype(), device="meta")
    if storage_offset:
        meta = meta.as_strided(size, tuple(strides), storage_offset)
    obj = _new(cls)
    lib.tl_tensor_retain(meta._p)
    obj._p = meta._p
    if device is not None:
        obj.__dict__["_wrapper_device"] = as_device(device)
    attach(obj)
    if requires_grad:
        obj.requires_grad_(True)
    return obj


Tensor._make_wrapper_subclass = staticmethod(make_wrapper_subclass)
