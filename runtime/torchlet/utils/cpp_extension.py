"""Building and loading C libraries against torchlet's public C API.

PyTorch's ``torch.utils.cpp_extension`` for torchlet: the include and library
paths, the compiler flags torchlet itself uses, the C ABI version, the
loader of an operator library (``load_operator_library``) and its builder
(``build_operator_library``, what ``torchlet-gen build`` runs).

How a library reaches torchlet's runtime (docs/GENERATOR.md, "Operator
libraries"): torchlet._C exports every function of the public C API
(runtime/include/tl_abi.h lists the headers); loading a library first makes
those symbols global (``torchlet.library.load_library``), so the library
links against no file and binds to the one runtime already in the process.
The library is linked with ``-Bsymbolic``: its own functions (which may
share a name with torchlet's, such as ``tl_ops_register_all``) bind to
themselves.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import sys
import sysconfig
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

__all__ = [
    "ABI_VERSION", "include_paths", "library_paths", "c_flags", "KERNEL_VARIANTS", "load_operator_library",
    "build_operator_library", "BuildError",
]



def _source_root() -> Path:
    """The source tree: the package lives at <root>/runtime/torchlet (an
    editable install); a copied package (the ASan build's) finds it through
    the generator, which is installed from the same tree."""
    here = Path(__file__).resolve().parents[3]
    if (here / "runtime" / "include" / "tl_abi.h").is_file():
        return here
    try:
        import codegen
    except ImportError:
        return here
    return Path(codegen.__file__).resolve().parent.parent

#: compiler flags of torchlet's own C (setup.py COMMON)
COMMON_FLAGS = ["-std=gnu11", "-fPIC", "-O3", "-fopenmp-simd", "-fno-math-errno", "-fno-trapping-math",
                "-Wall", "-Wextra"]
#: the per-ISA compilations of pointwise loops (setup.py KERNEL_VARIANTS)
KERNEL_VARIANTS = {
    "DEFAULT": [],
    "AVX2": ["-mavx2", "-mfma", "-mf16c"],
    "AVX512": ["-mavx2", "-mfma", "-mf16c", "-mavx512f", "-mavx512vl", "-mavx512bw", "-mavx512dq",
               "-mprefer-vector-width=512"],
}


class BuildError(RuntimeError):
    """A library failed to build (compiler output, or a missing kernel with its YAML line)."""


def _abi_version() -> int:
    from torchlet._C import lib
    return int(lib.tl_abi_version())


def __getattr__(name: str):
    if name == "ABI_VERSION":  # read from the loaded runtime (tl_abi.h TL_ABI_VERSION)
        return _abi_version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def include_paths() -> list[str]:
    """The folders to pass with ``-I``: the public headers (runtime/include),
    the generated entry points of every aten operator (generated/include),
    the ufunc loop helpers and formulas (kernels/ufunc) and the derivative
    helpers (autograd). An installed wheel carries them under
    ``torchlet/include/``; an editable install reads the source tree."""
    parts = (("runtime", "include"), ("generated", "include"), ("kernels", "ufunc"), ("autograd",))
    shipped = Path(__file__).resolve().parents[1] / "include"
    root = shipped if (shipped / "runtime" / "include" / "tl_abi.h").is_file() else _source_root()
    dirs = [root.joinpath(*p) for p in parts]
    if not (dirs[0] / "tl_abi.h").is_file():
        raise RuntimeError(f"torchlet's C headers are not under {root}: reinstall torchlet (its wheel "
                           "carries them in torchlet/include) or install it editable from its source tree")
    return [str(d) for d in dirs]


def library_paths() -> list[str]:
    """The folder of torchlet._C, the library that defines the C API. A
    library does not link it (the symbols are global once torchlet is
    imported); tools that want to check undefined symbols can."""
    from torchlet import _C
    return [str(Path(_C.__file__).resolve().parent)]


def c_flags(asan: bool | None = None) -> list[str]:
    """torchlet's compiler flags (``-O3``, warnings, ``-fPIC``; an ASan build
    with ``TORCHLET_ASAN=1``)."""
    if asan is None:
        asan = os.environ.get("TORCHLET_ASAN") == "1"
    flags = list(COMMON_FLAGS)
    if asan:
        flags = [f for f in flags if f != "-O3"] + ["-O1", "-g", "-fsanitize=address", "-fno-omit-frame-pointer"]
    return flags


# ------------------------------------------------------------------ loading

def load_operator_library(path: str | os.PathLike, namespace: str):
    """Load an operator library made by ``torchlet-gen build`` and register
    its operators: the library's C ABI version is checked against this
    torchlet's first (an ``ImportError`` naming both versions when they
    differ), then ``tl_ext_<namespace>_init`` defines the operators and
    registers their kernels. Returns the ``ctypes.CDLL`` handle; loading again
    is a no-op."""
    import ctypes

    from torchlet._C import lib
    from torchlet.library import load_library

    path = os.fspath(path)
    if not os.path.isfile(path):
        raise ImportError(f"{namespace}: the compiled library {path} is missing: build it with "
                          f"`torchlet-gen build --namespace {namespace} ...`")
    try:
        h = load_library(path)
    except OSError as e:
        raise ImportError(f"{namespace}: cannot load {path}: {e} (was it built against another torchlet? "
                          f"rebuild it with `torchlet-gen build`)") from e
    built = getattr(h, f"tl_ext_{namespace}_abi_version", None)
    init = getattr(h, f"tl_ext_{namespace}_init", None)
    if built is None or init is None:
        raise ImportError(f"{path} is not the operator library '{namespace}' (no tl_ext_{namespace}_init)")
    built.restype = ctypes.c_int
    init.restype = ctypes.c_int
    version = built()
    if version != lib.tl_abi_version():
        raise ImportError(f"{namespace} ({path}) was compiled against torchlet C ABI version {version}, but this "
                          f"torchlet has ABI version {lib.tl_abi_version()}: rebuild it against this torchlet "
                          f"(torchlet-gen build)")
    if init() != 0:
        from torchlet._errors import pending_error
        err = pending_error()
        raise ImportError(f"{namespace}: registering its operators failed: {err}") from err
    return h


# ----------------------------------------------------------------- building

def _compiler() -> list[str]:
    return shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")


def _stale(obj: Path, dep: Path, flags_file: Path, flags: str) -> bool:
    if not obj.exists() or not dep.exists() or not flags_file.exists() or flags_file.read_text() != flags:
        return True
    t = obj.stat().st_mtime
    _, _, rest = dep.read_text().replace("\\\n", " ").partition(":")
    for name in rest.split():
        try:
            if Path(name).stat().st_mtime > t:
                return True
        except FileNotFoundError:
            return True
    return False


def _compile(jobs: list[tuple[Path, Path, list[str]]], verbose: bool) -> list[str]:
    """Compile (source, object, flags) jobs that are stale, in parallel;
    return the error texts."""
    def run(job):
        src, obj, flags = job
        obj.parent.mkdir(parents=True, exist_ok=True)
        dep, flags_file = obj.with_suffix(".d"), obj.with_suffix(".flags")
        text = " ".join(_compiler() + flags)
        if not _stale(obj, dep, flags_file, text):
            return None
        cmd = [*_compiler(), "-c", str(src), "-o", str(obj), "-MMD", "-MF", str(dep), *flags]
        if verbose:
            print(" ".join(cmd), flush=True)
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode == 0:
            flags_file.write_text(text)
        return (src, p.returncode, p.stdout + p.stderr)

    errors = []
    with ThreadPoolExecutor(max(1, os.cpu_count() or 1)) as pool:
        for r in pool.map(run, jobs):
            if r is None:
                continue
            src, rc, out = r
            if rc != 0:
                errors.append(f"{src}:\n{out}")
            elif out.strip():  # warnings
                print(out, end="" if out.endswith("\n") else "\n", file=sys.stderr)
    return errors


def build_operator_library(namespace: str, generated: str | os.PathLike, sources: list[str | os.PathLike],
                           out: str | os.PathLike, *, model=None, formula_dir: str | os.PathLike | None = None,
                           include_dirs: list[str] | None = None, verbose: bool = False) -> Path:
    """Compile an operator library and lay out its Python package.

    ``generated`` is the folder ``torchlet-gen generate --namespace`` wrote;
    ``sources`` the author's C files (kernels, meta functions); ``out`` gets
    ``<namespace>/__init__.py``, ``__init__.pyi`` and ``_<namespace>.so``
    (objects are cached in ``out/obj``: a rebuild compiles what changed).
    Pointwise loops (generated/kernels) are compiled once per CPU capability
    like torchlet's own. With ``model`` (the generator's model of the
    library's YAML), a kernel the YAML names that no object defines is a
    ``BuildError`` naming its YAML file and line, before linking.
    Returns the package folder."""
    gen = Path(generated).resolve()
    out = Path(out).resolve()
    pkg = out / namespace
    obj_dir = out / "obj"
    # the library's generated headers first: its tl_ops.h includes torchlet's (#include_next)
    incs = [gen / "include", gen / "kernels", gen / "csrc"]
    if formula_dir is not None:
        incs.append(Path(formula_dir).resolve())
    incs += [Path(d) for d in include_dirs or []]
    inc_flags = [f"-I{d}" for d in incs] + [f"-I{d}" for d in include_paths()]
    common = c_flags() + inc_flags
    jobs: list[tuple[Path, Path, list[str]]] = []
    for src in sorted((gen / "csrc").glob("*.c")):
        jobs.append((src, obj_dir / "generated" / (src.stem + ".o"), common))
    for src in sources:
        src = Path(src).resolve()
        tag = hashlib.sha1(str(src.parent).encode()).hexdigest()[:8]
        jobs.append((src, obj_dir / "sources" / f"{src.stem}-{tag}.o", common))
    for cap, extra in KERNEL_VARIANTS.items():
        for src in sorted((gen / "kernels").glob("*.c")):
            jobs.append((src, obj_dir / f"kern_{cap}" / (src.stem + ".o"),
                         common + extra + ["-fwrapv", f"-DCPU_CAPABILITY={cap}"]))
    t0 = time.perf_counter()
    errors = _compile(jobs, verbose)
    if errors:
        raise BuildError(f"{namespace}: compilation failed\n" + "\n".join(errors))
    objects = [str(j[1]) for j in jobs]
    if model is not None:
        from codegen.diagnostics import CodegenError
        from codegen.kernel_check import check

        diags = check(model, objects)
        if diags:
            raise BuildError(f"{namespace}: a kernel named in the YAML is missing\n" + CodegenError(diags).render())
    pkg.mkdir(parents=True, exist_ok=True)
    so = pkg / f"_{namespace}.so"
    newest = max(Path(o).stat().st_mtime for o in objects)
    if not so.exists() or so.stat().st_mtime < newest:
        link = [*_compiler(), "-shared", "-o", str(so), *objects, "-Wl,-Bsymbolic", "-pthread", "-lmvec", "-lm"]
        if os.environ.get("TORCHLET_ASAN") == "1":
            link.insert(1, "-fsanitize=address")
        p = subprocess.run(link, capture_output=True, text=True)
        if p.returncode != 0:
            raise BuildError(f"{namespace}: linking failed\n{p.stdout}{p.stderr}")
    for f in sorted((gen / "python" / namespace).glob("*")):
        target = pkg / f.name
        text = f.read_text()
        if not target.exists() or target.read_text() != text:
            target.write_text(text)
    if verbose:
        print(f"{namespace}: built {so} in {time.perf_counter() - t0:.2f} s")
    return pkg
