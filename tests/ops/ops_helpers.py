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
