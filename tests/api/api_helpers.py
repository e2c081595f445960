"""Shared helpers of the Python-binding tests: the optional PyTorch oracle."""
import pytest

try:
    import torch
except ImportError:  # torch is optional: oracle tests skip
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed (make torch)")
