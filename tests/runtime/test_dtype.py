"""dtype objects, promote_types (PyTorch's table), can_cast, result_type rules."""
import itertools

import numpy as np
import pytest

import torchlet as tl
from torchlet import _rt

from rt_helpers import ALL, FLOATS, needs_torch, torch

# PyTorch's promotion table (c10/core/ScalarType.cpp) for torchlet's dtypes
_ORDER = "u1 i1 i2 i4 i8 f2 f4 f8 b1 bf".split()
_TABLE = """
u1 i2 i2 i4 i8 f2 f4 f8 u1 bf
i2 i1 i2 i4 i8 f2 f4 f8 i1 bf
i2 i2 i2 i4 i8 f2 f4 f8 i2 bf
i4 i4 i4 i4 i8 f2 f4 f8 i4 bf
i8 i8 i8 i8 i8 f2 f4 f8 i8 bf
f2 f2 f2 f2 f2 f2 f4 f8 f2 f4
f4 f4 f4 f4 f4 f4 f4 f8 f4 f4
f8 f8 f8 f8 f8 f8 f8 f8 f8 f8
u1 i1 i2 i4 i8 f2 f4 f8 b1 bf
bf bf bf bf bf f4 f4 f8 bf bf
"""
_CODE = {"u1": tl.uint8, "i1": tl.int8, "i2": tl.int16, "i4": tl.int32, "i8": tl.int64, "f2": tl.float16,
         "f4": tl.float32, "f8": tl.float64, "b1": tl.bool, "bf": tl.bfloat16}
PROMOTE = {}
for _r, _line in zip(_ORDER, _TABLE.split("\n")[1:]):
    for _c, _v in zip(_ORDER, _line.split()):
        PROMOTE[(_CODE[_r], _CODE[_c])] = _CODE[_v]


def test_dtype_objects():
    assert tl.float32.itemsize == 4 and tl.bfloat16.itemsize == 2 and tl.bool.itemsize == 1
    assert tl.int64.itemsize == 8 and tl.float64.itemsize == 8 and tl.float16.itemsize == 2
    assert [d.is_floating_point for d in ALL] == [d in FLOATS for d in ALL]
    assert tl.int8.is_signed and not tl.uint8.is_signed and not tl.bool.is_signed
    assert repr(tl.float32) == "torchlet.float32"
    assert tl.float is tl.float32 and tl.double is tl.float64 and tl.long is tl.int64 and tl.half is tl.float16
    assert tl.int is tl.int32 and tl.short is tl.int16


@pytest.mark.parametrize("a,b", list(itertools.product(ALL, ALL)))
def test_promote_types_table(a, b):
    assert tl.promote_types(a, b) is PROMOTE[(a, b)]


@needs_torch
def test_promote_types_matches_torch():
    for a, b in itertools.product(ALL, ALL):
        ta, tb = getattr(torch, a._name), getattr(torch, b._name)
        assert str(torch.promote_types(ta, tb)).split(".")[1] == tl.promote_types(a, b)._name, (a, b)


def test_can_cast():
    assert not tl.can_cast(tl.float32, tl.int64)
    assert not tl.can_cast(tl.int32, tl.bool)
    assert tl.can_cast(tl.bool, tl.int8)
    assert tl.can_cast(tl.int64, tl.float16)
    assert tl.can_cast(tl.float64, tl.float16)


def _oracle(ops):
    """torch.result_type: ops = [(kind, dtype)], kind in dim / zero / wrapped."""
    buckets = {"dim": None, "zero": None, "wrapped": None}
    for kind, d in ops:
        if kind == "wrapped" and d.is_floating_point:
            d = tl.get_default_dtype()
        cur = buckets[kind]
        buckets[kind] = d if cur is None else PROMOTE[(cur, d)]

    def combine(higher, lower):
        if higher is not None and higher.is_floating_point:
            return higher
        if higher is tl.bool or (lower is not None and lower.is_floating_point):
            if higher is None:
                return lower
            return PROMOTE[(higher, lower)] if lower is not None else higher
        if higher is not None:
            return higher
        return lower

    return combine(buckets["dim"], combine(buckets["zero"], buckets["wrapped"]))


SCALARS = {"bool": True, "int": 3, "float": 2.5}
SCALAR_DT = {"bool": tl.bool, "int": tl.int64, "float": tl.float64}


@pytest.mark.parametrize("d", ALL)
@pytest.mark.parametrize("kind", list(SCALARS))
def test_result_type_with_python_scalar(d, kind):
    t = _rt.zeros(2, dtype=d)
    want = _oracle([("dim", d), ("wrapped", SCALAR_DT[kind])])
    assert tl.result_type(t, SCALARS[kind]) is want
    assert tl.result_type(SCALARS[kind], t) is want


@pytest.mark.parametrize("d,z", list(itertools.product(ALL, ALL)))
def test_result_type_with_zero_dim(d, z):
    t = _rt.zeros(2, dtype=d)
    s = _rt.zeros(dtype=z)
    assert tl.result_type(t, s) is _oracle([("dim", d), ("zero", z)])
    # two 0-dim tensors promote normally
    assert tl.result_type(_rt.zeros(dtype=d), s) is PROMOTE[(d, z)]


def test_result_type_known_cases():
    i32 = _rt.zeros(2, dtype=tl.int32)
    assert tl.result_type(i32, 5.5) is tl.float32
    assert tl.result_type(_rt.zeros(2, dtype=tl.int8), 1000) is tl.int8
    assert tl.result_type(_rt.zeros(2, dtype=tl.uint8), _rt.scalar_tensor(5, dtype=tl.int64)) is tl.uint8
    assert tl.result_type(_rt.zeros(2, dtype=tl.bool), 1) is tl.int64
    assert tl.result_type(_rt.zeros(2, dtype=tl.float16), _rt.scalar_tensor(1.0, dtype=tl.float64)) is tl.float16
    assert tl.result_type(i32, _rt.scalar_tensor(1.0, dtype=tl.float64)) is tl.float64
    assert tl.result_type(i32, _rt.scalar_tensor(1.0)) is tl.float32
    assert tl.result_type(2, 3) is tl.int64
    assert tl.result_type(2, 3.0) is tl.float32
    assert tl.result_type(True, False) is tl.bool


@needs_torch
def test_result_type_matches_torch():
    tdt = lambda d: getattr(torch, d._name)  # noqa: E731
    for d in ALL:
        for kind, v in SCALARS.items():
            want = str(torch.result_type(torch.zeros(2, dtype=tdt(d)), v)).split(".")[1]
            assert tl.result_type(_rt.zeros(2, dtype=d), v)._name == want, (d, kind)
        for z in ALL:
            want = str(torch.result_type(torch.zeros(2, dtype=tdt(d)), torch.zeros((), dtype=tdt(z)))).split(".")[1]
            assert tl.result_type(_rt.zeros(2, dtype=d), _rt.zeros(dtype=z))._name == want, (d, z)


def test_default_dtype():
    assert tl.get_default_dtype() is tl.float32
    tl.set_default_dtype(tl.float64)
    try:
        assert tl.tensor([1.5]).dtype is tl.float64
        assert tl.result_type(_rt.zeros(2, dtype=tl.int32), 1.5) is tl.float64
    finally:
        tl.set_default_dtype(tl.float32)
    with pytest.raises(TypeError, match="only floating-point types"):
        tl.set_default_dtype(tl.int32)


def test_numpy_dtype_mapping():
    for d in ALL:
        if d is tl.bfloat16:
            continue
        a = np.zeros(3, dtype=d._np)
        assert tl.from_numpy(a).dtype is d
