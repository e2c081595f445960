"""Python wrappers over the C runtime's tensor functions (factories, views,
copies, TensorIterator metadata).

These exist before the dispatcher and the generated operator bindings: the
generated `torchlet.empty`, `Tensor.view`, `Tensor.clone`, ... will reach the
same C functions through the dispatcher. Tests, the demo and benchmarks use
this module to exercise the runtime directly.
"""
from __future__ import annotations

import numbers

from . import _device as _dev
from . import _dtype as _dt
from ._C import ffi, lib
from ._errors import check, check_ptr
from ._tensor import Tensor, _wrap

_NULL = ffi.NULL


def scalar(v):
    """A Python number (or 1-element tensor) as a C tl_scalar."""
    if isinstance(v, bool):
        return lib.tl_scalar_from_bool(v)
    if isinstance(v, numbers.Integral):
        v = int(v)
        if not -2**63 <= v < 2**63:
            raise RuntimeError(f"value cannot be converted to type int64_t without overflow")
        return lib.tl_scalar_from_int(v)
    if isinstance(v, numbers.Real):
        return lib.tl_scalar_from_double(float(v))
    if isinstance(v, numbers.Complex):
        return lib.tl_scalar_from_complex(v.real, v.imag)
    if isinstance(v, Tensor):
        return scalar(v.item())
    raise TypeError(f"expected a number, got {type(v).__name__}")


