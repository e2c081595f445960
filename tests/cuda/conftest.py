"""Fixtures for the CUDA runtime tests: the fake driver (fake_driver/fake_cuda.c)
built once per session with gcc, and a runner that executes a snippet in a
fresh Python process with TORCHLET_LIBCUDA pointing at it (the runtime loads
its driver once per process, so each configuration needs its own process)."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap

import pytest
from cuda_helpers import HERE, ROOT, build_shared


@pytest.fixture(scope="session")
def fake_driver(tmp_path_factory) -> pathlib.Path:
    d = tmp_path_factory.mktemp("fake_cuda")
    return build_shared(HERE / "fake_driver" / "fake_cuda.c", d / "libfakecuda.so")


@pytest.fixture(scope="session")
def host_kernels(tmp_path_factory) -> pathlib.Path:
    d = tmp_path_factory.mktemp("host_kernels")
    return build_shared(HERE / "fake_driver" / "host_kernels.c", d / "libhostkernels.so")


PRELUDE = """
import ctypes, os, sys
import numpy as np
import torchlet
fake = ctypes.CDLL(os.environ["TORCHLET_LIBCUDA"])   # the same library the runtime loaded
fake.fake_counter.restype = ctypes.c_longlong
fake.fake_counter.argtypes = [ctypes.c_char_p]
def counter(name):
    return fake.fake_counter(name.encode())
# the device's copy / cast / fill kernels (generated/cuda/ufunc_copy.cu) run on
# the fake driver as their host-shim build (tests/cuda/shim_build.py)
sys.path.insert(0, os.path.join(os.getcwd(), "tests", "cuda"))
import shim_build
shim_build.load(["copy"]).tl_shim_register_fake_copy(ctypes.cast(fake.fake_register_kernel, ctypes.c_void_p))
"""


@pytest.fixture
def run_cuda(fake_driver):
    """run_cuda(code, **env) -> stdout of `code` run after PRELUDE in a new
    interpreter on the fake driver; the process must exit 0."""

    def run(code: str, *, libcuda: str | None = None, timeout: float = 120, **env) -> str:
        e = dict(os.environ)
        e["TORCHLET_LIBCUDA"] = libcuda if libcuda is not None else str(fake_driver)
        e["OMP_NUM_THREADS"] = "1"
        e.update({k: str(v) for k, v in env.items()})
        prelude = PRELUDE if libcuda is None else "import torchlet\n"
        p = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True, text=True,
                           env=e, timeout=timeout, cwd=str(ROOT))
        assert p.returncode == 0, f"exit {p.returncode}\n--- stdout\n{p.stdout}\n--- stderr\n{p.stderr}"
        return p.stdout

    return run
