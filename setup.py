"""torchlet build: cffi extension torchlet._C plus the C runtime and kernels.

`pip install -e .` (or `python setup.py build_ext --inplace`) compiles

  * runtime/src/*.c, generated/csrc/*.c, kernels/native/*.c and autograd/*.c
    once each, with the common flags;
  * kernels/cpu/*.c three times, once per CPU capability
    (DEFAULT: baseline x86-64, AVX2: +AVX2/FMA/F16C, AVX512: +AVX-512 F/BW/VL/DQ),
    with -DCPU_CAPABILITY=<cap> so every symbol gets a per-ISA suffix;
  * the cffi-generated module source, and runtime/python/*.c (hand-written
    CPython modules: torchlet._C_fast, Tensor's fastest methods) with the
    Python headers;

in parallel (one job per core), into a persistent object cache under
build/obj/<variant>-<flags hash>/. An object is rebuilt only when its source or
a header it includes (gcc -MMD depfile) is newer, or when its flags change (the
hash is part of the folder name). The objects are linked into the extension
through extra_objects. TORCHLET_ASAN=1 builds an AddressSanitizer variant (its
own object folders). TORCHLET_BUILD_VERBOSE=1 prints every compiler command and the slowest compiles.
"""
from __future__ import annotations

import hashlib
import os
import pathlib
import shlex
import subprocess
import sys
import sysconfig
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

from setuptools import find_packages, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

ROOT = pathlib.Path(__file__).resolve().parent
OBJ_ROOT = ROOT / "build" / "obj"

ASAN = os.environ.get("TORCHLET_ASAN") == "1"
VERBOSE = os.environ.get("TORCHLET_BUILD_VERBOSE") == "1"

# an undeclared call is an error, not a warning: hand-written files include only
# the operator headers they use (`make includes` adds one for a new call)
WARN = ["-Wall", "-Wextra", "-Werror=implicit-function-declaration"]
COMMON = ["-std=gnu11", "-fPIC", "-O3", "-fopenmp-simd", "-fno-math-errno", "-fno-trapping-math", *WARN]
if ASAN:
    COMMON = [f for f in COMMON if f != "-O3"] + ["-O1", "-g", "-fsanitize=address", "-fno-omit-frame-pointer"]

KERNEL_VARIANTS = {
    "DEFAULT": [],
    "AVX2": ["-mavx2", "-mfma", "-mf16c"],
    "AVX512": ["-mavx2", "-mfma", "-mf16c", "-mavx512f", "-mavx512vl", "-mavx512bw", "-mavx512dq",
               "-mprefer-vector-width=512"],
}


def _rel(p: pathlib.Path) -> str:
    return str(p.relative_to(ROOT))


def include_dirs() -> list[str]:
    dirs = [ROOT / "runtime" / "include"]
    for d in (ROOT / "generated" / "include", ROOT / "generated" / "cdef", ROOT / "generated" / "csrc",
              ROOT / "kernels" / "ufunc", ROOT / "generated" / "kernels", ROOT / "autograd",
              ROOT / "kernels" / "cuda", ROOT / "generated" / "cuda"):
        if d.is_dir():
            dirs.append(d)
    return [str(d) for d in dirs]


def blas() -> tuple[str, str, str]:
    """(include dir, lib dir, library name) of the vendor BLAS wheel, scipy-openblas32
    (docs/LINALG.md): its cblas.h is for kernels/native/blas.c only."""
    try:
        import scipy_openblas32 as ob
    except ImportError:
        raise SystemExit("torchlet: the BLAS wheel is missing: pip install scipy-openblas32") from None
    return ob.get_include_dir(), ob.get_lib_dir(), ob.get_library()


def extra_include_dirs(src: pathlib.Path) -> list[str]:
    """include dirs one source needs beyond include_dirs(): only blas.c sees the
    wheel's cblas.h (the other objects' flags, and cache, stay as they are)"""
    return [blas()[0]] if src.name == "blas.c" else []


def sources() -> tuple[list[pathlib.Path], list[pathlib.Path]]:
    common = sorted((ROOT / "runtime" / "src").glob("*.c"))
    # the CUDA backend's runtime: the driver is dlopen'ed at run time, no link dependency
    common += sorted((ROOT / "runtime" / "src" / "cuda").glob("*.c"))
    gen = ROOT / "generated" / "csrc"
    if gen.is_dir():
        common += sorted(gen.glob("*.c"))
    # hand-written operator kernels (meta functions, reductions, mm): compiled once
    common += sorted((ROOT / "kernels" / "native").glob("*.c"))
    # derivative-formula helpers: compositions of operators, above the kernels
    common += sorted((ROOT / "autograd").glob("*.c"))
    # CUDA host side: launch helpers and the generated per-operator launchers
    # (no CUDA headers needed; the driver is reached through tl_cuda.h)
    common += sorted((ROOT / "kernels" / "cuda").glob("*.c"))
    if (ROOT / "generated" / "cuda").is_dir():
        common += sorted((ROOT / "generated" / "cuda").glob("*.c"))
    kernels = sorted((ROOT / "kernels" / "cpu").glob("*.c"))
    # generated ufunc loops (codegen/emit/ufunc.py): x3 like kernels/cpu
    kernels += sorted((ROOT / "generated" / "kernels").glob("*.c"))
    return common, kernels


