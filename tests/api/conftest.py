"""Fixtures of the Python-binding tests: numpy / torch oracles."""
import numpy as np
import pytest

try:
    import torch
except ImportError:  # torch is optional: oracle tests skip
    torch = None


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed (make torch)")
