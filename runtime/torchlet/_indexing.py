"""Tensor.__getitem__ / __setitem__ and the hand-written part of Tensor.to,
built on the generated operator bindings, so every step goes through the
dispatcher (and autograd records it).

PyTorch's indexing (torch/csrc/autograd/python_variable_indexing.cpp,
applySlicing): the index items are applied left to right to a running view --
ints (negative from the end, and 0-dim integer tensors) by ``select``, slices
by ``slice``, ``None`` by ``unsqueeze``, ``Ellipsis`` skips the unnamed dims.
Advanced items (long / int tensors, bool / uint8 masks, lists, Python bools)
are recorded at the view's dim they apply to, and one ``index.Tensor`` call
(kernels/native/index_advanced.c) does them all: any number, broadcast
together, adjacent or separated (then the index dims go first). Python bools
and 0-dim bool tensors add a dim of size 1 that they index with [0] (True) or
[] (False). As in PyTorch, ints are basic indices: ``x[0, :, [1, 2]]`` is
``x[0][:, [1, 2]]`` (numpy would put the index dim first).

Assignment does the same walk and then ``copy_`` (basic only) or
``index_put_`` (advanced), the value's leading size-1 dims dropped first.
"""
from __future__ import annotations

import numbers

import operator

from . import _fast
from . import _tensor as _tensor_mod
from . import _device as _dev
from . import _dtype as _dt
from ._C import lib
from ._function_mode import GO as _GO, handle as _tf, watch as _tf_watch
from ._tensor import Tensor

_TF = 0  # active torch-function modes (torchlet._function_mode): x[i] / x[i] = v check it first
_tf_watch(globals())

_new = Tensor.__new__
_select = getattr(lib, "tl_ops_select_int", None) or (lambda p, d, i: lib.tl_select(p, d, i))
_ops = None


def _gen():
    global _ops
    if _ops is None:
        from ._generated import _ops as o
        _ops = o
    return _ops


def _as_int(x):
    """x as a Python int when it is an int index (int, __index__, 0-dim integer tensor), else None."""
    if isinstance(x, Tensor):
        if x.dim() == 0 and not x.is_floating_point() and x.dtype is not _dt.bool_ and x.dtype is not _dt.uint8:
            return int(x.item())
        return None
    if isinstance(x, bool):
        return None
    try:
        return operator.index(x)
    except TypeError:
        return None


def _seq_as_tuple(x):
    """PyTorch's treatSequenceAsTuple: a short list holding tensors, sequences,
    slices, ``...`` or None is a tuple of indices (``x[[0, [1, 2]]]``)."""
    if len(x) >= 32:
        return False
    return any(isinstance(e, (Tensor, list, tuple, slice)) or e is None or e is Ellipsis for e in x)


def _list_tensor(x):
    """A list index as an index tensor: all bools -> a bool mask, else long
    (numbers truncated, as PyTorch's indexing_tensor_from_data)."""
    flat = list(_flat(x))
    if flat and all(isinstance(e, bool) for e in flat):
        return _tensor(x, dtype=_dt.bool_)
    for e in flat:
        if not isinstance(e, (int, float)) and _as_int(e) is None:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                             "Variables are valid indices (got " + type(e).__name__ + ")")
    return _tensor(_map(x, lambda e: int(e) if isinstance(e, float) else operator.index(e)), dtype=_dt.int64)


def _tensor(data, dtype):
    from ._factory import tensor
    return tensor(data, dtype=dtype)


def _flat(x):
    for e in x:
        if isinstance(e, (list, tuple)):
            yield from _flat(e)
        else:
            yield e


def _map(x, f):
    return [_map(e, f) if isinstance(e, (list, tuple)) else f(e) for e in x]


def _items(idx):
    """The index as a list of items, each an int, slice, None, Ellipsis, bool
    or index Tensor, and the number of dims they name (for ``...``)."""
    if isinstance(idx, list) and _seq_as_tuple(idx):
        idx = tuple(idx)
    if not isinstance(idx, tuple):
        idx = (idx,)
    items, specified, ellipsis = [], 0, False
    for x in idx:
        if x is Ellipsis:
            if ellipsis:
                raise IndexError("an index can only have a single ellipsis ('...')")
            ellipsis = True
        elif x is None or isinstance(x, bool):
            pass
        elif isinstance(x, slice):
            specified += 1
        elif isinstance(x, Tensor):
            if x.dim() == 0 and (x.dtype is _dt.bool_ or x.dtype is _dt.uint8):
                x = bool(x.item())
            elif _as_int(x) is not None:
                x = _as_int(x)
                specified += 1
            else:
                if x.is_floating_point():
                    raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
                # a uint8 mask stays uint8: index / index_put_ give PyTorch's deprecation
                # warning at the user's line, and index's backward (index_put_) again
                specified += x.dim() if _is_mask(x) else 1
        elif isinstance(x, (list, tuple)):
            x = _list_tensor(x)
            specified += x.dim() if x.dtype is _dt.bool_ else 1
        else:
            i = _as_int(x)
            if i is None:
                raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                                 "Variables are valid indices (got " + type(x).__name__ + ")")
            x = i
            specified += 1
        items.append(x)
    return items, specified


