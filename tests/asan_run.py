"""make asan-test: the C-facing runtime tests against an AddressSanitizer build.

1. Builds torchlet._C with TORCHLET_ASAN=1 (-fsanitize=address, its own object
   folders in build/obj) into build/asan/lib, next to a copy of the Python
   package, so the normal editable build is left alone.
2. Runs pytest on tests/runtime, tests/autograd, tests/library, tests/amp, tests/modes, the C-kernel tests,
   torchlet.compile's C paths (its plan programs, backward nodes, guard keys) and the CUDA tests that run C (the allocator, the fake-driver runtime, the host shim and launch math; the
   fake-driver subprocesses inherit the environment) with that build first on PYTHONPATH and
   libasan preloaded (CPython itself is not instrumented; leak detection is off
   because the interpreter keeps memory until exit). Any ASan report fails the
   run (halt_on_error=1 aborts the process with a non-zero exit).
"""
from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "build" / "asan"
LIB = OUT / "lib"


def _nvrtc_lib_dirs() -> list[str]:
    """the folders of the pip-installed NVRTC (nvidia-cuda-nvrtc), if any"""
    import importlib.util
    spec = importlib.util.find_spec("nvidia")
    roots = list(spec.submodule_search_locations) if spec and spec.submodule_search_locations else []
    return sorted({str(p.parent) for r in roots for p in pathlib.Path(r).glob("*/lib/libnvrtc.so*")})


def main() -> int:
    env = dict(os.environ, TORCHLET_ASAN="1")
    cmd = [sys.executable, "setup.py", "-q", "build_ext", "--build-lib", str(LIB), "--build-temp", str(OUT / "tmp")]
    print("asan-test: building the ASan extension ...", flush=True)
    r = subprocess.run(cmd, cwd=ROOT, env=env)
    if r.returncode != 0:
        return r.returncode
    pkg = LIB / "torchlet"
    for src in (ROOT / "runtime" / "torchlet").rglob("*.py"):
        dst = pkg / src.relative_to(ROOT / "runtime" / "torchlet")
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)
    # the C headers beside the package, where torchlet.library.c_include_dir() finds them
    shutil.copytree(ROOT / "runtime" / "include", LIB / "include", dirs_exist_ok=True)
    # and the formula headers where torchlet.compile's build finds them (the package's grandparent's)
    for d in ("kernels/ufunc", "runtime/include"):
        shutil.copytree(ROOT / d, OUT / d, dirs_exist_ok=True)
    # and the CUDA programs' shared texts, where torchlet.cuda.nvrtc.program_source finds them
    shutil.copytree(ROOT / "kernels" / "cuda", OUT / "kernels" / "cuda", dirs_exist_ok=True)
    (OUT / "generated" / "cuda").mkdir(parents=True, exist_ok=True)
    for f in (ROOT / "generated" / "cuda").glob("*.cuh"):
        shutil.copy2(f, OUT / "generated" / "cuda" / f.name)
    libasan = subprocess.run(["gcc", "-print-file-name=libasan.so"], capture_output=True, text=True).stdout.strip()
    env = dict(os.environ)
    env.update(
        PYTHONPATH=os.pathsep.join([str(LIB), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        LD_PRELOAD=libasan,
        ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=0:exitcode=99:"
                     "allocator_may_return_null=1:detect_stack_use_after_return=0",
        TORCHLET_ASAN_RUN="1",
        TORCHLET_SHIM_ASAN="1",   # the CUDA host-shim library under ASan + UBSan too (tests/cuda/shim_build.py)
        OMP_NUM_THREADS=env.get("OMP_NUM_THREADS", "1"),
    )
    # NVRTC dlopens its builtins library through its own $ORIGIN runpath; ASan's
    # dlopen interceptor loses that (the lookup runs as libasan's), so name the folder
    nvrtc_dirs = _nvrtc_lib_dirs()
    if nvrtc_dirs:
        env["LD_LIBRARY_PATH"] = os.pathsep.join([*nvrtc_dirs, env.get("LD_LIBRARY_PATH", "")]).rstrip(os.pathsep)
    where = subprocess.run([sys.executable, "-c", "import torchlet._C as c; print(c.__file__)"],
                           env=env, capture_output=True, text=True)
    print(f"asan-test: torchlet._C from {where.stdout.strip() or where.stderr.strip()}", flush=True)
    if str(LIB) not in where.stdout:
        print("asan-test: the ASan build is not the one imported", file=sys.stderr)
        return 1
    tests = sys.argv[1:] or [
        "tests/runtime", "tests/autograd", "tests/library", "tests/amp", "tests/modes", "tests/api/test_c_kernels.py",
        "tests/cuda/test_allocator_c.py", "tests/cuda/test_cuda_runtime.py", "tests/cuda/test_cuda_shim.py",
        "tests/cuda/test_cuda_launch_math.py", "tests/cuda/test_cuda_fake_e2e.py", "tests/cuda/test_cuda_fake_guard.py",
        "tests/compile/test_compile_direct.py", "tests/compile/test_compile_autograd.py"]
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests], cwd=ROOT, env=env)
    print(f"asan-test: pytest exit code {r.returncode} ({'no ASan error' if r.returncode == 0 else 'FAILED'})")
    if r.returncode != 0 or sys.argv[1:]:
        return r.returncode
    # a million tensors created and dropped under ASan: memory must stay flat
    # (quarantine off for this run only, or ASan itself holds the freed blocks)
    env2 = dict(env, ASAN_OPTIONS=env["ASAN_OPTIONS"] + ":quarantine_size_mb=0")
    env2.pop("TORCHLET_ASAN_RUN")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "tests/runtime/test_errors_memory_threads.py::test_million_tensors_memory_flat"],
                       cwd=ROOT, env=env2)
    print(f"asan-test: million-tensor memory test exit code {r.returncode}")
    return r.returncode


if __name__ == "__main__":
    sys.exit(main())
