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