def python_sources() -> list[pathlib.Path]:
    """hand-written CPython modules linked into _C.abi3.so (runtime/python/)"""
    return sorted((ROOT / "runtime" / "python").glob("*.c"))


def check_kernels(objects: list[str]) -> None:
    """Fail the build when a hand-written kernel the YAML names is defined by
    no object (codegen/kernel_check.py): the error names the YAML entry's file
    and line, where the weak declarations would only fail at the first call."""
    sys.path.insert(0, str(ROOT))
    from codegen.diagnostics import CodegenError
    from codegen.kernel_check import check
    from codegen.model import Inputs, load_model

    nf = ROOT / "yaml" / "native_functions.yaml"
    if not nf.exists():
        return
    old = os.getcwd()
    os.chdir(ROOT)  # diagnostics show paths relative to the repository
    try:
        model = load_model(Inputs("yaml/native_functions.yaml", None, "yaml/tags.yaml", None))
        diags = check(model, objects)
    except CodegenError as e:
        diags = e.diagnostics
    finally:
        os.chdir(old)
    if diags:
        raise SystemExit("torchlet: a kernel named in the YAML is missing\n" + CodegenError(diags).render())


def compiler() -> list[str]:
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    return shlex.split(cc)


def _flags_dir(variant: str, flags: list[str]) -> pathlib.Path:
    # paths inside the checkout hashed relative to it: a copy of build/ in
    # another checkout (a git worktree) names the same object directories
    rel = [f.replace(str(ROOT) + "/", "") for f in flags]
    h = hashlib.sha1(" ".join(compiler() + rel).encode()).hexdigest()[:10]
    return OBJ_ROOT / f"{variant}-{h}"


def _deps_newer(obj: pathlib.Path, dep: pathlib.Path) -> bool:
    """True when obj is missing or older than any file its depfile names."""
    if not obj.exists() or not dep.exists():
        return True
    t = obj.stat().st_mtime
    text = dep.read_text().replace("\\\n", " ")
    _, _, rest = text.partition(":")
    for name in rest.split():
        p = pathlib.Path(name)
        try:
            if p.stat().st_mtime > t:
                return True
        except FileNotFoundError:
            return True
    return False


class Job:
    def __init__(self, src: pathlib.Path, variant: str, flags: list[str], incs: list[str]):
        self.src, self.variant, self.flags, self.incs = src, variant, flags, incs
        d = _flags_dir(variant, flags + incs)
        rel = src.relative_to(ROOT) if src.is_relative_to(ROOT) else pathlib.Path(src.name)
        self.obj = d / rel.with_suffix(".o")
        self.dep = d / rel.with_suffix(".d")
        # the compiler's warnings for this object ("" when clean), kept so that
        # the warning-free check reads what the build saw instead of recompiling
        self.warnings = d / rel.with_suffix(".warn")

    def stale(self) -> bool:
        return _deps_newer(self.obj, self.dep)

    def run(self) -> tuple["Job", int, str, float]:
        self.obj.parent.mkdir(parents=True, exist_ok=True)
        cmd = [*compiler(), "-c", str(self.src), "-o", str(self.obj), "-MMD", "-MF", str(self.dep),
               *[f"-I{i}" for i in self.incs], *self.flags]
        if VERBOSE:
            print(" ".join(cmd), flush=True)
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True)
        out = p.stdout + p.stderr
        if p.returncode == 0:
            self.warnings.write_text(out)
        return self, p.returncode, out, time.perf_counter() - t0


def python_include_dirs() -> list[str]:
    return [sysconfig.get_paths()["include"], sysconfig.get_paths()["platinclude"]]


def compile_jobs() -> list[Job]:
    """every C object of _C: the common sources, the CPython methods, and the
    kernels once per instruction-set variant"""
    incs = include_dirs()
    common, kernels = sources()
    jobs = [Job(s, "common", COMMON, incs + extra_include_dirs(s)) for s in common]
    # Tensor's CPython methods (torchlet._C_fast): the Python headers, the
    # limited API (the source defines Py_LIMITED_API)
    jobs += [Job(s, "python", COMMON, incs + python_include_dirs()) for s in python_sources()]
    for cap, extra in KERNEL_VARIANTS.items():
        # -fwrapv: integer arithmetic in kernels wraps like PyTorch's (no signed-overflow UB)
        jobs += [Job(k, f"kern_{cap}", COMMON + extra + ["-fwrapv", f"-DCPU_CAPABILITY={cap}"], incs)
                 for k in kernels]
    return jobs