def _shape(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return [int(s) for s in shape]


def _dtype_id(dtype):
    return (_dt.get_default_dtype() if dtype is None else _dt.as_dtype(dtype))._id


def empty(*shape, dtype=None, device=None) -> Tensor:
    s = _shape(shape)
    return _wrap(lib.tl_empty(len(s), s, _dtype_id(dtype), _dev.as_device(device)._id))


def empty_strided(shape, stride, dtype=None, device=None) -> Tensor:
    s, st = list(shape), list(stride)
    if len(s) != len(st):
        raise RuntimeError(f"mismatch in length of strides and shape")
    return _wrap(lib.tl_empty_strided(len(s), s, st, _dtype_id(dtype), _dev.as_device(device)._id))


def zeros(*shape, dtype=None, device=None) -> Tensor:
    s = _shape(shape)
    return _wrap(lib.tl_zeros(len(s), s, _dtype_id(dtype), _dev.as_device(device)._id))


def ones(*shape, dtype=None, device=None) -> Tensor:
    s = _shape(shape)
    return _wrap(lib.tl_ones(len(s), s, _dtype_id(dtype), _dev.as_device(device)._id))


def full(shape, fill_value, dtype=None, device=None) -> Tensor:
    s = list(shape)
    if dtype is None:
        dtype = _dt.bool_ if isinstance(fill_value, bool) else (
            _dt.int64 if isinstance(fill_value, numbers.Integral) else _dt.get_default_dtype())
    return _wrap(lib.tl_full(len(s), s, scalar(fill_value), _dtype_id(dtype), _dev.as_device(device)._id))


def arange(n, dtype=None, device=None) -> Tensor:
    return _wrap(lib.tl_arange(n, (_dt.int64 if dtype is None else _dt.as_dtype(dtype))._id,
                               _dev.as_device(device)._id))


def scalar_tensor(v, dtype=None, device=None) -> Tensor:
    """0-dim tensor (default dtype unless given, like torch.scalar_tensor)."""
    return _wrap(lib.tl_scalar_tensor(scalar(v), _dtype_id(dtype), _dev.as_device(device)._id))


def wrapped_scalar(v) -> Tensor:
    """A 0-dim tensor that takes part in type promotion as a Python number."""
    return _wrap(lib.tl_wrapped_scalar(scalar(v)))


def clone(t: Tensor) -> Tensor:
    return _wrap(lib.tl_clone(t._p))


def contiguous(t: Tensor) -> Tensor:
    return _wrap(lib.tl_contiguous(t._p))


def to(t: Tensor, dtype=None, device=None, copy=False) -> Tensor:
    out = t
    if dtype is not None:
        out = _wrap(lib.tl_to_dtype(out._p, _dt.as_dtype(dtype)._id, 1 if copy else 0))
        copy = False
    if device is not None:
        out = _wrap(lib.tl_to_device(out._p, _dev.as_device(device)._id, 1 if copy else 0))
    elif copy:
        out = clone(out)
    return out


def copy_(dst: Tensor, src: Tensor) -> Tensor:
    check(lib.tl_copy_(dst._p, src._p))
    return dst


def fill_(t: Tensor, value) -> Tensor:
    check(lib.tl_fill_(t._p, scalar(value)))
    return t


def zero_(t: Tensor) -> Tensor:
    check(lib.tl_zero_(t._p))
    return t


def resize_(t: Tensor, *shape) -> Tensor:
    s = _shape(shape)
    check(lib.tl_resize_(t._p, len(s), s))
    return t


def view(t: Tensor, *shape) -> Tensor:
    s = _shape(shape)
    return _wrap(lib.tl_view(t._p, len(s), s))


def reshape(t: Tensor, *shape) -> Tensor:
    s = _shape(shape)
    return _wrap(lib.tl_reshape(t._p, len(s), s))


def as_strided(t: Tensor, size, stride, storage_offset=None) -> Tensor:
    off = t.storage_offset() if storage_offset is None else storage_offset
    return _wrap(lib.tl_as_strided(t._p, len(size), list(size), list(stride), off))


def transpose(t: Tensor, dim0: int, dim1: int) -> Tensor:
    return _wrap(lib.tl_transpose(t._p, dim0, dim1))


def permute(t: Tensor, *dims) -> Tensor:
    d = _shape(dims)
    return _wrap(lib.tl_permute(t._p, len(d), d))


def select(t: Tensor, dim: int, index: int) -> Tensor:
    return _wrap(lib.tl_select(t._p, dim, index))


def slice(t: Tensor, dim: int = 0, start=None, end=None, step: int = 1) -> Tensor:  # noqa: A001
    start = 0 if start is None else start
    end = 2**62 if end is None else end
    return _wrap(lib.tl_slice(t._p, dim, start, end, step))


def narrow(t: Tensor, dim: int, start: int, length: int) -> Tensor:
    return _wrap(lib.tl_narrow(t._p, dim, start, length))


def expand(t: Tensor, *sizes) -> Tensor:
    s = _shape(sizes)
    return _wrap(lib.tl_expand(t._p, len(s), s))


def squeeze(t: Tensor, dim: int) -> Tensor:
    return _wrap(lib.tl_squeeze_dim(t._p, dim))


def unsqueeze(t: Tensor, dim: int) -> Tensor:
    return _wrap(lib.tl_unsqueeze(t._p, dim))


def alias(t: Tensor) -> Tensor:
    return _wrap(lib.tl_alias(t._p))


def _as_operand(x):
    return x if isinstance(x, Tensor) else wrapped_scalar(x)


def result_type(*args) -> _dt.dtype:
    """torch.result_type over tensors and Python numbers."""
    ops = [_as_operand(a) for a in args]
    arr = ffi.new("tl_tensor *[]", [o._p for o in ops])
    return _dt._BY_ID[lib.tl_result_type(len(ops), arr)]


def test_binary_add(a, b, out=None) -> Tensor:
    """TEST HOOK (not the add operator): out = a + b through TensorIterator."""
    a, b = _as_operand(a), _as_operand(b)
    h = lib.tl_test_binary_add(_NULL if out is None else out._p, a._p, b._p)
    r = _wrap(h)  # raises the warnings it recorded (the out= resize)
    return out if out is not None else r


def iter_compute(*inputs, flags=None):
    """What TensorIterator decides for a binary/unary op on these inputs:
    (result shape, common dtype, layout permutation outermost-first)."""
    ops = [_as_operand(x) for x in inputs]
    arr = ffi.new("tl_tensor *[]", [o._p for o in ops])
    nd = ffi.new("int64_t *")
    shape = ffi.new("int64_t[64]")
    perm = ffi.new("int64_t[64]")
    dt = ffi.new("tl_dtype *")
    f = lib.TL_ITER_BINARY_OP if flags is None else flags
    check(lib.tl_iter_compute(len(ops), arr, f, nd, shape, dt, perm))
    n = nd[0]
    return tuple(shape[0:n]), _dt._BY_ID[dt[0]], tuple(perm[0:n])
