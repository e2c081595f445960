"""make_tensor: PyTorch's torch.testing.make_tensor (random values in [low,
high) per dtype, noncontiguous views, exclude_zero) over torchlet's
generators: randint for bool and integers, uniform_ for floating and complex."""
from __future__ import annotations

import collections.abc
import math
import warnings

import torchlet

__all__ = ["make_tensor"]

_INTEGRAL_TYPES = [torchlet.uint8, torchlet.int8, torchlet.int16, torchlet.int32, torchlet.int64]
_FLOATING_TYPES = [torchlet.float16, torchlet.bfloat16, torchlet.float32, torchlet.float64]
_COMPLEX_TYPES = [torchlet.complex64, torchlet.complex128]
_BOOLEAN_OR_INTEGRAL_TYPES = [torchlet.bool, *_INTEGRAL_TYPES]
_FLOATING_OR_COMPLEX_TYPES = [*_FLOATING_TYPES, *_COMPLEX_TYPES]

# torch.iinfo (min, max) and torch.finfo (max, tiny) of the dtypes make_tensor draws
_IINFO = {torchlet.uint8: (0, 255), torchlet.int8: (-128, 127), torchlet.int16: (-(1 << 15), (1 << 15) - 1),
          torchlet.int32: (-(1 << 31), (1 << 31) - 1), torchlet.int64: (-(1 << 63), (1 << 63) - 1)}
_F16 = (65504.0, 6.103515625e-05)
_BF16 = (3.3895313892515355e+38, 1.1754943508222875e-38)
_F32 = (3.4028234663852886e+38, 1.1754943508222875e-38)
_F64 = (1.7976931348623157e+308, 2.2250738585072014e-308)
_FINFO = {torchlet.float16: _F16, torchlet.bfloat16: _BF16, torchlet.float32: _F32, torchlet.float64: _F64,
          torchlet.complex64: _F32, torchlet.complex128: _F64}


def _uniform_random_(t, low, high):
    # uniform_ needs to - from to be finite in t's dtype: halve the range, draw, double
    if high - low >= _FINFO[t.dtype][0]:
        return t.uniform_(low / 2, high / 2).mul_(2)
    return t.uniform_(low, high)


def _low_high(dtype, low, high, *, lowest_inclusive, highest_exclusive, default_low, default_high):
    """[low, high) after defaults, PyTorch's checks and clamping to the dtype's range
    (integer bounds rounded up: randint's high is exclusive)."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and dtype in _FLOATING_OR_COMPLEX_TYPES:
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or complex types "
                      "is deprecated since 2.1 and will be removed in 2.3. Use `torch.full(...)` instead.",
                      FutureWarning, stacklevel=4)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest_inclusive or low >= highest_exclusive:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), "
                         f"but {dtype} only supports [{lowest_inclusive}, {highest_exclusive})")
    low = min(max(low, lowest_inclusive), highest_exclusive)
    high = min(max(high, lowest_inclusive), highest_exclusive)
    if dtype in _BOOLEAN_OR_INTEGRAL_TYPES:
        return math.ceil(low), math.ceil(high)
    return low, high


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    """A tensor of the given shape filled with random values in [low, high)
    (defaults [-9, 9] for floating / complex, [-9, 10) for integers, clamped to
    the dtype); noncontiguous: a strided view; exclude_zero: zeros replaced by
    1 (integers) or the dtype's smallest normal number."""
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError("The parameters `noncontiguous` and `memory_format` are mutually exclusive, "
                         f"but got noncontiguous={noncontiguous} and memory_format={memory_format}")
    if requires_grad and dtype in _BOOLEAN_OR_INTEGRAL_TYPES:
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral dtypes, "
                         f"but got dtype={dtype}")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:
        # twice the last dimension, every other element taken from offset 1
        shape = (*shape[:-1], 2 * shape[-1])
    if dtype is torchlet.bool:
        low, high = _low_high(dtype, low, high, lowest_inclusive=0, highest_exclusive=2, default_low=0,
                              default_high=2)
        result = torchlet.randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _BOOLEAN_OR_INTEGRAL_TYPES:
        lo, hi = _IINFO[dtype]
        # randint's bounds go through int64: 2**63 - 1 itself cannot be drawn
        low, high = _low_high(dtype, low, high, lowest_inclusive=lo,
                              highest_exclusive=hi + (1 if dtype is not torchlet.int64 else 0),
                              default_low=-9, default_high=10)
        result = torchlet.randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _FLOATING_OR_COMPLEX_TYPES:
        fmax = _FINFO[dtype][0]
        low, high = _low_high(dtype, low, high, lowest_inclusive=-fmax, highest_exclusive=fmax, default_low=-9,
                              default_high=9)
        result = torchlet.empty(shape, device=device, dtype=dtype)
        _uniform_random_(torchlet.view_as_real(result) if dtype in _COMPLEX_TYPES else result, low, high)
    else:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by torch.testing.make_tensor()."
                        " To request support, file an issue at: https://github.com/pytorch/pytorch/issues")
    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if dtype in _BOOLEAN_OR_INTEGRAL_TYPES else _FINFO[dtype][1]
    if dtype in _FLOATING_OR_COMPLEX_TYPES:
        result.requires_grad = requires_grad
    return result
