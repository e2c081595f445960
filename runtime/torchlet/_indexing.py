"""Tensor.__getitem__ / __setitem__ and the hand-written part of Tensor.to,
built on the generated operator bindings (select, slice, unsqueeze, alias,
copy_, fill_, to.dtype_layout), so every step goes through the dispatcher.

Basic indexing (PyTorch's / numpy's): ints (negative from the end), slices
with positive steps, ``None`` (a new dimension of size 1), ``Ellipsis``, and
0-dim integer tensors used as ints.  The result is a view.  Advanced indexing
(bool / long tensors, lists) needs the ``index`` operator, which is not
declared yet: it raises NotImplementedError.
"""
from __future__ import annotations

import operator

from . import _device as _dev
from . import _dtype as _dt
from ._C import lib
from ._tensor import Tensor

_new = Tensor.__new__
_select = getattr(lib, "tl_ops_select_int", None) or (lambda p, d, i: lib.tl_select(p, d, i))


def _as_int(x):
    if isinstance(x, Tensor):
        if x.dim() == 0 and not x.is_floating_point() and x.dtype is not _dt.bool_:
            return int(x.item())
        return None
    if isinstance(x, bool):
        return None
    try:
        return operator.index(x)
    except TypeError:
        return None


def _expand(idx):
    if not isinstance(idx, tuple):
        idx = (idx,)
    specified = 0
    ellipsis = False
    items = []
    for x in idx:
        if x is Ellipsis:
            if ellipsis:
                raise IndexError("an index can only have a single ellipsis ('...')")
            ellipsis = True
            items.append(x)
        elif x is None or isinstance(x, slice):
            specified += isinstance(x, slice)
            items.append(x)
        else:
            i = _as_int(x)
            if i is None:
                if isinstance(x, (Tensor, list, bool)):
                    raise NotImplementedError(
                        "advanced indexing (tensors, lists or bools as indices) needs the 'index' operator, "
                        "which torchlet does not provide yet")
                raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                                 "Variables are valid indices (got " + type(x).__name__ + ")")
            specified += 1
            items.append(i)
    return items, specified


def getitem(self, idx):
    if idx.__class__ is int:  # fast path: x[i] is select(0, i), one C call
        h = _select(self._p, 0, idx)
        if h:
            t = _new(Tensor)
            t._p = h
            return t
        lib.tl_clear_error()  # the general path below raises PyTorch's message
    items, specified = _expand(idx)
    nd = self.dim()
    if nd == 0 and specified > 0:
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    if specified > nd:
        raise IndexError(f"too many indices for tensor of dimension {nd}")
    result = self
    dim = 0
    touched = False
    for x in items:
        if x is None:
            result = result.unsqueeze(dim)
            dim += 1
            touched = True
        elif x is Ellipsis:
            dim += nd - specified
        elif isinstance(x, slice):
            step = 1 if x.step is None else _as_int(x.step)
            if step is None:
                raise TypeError("slice indices must be integers or None or have an __index__ method")
            if step <= 0:
                raise ValueError("step must be greater than zero")
            start = None if x.start is None else _as_int(x.start)
            stop = None if x.stop is None else _as_int(x.stop)
            if (x.start is not None and start is None) or (x.stop is not None and stop is None):
                raise TypeError("slice indices must be integers or None or have an __index__ method")
            if start is not None or stop is not None or step != 1:
                result = result.slice(dim, start, stop, step)
                touched = True
            dim += 1
        else:
            size = result.size(dim)
            if not -size <= x < size:
                raise IndexError(f"index {x} is out of bounds for dimension {dim} with size {size}")
            result = result.select(dim, x)
            touched = True
    if not touched:
        result = self.alias()   # x[...] and x[:] are views too
    return result


def setitem(self, idx, value):
    view = getitem(self, idx)
    if isinstance(value, Tensor):
        view.copy_(value)
    else:
        view.fill_(value)


# ------------------------------------------------------------------ to()

def make_to(generated_to):
    """Tensor.to with PyTorch's hand-parsed forms on top of the generated
    overloads: ``to(device=None, dtype=None, non_blocking=False, copy=False)``,
    ``to(dtype, ...)``, ``to(tensor, ...)``, ``to("meta")``."""

    def to(self, *args, **kwargs):
        if args and isinstance(args[0], (str, _dev.device)) or (args and args[0].__class__ is int) \
                or (not args and "device" in kwargs):
            device = args[0] if args else kwargs.pop("device")
            rest = list(args[1:])
            if rest and (isinstance(rest[0], _dt.dtype) or rest[0] is None):
                kwargs.setdefault("dtype", rest.pop(0))
            for name in ("non_blocking", "copy"):
                if rest:
                    kwargs[name] = rest.pop(0)
            if rest:
                raise TypeError(f"to() takes at most 4 positional arguments but {len(args)} were given")
            return generated_to(self, device=device, **kwargs)
        return generated_to(self, *args, **kwargs)

    to.__doc__ = generated_to.__doc__
    return to


def install():
    # numpy defers binary operators to Tensor (np.float32(2) + t is a Tensor), like PyTorch
    Tensor.__array_priority__ = 1000
    Tensor.__getitem__ = getitem
    Tensor.__setitem__ = setitem
    gen_to = getattr(Tensor, "to", None)
    if gen_to is not None:
        Tensor.to = make_to(gen_to)
