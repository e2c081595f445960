"""Shared setup of the operator suites: optional oracles and the dtype list."""
import numpy as np
import pytest

import torchlet as tl

try:
    import ml_dtypes
    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover
    BF16 = None
try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch not installed")

ALL = [tl.bool, tl.uint8, tl.int8, tl.int16, tl.int32, tl.int64, tl.float16, tl.bfloat16, tl.float32, tl.float64]
NAMES = {d: str(d).split(".")[-1] for d in ALL}
FLOATS = [tl.float16, tl.bfloat16, tl.float32, tl.float64]


def tl_copy(a, dt):
    """a torchlet tensor of dtype dt holding a copy of numpy array `a` (never
    aliases it, so in-place tests may write); bfloat16 through float32"""
    src = np.array(a, dtype=np.float32 if dt is tl.bfloat16 else None, copy=True)
    from torchlet import _rt
    return _rt.to(tl.from_numpy(src), dtype=dt)


def np_of(t):
    """a torchlet tensor's values as numpy (bfloat16 as float32)"""
    x = t.numpy()
    return x.astype(np.float32) if BF16 is not None and x.dtype == BF16 else np.asarray(x)


def torch_copy(a, dt):
    """the torch tensor of dtype dt holding numpy array `a`"""
    src = np.array(a, dtype=np.float32 if dt is tl.bfloat16 else None, copy=True)
    return torch.from_numpy(src).to(getattr(torch, NAMES[dt]))