def _slice_args(x):
    step = 1 if x.step is None else _as_int(x.step)
    if step is None:
        raise TypeError("slice indices must be integers or None or have an __index__ method")
    if step <= 0:
        raise ValueError("step must be greater than zero")
    start = None if x.start is None else _as_int(x.start)
    stop = None if x.stop is None else _as_int(x.stop)
    if (x.start is not None and start is None) or (x.stop is not None and stop is None):
        raise TypeError("slice indices must be integers or None or have an __index__ method")
    return start, stop, step


def _apply(self, idx):
    """PyTorch's applySlicing: (the view after the basic items, the index
    tensors by the view's dims (None between), whether anything happened)."""
    items, specified = _items(idx)
    nd = self.dim()
    if specified > nd:
        if nd == 0 and any(type(x) is int for x in items):
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                             "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
        raise IndexError(f"too many indices for tensor of dimension {nd}")
    result, dim, touched = self, 0, False
    tensors: list = []
    for x in items:
        if type(x) is int:
            size = result.size(dim)
            if not -size <= x < size:
                raise IndexError(f"index {x} is out of bounds for dimension {dim} with size {size}")
            result = result.select(dim, x)
            touched = True
        elif isinstance(x, slice):
            start, stop, step = _slice_args(x)
            if start is not None or stop is not None or step != 1:
                result = result.slice(dim, start, stop, step)
                touched = True
            dim += 1
        elif x is None:
            result = result.unsqueeze(dim)
            dim += 1
            touched = True
        elif x is Ellipsis:
            dim += nd - specified
        elif isinstance(x, bool):
            result = result.unsqueeze(dim)
            _record(tensors, dim, _gen().zeros(1 if x else 0, dtype=_dt.int64))
            dim += 1
        else:
            _record(tensors, dim, x)
            dim += x.dim() if x.dtype is _dt.bool_ or x.dtype is _dt.uint8 else 1
    return result, tensors, touched


def _record(tensors, dim, t):
    """Append index t for the view's dim `dim`: None for the dims skipped since
    the last entry (a mask entry stands for as many dims as it has)."""
    covered = sum(1 if e is None or not _is_mask(e) else e.dim() for e in tensors)
    tensors.extend([None] * (dim - covered))
    tensors.append(t)


def _is_mask(t):
    return t.dtype is _dt.bool_ or t.dtype is _dt.uint8


def getitem(self, idx):
    if _TF and (r_ := _tf(getitem, locals())) is not _GO:
        return r_
    if idx.__class__ is int:  # fast path: x[i] is select(0, i), one C call
        h = _select(self._p, 0, idx)
        if h:
            if _tensor_mod._subclassed:      # the result may be a subclass tensor (torchlet._subclass)
                return _tensor_mod._subclass_wrap(h)
            t = _new(Tensor)
            t._p = h
            return t
        lib.tl_clear_error()  # the general path below raises PyTorch's message
    result, tensors, touched = _apply(self, idx)
    if tensors:
        return _gen().index(result, tensors)
    return result if touched else self.alias()   # x[...] and x[:] are views too


_LEGACY = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
           "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
           "complex64": "ComplexFloat", "complex128": "ComplexDouble"}
# c10's checked_convert names the C++ type a complex value does not fit
_CONVERT_NAME = {"float32": "float", "int64": "int64_t", "int32": "int", "int16": "int16_t", "int8": "int8_t",
                 "uint8": "uint8_t"}


def _value_tensor(self, value):
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (bool, int, float)):
        return _gen().full((), value, dtype=self.dtype, device=self.device)
    if isinstance(value, numbers.Integral):   # numpy integers, as PyTorch's checkLong (not arrays)
        return _gen().full((), int(value), dtype=self.dtype, device=self.device)
    if isinstance(value, complex):
        name = str(self.dtype).rsplit(".", 1)[-1]
        if not self.dtype.is_complex:
            if name == "bool":
                value = bool(value)
            elif value.imag != 0:
                raise RuntimeError(f"value cannot be converted to type {_CONVERT_NAME.get(name, 'double')} "
                                   "without overflow")
            else:
                value = value.real
        return _gen().full((), value, dtype=self.dtype, device=self.device)
    kind = type(value)
    name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
    tname = _LEGACY.get(str(self.dtype).rsplit(".", 1)[-1], "")
    raise TypeError(f"can't assign a {name} to a torch.{tname}Tensor")


def _strip_leading_ones(value):
    """PyTorch's slicePrefix1sSize: the value without its leading size-1 dims."""
    shape = tuple(value.shape)
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    return value.view(shape[k:]) if k else value


def setitem(self, idx, value):
    if _TF and (r_ := _tf(setitem, locals())) is not _GO:
        return r_
    value = _value_tensor(self, value)
    if idx.__class__ is int:
        result, tensors = getitem(self, idx), None
    else:
        result, tensors, _ = _apply(self, idx)
    if tensors:
        if value.dim() > 0:
            value = _strip_leading_ones(value)
        result.index_put_(tensors, value)
        return
    if value.dim() > result.dim():
        value = _strip_leading_ones(value)
    result.copy_(value)


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
    if _fast.TensorBase is None or _fast.TensorBase not in Tensor.__mro__:
        Tensor.__getitem__ = getitem
    else:  # x[i] is the C base's; other indices reach getitem from it (torchlet/_fast.py)
        _fast.set_getitem(getitem)
    Tensor.__setitem__ = setitem
    getitem.__name__, setitem.__name__ = "__getitem__", "__setitem__"  # what a torch-function mode is told
    gen_to = getattr(Tensor, "to", None)
    if gen_to is not None:
        Tensor.to = make_to(gen_to)
