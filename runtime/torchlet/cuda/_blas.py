"""Where cuBLAS is: the runtime (runtime/src/cuda/cublas.c) dlopens it on the
first matrix product; this tells it the library of the pip wheel, found the
way cuda-pathfinder finds NVIDIA's wheels (site-packages/nvidia/...), without
loading it. $TORCHLET_LIBCUBLAS, read by the runtime, comes first."""
from __future__ import annotations

import os
import sys

#: relative to site-packages: the CUDA 13 wheel (nvidia-cublas), the CUDA 12 one (nvidia-cublas-cu12)
CANDIDATES = (("nvidia", "cu13", "lib", "libcublas.so.13"), ("nvidia", "cublas", "lib", "libcublas.so.12"))


def locate() -> str | None:
    for entry in sys.path:
        for parts in CANDIDATES:
            path = os.path.join(entry or ".", *parts)
            if os.path.isfile(path):
                return os.path.abspath(path)
    return None


def install(lib) -> None:
    path = locate()
    if path:
        lib.tl_cuda_blas_set_library(path.encode())