class _Progress:
    """What a long build is doing: objects done of those to build, the file
    just compiled, the time so far. On a terminal one line rewritten in place;
    in a log (CI) a line every few seconds. Compiler warnings print as they
    come, on their own lines."""

    LOG_EVERY_S = 5.0

    def __init__(self, todo: int, total: int):
        self.todo, self.total, self.n = todo, total, 0
        self.t0 = self.last = time.perf_counter()
        self.tty = sys.stderr.isatty()
        self.width = 0

    def done(self, job: "Job", out: str, failed: bool) -> None:
        self.n += 1
        now = time.perf_counter()
        name = _rel(job.src) if job.src.is_relative_to(ROOT) else job.src.name
        if job.variant.startswith("kern_"):
            name += f" [{job.variant[5:]}]"
        line = f"torchlet: [{self.n:>{len(str(self.todo))}}/{self.todo}] {now - self.t0:6.1f}s  {name}"
        if out.strip() and not failed:  # a failure's messages come at the end
            self._clear()
            print(out, file=sys.stderr, end="" if out.endswith("\n") else "\n", flush=True)
        if self.tty:
            print("\r" + line.ljust(self.width), end="", file=sys.stderr, flush=True)
            self.width = len(line)
        elif now - self.last >= self.LOG_EVERY_S or self.n == self.todo:
            print(line, file=sys.stderr, flush=True)
            self.last = now

    def _clear(self) -> None:
        if self.tty and self.width:
            print("\r" + " " * self.width + "\r", end="", file=sys.stderr, flush=True)
            self.width = 0

    def close(self) -> None:
        self._clear()


class BuildExt(build_ext):
    """build_ext that compiles the C sources itself (see module docstring)."""

    def pre_run(self, ext, ffi):
        """cffi's hook before it writes torchlet._C's C source: the operator
        shards' sources (build_ffi.py) join the extension's sources, to be
        compiled like the base module's and linked into the same library."""
        for shard in getattr(ffi, "torchlet_shards", ()):
            name = shard._assigned_source[0]
            c_file = pathlib.Path(self.build_temp) / f"{name}.c"
            c_file.parent.mkdir(parents=True, exist_ok=True)
            shard.emit_c_code(str(c_file))
            ext.sources.append(str(c_file))

    def build_extension(self, ext):
        incs = include_dirs()
        _, blas_lib, blas_name = blas()
        py_inc = python_include_dirs()
        jobs = compile_jobs()
        # the cffi-generated module source: copied into the cache only when its
        # text changes, so an unchanged API does not recompile it
        cffi_jobs = []
        for s in ext.sources:
            src = pathlib.Path(s)
            if not src.is_absolute():
                src = ROOT / src
            keep = OBJ_ROOT / "cffi" / src.name
            keep.parent.mkdir(parents=True, exist_ok=True)
            text = src.read_text()
            if not keep.exists() or keep.read_text() != text:
                keep.write_text(text)
            # -O1: the wrappers are argument conversions and one call each; callgrind
            # counts the same instructions per call as at -O2 (a.view(2, 2): 677 vs
            # 682 in _C, a + b: 1,506 vs 1,510) and the ~2.8 MB source, which every
            # new operator changes, compiles in half the time (9 s vs 20 s)
            flags = ["-fPIC", "-O1", "-fno-strict-aliasing", "-DNDEBUG", "-Wall"]
            if ASAN:
                flags += ["-fsanitize=address", "-fno-omit-frame-pointer", "-g"]
            cffi_jobs.append(Job(keep, "cffi", flags, incs + py_inc))
        all_jobs = jobs + cffi_jobs
        stale = [j for j in all_jobs if j.stale()]
        # the cffi modules (the largest sources) start first: queued
        # last, they ran alone after the others and set a many-core build's length
        stale.sort(key=lambda j: j.variant != "cffi")
        t0 = time.perf_counter()
        failed = []
        if stale:
            progress, times = _Progress(len(stale), len(all_jobs)), []
            with ThreadPoolExecutor(max(1, os.cpu_count() or 1)) as pool:
                for fut in as_completed([pool.submit(j.run) for j in stale]):
                    job, rc, out, dt = fut.result()
                    progress.done(job, out, rc != 0)
                    times.append((dt, job))
                    if rc != 0:
                        failed.append((job, out))
            progress.close()
            if VERBOSE:  # where a build's time goes
                for dt, job in sorted(times, key=lambda t: -t[0])[:8]:
                    print(f"torchlet: {dt:6.1f}s  {job.src.name} [{job.variant}]", flush=True)
        print(f"torchlet: compiled {len(stale)} of {len(all_jobs)} objects in "
              f"{time.perf_counter() - t0:.2f}s (cache: {_rel(OBJ_ROOT)})", flush=True)
        if failed:
            # the compiler's own messages last, after every other line, where they are seen
            for job, out in failed:
                print(f"\n== {_rel(job.src) if job.src.is_relative_to(ROOT) else job.src} "
                      f"({job.variant}):\n{out.rstrip()}", file=sys.stderr)
            if any("implicit declaration of function 'tl_" in out for _, out in failed):
                print("\ntorchlet: a file calls an operator whose header it does not include: "
                      "run `make includes`, then build again", file=sys.stderr)
            raise SystemExit("torchlet: compilation failed: " + ", ".join(
                _rel(j.src) if j.src.is_relative_to(ROOT) else str(j.src) for j, _ in failed))
        ext.sources = []
        ext.extra_objects = [str(j.obj) for j in all_jobs]
        check_kernels(ext.extra_objects)
        ext.depends = list(ext.depends) + ext.extra_objects
        # -Bsymbolic-functions: calls between the library's own functions (entry
        # point -> dispatcher -> kernel -> runtime) skip the PLT
        link = ["-pthread", "-ldl", "-lmvec", "-lm", "-Wl,-Bsymbolic-functions"]
        # the BLAS: torchlet/_blas.py preloads it from wherever the wheel is installed;
        # the rpath is the fallback when _C is loaded without the package
        link += [f"-L{blas_lib}", f"-l{blas_name}", f"-Wl,-rpath,{blas_lib}"]
        if ASAN:
            link = ["-fsanitize=address"] + link
        ext.extra_link_args = list(ext.extra_link_args or []) + [a for a in link if a not in (ext.extra_link_args or [])]
        # relink only when an object is newer than the library
        ext_path = pathlib.Path(self.get_ext_fullpath(ext.name))
        if ext_path.exists() and not stale and not self.force:
            newest = max(pathlib.Path(o).stat().st_mtime for o in ext.extra_objects)
            if newest <= ext_path.stat().st_mtime:
                print(f"torchlet: {ext_path.name} is up to date", flush=True)
                return
        super().build_extension(ext)


