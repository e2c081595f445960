"""dtype objects (torchlet.float32, ...), promotion and their numpy mapping."""
from __future__ import annotations

import numpy as np

from ._C import lib

try:  # optional: numpy has no bfloat16 of its own
    import ml_dtypes as _ml_dtypes

    _NP_BFLOAT16 = np.dtype(_ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - exercised where ml_dtypes is missing
    _ml_dtypes = None
    _NP_BFLOAT16 = None


class dtype:
    """A tensor element type. Compare with `is` or `==`; there is one object per type."""

    __slots__ = ("_id", "_name", "itemsize", "is_floating_point", "is_signed", "_np", "_typestr")

    def __init__(self, id_, name, np_dtype):
        self._id = id_
        self._name = name
        self.itemsize = int(lib.tl_dtype_itemsize(id_))
        self.is_floating_point = bool(lib.tl_dtype_is_floating(id_))
        self.is_signed = bool(lib.tl_dtype_is_signed(id_))
        self._np = np_dtype
        # how __array_interface__ describes the bits (bfloat16 travels as uint16)
        self._typestr = np.dtype(np_dtype if np_dtype is not None else np.uint16).str if id_ != lib.TL_BFLOAT16 else "<u2"

    @property
    def is_complex(self):
        return self._id in (lib.TL_COMPLEX64, lib.TL_COMPLEX128)

    def to_real(self):
        """complex64 -> float32, complex128 -> float64; real dtypes unchanged."""
        return _BY_ID[lib.tl_dtype_to_real(self._id)]

    def to_complex(self):
        """float64 -> complex128, other floating dtypes -> complex64 (no complex32 here)."""
        if self.is_complex:
            return self
        if not self.is_floating_point:
            raise RuntimeError(f"Unknown Complex ScalarType for {_SCALAR_NAMES[self._id]}")
        return _BY_ID[lib.tl_dtype_to_complex(self._id)]

    def to_numpy(self):
        """The numpy dtype of this type (bfloat16 needs ml_dtypes)."""
        if self._np is None:
            raise TypeError(f"Got unsupported ScalarType {_SCALAR_NAMES[self._id]}: install ml_dtypes for "
                            "bfloat16 numpy interop")
        return self._np

    def __repr__(self):
        return f"torchlet.{self._name}"

    def __reduce__(self):
        return (_dtype_by_name, (self._name,))


_SCALAR_NAMES = {}
_BY_ID: list = [None] * int(lib.TL_NUM_DTYPES)
_BY_NAME = {}


def _make(id_, name, np_dtype):
    d = dtype(id_, name, np_dtype)
    _BY_ID[id_] = d
    _BY_NAME[name] = d
    from ._C import ffi
    _SCALAR_NAMES[id_] = ffi.string(lib.tl_dtype_scalar_name(id_)).decode()
    return d


bool_ = _make(lib.TL_BOOL, "bool", np.dtype(np.bool_))
uint8 = _make(lib.TL_UINT8, "uint8", np.dtype(np.uint8))
int8 = _make(lib.TL_INT8, "int8", np.dtype(np.int8))
int16 = _make(lib.TL_INT16, "int16", np.dtype(np.int16))
int32 = _make(lib.TL_INT32, "int32", np.dtype(np.int32))
int64 = _make(lib.TL_INT64, "int64", np.dtype(np.int64))
float16 = _make(lib.TL_FLOAT16, "float16", np.dtype(np.float16))
bfloat16 = _make(lib.TL_BFLOAT16, "bfloat16", _NP_BFLOAT16)
float32 = _make(lib.TL_FLOAT32, "float32", np.dtype(np.float32))
float64 = _make(lib.TL_FLOAT64, "float64", np.dtype(np.float64))
complex64 = _make(lib.TL_COMPLEX64, "complex64", np.dtype(np.complex64))
complex128 = _make(lib.TL_COMPLEX128, "complex128", np.dtype(np.complex128))

ALL_DTYPES = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64, complex128)


def _dtype_by_name(name):
    return _BY_NAME[name]


def from_id(i: int) -> dtype:
    return _BY_ID[i]


_FROM_NP = {d._np: d for d in ALL_DTYPES if d._np is not None}


def from_numpy_dtype(npdt) -> dtype:
    npdt = np.dtype(npdt)
    d = _FROM_NP.get(npdt.newbyteorder("=") if npdt.byteorder not in "=|" else npdt)
    if d is None:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{npdt.name}. The only supported types are: float64, "
            "float32, float16, complex64, complex128, bfloat16, int64, int32, int16, int8, uint8, and bool.")
    return d


def as_dtype(x) -> dtype:
    if isinstance(x, dtype):
        return x
    if x is bool:
        return bool_
    if x is int:
        return int64
    if x is float:
        return get_default_dtype()
    if x is complex:
        return _BY_ID[lib.tl_get_default_complex_dtype()]
    if isinstance(x, str) and x in _BY_NAME:
        return _BY_NAME[x]
    try:
        return from_numpy_dtype(x)
    except TypeError:
        raise TypeError(f"expected a torchlet dtype, got {x!r}") from None


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """The smallest dtype both can be converted to (PyTorch's table)."""
    return _BY_ID[lib.tl_promote_types(as_dtype(type1)._id, as_dtype(type2)._id)]


def can_cast(from_: dtype, to: dtype) -> bool:
    """PyTorch's casting rule for results: no floating -> integral, no non-bool -> bool."""
    return bool(lib.tl_can_cast(as_dtype(from_)._id, as_dtype(to)._id))


def get_default_dtype() -> dtype:
    return _BY_ID[lib.tl_get_default_dtype()]


def get_default_complex_dtype() -> dtype:
    """complex128 when the default dtype is float64, else complex64 (PyTorch's rule)."""
    return _BY_ID[lib.tl_get_default_complex_dtype()]


def set_default_dtype(d: dtype, /) -> None:
    from ._errors import check
    check(lib.tl_set_default_dtype(as_dtype(d)._id))
