"""torchlet.tensor(data, dtype=, device=): tensors from Python data and numpy."""
from __future__ import annotations

import numbers

import numpy as np

from . import _device as _dev
from . import _dtype as _dt
from ._C import lib
from ._errors import check_ptr
from ._function_mode import GO as _GO, handle as _tf, watch as _tf_watch
from ._tensor import Tensor, _wrap, from_numpy

_TF = 0  # active torch-function modes (torchlet._function_mode); each public function checks it first
_tf_watch(globals())


def _infer_array(data):
    """numpy array for Python data, plus the dtype PyTorch would infer."""
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    try:
        a = np.array(data)
    except OverflowError:
        raise RuntimeError("Overflow when unpacking long") from None
    except ValueError as e:
        raise ValueError(f"could not convert data to a tensor: {e}") from None
    k = a.dtype.kind
    if k == "b":
        return a, _dt.bool_
    if k in "iu":
        if a.dtype == np.uint64 and a.size and int(a.max()) > 2**63 - 1:
            raise RuntimeError("Overflow when unpacking long")
        if a.dtype in (np.int8, np.int16, np.int32, np.uint8) and _from_numpy_scalars(data, a.dtype):
            return a, _dt.from_numpy_dtype(a.dtype)
        return a, _dt.int64
    if k == "f":
        if a.dtype in (np.float16, np.float32, np.float64) and _from_numpy_scalars(data, a.dtype):
            return a, _dt.from_numpy_dtype(a.dtype)
        return a, _dt.get_default_dtype()
    if k == "c":   # Python complex numbers: the default complex dtype, numpy's keep theirs
        if a.dtype in (np.complex64, np.complex128) and _from_numpy_scalars(data, a.dtype):
            return a, _dt.from_numpy_dtype(a.dtype)
        return a, _dt.get_default_complex_dtype()
    if k == "V" and _dt._NP_BFLOAT16 is not None and a.dtype == _dt._NP_BFLOAT16:
        return a, _dt.bfloat16
    if k == "O":
        if _has_big_int(data):
            raise RuntimeError("Overflow when unpacking long")
        raise ValueError("could not convert data to a tensor: nested sequences have inconsistent lengths or types")
    raise TypeError(f"new(): invalid data type '{a.dtype.name}'")


def _has_big_int(data):
    if isinstance(data, (list, tuple)):
        return any(_has_big_int(x) for x in data)
    return isinstance(data, int) and not isinstance(data, bool) and not -2**63 <= data < 2**63


def _from_numpy_scalars(data, dtype):
    """Every leaf of data is a numpy scalar of dtype: PyTorch keeps that dtype
    (its inference promotes the leaves' types). Stops at the first other leaf."""
    if isinstance(data, np.generic):
        return data.dtype == dtype
    if isinstance(data, (list, tuple)) and data:
        return all(_from_numpy_scalars(x, dtype) for x in data)
    return False


def _rebuild_tensor(data, dtype) -> Tensor:
    """Tensor.__reduce__'s rebuild function (pickle passes arguments by position)."""
    return tensor(data, dtype=dtype)


def tensor(data, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A new tensor holding a copy of `data` (nested lists, numbers, numpy arrays, tensors)."""
    if _TF and (r_ := _tf(tensor, locals())) is not _GO:
        return r_
    dev = _dev.as_device(device)
    want = _dt.as_dtype(dtype) if dtype is not None else None
    if isinstance(data, Tensor):
        src = data
    else:
        if isinstance(data, np.ndarray):
            arr = data
            inferred = _dt.from_numpy_dtype(arr.dtype)
        elif isinstance(data, bool):
            arr, inferred = np.array(data), _dt.bool_
        elif isinstance(data, numbers.Integral) and not isinstance(data, np.generic):
            if not -2**63 <= int(data) < 2**63:
                raise RuntimeError("Overflow when unpacking long")
            arr, inferred = np.array(int(data), dtype=np.int64), _dt.int64
        elif isinstance(data, float) and not isinstance(data, np.generic):  # np.float64 keeps its dtype
            arr, inferred = np.array(data), _dt.get_default_dtype()
        else:
            arr, inferred = _infer_array(data)
        if inferred._np is not None and arr.dtype != inferred._np and arr.dtype.kind not in "fc":
            arr = arr.astype(inferred._np)
        if not arr.flags.c_contiguous or not arr.flags.aligned:
            arr = arr.copy(order="C")  # (np.ascontiguousarray would turn 0-d into 1-d)
        src = from_numpy(arr)
        if want is None:
            want = inferred
    target = want or src.dtype   # one conversion, from the data's own precision
    h = lib.tl_to_dtype(src._p, target._id, 1)
    t = _wrap(h)
    if dev.type != "cpu":
        t = _wrap(check_ptr(lib.tl_to_device(t._p, dev._id, 0)))
    if requires_grad:
        from .autograd import _factory_requires_grad
        _factory_requires_grad(t)
    return t


def as_tensor(data, *, dtype=None, device=None) -> Tensor:
    """Like tensor(), but shares memory with numpy arrays / tensors when it can."""
    if _TF and (r_ := _tf(as_tensor, locals())) is not _GO:
        return r_
    dev = _dev.as_device(device)
    if isinstance(data, Tensor) and (dtype is None or data.dtype is _dt.as_dtype(dtype)) and data.device == dev:
        return data
    if isinstance(data, np.ndarray) and dev.type == "cpu":
        try:
            t = from_numpy(data)
        except (TypeError, ValueError):
            return tensor(data, dtype=dtype, device=device)
        if dtype is None or t.dtype is _dt.as_dtype(dtype):
            return t
        from . import _rt
        return _rt.to(t, dtype)
    return tensor(data, dtype=dtype, device=device)
