"""Helpers for the runtime tests: dtype tables, random data, numpy references."""
import numpy as np
import pytest

import torchlet as tl

try:
    import ml_dtypes
    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover
    ml_dtypes = None
    BF16 = None

try:
    import torch
except ImportError:
    torch = None

ALL = [tl.bool, tl.uint8, tl.int8, tl.int16, tl.int32, tl.int64, tl.float16, tl.bfloat16, tl.float32, tl.float64]
NP = {tl.bool: np.dtype(np.bool_), tl.uint8: np.dtype(np.uint8), tl.int8: np.dtype(np.int8),
      tl.int16: np.dtype(np.int16), tl.int32: np.dtype(np.int32), tl.int64: np.dtype(np.int64),
      tl.float16: np.dtype(np.float16), tl.bfloat16: BF16, tl.float32: np.dtype(np.float32),
      tl.float64: np.dtype(np.float64)}
FLOATS = {tl.float16, tl.bfloat16, tl.float32, tl.float64}
INTS = {tl.uint8, tl.int8, tl.int16, tl.int32, tl.int64}

needs_bf16 = pytest.mark.skipif(BF16 is None, reason="ml_dtypes not installed")
needs_torch = pytest.mark.skipif(torch is None, reason="torch not installed")


def random_array(rng, shape, dt, small=False):
    """Random values representable in dt (and exactly in every wider type)."""
    if dt is tl.bool:
        return np.asarray(rng.integers(0, 2, size=shape)).astype(np.bool_)
    if dt in INTS:
        info = np.iinfo(NP[dt])
        lo, hi = (max(info.min, -100), min(info.max, 100)) if small else (info.min, info.max)
        return np.asarray(rng.integers(lo, hi, size=shape, dtype=np.int64, endpoint=True)).astype(NP[dt])
    if dt is tl.bfloat16 and BF16 is None:
        pytest.skip("ml_dtypes not installed")
    vals = np.asarray(rng.standard_normal(size=shape) * (4 if small else 100))
    return vals.astype(NP[dt])


def to_tl(a, dt=None):
    """A torchlet tensor with a's values (bfloat16 through ml_dtypes)."""
    return tl.from_numpy(np.ascontiguousarray(a)) if dt is None else tl.tensor(a, dtype=dt)


def as_np(t):
    return t.numpy()


def assert_same(t, expected, exact=True):
    got = t.numpy()
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    if got.dtype.kind == "f" or got.dtype == BF16:
        g = got.astype(np.float64)
        e = expected.astype(np.float64)
        assert np.array_equal(np.isnan(g), np.isnan(e))
        m = ~np.isnan(g)
        if exact:
            assert np.array_equal(g[m], e[m]), (g[m][:10], e[m][:10])
        else:
            np.testing.assert_allclose(g[m], e[m], rtol=1e-6)
    else:
        assert np.array_equal(got, expected)
