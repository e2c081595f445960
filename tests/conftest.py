"""Shared pytest setup (keep small; each layer's suite adds its own fixtures).

Kernels run single-threaded under tests (OMP_NUM_THREADS=1, also set by the
Makefile). `cpu_capability` runs a test once per kernel instruction-set level
this CPU supports (default, avx2, avx512), switching every kernel table at
run time and restoring it afterwards.
"""
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest  # noqa: E402


def _capabilities():
    try:
        import torchlet
    except Exception:  # the extension is not built: kernel tests fail on their own
        return ["default"]
    return torchlet._supported_cpu_capabilities()


@pytest.fixture(params=_capabilities())
def cpu_capability(request):
    import torchlet

    before = torchlet.get_cpu_capability()
    torchlet._set_cpu_capability(request.param)
    try:
        yield request.param
    finally:
        torchlet._set_cpu_capability(before)


@pytest.fixture(autouse=True)
def _seeded_default_generator():
    """The default generator starts from a non-deterministic seed, as
    PyTorch's does: each test starts from seed 0 instead, so its random
    inputs do not depend on the run or on the tests before it."""
    import sys

    t = sys.modules.get("torchlet")
    if t is not None and hasattr(t, "manual_seed"):
        t.manual_seed(0)
    yield


@pytest.fixture(autouse=True)
def _rearm_warn_once():
    """Warnings PyTorch gives once per process (TORCH_WARN_ONCE; the runtime's
    TL_WARN_ONCE) fire again in each test, so a test expecting one does not
    depend on which tests ran before it."""
    import sys

    c = sys.modules.get("torchlet._C")
    if c is not None:
        c.lib.tl_reset_warn_once()
    yield


@pytest.fixture(autouse=True)
def _no_runtime_warning_left_pending():
    """A runtime warning is shown by the call that recorded it (docs/
    PYTHON_BINDINGS.md, "Warnings"); one left pending after a test would
    surface at an unrelated later call, or park that call's result."""
    yield
    import sys

    c = sys.modules.get("torchlet._C")  # only where the extension was loaded
    if c is None or not c.lib.tl_has_warning():
        return
    left = []
    while c.lib.tl_has_warning():
        left.append(c.ffi.string(c.lib.tl_take_warning()).decode("utf-8", "replace"))
    pytest.fail(f"runtime warnings left pending on this thread: {left}")
