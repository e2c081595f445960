"""torchlet.Tensor: a thin Python object over a C `tl_tensor *`.

The object owns one C reference, held as a plain cffi pointer in `_p` and
released by `Tensor.__del__` (half the cost of an ffi.gc-owned pointer per
result tensor; see benchmarks/bench_overhead.py).  `t._h` gives a pointer that
holds a reference of its own (ffi.gc), so `f(make_tensor()._h)` stays valid
after the temporary Tensor dies; library code uses `_p` on live tensors. Operator methods (add, view, ...) are generated bindings attached
here; this module holds what is written once: metadata accessors,
numpy interop, tolist/item, repr.
"""
from __future__ import annotations

import itertools
import warnings
from typing import TYPE_CHECKING

import numpy as np

from . import _device as _dev
from . import _dtype as _dt
from . import _fast
from ._C import ffi, lib
from ._errors import check, check_ptr, pending_result, raise_pending_error, take_result

_gc = ffi.gc
_release = lib.tl_tensor_release
_has_warning = lib.tl_has_warning
_retain = lib.tl_tensor_retain
_ndim = lib.tl_tensor_ndim
_sizes = lib.tl_tensor_sizes
_strides = lib.tl_tensor_strides
_unpack = ffi.unpack
_dtype_of = lib.tl_tensor_dtype
_device_of = lib.tl_tensor_device
_DTYPES = _dt._BY_ID
_DEVICES = _dev._BY_ID
_TL_CUDA = lib.TL_CUDA


class Size(tuple):
    """torchlet.Size: the shape of a tensor (a tuple of ints)."""

    __slots__ = ()

    def __repr__(self):
        return f"torchlet.Size([{', '.join(str(s) for s in self)}])"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n


if TYPE_CHECKING:  # type checkers read the generated stub (_ops.pyi)
    from ._generated._ops import _TensorOps
else:
    try:  # the generated operator methods and dunders (generated/python/_ops.py)
        from ._generated import _ops as _gen_ops
    except ModuleNotFoundError as _e:  # a tree where `make generate` has not run yet
        if _e.name not in ("torchlet._generated", "torchlet._generated._ops"):
            raise
        _gen_ops = None

        class _TensorOps:
            __slots__ = ()
    else:
        _TensorOps = _gen_ops._TensorOps


# x.view(2, 3), x.t(), x[i]: CPython methods (torchlet/_fast.py) ahead of the generated ones
_BASES = (_fast.TensorBase, _TensorOps) if _fast.TensorBase is not None and _gen_ops is not None else (_TensorOps,)


