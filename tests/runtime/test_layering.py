"""The floors of the C code hold: the runtime (runtime/) stands below the
kernels (kernels/), which stand below the derivative-formula helpers
(autograd/). Nothing under runtime/ includes a header of a floor above it or
names a function or table defined only there; the kernels reach the runtime's
stubs and thresholds, never the other way round.

Checked twice: over the C sources (includes resolved the way the build's
include path would, definitions and uses found by a simple parse), and over
the built objects in build/obj when they exist (`nm`: a runtime object's
undefined symbols must not be defined only by objects of a floor above)."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ABOVE = ("kernels", "autograd")  # the floors above the runtime
# where a runtime file's `#include "..."` may resolve: the runtime's own headers
# and the generated operator API (entry points, the dispatcher's tables)
RUNTIME_INCLUDE_DIRS = (ROOT / "runtime/include", ROOT / "generated/include", ROOT / "generated/cdef")

_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_STRING = re.compile(r'"(?:\\.|[^"\\\n])*"')
_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# a top-level definition: a function `type name(...) {`, a table `type name[...] = {`
# or `type name = {` at the start of a line (after the type words)
_FUNC_DEF = re.compile(r"^[A-Za-z_][\w \t\*]*?\b(\w+)\s*\([^;{}]*\)\s*\{", re.M)
_DATA_DEF = re.compile(r"^(?:const\s+)?[A-Za-z_]\w*[\s\*]+(?:const\s+)?(\w+)\s*(?:\[[^\]]*\]\s*)*=\s*\{", re.M)
# kernels/cpu objects are compiled once per capability: TL_KNAME(x) is x_<CAP>
_KNAME = re.compile(r"TL_KNAME\((\w+)\)")
CAPS = ("DEFAULT", "AVX2", "AVX512")
_KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "else", "do"}


def strip_c(text: str) -> str:
    """C text without comments and string literals (their words are not uses)."""
    return _STRING.sub('""', _COMMENT.sub(" ", text))


def defined_names(text: str) -> set[str]:
    """Names of the functions and initialised tables a C file defines at the top
    level for other files (static ones are its own)."""
    code = strip_c(text)
    defs = [*_FUNC_DEF.finditer(code), *_DATA_DEF.finditer(code)]
    names = {m.group(1) for m in defs if not re.match(r"\s*static\b", m.group(0))}
    names |= {f"{m.group(1)}_{cap}" for m in _KNAME.finditer(code) for cap in CAPS}
    return names - _KEYWORDS


def used_names(text: str) -> set[str]:
    return set(re.findall(r"\b[A-Za-z_]\w*\b", strip_c(text)))


def include_violations(path: Path, text: str) -> list[str]:
    """`#include "x"` lines of a runtime file that do not resolve inside the runtime's floor."""
    out = []
    for name in _INCLUDE.findall(strip_comments_only(text)):
        dirs = (path.parent, *RUNTIME_INCLUDE_DIRS)
        if not any((d / name).is_file() for d in dirs):
            above = [str(p.relative_to(ROOT)) for floor in ABOVE for p in (ROOT / floor).rglob(name)]
            where = f" (found in {', '.join(above)})" if above else ""
            shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
            out.append(f"{shown}: #include \"{name}\" is not a runtime header{where}")
    return out


def strip_comments_only(text: str) -> str:
    return _COMMENT.sub(" ", text)


def _c_files(*dirs: str) -> list[Path]:
    return sorted(p for d in dirs for p in (ROOT / d).rglob("*") if p.suffix in (".c", ".h") and p.is_file())


def call_violations(runtime: dict[str, str], below_or_level: dict[str, str], above: dict[str, str]) -> list[str]:
    """Names a runtime source uses that are defined only by a floor above.

    Each argument maps a file name to its text: the runtime's sources, the
    sources that may define what the runtime uses (runtime/, generated/), the
    sources of the floors above."""
    allowed: set[str] = set()
    for text in below_or_level.values():
        allowed |= defined_names(text)
    only_above: dict[str, str] = {}
    for name, text in above.items():
        for sym in defined_names(text) - allowed:
            only_above.setdefault(sym, name)
    out = []
    for name, text in runtime.items():
        for sym in sorted(used_names(text) & only_above.keys()):
            out.append(f"{name}: uses {sym}, defined in {only_above[sym]}")
    return out


def test_runtime_includes_no_header_from_above():
    errors = [e for p in _c_files("runtime/src", "runtime/include") for e in include_violations(p, p.read_text())]
    assert not errors, "\n".join(errors)