# the C headers an operator library compiles against (torchlet.utils.cpp_extension.
# include_paths): shipped in the wheel under torchlet/include/<folder>, the
# folders' layout kept, so a library builds against an installed torchlet
HEADER_DIRS = ("runtime/include", "generated/include", "kernels/ufunc", "autograd")


# the generator's own inputs (codegen/paths.py): torchlet's YAML, the templates,
# the ufunc formulas, under codegen/data/<folder> in the wheel
GENERATOR_DATA = (("yaml", "*.yaml"), ("templates", "*.j2"), ("kernels/ufunc", "*.h"))


class BuildPy(build_py):
    """build_py that also copies the C headers and the generator's inputs into
    the packages (an editable install reads both from the source tree)."""

    def run(self):
        super().run()
        if self.editable_mode:
            return
        lib = pathlib.Path(self.build_lib)
        copies = [(rel, "*.h", lib / "torchlet" / "include" / rel) for rel in HEADER_DIRS]
        copies += [(rel, pattern, lib / "codegen" / "data" / rel) for rel, pattern in GENERATOR_DATA]
        for rel, pattern, dest_dir in copies:
            src = ROOT / rel
            for f in sorted(src.rglob(pattern)):
                dest = dest_dir / f.relative_to(src)
                dest.parent.mkdir(parents=True, exist_ok=True)
                self.copy_file(str(f), str(dest))


def packages() -> list[str]:
    pk = ["torchlet"] + ["torchlet." + p for p in find_packages(str(ROOT / "runtime" / "torchlet"))]
    if (ROOT / "codegen" / "__init__.py").exists():
        pk += ["codegen"] + ["codegen." + p for p in find_packages(str(ROOT / "codegen"))]
    if (ROOT / "generated" / "python" / "__init__.py").exists():
        pk.append("torchlet._generated")  # the generated Python bindings
    return pk


setup(
    packages=packages(),
    package_dir={"torchlet": "runtime/torchlet", "codegen": "codegen",
                 "torchlet._generated": "generated/python"},
    cffi_modules=["build_ffi.py:ffibuilder"],
    cmdclass={"build_ext": BuildExt, "build_py": BuildPy},
)
