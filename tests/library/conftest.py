"""Fixtures of the operator-table and library tests."""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

if os.environ.get("TORCHLET_ASAN_RUN") == "1":
    # torch's C++ exceptions abort under ASan's preload: its comparisons skip (importorskip)
    sys.modules["torch"] = None


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


@pytest.fixture(autouse=True)
def _drop_custom_ops():
    """Custom operators made by a test (namespaces starting with "tc") go after it."""
    yield
    from torchlet._library.custom_ops import _defs
    for d in list(_defs.values()):
        if d._namespace.startswith("tc"):
            d._destroy()
