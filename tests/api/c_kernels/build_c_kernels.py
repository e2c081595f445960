"""Compile myc_kernels.c into a shared library, as a user would (docs/EXTENDING.md,
"Kernels in C"): gcc -shared -fPIC against torchlet.library.c_include_dir(),
linking nothing from torchlet. Used by tests/api/test_c_kernels.py and
benchmarks/bench_ops_call.py."""
from __future__ import annotations

import pathlib
import shutil
import subprocess

SOURCE = pathlib.Path(__file__).resolve().parent / "myc_kernels.c"
CFLAGS = ["-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC"]


def compile_library(out_dir, name: str = "libmyc_kernels.so") -> pathlib.Path | None:
    """Build SOURCE into out_dir/name and return its path; None when there is no gcc.
    A compiler error raises RuntimeError with gcc's output."""
    import torchlet.library

    gcc = shutil.which("gcc")
    if gcc is None:
        return None
    out = pathlib.Path(out_dir) / name
    cmd = [gcc, *CFLAGS, f"-I{torchlet.library.c_include_dir()}", str(SOURCE), "-o", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stdout}{r.stderr}")
    return out
