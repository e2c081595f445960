"""Fixtures of the dispatch-mode, tensor-subclass and FakeTensor tests."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))

if os.environ.get("TORCHLET_ASAN_RUN") == "1":
    sys.modules["torch"] = None   # torch's C++ exceptions abort under ASan's preload


@pytest.fixture(autouse=True)
def _no_mode_left():
    """Every test leaves the thread's mode stack and Python key as it found them."""
    from torchlet._python_dispatch import PYTHON_KEY_BIT, mode_stack
    from torchlet._C import lib
    yield
    assert mode_stack() == []
    assert not lib.tl_tls_get_included() & PYTHON_KEY_BIT
