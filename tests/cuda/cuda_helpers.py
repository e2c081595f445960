"""Helpers for the CUDA runtime tests: paths, and building a C file with gcc."""
from __future__ import annotations

import pathlib
import shutil
import subprocess

import pytest

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def gcc() -> str:
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler to build the fake CUDA driver")
    return cc


def build_shared(src: pathlib.Path, out: pathlib.Path, *extra: str) -> pathlib.Path:
    cmd = [gcc(), "-shared", "-fPIC", "-O1", "-g", "-Wall", "-Wextra", "-Werror", "-o", str(out), str(src), *extra,
           "-lpthread"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return out
