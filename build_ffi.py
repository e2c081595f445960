"""cffi builder for torchlet._C (API mode, out-of-line).

The cdef is assembled from the headers listed in runtime/include/cdef_headers.txt
plus every generated/cdef/*.h, with preprocessor lines and __attribute__((...))
stripped, so the headers themselves stay ordinary C. The compiled objects of
runtime/, generated/ and kernels/ come from setup.py's BuildExt (per-file flags,
ISA variants, persistent object cache); this module only describes the API.

The generated operators' declarations (generated/cdef/ops.h and the
per-overload lines of python_abi.h) are split by operator name into
OPS_SHARDS modules, ``torchlet._C_ops<k>``, each ``ffi.include``-ing the
base module ``torchlet._C`` (the runtime API, so the types are shared). All of
them compile into the one library ``_C.abi3.so`` (torchlet/_clib.py loads the
shards from it): a new operator regenerates and recompiles one shard's
wrappers, not the wrappers of every operator (a ~5 MB C file, ~20 s).
"""
from __future__ import annotations

import pathlib
import re
import zlib

from cffi import FFI

ROOT = pathlib.Path(__file__).resolve().parent
INCLUDE = ROOT / "runtime" / "include"
GEN_CDEF = ROOT / "generated" / "cdef"
GEN_INCLUDE = ROOT / "generated" / "include"

# extra declarations only the Python side needs (callbacks into Python)
PY_EXTRA_CDEF = """
extern "Python" void tl_py_release_external(void *ctx);
extern "Python" int tl_py_boxed_kernel(const tl_kernel *, const tl_operator *, tl_keyset, tl_stack *);
extern "Python" int tl_py_node_apply(void *, tl_node *, tl_tensor *const *, tl_tensor **);
extern "Python" void tl_py_node_release(void *);
extern "Python" void tl_py_slot_release(void *);
extern "Python" int tl_py_dispatch_fallback(const tl_kernel *, const tl_operator *, tl_keyset, tl_stack *);
extern "Python" int tl_py_cuda_compile(const char *, const char *, int, int, void **, size_t *, char **);
"""


def cdef_headers() -> list[pathlib.Path]:
    manifest = INCLUDE / "cdef_headers.txt"
    names = []
    for line in manifest.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.append(INCLUDE / line)
    if GEN_CDEF.is_dir():
        names.extend(sorted(GEN_CDEF.glob("*.h")))
    return names


def _strip_attributes(text: str) -> str:
    out, i = [], 0
    while True:
        j = text.find("__attribute__", i)
        if j < 0:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:j])
        k = text.find("(", j)
        depth = 0
        while k < len(text):
            if text[k] == "(":
                depth += 1
            elif text[k] == ")":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        i = k + 1


