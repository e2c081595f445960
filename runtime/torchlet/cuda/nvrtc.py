"""NVRTC for torchlet's generated CUDA programs, with an on-disk kernel cache.

``compile_program(name, source, cc)`` turns one program (generated/cuda/
ufunc_<op>.cu: all kernels of one operator, composed with the shared texts it
includes by ``program_source``) into a CUBIN for ``sm_<cc>``,
clamped to the archs this NVRTC supports (a compute capability it does not
know gets PTX for the newest arch below it, which the driver JITs). NVRTC is
reached through cuda-python (``cuda.bindings.nvrtc``, the ``cuda`` extra); it
needs no GPU and no driver.

Options: ``--std=c++17 -default-device -DNDEBUG -Xptxas=-v`` and the arch; no
fast-math (PyTorch's choice). ptxas's ``-v`` report is parsed per kernel:
``strict=True`` fails on register spills (the CI check; see check_usage).

Cache (docs/CUDA.md): one file per (program, arch, NVRTC version), named by
the SHA-256 of (cache format, source, options, arch, NVRTC version); content
is a magic line, the SHA-256 of the image and the image (a corrupt file is a
miss). Written through a temp file + ``os.replace``. Beside each image, a
``.usage`` file keeps ptxas's per-kernel report (``cached_build``), so a
cache hit still answers for registers, stack and spills. ``TORCHLET_KERNEL_CACHE``
names the folder, ``0`` disables it; default ``$XDG_CACHE_HOME/torchlet/
kernels`` (``~/.cache/torchlet/kernels``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

#: bump when the generated programs' meaning changes without their text changing
CACHE_FORMAT = "torchlet-kernels-1"
_MAGIC = b"TLKCACHE1\n"
BASE_OPTIONS = ("--std=c++17", "-default-device", "-DNDEBUG", "-Xptxas=-v")


class NvrtcError(RuntimeError):
    """NVRTC missing, refusing a program, or ptxas reporting spills (strict)."""


@dataclass(frozen=True)
class KernelUsage:
    name: str
    registers: int
    stack: int
    spill_stores: int
    spill_loads: int


#: where a generated program's ``#include "NAME"`` finds its shared text, in order
SHARED_DIRS = ("kernels/cuda", "generated/cuda")
_ROOT = Path(__file__).resolve().parents[3]
_SHARED_INCLUDE_RE = re.compile(r'^#include "([^"/]+)"\n', re.M)


def program_source(path: Path) -> str:
    """The text NVRTC compiles for a generated program (generated/cuda/*.cu),
    as the runtime joins the program's parts: each ``#include "NAME"`` line
    replaced by ``#line 1 "<dir>/NAME"`` and the shared text's file from
    SHARED_DIRS (codegen/emit/cuda_program.py writes the parts by this rule)."""
    def shared(m: re.Match) -> str:
        for d in SHARED_DIRS:
            f = _ROOT / d / m.group(1)
            if f.is_file():
                return f'#line 1 "{d}/{m.group(1)}"\n' + f.read_text().rstrip("\n") + "\n"
        raise NvrtcError(f"{path}: no shared text {m.group(1)!r} in {', '.join(SHARED_DIRS)}")

    return _SHARED_INCLUDE_RE.sub(shared, Path(path).read_text())


def _nvrtc():
    try:
        from cuda.bindings import nvrtc
    except ImportError as e:  # the `cuda` extra is not installed
        raise NvrtcError("NVRTC is not available: pip install 'torchlet[cuda]' "
                         "(cuda-bindings, cuda-pathfinder, nvidia-cuda-nvrtc)") from e
    return nvrtc


def _check(res, what: str):
    err, *rest = res
    if int(err) != 0:
        raise NvrtcError(f"{what} failed: {err!r}")
    return rest[0] if len(rest) == 1 else rest


def available() -> bool:
    try:
        version()
        return True
    except Exception:
        return False


def version() -> tuple[int, int]:
    nv = _nvrtc()
    try:
        major, minor = _check(nv.nvrtcVersion(), "nvrtcVersion")
    except RuntimeError as e:  # cuda.pathfinder's DynamicLibNotFoundError is one
        raise NvrtcError(f"NVRTC is not available: {e}") from e
    return int(major), int(minor)


def supported_archs() -> list[int]:
    return [int(a) for a in _check(_nvrtc().nvrtcGetSupportedArchs(), "nvrtcGetSupportedArchs")]


def target(cc: int) -> tuple[str, bool]:
    """(the --gpu-architecture value, True for CUBIN) for compute capability
    cc (e.g. 90): sm_<cc> when NVRTC knows it, else PTX for the newest
    supported arch below it"""
    archs = supported_archs()
    if cc in archs:
        return f"sm_{cc}", True
    below = [a for a in archs if a <= cc]
    if not below:
        raise NvrtcError(f"NVRTC {version()[0]}.{version()[1]} cannot target compute capability "
                         f"{cc // 10}.{cc % 10} (supported: {', '.join(map(str, archs))})")
    return f"compute_{max(below)}", False


def check_driver(driver_version: int | None) -> None:
    """PyTorch's rule: a CUBIN from NVRTC 13 does not load on a 12.x driver
    (new ELF ABI), and PTX needs a driver at least as new; so NVRTC's major
    must not exceed the driver's."""
    if driver_version is None:
        return
    major = version()[0]
    if major > driver_version // 1000:
        raise NvrtcError(f"NVRTC {major}.x cannot build kernels for this CUDA {driver_version // 1000}.x driver: "
                         f"install the NVRTC of the driver's major (nvidia-cuda-nvrtc-cu{driver_version // 1000} "
                         f"with cuda-bindings=={driver_version // 1000}.*) or a newer driver")


_USAGE_RE = re.compile(
    r"Compiling entry function '(\w+)'.*?(\d+) bytes stack frame, (\d+) bytes spill stores, "
    r"(\d+) bytes spill loads.*?Used (\d+) registers", re.S)


def parse_ptxas(log: str) -> list[KernelUsage]:
    """ptxas -v's per-kernel report from an NVRTC program log"""
    out = []
    for block in re.split(r"(?=ptxas info\s*: Compiling entry function)", log):
        m = _USAGE_RE.search(block)
        if m:
            out.append(KernelUsage(m.group(1), int(m.group(5)), int(m.group(2)), int(m.group(3)), int(m.group(4))))
    return out


def compile_report(name: str, source: str, cc: int, extra_options: tuple[str, ...] = ()
                   ) -> tuple[bytes, list[KernelUsage], str]:
    """(image, per-kernel register/stack/spill usage, log) for one program;
    no cache. Compile errors raise NvrtcError with NVRTC's log (whose file
    names and lines are the formula headers' for code pasted from them)."""
    nv = _nvrtc()
    arch, cubin = target(cc)
    opts = [o.encode() for o in (*BASE_OPTIONS, f"--gpu-architecture={arch}", *extra_options)]
    prog = _check(nv.nvrtcCreateProgram(source.encode(), f"{name}.cu".encode(), 0, [], []), "nvrtcCreateProgram")
    try:
        (err,) = nv.nvrtcCompileProgram(prog, len(opts), opts)
        size = _check(nv.nvrtcGetProgramLogSize(prog), "nvrtcGetProgramLogSize")
        buf = b" " * size
        nv.nvrtcGetProgramLog(prog, buf)
        log = buf.rstrip(b"\x00").decode(errors="replace")
        if int(err) != 0:
            raise NvrtcError(f"NVRTC could not compile {name} for {arch}:\n{log.strip()}")
        if cubin:
            size = _check(nv.nvrtcGetCUBINSize(prog), "nvrtcGetCUBINSize")
            image = b" " * size
            _check((nv.nvrtcGetCUBIN(prog, image)[0], None), "nvrtcGetCUBIN")
        else:
            size = _check(nv.nvrtcGetPTXSize(prog), "nvrtcGetPTXSize")
            image = b" " * size
            _check((nv.nvrtcGetPTX(prog, image)[0], None), "nvrtcGetPTX")
    finally:
        nv.nvrtcDestroyProgram(prog)
    return image, parse_ptxas(log), log


def check_usage(name: str, usage: list[KernelUsage]) -> None:
    """Register spills fail. A stack frame alone does not: CUDA's float64
    sin/cos/tan keep the Payne-Hanek reduction's array there (ufunc_cos_f64_*:
    40 bytes, no spills), as PyTorch's kernels do."""
    bad = [u for u in usage if u.spill_stores or u.spill_loads]
    if bad:
        raise NvrtcError(f"{name}: ptxas reports spills / stack frames: " + "; ".join(
            f"{u.name}: {u.stack} B stack, {u.spill_stores} B spill stores, {u.spill_loads} B spill loads"
            for u in bad))


# ------------------------------------------------------------------ the cache

_warned: set[str] = set()


def cache_dir() -> Path | None:
    """The kernel cache folder, None when disabled (TORCHLET_KERNEL_CACHE=0)."""
    env = os.environ.get("TORCHLET_KERNEL_CACHE")
    if env == "0":
        return None
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "torchlet" / "kernels"


def cache_key(source: str, arch: str, nvrtc_version: tuple[int, int], options: tuple[str, ...] = BASE_OPTIONS
              ) -> str:
    h = hashlib.sha256()
    for part in (CACHE_FORMAT, source, " ".join(options), arch, "%d.%d" % nvrtc_version):
        h.update(part.encode())
        h.update(b"\x00")
    return h.hexdigest()


def cache_path(folder: Path, name: str, source: str, cc: int) -> Path:
    arch, cubin = target(cc)
    v = version()
    return folder / f"{name}-{arch}-nvrtc{v[0]}.{v[1]}-{cache_key(source, arch, v)[:40]}.{'cubin' if cubin else 'ptx'}"


def _read(path: Path) -> bytes | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    head = len(_MAGIC) + 32
    if not data.startswith(_MAGIC) or len(data) < head:
        return None
    image = data[head:]
    return image if hashlib.sha256(image).digest() == data[len(_MAGIC):head] else None


def _write(path: Path, image: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as f:
            f.write(_MAGIC + hashlib.sha256(image).digest() + image)
        os.replace(tmp, path)
    except OSError as e:
        if str(path.parent) not in _warned:
            _warned.add(str(path.parent))
            warnings.warn(f"torchlet: kernel cache {path.parent} is not writable ({e}); kernels are not cached",
                          RuntimeWarning, stacklevel=3)


def cached_image(name: str, source: str, cc: int, folder: Path | None = None) -> bytes | None:
    folder = cache_dir() if folder is None else folder
    return None if folder is None else _read(cache_path(folder, name, source, cc))


def _usage_path(path: Path) -> Path:
    return path.with_name(path.name + ".usage")


def _read_usage(path: Path) -> list[KernelUsage] | None:
    try:
        return [KernelUsage(*row) for row in json.loads(_usage_path(path).read_text())]
    except (OSError, ValueError, TypeError):
        return None


def _write_usage(path: Path, usage: list[KernelUsage]) -> None:
    rows = [[u.name, u.registers, u.stack, u.spill_stores, u.spill_loads] for u in usage]
    try:
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "w") as f:
            json.dump(rows, f)
        os.replace(tmp, _usage_path(path))
    except OSError:
        pass   # _write warned about this folder already


def cached_build(name: str, source: str, cc: int, folder: Path | None = None
                 ) -> tuple[bytes, list[KernelUsage], bool]:
    """(image, per-kernel usage, from the cache?) of one program: compile_report
    through the cache, ptxas's report kept beside the image, so that checks of
    registers, stack and spills (the CI's prebuild, the program tests) cost a
    compile only when the source, options, arch or NVRTC changed"""
    folder = cache_dir() if folder is None else folder
    path = cache_path(folder, name, source, cc) if folder is not None else None
    if path is not None:
        image, usage = _read(path), _read_usage(path)
        if image is not None and usage is not None:
            return image, usage, True
    image, usage, _ = compile_report(name, source, cc)
    if path is not None:
        _write(path, image)
        _write_usage(path, usage)
    return image, usage, False


def compile_program(name: str, source: str, cc: int, *, driver_version: int | None = None,
                    strict: bool = False, folder: Path | None = None) -> bytes:
    """The loadable image (CUBIN, or PTX beyond NVRTC's archs) of one program
    for compute capability cc (major * 10 + minor), from the cache when there;
    strict: fails on register spills, also when the image comes from the cache."""
    check_driver(driver_version)
    folder = cache_dir() if folder is None else folder
    if folder is not None and not strict:   # a launch needs only the image, with or without its report
        hit = _read(cache_path(folder, name, source, cc))
        if hit is not None:
            return hit
    image, usage, _ = cached_build(name, source, cc, folder)
    if strict:
        check_usage(name, usage)
    return image
