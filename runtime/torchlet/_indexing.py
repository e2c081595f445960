"""Tensor.__getitem__ / __setitem__ and the hand-written part of Tensor.to,
built on the generated operator bindings (select, slice, unsqueeze, alias,
copy_, fill_, to.dtype_layout), so every step goes through the dispatcher.

Basic indexing (PyTorch's / numpy's): ints (negative from the end), slices
with positive steps, ``None`` (a new dimension of size 1), ``Ellipsis``, and
0-dim integer tensors used as ints.  The result is a view.

Advanced indexing with ONE index that is a long tensor / list of ints (any
shape) or a bool mask: the result is a new tensor gathered element-row by
element-row with select + copy_ (correct for any layout and for meta tensors
with a CPU long index, but O(number of indices) Python-level calls until an
``index`` operator is declared).  Several advanced indices raise
NotImplementedError.
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
                adv = _advanced(x)
                if adv is not None:
                    specified += adv[2]
                    items.append(adv)
                    continue
                raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                                 "Variables are valid indices (got " + type(x).__name__ + ")")
            specified += 1
            items.append(i)
    return items, specified


class _Adv(tuple):
    """An advanced index: (kind "long" | "mask", value, dims consumed)."""


def _advanced(x):
    if isinstance(x, Tensor):
        if x.dtype is _dt.bool_:
            return _Adv(("mask", x, max(x.dim(), 1) if x.dim() else 1))
        if x.is_floating_point():
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return _Adv(("long", x, 1))
    if isinstance(x, list) and all(type(i) is int for i in _flat(x)):
        return _Adv(("long", x, 1))
    if isinstance(x, bool) or isinstance(x, (list, tuple)):
        raise NotImplementedError("indexing with Python bools or nested non-int lists is not supported yet")
    return None


def _flat(x):
    for e in x:
        if isinstance(e, list):
            yield from _flat(e)
        else:
            yield e


def _shape_of_list(x):
    shape = []
    while isinstance(x, list):
        shape.append(len(x))
        x = x[0] if x else None
    return tuple(shape)


def _positions(adv, v, d):
    """(index tuples into dims d.., shape of the index) for an advanced index on view v at dim d."""
    kind, x, k = adv
    if kind == "long":
        if isinstance(x, Tensor):
            if x.is_meta:
                raise NotImplementedError("indexing with a meta index tensor needs the 'index' operator")
            values, shape = x.reshape(-1).tolist(), tuple(x.shape)
        else:
            values, shape = list(_flat(x)), _shape_of_list(x)
        size = v.size(d)
        out = []
        for i in values:
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for dimension {d} with size {size}")
            out.append((i,))
        return out, shape
    if x.is_meta:
        raise NotImplementedError("indexing with a meta bool mask: the result shape depends on the data")
    mask = x if x.dim() else x.unsqueeze(0)
    want = tuple(v.shape[d:d + mask.dim()])
    if tuple(mask.shape) != want:
        raise IndexError(f"The shape of the mask {list(mask.shape)} at index {d} does not match the shape of the "
                         f"indexed tensor {list(v.shape)} at index {d}")
    import numpy as np
    pos = [tuple(int(j) for j in p) for p in np.argwhere(mask.numpy())]
    return pos, (len(pos),)


def _gather_view(v, d, pos):
    src = v
    for p in pos:
        src = src.select(d, p)
    return src


def _basic_then_advanced(self, items, specified):
    """Apply the basic items, with the advanced one replaced by full slices;
    returns (view, dim where the advanced index applies, the advanced index)."""
    advs = [x for x in items if isinstance(x, _Adv)]
    if len(advs) > 1:
        raise NotImplementedError("indexing with more than one tensor/list index needs the 'index' operator")
    adv = advs[0]
    # ints count as advanced indices next to a tensor index (numpy's rule); when
    # they are separated by a slice / None / ... the indexed dims move to the front
    where = [i for i, x in enumerate(items) if isinstance(x, (int, _Adv))]
    if where[-1] - where[0] + 1 != len(where):
        raise NotImplementedError("an int and a tensor index separated by a slice need the 'index' operator")
    repl = []
    for x in items:
        if x is adv:
            repl.append(("ADV",))
            repl.extend([slice(None)] * adv[2])
        else:
            repl.append(x)
    # find the dim of the marker: count dims produced before it
    nd = self.dim()
    dim = 0
    for x in repl:
        if isinstance(x, tuple) and x == ("ADV",):
            break
        if x is None or isinstance(x, slice):
            dim += 1
        elif x is Ellipsis:
            dim += nd - specified
    view = _basic(self, [x for x in repl if not (isinstance(x, tuple) and x == ("ADV",))], specified)
    return view, dim, adv


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
    if any(isinstance(x, _Adv) for x in items):
        v, d, adv = _basic_then_advanced(self, items, specified)
        pos, ishape = _positions(adv, v, d)
        k = adv[2]
        rest = tuple(v.shape[d + k:])
        flat = tuple(v.shape[:d]) + (len(pos),) + rest
        out = _empty(flat, v)
        for j, p in enumerate(pos):
            out.select(d, j).copy_(_gather_view(v, d, p))
        return out.view(*(tuple(v.shape[:d]) + ishape + rest)) if ishape != (len(pos),) else out
    return _basic(self, items, specified)


def _empty(shape, like):
    from ._generated import _ops
    return _ops.empty(tuple(shape), dtype=like.dtype, device=like.device)


def _basic(self, items, specified):
    nd = self.dim()
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
    items, specified = _expand(idx) if idx.__class__ is not int else ([idx], 1)
    if any(isinstance(x, _Adv) for x in items):
        v, d, adv = _basic_then_advanced(self, items, specified)
        pos, ishape = _positions(adv, v, d)
        k = adv[2]
        rest = tuple(v.shape[d + k:])
        if isinstance(value, Tensor):
            full = tuple(v.shape[:d]) + ishape + rest
            value = value.expand(*full).reshape(*(tuple(v.shape[:d]) + (len(pos),) + rest))
        for j, p in enumerate(pos):
            dst = _gather_view(v, d, p)
            if isinstance(value, Tensor):
                dst.copy_(value.select(d, j))
            else:
                dst.fill_(value)
        return
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
