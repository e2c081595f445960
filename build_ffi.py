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


class Part:
    """One module's share of the generated declarations: the C lines its
    source compiles (prototypes, then python_abi's wrapping macros) and what
    its cdef declares (the prototypes, cleaned)."""

    def __init__(self) -> None:
        self.decls: list[str] = []
        self.macros: list[str] = []

    def cdef(self) -> str:
        return _nonblank(clean_for_cdef("\n".join(self.decls)))

    def c_source(self) -> str:
        return _nonblank("\n".join(self.decls + self.macros))


def _nonblank(text: str) -> str:
    # blank lines dropped: a block's text, and so its shard's C, must not
    # depend on what follows it (a new last block adds a separating line)
    return "\n".join(line for line in text.splitlines() if line.strip())


_WRAP_MACRO = re.compile(r"^#define (tl_\w+)\(")


def split_generated_cdef(ops_h: str, pyabi_h: str) -> tuple[Part, list[Part]]:
    """ops.h and python_abi.h as the base module's part (what no operator
    owns: register_all, the list free ...) and one part per shard: each
    operator's block of ops.h with the python_abi lines of its overloads
    (``tl_pyabi_<overload>_r`` and the macro wrapping ``tl_ops_<overload>``).
    Preprocessor lines other than the wrapping macros are left out: each
    module's source includes the runtime headers itself."""
    heads = list(_BLOCK_HEAD.finditer(ops_h))
    base, shards = Part(), [Part() for _ in range(OPS_SHARDS)]
    base.decls.append(_drop_directives(ops_h[:heads[0].start()] if heads else ops_h))
    owner: dict[str, int] = {}  # tl_ops_<overload> -> shard
    for i, m in enumerate(heads):
        block = ops_h[m.start():heads[i + 1].start() if i + 1 < len(heads) else len(ops_h)]
        k = shard_of(m.group(1))
        for fn in _DECL_NAME.findall(block):
            owner[fn] = k
        shards[k].decls.append(_drop_directives(block))
    for line in re.sub(r"/\*.*?\*/", "", pyabi_h, flags=re.S).splitlines():
        macro = _WRAP_MACRO.match(line)
        if macro:
            k = owner.get(macro.group(1))
            (base if k is None else shards[k]).macros.append(line)
        elif line.strip() and not line.lstrip().startswith("#"):
            fn = _DECL_NAME.search(line)
            k = _pyabi_owner(fn.group(1), owner) if fn else None
            (base if k is None else shards[k]).decls.append(line)
    return base, shards


def _drop_directives(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


def _source(runtime_headers: list[pathlib.Path], part: Part | None) -> str:
    """A module's C: the runtime headers, then its part of the generated
    declarations written out, not included, so that a module recompiles only
    when its own operators change (an #include of ops.h would make every
    shard depend on every operator)."""
    # the entry points the bindings call report pending warnings (python_abi.h's macros)
    lines = ["#define TL_PYABI_WRAP_ENTRIES", *(f'#include "{h.name}"' for h in runtime_headers)]
    return "\n".join(lines) + "\n" + (part.c_source() + "\n" if part else "")


def make_ffis() -> tuple[FFI, list[FFI]]:
    """The base module torchlet._C and the operator shards (empty without
    generated code)."""
    headers = cdef_headers()
    split = {h.name: h for h in headers if h.parent == GEN_CDEF and h.name in ("ops.h", "python_abi.h")}
    runtime_headers = [h for h in headers if h.name not in split or h.parent != GEN_CDEF]
    ffi = FFI()
    for h in runtime_headers:
        ffi.cdef(clean_for_cdef(h.read_text()), override=True)
    base, shards = None, []
    if len(split) == 2:
        base, shards = split_generated_cdef(split["ops.h"].read_text(), split["python_abi.h"].read_text())
        ffi.cdef(base.cdef(), override=True)
    ffi.cdef(PY_EXTRA_CDEF)
    ffi.cdef("#define TL_OPS_SHARDS ...")  # torchlet/_clib.py loads this many
    depends = [str(h.relative_to(ROOT)) for h in runtime_headers]
    ffi.set_source("torchlet._C", f"#define TL_OPS_SHARDS {len(shards)}\n" + _source(runtime_headers, base),
                   include_dirs=include_dirs(),
                   extra_link_args=["-pthread", "-ldl", "-lmvec", "-lm"], depends=depends)
    builders = []
    for k, part in enumerate(shards):
        shard = FFI()
        shard.include(ffi)
        shard.cdef(part.cdef(), override=True)
        shard.set_source(SHARD_MODULE.format(k), _source(runtime_headers, part), include_dirs=include_dirs(),
                         depends=depends)
        builders.append(shard)
    return ffi, builders


ffibuilder, shard_builders = make_ffis()
# setup.py's BuildExt.pre_run emits the shards' C beside the base module's
# (cffi's setuptools hook runs this file on its own and hands over only ffibuilder)
ffibuilder.torchlet_shards = shard_builders

if __name__ == "__main__":
    print(ffibuilder._cdefsources[0][:200] if hasattr(ffibuilder, "_cdefsources") else "ok")
