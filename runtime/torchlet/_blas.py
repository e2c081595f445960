"""Load the vendor BLAS before the extension (docs/LINALG.md).

torchlet._C links libscipy_openblas.so from the scipy-openblas32 wheel. The
library is loaded here, from wherever that wheel is installed now, with
RTLD_GLOBAL, so that the dynamic loader finds it by its soname when _C is
loaded next. This follows the wheel (a moved or recreated virtual
environment, an upgraded wheel, a user-site install), which the build-time
rpath baked into _C (the fallback) cannot.
"""
from __future__ import annotations

import ctypes
import os


def _load():
    try:
        import scipy_openblas32 as ob
    except ImportError:  # _C's rpath may still find it; else its import error says what is missing
        return None
    return ctypes.CDLL(os.path.join(ob.get_lib_dir(), ob.get_library(fullname=True)), mode=ctypes.RTLD_GLOBAL)


_lib = _load()


def config() -> str:
    """OpenBLAS's build configuration (version, core, thread model), as numpy.show_config prints it."""
    if _lib is None:
        return "scipy-openblas32 not importable"
    fn = _lib.scipy_openblas_get_config
    fn.restype = ctypes.c_char_p
    return fn().decode()
