"""Shared helpers of the Python-binding tests: the optional PyTorch oracle,
recording warnings."""
import sys
import warnings

import pytest

try:
    import torch
except ImportError:  # torch is optional: oracle tests skip
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed (make torch)")


def lineno():
    """the caller's line number"""
    return sys._getframe(1).f_lineno


def caught(fn):
    """(result, [(message, category, filename, lineno)]) of fn() with every warning recorded"""
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        r = fn()
    return r, [(str(w.message), w.category, w.filename, w.lineno) for w in ws]
