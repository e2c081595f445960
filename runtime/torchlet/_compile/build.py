"""Build: compile a graph's C source into a shared object, cached on disk.

The flags are eager's kernel flags for the instruction set the runtime
chose at import (setup.py's COMMON + KERNEL_VARIANTS[cap] + -fwrapv; a test
keeps the two lists equal), so a fused loop computes what eager's loop
computes.  Objects are cached in TORCHLET_CACHE_DIR (default
$XDG_CACHE_HOME/torchlet/compile, else ~/.cache/torchlet/compile) under
sha256(source, flags, compiler version, the formula headers' text): a new
process with the same graphs does not compile, and editing a formula
invalidates what used it.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
INCLUDE_DIRS = (ROOT / "kernels" / "ufunc", ROOT / "runtime" / "include")

# eager's flags (setup.py: COMMON, KERNEL_VARIANTS, the kernels' -fwrapv); -Wall -Wextra kept
COMMON = ["-std=gnu11", "-fPIC", "-O3", "-fopenmp-simd", "-fno-math-errno", "-fno-trapping-math",
          "-Wall", "-Wextra"]
KERNEL_VARIANTS = {
    "DEFAULT": [],
    "AVX2": ["-mavx2", "-mfma", "-mf16c"],
    "AVX512": ["-mavx2", "-mfma", "-mf16c", "-mavx512f", "-mavx512vl", "-mavx512bw", "-mavx512dq",
               "-mprefer-vector-width=512"],
}


class BuildError(RuntimeError):
    """The fused kernels could not be built (no compiler, or it failed)."""


_lock = threading.Lock()
_loaded: dict = {}
_digest_cache: list = []


def compiler() -> str:
    cc = os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")
    if not cc:
        raise BuildError("no C compiler found (gcc or $CC)")
    return cc


def flags() -> list:
    import torchlet
    cap = torchlet.get_cpu_capability().upper()
    return COMMON + KERNEL_VARIANTS.get(cap, []) + ["-fwrapv", "-shared"] + \
        [f"-I{d}" for d in INCLUDE_DIRS]


def cache_dir() -> Path:
    d = os.environ.get("TORCHLET_CACHE_DIR")
    if d:
        return Path(d)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "torchlet" / "compile"


def _environment_digest() -> str:
    """Compiler version and the text of every header a kernel may include."""
    if not _digest_cache:
        h = hashlib.sha256()
        try:
            h.update(subprocess.run([compiler(), "--version"], capture_output=True, text=True).stdout.encode())
        except OSError as e:
            raise BuildError(f"cannot run the C compiler: {e}") from None
        for d in INCLUDE_DIRS:
            if not d.is_dir():
                raise BuildError(f"the formula headers are not installed ({d} is missing)")
            for p in sorted(d.glob("*.h")):
                h.update(p.name.encode())
                h.update(p.read_bytes())
        _digest_cache.append(h.hexdigest())
    return _digest_cache[0]


def build(source: str, names: list) -> tuple:
    """(loaded library, its path, seconds spent compiling: 0 on a cache hit)."""
    import time
    fl = flags()
    key = hashlib.sha256("\0".join([source, " ".join(fl), _environment_digest()]).encode()).hexdigest()[:32]
    with _lock:
        if key in _loaded:
            return _loaded[key] + (0.0,)
        d = cache_dir()
        d.mkdir(parents=True, exist_ok=True)
        so = d / f"fused_{key}.so"
        seconds = 0.0
        if not so.exists():
            t0 = time.perf_counter()
            src = d / f"fused_{key}.c"
            src.write_text(source)
            fd, tmp = tempfile.mkstemp(suffix=".so", dir=d)
            os.close(fd)
            r = subprocess.run([compiler(), *fl, str(src), "-o", tmp, "-lm"], capture_output=True, text=True)
            if r.returncode != 0:
                os.unlink(tmp)
                raise BuildError(f"the C compiler failed on {src}:\n{r.stderr[-4000:]}")
            os.replace(tmp, so)     # atomic: a concurrent process sees the whole file or none
            seconds = time.perf_counter() - t0
        lib = _load(so, names)
        _loaded[key] = (lib, str(so))
        return lib, str(so), seconds


def _load(so: Path, names: list):
    from cffi import FFI
    ffi = FFI()
    ffi.cdef("\n".join(f"int {n}(const int64_t *sizes, void *const *ptrs, void *pfor, int64_t grain, int64_t stream_min);"
                       for n in names))
    return ffi.dlopen(str(so))


def parallel_for_address() -> int:
    """The runtime's tl_parallel_for, handed to every kernel (the kernels'
    rows run on eager's thread pool, under set_num_threads)."""
    import ctypes

    from .. import _C
    lib = ctypes.CDLL(_C.__file__)
    return ctypes.cast(lib.tl_parallel_for, ctypes.c_void_p).value