def test_runtime_calls_nothing_defined_only_above():
    rel = lambda p: str(p.relative_to(ROOT))  # noqa: E731
    runtime = {rel(p): p.read_text() for p in _c_files("runtime/src")}
    level = {**runtime, **{rel(p): p.read_text() for p in _c_files("generated/csrc")}}
    above = {rel(p): p.read_text() for p in _c_files(*ABOVE)}
    above.update({rel(p): p.read_text() for p in _c_files("generated/kernels")})  # the generated ufunc loops
    errors = call_violations(runtime, level, above)
    assert not errors, "\n".join(errors)


def test_the_checks_catch_a_violation(tmp_path):
    """The checks fail on what they guard against: a runtime file including a
    kernel header, calling a kernel function or naming a kernel table."""
    src = tmp_path / "bad.c"
    text = ('#include "tl_error.h"\n#include "tl_ustream.h"\n'
            "int f(void) { return tl_nn_layer_norm_backward(0) + (int)sizeof tl_copy_table_AVX2; }\n")
    errors = include_violations(src, text)
    assert len(errors) == 1 and '"tl_ustream.h"' in errors[0] and "kernels/ufunc/tl_ustream.h" in errors[0]
    above = {"kernels/native/nn_ops.c": "int tl_nn_layer_norm_backward(int x) {\n    return x;\n}\n",
             "kernels/cpu/copy_kernel.c": "const tl_copy_table_t TL_KNAME(tl_copy_table) = {0};\n"}
    errors = call_violations({"runtime/src/bad.c": text}, {}, above)
    assert errors == ["runtime/src/bad.c: uses tl_copy_table_AVX2, defined in kernels/cpu/copy_kernel.c",
                      "runtime/src/bad.c: uses tl_nn_layer_norm_backward, defined in kernels/native/nn_ops.c"]
    # a definition in the runtime's floor makes the same use fine; comments are no uses
    assert call_violations({"r.c": "/* tl_nn_layer_norm_backward */ int g(void) { return h(); }"},
                           {"r2.c": "int h(void) {\n    return 0;\n}\n"}, {"k.c": "int h(void) {\n}\n"}) == []


def _object_sets() -> tuple[list[Path], list[Path]]:
    """(objects of the runtime's floor: runtime/ and the generated entry points;
    objects of the floors above) of the newest build in build/obj whose sources
    still exist."""
    obj = ROOT / "build/obj"
    if not obj.is_dir():
        return [], []
    def newest(prefix: str, probe: str) -> Path | None:
        dirs = [d for d in obj.glob(prefix + "-*") if (d / probe).is_file()]
        return max(dirs, key=lambda d: (d / probe).stat().st_mtime) if dirs else None
    def live(d: Path | None, sub: str) -> list[Path]:
        if d is None:
            return []
        return [o for o in (d / sub).rglob("*.o") if (ROOT / o.relative_to(d)).with_suffix(".c").is_file()]
    common = newest("common", "runtime/src/cpu.o")
    runtime = live(common, "runtime") + live(common, "generated/csrc")
    above = [o for floor in ABOVE for o in live(common, floor)]
    for cap in CAPS:
        kern = newest(f"kern_{cap}", "kernels/cpu/copy_kernel.o")
        above += live(kern, "kernels") + live(kern, "generated/kernels")
    return runtime, above


def _nm(objects: list[Path]) -> dict[Path, tuple[set[str], set[str]]]:
    """{object: (defined, undefined symbols)}; one nm per batch of objects
    (one process per object costs a minute on two cores)"""
    syms: dict[Path, tuple[set[str], set[str]]] = {o: (set(), set()) for o in objects}
    by_name = {str(o): o for o in objects}
    for i in range(0, len(objects), 256):
        batch = [str(o) for o in objects[i:i + 256]]
        out = subprocess.run(["nm", "-P", "-A", *batch], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            name, _, rest = line.partition(": ")
            parts = rest.split()
            if name in by_name and len(parts) >= 2:
                defined, undefined = syms[by_name[name]]
                (undefined if parts[1] == "U" else defined if parts[1] in "TDRBCWV" else set()).add(parts[0])
    return syms


def test_runtime_objects_link_to_nothing_only_above():
    if shutil.which("nm") is None:
        pytest.skip("nm is not available")
    runtime, above = _object_sets()
    if not runtime or not above:
        pytest.skip("no built objects in build/obj (make build)")
    level_defs: set[str] = set()
    undefined: dict[Path, set[str]] = {}
    for o, (d, u) in _nm(runtime).items():
        level_defs |= d
        undefined[o] = u
    above_defs: dict[str, Path] = {}
    for o, (d, _) in _nm(above).items():
        for sym in d:
            above_defs.setdefault(sym, o)
    errors = [f"{o.name}: {sym} (defined in {above_defs[sym].name})"
              for o, u in undefined.items() if "runtime" in o.parts
              for sym in sorted(u - level_defs) if sym in above_defs]
    assert not errors, "runtime objects linking to floors above:\n" + "\n".join(errors)