class Tensor(*_BASES):
    __slots__ = ("_p", "__weakref__")

    @property
    def _h(self):
        """A `tl_tensor *` that owns a reference of its own (valid after this object dies)."""
        p = self._p
        _retain(p)
        return _gc(p, _release)

    def __del__(self, _release=_release):
        try:
            p = self._p
        except AttributeError:  # never initialised
            return
        _release(p)

    def __init__(self, *args, **kwargs):
        if type(self) is not Tensor and _has_p(self):   # a subclass's __new__ made it already
            return
        # torch.Tensor(data) legacy constructor: a float tensor from data
        from ._factory import tensor as _tensor_fn

        if len(args) == 1 and not kwargs:
            t = _tensor_fn(args[0], dtype=_dt.get_default_dtype())
        elif not args and not kwargs:
            t = _tensor_fn([], dtype=_dt.get_default_dtype())
        else:
            raise TypeError("Tensor(): use torchlet.tensor(data, dtype=..., device=...)")
        _retain(t._p)  # this object owns a reference of its own
        self._p = t._p

    # -------------------------------------------------------------- metadata
    @property
    def shape(self) -> Size:
        h = self._p
        return Size(_unpack(_sizes(h), _ndim(h)))

    def size(self, dim=None):
        h = self._p
        if dim is None:
            return Size(_unpack(_sizes(h), _ndim(h)))
        s = lib.tl_tensor_size(h, dim)
        if s < 0:
            raise_pending_error()
        return s

    def stride(self, dim=None):
        h = self._p
        if dim is None:
            return tuple(_unpack(_strides(h), _ndim(h)))
        s = lib.tl_tensor_stride(h, dim)
        if s < 0:
            raise_pending_error()
        return s

    @property
    def dtype(self) -> _dt.dtype:
        return _DTYPES[_dtype_of(self._p)]

    @property
    def device(self) -> _dev.device:
        t = _device_of(self._p)
        if t == _TL_CUDA:
            return _dev._CUDA[lib.tl_tensor_device_index(self._p)]
        return _DEVICES[t]

    def get_device(self) -> int:
        """The CUDA device ordinal, -1 for a CPU tensor (PyTorch's Tensor.get_device)."""
        return lib.tl_tensor_device_index(self._p)

    def cuda(self, device=None, non_blocking=False, memory_format=None):
        """This tensor on a CUDA device (the current one by default)."""
        from . import cuda as _cuda
        idx = _cuda._device_index(device, optional=True)
        kw = {"non_blocking": non_blocking}
        if memory_format is not None:
            kw["memory_format"] = memory_format
        return self.to(_dev.device("cuda", idx), **kw)

    def record_stream(self, stream) -> None:
        """Marks the tensor's memory as used by `stream`: the caching allocator
        does not reuse it until the work queued there so far is done."""
        if _device_of(self._p) != lib.TL_CUDA:
            raise RuntimeError(f"record_stream: expected a cuda tensor, got a {self.device.type} tensor")
        check(lib.tl_cuda_tensor_record_stream(self._p, ffi.cast("tl_cuda_stream", stream.cuda_stream)))

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.device is Tensor.device:   # a wrapper subclass reports the device it was made for
            cls.device = property(_subclass_device)

    @property
    def is_meta(self) -> bool:
        return _device_of(self._p) == lib.TL_META

    @property
    def is_cpu(self) -> bool:
        return _device_of(self._p) == lib.TL_CPU

    @property
    def is_cuda(self) -> bool:
        return _device_of(self._p) == lib.TL_CUDA

    @property
    def ndim(self) -> int:
        return _ndim(self._p)

    def dim(self) -> int:
        return _ndim(self._p)

    # PyTorch's numpy-style transposes (aten/src/ATen/native/TensorShape.cpp,
    # numpy_T / matrix_H / mT / mH). The conjugate transposes conjugate complex
    # tensors (a materialised conj: torchlet has no conj bit); the deprecation
    # warnings are TORCH_WARN_ONCE there: once per process here too.
    @property
    def T(self) -> Tensor:
        n = _ndim(self._p)
        if n == 0:
            _warn_once("Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases.")
        elif n != 2:
            _warn_once("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
                       "deprecated and it will throw an error in a future release. Consider `x.mT` to "
                       "transpose batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` "
                       "to reverse the dimensions of a tensor.")
        return self.permute(tuple(range(n - 1, -1, -1)))

    @property
    def H(self) -> Tensor:
        n = _ndim(self._p)
        if n == 0:
            _warn_once("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().")
            return self.permute(())
        if n != 2:
            msg = f"tensor.H is only supported on matrices (2-D tensors). Got {n}-D tensor."
            if n > 2:
                msg += " For batches of matrices, consider using tensor.mH"
            raise RuntimeError(msg)
        t = self.transpose(0, 1)
        return t.conj() if self.is_complex() else t

    @property
    def mT(self) -> Tensor:
        return self._matrix_transpose("mT", "This function is the identity in these cases.")

    @property
    def mH(self) -> Tensor:
        t = self._matrix_transpose("mH", "Consider using x.conj().")
        return t.conj() if self.is_complex() else t

    def _matrix_transpose(self, name, hint):
        n = _ndim(self._p)
        if n == 0:
            _warn_once(f"Tensor.{name} is deprecated on 0-D tensors. {hint}")
            return self.permute(())
        if n < 2:
            raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. "
                               f"Got {n}-D tensor.")
        return self.transpose(-2, -1)

    def ndimension(self) -> int:
        return _ndim(self._p)

    def numel(self) -> int:
        return lib.tl_tensor_numel(self._p)

    nelement = numel

    def element_size(self) -> int:
        return lib.tl_tensor_itemsize(self._p)

    @property
    def itemsize(self) -> int:
        return lib.tl_tensor_itemsize(self._p)

    @property
    def nbytes(self) -> int:
        h = self._p
        return lib.tl_tensor_numel(h) * lib.tl_tensor_itemsize(h)

    def is_contiguous(self) -> bool:
        return bool(lib.tl_tensor_is_contiguous(self._p))

    def is_floating_point(self) -> bool:
        return bool(lib.tl_dtype_is_floating(_dtype_of(self._p)))

    def is_complex(self) -> bool:
        return bool(lib.tl_dtype_is_complex(_dtype_of(self._p)))

    def is_conj(self) -> bool:
        """Always False: torchlet has no lazy conjugate bit (conj materialises)."""
        return False

    def is_neg(self) -> bool:
        return False

    @property
    def imag(self):
        return _gen_ops.imag(self)

    @property
    def real(self):
        return _gen_ops.real(self)

    def __invert__(self):
        # PyTorch's THPVariable_invert refuses floating tensors with a TypeError
        # before dispatch (bitwise_not itself raises NotImplementedError)
        if lib.tl_dtype_is_floating(_dtype_of(self._p)):
            raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
        return super().__invert__()  # the generated dunder (a mode sees __invert__, as PyTorch's)

    def storage_offset(self) -> int:
        return lib.tl_tensor_storage_offset(self._p)

    def data_ptr(self) -> int:
        return int(ffi.cast("uintptr_t", lib.tl_tensor_data_ptr(self._p)))

    def _version_counter(self) -> int:
        return lib.tl_tensor_version(self._p)

    @property
    def _version(self) -> int:
        return lib.tl_tensor_version(self._p)

    def __len__(self):
        h = self._p
        if _ndim(h) == 0:
            raise TypeError("len() of a 0-d tensor")
        return _sizes(h)[0]

    # ---------------------------------------------------------------- numpy
    def _check_host(self, what):
        dev = _device_of(self._p)
        if dev != lib.TL_CPU:
            name = str(_dev.of_tensor_ptr(self._p))
            if what == "a list":  # PyTorch copies to the CPU first, which a meta tensor cannot
                if name == "meta":
                    raise NotImplementedError("Cannot copy out of meta tensor; no data!")
                raise TypeError(f"can't convert {name} device type tensor to a list: it has no host data "
                                "(use Tensor.cpu() to copy the tensor to host memory first)")
            raise TypeError(f"can't convert {name} device type tensor to {what}. "
                            "Use Tensor.cpu() to copy the tensor to host memory first.")

    def _interface(self, typestr):
        h = self._p
        nd = _ndim(h)
        isz = lib.tl_tensor_itemsize(h)
        shape = tuple(_unpack(_sizes(h), nd))
        strides = tuple(s * isz for s in _unpack(_strides(h), nd))
        ptr = int(ffi.cast("uintptr_t", lib.tl_tensor_data_ptr(h)))
        return {"version": 3, "shape": shape, "typestr": typestr, "data": (ptr, False), "strides": strides}

    @property
    def __array_interface__(self):
        self._check_host("numpy")
        d = _DTYPES[_dtype_of(self._p)]
        if d is _dt.bfloat16:
            # numpy cannot describe bfloat16 here; __array__ returns an ml_dtypes view
            raise AttributeError("__array_interface__")
        return self._interface(d._typestr)

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        if dtype is not None and np.dtype(dtype) != a.dtype:
            return a.astype(dtype)
        if copy:
            return a.copy()
        return a

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """A numpy array sharing this tensor's memory (it keeps the tensor alive)."""
        self._check_host("numpy")
        d = _DTYPES[_dtype_of(self._p)]
        if d is _dt.bfloat16:
            if _dt._NP_BFLOAT16 is None:
                raise TypeError("Got unsupported ScalarType BFloat16 (install ml_dtypes for bfloat16 numpy interop)")
            a = np.asarray(_Bits(self)).view(_dt._NP_BFLOAT16)
        else:
            a = np.asarray(self)
        return a.copy() if force else a

    def tolist(self):
        if _device_of(self._p) == lib.TL_CUDA:   # through a host copy, as PyTorch does
            return self.cpu().tolist()
        self._check_host("a list")
        d = _DTYPES[_dtype_of(self._p)]
        if d is _dt.bfloat16:
            from . import _rt
            return _rt.to(self, _dt.float32).numpy().tolist()
        return np.asarray(self).tolist()

    def item(self):
        out = ffi.new("tl_scalar *")
        check(lib.tl_tensor_item(self._p, out))
        k = out.kind
        if k == lib.TL_SCALAR_DOUBLE:
            return out.d
        if k == lib.TL_SCALAR_COMPLEX:
            return complex(out.d, out.im)
        if k == lib.TL_SCALAR_BOOL:
            return bool(out.i)
        return out.i

    def __bool__(self):
        if lib.tl_tensor_numel(self._p) != 1:
            raise RuntimeError(f"Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def __int__(self):
        if lib.tl_tensor_numel(self._p) != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return int(self.item())

    def __float__(self):
        if lib.tl_tensor_numel(self._p) != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return float(self.item())

    def __index__(self):
        if self.is_floating_point() or _ndim(self._p) != 0 and lib.tl_tensor_numel(self._p) != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __repr__(self):
        from ._tensor_str import tensor_repr
        return tensor_repr(self)

    __str__ = __repr__

    def __reduce__(self):
        from ._factory import _rebuild_tensor
        if self.is_meta:
            raise TypeError("cannot pickle a meta tensor")
        return (_rebuild_tensor, (self.numpy().copy(), self.dtype))

    def __dlpack_device__(self):
        if _device_of(self._p) == lib.TL_CUDA:
            return (2, lib.tl_tensor_device_index(self._p))   # kDLCUDA
        return (1, 0)


class _Bits:
    """Exposes a tensor's raw 16-bit elements to numpy as uint16 (bfloat16 path)."""

    __slots__ = ("_t", "__array_interface__")

    def __init__(self, t):
        self._t = t
        self.__array_interface__ = t._interface("<u2")


_WARNED: set = set()


def _warn_once(msg: str) -> None:
    """PyTorch's TORCH_WARN_ONCE: a UserWarning the first time a message is raised."""
    if msg not in _WARNED:
        _WARNED.add(msg)
        warnings.warn(msg, UserWarning, stacklevel=3)


def _wrap(h) -> Tensor:
    """Adopt a new C reference (from a C call that returned `tl_tensor *`);
    NULL is a parked result or the error, and warnings the call recorded are
    raised (take_result): hand-written callers need no check of their own."""
    if not h or _has_warning():
        h = take_result(h)
    if _subclassed:
        return _subclass_wrap(h)
    t = _new(Tensor)
    t._p = h
    return t


def _has_p(t) -> bool:
    try:
        t._p
    except AttributeError:       # the slot is unset until a constructor fills it
        return False
    return True


def _subclass_device(self) -> _dev.device:
    d = self.__dict__.get("_wrapper_device")
    return d if d is not None else _dev.of_tensor_ptr(self._p)


_new = Tensor.__new__
_subclassed = False       # a tensor subclass instance exists (torchlet._subclass)
_subclass_wrap = None


def _mark_subclassed() -> None:
    """From the first tensor subclass instance on, every place that makes a
    result object asks the C tensor for a subclass state (one flag until then)."""
    global _subclassed, _subclass_wrap
    if _subclassed:
        return
    from . import _boxing, _ops, _subclass
    _subclass_wrap = _subclass.wrap
    _subclassed = True
    _pyargs._adopt = _subclass.wrap
    _fast.mark_subclassed(_subclass.rewrap)
    _boxing._adopt = _subclass.wrap
    _ops._adopt = _subclass.wrap
    _boxing.SUBCLASSED.append(True)
    if _gen_ops is not None:
        _gen_ops._as_subclass = _subclass.rewrap
        _gen_ops._subclassed = True

# the generated bindings and their helpers reach Tensor through these
from . import _pyargs  # noqa: E402

_pyargs.bind(Tensor)
if _gen_ops is not None:
    _gen_ops.bind(Tensor)
if len(_BASES) == 2:
    _fast.setup(Tensor, ffi, pending_result, _TensorOps.view, _TensorOps.t)


# ---------------------------------------------------------------- from numpy
_external = {}
_tokens = itertools.count(1)


@ffi.def_extern()
def tl_py_release_external(ctx):
    """Storage deleter for numpy-backed memory: drop our reference to the array."""
    _external.pop(int(ffi.cast("intptr_t", ctx)), None)


def from_numpy(a: np.ndarray, /) -> Tensor:
    """A tensor sharing memory with the numpy array `a` (no copy)."""
    if not isinstance(a, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(a).__name__})")
    d = _dt.from_numpy_dtype(a.dtype)
    if a.dtype.byteorder == (">" if np.little_endian else "<"):
        raise ValueError("given numpy array has byte order different from the native byte order. Conversion "
                         "between byte orders is currently not supported.")
    isz = a.itemsize
    for s in a.strides:
        if s < 0:
            raise ValueError("At least one stride in the given numpy array is negative, and tensors with negative "
                             "strides are not currently supported. (You can probably work around this by making a "
                             "copy of your array  with array.copy().) ")
        if s % isz:
            raise ValueError("given numpy array strides not a multiple of the element byte size. Copy the numpy "
                             "array to reallocate the memory.")
    if not a.flags.aligned:
        a = a.copy()
    shape = list(a.shape)
    strides = [s // isz for s in a.strides]
    nbytes = 0
    if a.size:
        nbytes = (sum((n - 1) * s for n, s in zip(shape, strides)) + 1) * isz
    ptr = a.__array_interface__["data"][0]
    token = next(_tokens)
    _external[token] = a
    s = lib.tl_storage_from_external(ffi.cast("void *", ptr), nbytes, lib.TL_CPU,
                                     lib.tl_py_release_external, ffi.cast("void *", token))
    if not s:
        _external.pop(token, None)
        raise_pending_error()
    try:
        h = lib.tl_tensor_new_with_storage(s, 0, len(shape), shape, strides, d._id)
    finally:
        lib.tl_storage_release(s)
    return _wrap(h)
