"""cffi builder for torchlet._C (API mode, out-of-line).

The cdef is assembled from the headers listed in runtime/include/cdef_headers.txt
plus every generated/cdef/*.h, with preprocessor lines and __attribute__((...))
stripped, so the headers themselves stay ordinary C. The compiled objects of
runtime/, generated/ and kernels/ come from setup.py's BuildExt (per-file flags,
ISA variants, persistent object cache); this module only describes the API.
"""
from __future__ import annotations

import pathlib
import re

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


def make_ffi() -> FFI:
    ffi = FFI()
    headers = cdef_headers()
    for h in headers:
        ffi.cdef(clean_for_cdef(h.read_text()), override=True)
    ffi.cdef(PY_EXTRA_CDEF)
    # the entry points the bindings call report pending warnings (generated/cdef/python_abi.h)
    source = "#define TL_PYABI_WRAP_ENTRIES\n" + "\n".join(f'#include "{h.name}"' for h in headers)
    ffi.set_source(
        "torchlet._C",
        source,
        include_dirs=include_dirs(),
        extra_link_args=["-pthread", "-ldl", "-lmvec", "-lm"],
        depends=[str(h.relative_to(ROOT)) for h in headers],
    )
    return ffi


ffibuilder = make_ffi()

if __name__ == "__main__":
    print(ffibuilder._cdefsources[0][:200] if hasattr(ffibuilder, "_cdefsources") else "ok")