def clean_for_cdef(text: str) -> str:
    """Drop preprocessor directives (with continuations) and attributes."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    lines, skip = [], False
    for line in text.splitlines():
        if skip or line.lstrip().startswith("#"):
            skip = line.rstrip().endswith("\\")
            continue
        lines.append(line)
    return _strip_attributes("\n".join(lines))


def include_dirs() -> list[str]:
    dirs = ["runtime/include"]
    for d in (GEN_INCLUDE, GEN_CDEF):
        if d.is_dir():
            dirs.append(str(d.relative_to(ROOT)))
    return dirs


# how many modules the operators' wrappers are split into: fixed, so an
# operator's shard never moves (a changed count recompiles every shard once)
OPS_SHARDS = 8
SHARD_MODULE = "torchlet._C_ops{}"


def shard_of(name: str) -> int:
    """The shard of an operator name (``add`` for add.Tensor, add_.Scalar ...)."""
    return zlib.crc32(name.encode()) % OPS_SHARDS


_BLOCK_HEAD = re.compile(r"^/\* (\w+) \*/$", re.M)  # "/* add */" opens add's block in ops.h
_DECL_NAME = re.compile(r"\b(tl_\w+)\s*\(")


def _pyabi_owner(fn: str, owner: dict[str, int]) -> int | None:
    """The shard of a python_abi wrapper: tl_pyabi_<overload>[_n_<arg>][_r]
    wraps tl_ops_<overload>, the longest such name ops.h declares."""
    if not fn.startswith("tl_pyabi_"):
        return None
    parts = fn[len("tl_pyabi_"):].split("_")
    for n in range(len(parts), 0, -1):
        k = owner.get("tl_ops_" + "_".join(parts[:n]))
        if k is not None:
            return k
    return None


def split_generated_cdef(ops_h: str, pyabi_h: str) -> tuple[str, list[str]]:
    """ops.h and python_abi.h (cleaned for cdef) as the base module's part
    (what no operator owns: register_all, the list free ...) and one part
    per shard: each operator's block of ops.h with the python_abi lines of its
    overloads (``tl_pyabi_<overload>_r`` beside ``tl_ops_<overload>``)."""
    heads = list(_BLOCK_HEAD.finditer(ops_h))
    base = [clean_for_cdef(ops_h[:heads[0].start()] if heads else ops_h)]
    shards: list[list[str]] = [[] for _ in range(OPS_SHARDS)]
    owner: dict[str, int] = {}  # tl_ops_<overload> -> shard
    for i, m in enumerate(heads):
        block = ops_h[m.start():heads[i + 1].start() if i + 1 < len(heads) else len(ops_h)]
        k = shard_of(m.group(1))
        for fn in _DECL_NAME.findall(block):
            owner[fn] = k
        shards[k].append(clean_for_cdef(block))
    for line in clean_for_cdef(pyabi_h).splitlines():
        fn = _DECL_NAME.search(line)
        k = _pyabi_owner(fn.group(1), owner) if fn else None
        (base if k is None else shards[k]).append(line)
    # blank lines dropped: a block's text, and so its shard's C, must not
    # depend on what follows it (a new last block adds a separating line)
    def text(parts: list[str]) -> str:
        return "\n".join(line for part in parts for line in part.splitlines() if line.strip())
    return text(base), [text(part) for part in shards]


def _source(headers: list[pathlib.Path]) -> str:
    # the entry points the bindings call report pending warnings (generated/cdef/python_abi.h)
    return "#define TL_PYABI_WRAP_ENTRIES\n" + "\n".join(f'#include "{h.name}"' for h in headers)


def make_ffis() -> tuple[FFI, list[FFI]]:
    """The base module torchlet._C and the operator shards (empty without
    generated code)."""
    headers = cdef_headers()
    split = {h.name: h for h in headers if h.parent == GEN_CDEF and h.name in ("ops.h", "python_abi.h")}
    ffi = FFI()
    for h in headers:
        if h.name not in split:
            ffi.cdef(clean_for_cdef(h.read_text()), override=True)
    shard_cdefs: list[str] = []
    if len(split) == 2:
        base_part, shard_cdefs = split_generated_cdef(split["ops.h"].read_text(), split["python_abi.h"].read_text())
        ffi.cdef(base_part, override=True)
    ffi.cdef(PY_EXTRA_CDEF)
    ffi.cdef("#define TL_OPS_SHARDS ...")  # torchlet/_clib.py loads this many
    depends = [str(h.relative_to(ROOT)) for h in headers]
    ffi.set_source("torchlet._C", f"#define TL_OPS_SHARDS {len(shard_cdefs)}\n" + _source(headers),
                   include_dirs=include_dirs(),
                   extra_link_args=["-pthread", "-ldl", "-lmvec", "-lm"], depends=depends)
    shards = []
    for k, cdef in enumerate(shard_cdefs):
        shard = FFI()
        shard.include(ffi)
        shard.cdef(cdef, override=True)
        shard.set_source(SHARD_MODULE.format(k), _source(headers), include_dirs=include_dirs(), depends=depends)
        shards.append(shard)
    return ffi, shards


ffibuilder, shard_builders = make_ffis()
# setup.py's BuildExt.pre_run emits the shards' C beside the base module's
# (cffi's setuptools hook runs this file on its own and hands over only ffibuilder)
ffibuilder.torchlet_shards = shard_builders

if __name__ == "__main__":
    print(ffibuilder._cdefsources[0][:200] if hasattr(ffibuilder, "_cdefsources") else "ok")
