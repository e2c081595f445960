"""Helpers of the shape and indexing suites (test_shape_ops.py,
test_index_ops.py): these operators only move elements, so inputs are small
integers (exact in every dtype) and results are compared exactly."""
import re

import numpy as np
import pytest

import torchlet as tl
from torchlet import _rt

from ops_helpers import NAMES, torch


def make_vals(rng):
    def vals(shape, dt=tl.float32):
        """small integers: exact in every dtype (0/1 for bool)"""
        hi = 2 if dt is tl.bool else 100
        return rng.integers(0, hi, size=shape).astype(np.float64)
    return vals


def mk(a, dt=tl.float32):
    """a tensor of dtype dt holding a copy of a"""
    return _rt.to(tl.from_numpy(np.array(a, dtype=np.float64, copy=True, order="C")), dtype=dt)


def ix(a, dt=tl.int64):
    """an index tensor"""
    return _rt.to(tl.from_numpy(np.array(a, dtype=np.int64, copy=True, order="C")), dtype=dt)


def npv(t):
    """values as float64 (exact for every dtype of vals())"""
    x = t.numpy()
    return np.asarray(x.astype(np.float32) if str(x.dtype) == "bfloat16" else x).astype(np.float64)


def same(t, ref, dt=None):
    assert tuple(t.shape) == np.shape(ref)
    if dt is not None:
        assert t.dtype is dt
    np.testing.assert_array_equal(npv(t), ref)


def tt(t):
    """a torch tensor with t's values and dtype"""
    return torch.from_numpy(npv(t)).to(getattr(torch, NAMES[t.dtype]))


def raises(kind, msg, fn):
    """fn raises exactly kind(msg)"""
    with pytest.raises(kind, match="^" + re.escape(msg) + "$"):
        fn()


def leaf(a):
    """a float64 leaf that requires grad"""
    t = mk(a, tl.float64)
    t.requires_grad_(True)
    return t
