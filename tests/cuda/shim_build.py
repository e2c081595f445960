"""Builds the host-shim library for the CUDA tests: generated CUDA programs
compiled as C++17 on the CPU (-include shim/host_shim.h; their #include lines
reach the shared texts, as the runtime's join of a program's parts), the
generated host launchers and kernels/cuda/*.c compiled as C, and the shim's tl_cuda_launch
(shim/shim_launch.cpp) that runs a kernel over grid x block on the host.

The library resolves torchlet's runtime (errors, TensorIterator) from the
loaded torchlet._C, promoted to RTLD_GLOBAL; -Bsymbolic binds its own
tl_cuda_launch before _C's weak fallback. Cached under build/cuda_shim/ by a
hash of every input.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
INCLUDES = ["runtime/include", "generated/include", "generated/kernels", "kernels/ufunc", "kernels/cuda",
            "generated/cuda"]
#: where a program's `#include "NAME"` lines find the shared texts (torchlet.cuda.nvrtc.SHARED_DIRS): the
#: C++ preprocessor composes the program as NVRTC gets it
PROGRAM_INCLUDES = ["kernels/cuda", "generated/cuda"]
KERNEL_RE = re.compile(r'extern "C" __global__ void __launch_bounds__\(\d+\) (\w+)\(')


#: programs that are not ufunc_<op>.cu: (file, parameter struct, block-cooperative)
PROGRAMS = {"reduce": ("reduce.cu", "tl_cuda_reduce_params", True),
            "index": ("index.cu", "tl_cuda_index_params", False)}


def _program(op: str) -> tuple[Path, str, bool]:
    file, params, coop = PROGRAMS.get(op, (f"ufunc_{op}.cu", "tl_cuda_ufunc_params", False))
    return ROOT / "generated" / "cuda" / file, params, coop


def _host_file(op: str) -> Path:
    return ROOT / "generated/cuda" / (f"{op}_cuda.c" if op in PROGRAMS else f"ufunc_{op}_cuda.c")


def _tu(op: str) -> str:
    cu, params, coop = _program(op)
    names = KERNEL_RE.findall(cu.read_text())
    run, reg = ("tl_shim_run_coop", "tl_shim_register_coop") if coop else ("tl_shim_run", "tl_shim_register")
    lines = [f'#include "{cu}"', ""]
    for n in names:
        lines.append(f"static void tl_shim_call_{n}(const void *p) {{ {n}(*(const {params} *)p); }}")
    lines.append(f'extern "C" void tl_shim_register_{op}(void) {{')
    lines += [f'    {reg}("{n}", tl_shim_call_{n});' for n in names]
    lines.append("}")
    # trampolines for the runtime's fake libcuda (tests/cuda/fake_driver): its
    # cuLaunchKernel calls fn(grid, block, kernelParams); kernelParams[0] is
    # the parameter struct the generated launcher packed
    for n in names:
        lines.append(f"static void tl_fake_{n}(unsigned g[3], unsigned b[3], void **params) "
                     f"{{ {run}(tl_shim_call_{n}, g, b, params[0]); }}")
    lines.append(f'extern "C" void tl_shim_register_fake_{op}(void (*reg)(const char *, tl_shim_fake_fn)) {{')
    lines += [f'    reg("{n}", tl_fake_{n});' for n in names]
    lines.append("}")
    return "\n".join(lines) + "\n"


def _run(cmd: list[str]) -> None:
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}\n{r.stderr[-6000:]}")


def build(ops: list[str], sanitize: bool = False) -> Path:
    c_sources = [ROOT / "kernels/cuda/tl_cuda_loops.c", ROOT / "kernels/cuda/tl_cuda_ufunc_iter.c"]
    c_sources += [_host_file(op) for op in ops] + [ROOT / "generated/cuda/tl_cuda_parts.c"]
    if "reduce" in ops:
        c_sources += [ROOT / "kernels/cuda/tl_cuda_reduce.c", ROOT / "kernels/cuda/tl_cuda_norm.c"]
    if "index" in ops:
        c_sources += [ROOT / "kernels/cuda/tl_cuda_index.c"]
    tus = {op: _tu(op) for op in ops}
    inputs = sorted(ROOT.glob("kernels/cuda/*")) + sorted(HERE.glob("shim/*")) + c_sources
    inputs += [_program(op)[0] for op in ops] + sorted(ROOT.glob("runtime/include/*.h"))
    inputs += [ROOT / "generated/cuda/tl_cuda_ufunc_params.h", ROOT / "generated/cuda/tl_cuda_ufunc_params.cuh"]
    flags = ["-O1", "-g", "-fPIC", "-Wall", "-Wextra"] + (["-fsanitize=address,undefined"] if sanitize else [])
    h = hashlib.sha256(" ".join(flags + ops).encode())
    for p in inputs:
        h.update(p.read_bytes())
    out = ROOT / "build" / "cuda_shim" / h.hexdigest()[:16]
    lib = out / "libtlshim.so"
    if lib.exists():
        return lib
    tmp = out.with_suffix(".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    incs = [f"-I{ROOT / i}" for i in INCLUDES]
    jobs = []
    for op, text in tus.items():
        src = tmp / f"shim_{op}.cpp"
        src.write_text(text)
        jobs.append(["g++", "-std=c++17", *flags, "-Wno-unknown-pragmas", "-Wno-unused-parameter",
                     "-fwrapv", *[f"-I{ROOT / i}" for i in PROGRAM_INCLUDES],
                     "-include", str(HERE / "shim/host_shim.h"), "-c", str(src), "-o", str(src.with_suffix(".o"))])
    launch = HERE / "shim/shim_launch.cpp"
    jobs.append(["g++", "-std=c++17", *flags, "-c", str(launch), "-o", str(tmp / "shim_launch.o")])
    for c in c_sources:
        jobs.append(["gcc", "-std=gnu11", *flags, "-fwrapv", *incs, "-c", str(c), "-o", str(tmp / (c.stem + ".o"))])
    with ThreadPoolExecutor(os.cpu_count() or 2) as ex:
        list(ex.map(_run, jobs))
    _run(["g++", "-shared", *flags, "-Wl,-Bsymbolic", "-o", str(tmp / "libtlshim.so"), *map(str, tmp.glob("*.o"))])
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return lib


def load(ops: list[str]) -> ctypes.CDLL:
    """TORCHLET_SHIM_ASAN=1: the library under AddressSanitizer + UBSan (run
    Python with LD_PRELOAD=$(gcc -print-file-name=libasan.so))"""
    import torchlet._C as C

    ctypes.CDLL(C.__file__, mode=os.RTLD_GLOBAL | getattr(os, "RTLD_NOLOAD", 4))
    lib = ctypes.CDLL(str(build(ops, sanitize=os.environ.get("TORCHLET_SHIM_ASAN") == "1")), mode=os.RTLD_GLOBAL)
    for op in ops:
        getattr(lib, f"tl_shim_register_{op}")()
    return lib
