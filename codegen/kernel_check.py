"""The link-time check: every hand-written kernel the YAML names is defined.

The generated code declares hand-written kernels (``tl_native_*``,
``tl_meta_*``, ``tl_impl_*``) as weak symbols, so a library still links while
one is missing and the dispatcher would report ``Could not run 'aten::x' ...``
only when the operator is first called. The build runs this check on its
object files before linking instead: a kernel that no object defines is an
error naming the YAML entry (file and line) that asked for it.

    python -m codegen.kernel_check --native-functions F [--tags T] OBJ...

exits 1 with ``path:line:col: error: ...`` lines; :func:`check` is the same
for build scripts (setup.py, ``torchlet-gen build``).
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from typing import Iterable

from .diagnostics import CodegenError, Diagnostic, Pos
from .model import Model


@dataclass(frozen=True)
class Required:
    symbol: str  # the C function the generated code calls
    pos: Pos  # the YAML entry that names it
    qualified: str  # aten::hypot.out
    key: str  # the dispatch key it is registered at


def required_kernels(m: Model) -> list[Required]:
    """Every hand-written function the generated registrations call, with the
    YAML entry it comes from (the out= entry for a structured group's meta and
    impl functions, the entry's ``dispatch:`` for a ``tl_native_*``)."""
    from . import api_c
    from .emit import c_ops

    native_names = c_ops.native_c_names(m)
    by_symbol: dict[str, int] = {}
    reqs: list[Required] = []
    for f in m.functions:
        try:
            op = c_ops._op(m, f, "", native_names)
        except api_c.UnsupportedCType:
            continue  # a generation error, reported by the emitter
        g = m.group_of(f)
        for k in op.kernels:
            if k["optional"]:   # a CUDA-only kernel: registered when defined, never required
                continue
            for sym in k["needed_list"]:
                if sym in by_symbol:  # one entry per symbol, with every key that calls it
                    r = reqs[by_symbol[sym]]
                    if k["key"] not in r.key.split(", "):
                        reqs[by_symbol[sym]] = Required(r.symbol, r.pos, r.qualified, f"{r.key}, {k['key']}")
                    continue
                by_symbol[sym] = len(reqs)
                if g is not None and g.structured and g.out is not None and sym.startswith(("tl_meta_", "tl_impl_")):
                    pos = g.out.pos
                else:
                    pos = f.fpos("dispatch")
                reqs.append(Required(sym, pos, op.qualified, k["key"]))
    return reqs


_NM_DEFINED = frozenset("TtWwDdBbRrVvGgSs")


def defined_symbols(objects: Iterable[str]) -> set[str]:
    """The symbols the object files define (strong or weak definitions; an
    undefined weak reference, ``w``/``U``, does not count)."""
    objs = [str(o) for o in objects]
    out: set[str] = set()
    nm = shlex.split(os.environ.get("NM", "nm"))
    for i in range(0, len(objs), 500):  # keep the command line short
        p = subprocess.run([*nm, "--defined-only", "-P", *objs[i:i + 500]], capture_output=True, text=True, check=True)
        for line in p.stdout.splitlines():
            parts = line.split()
            if len(parts) >= 2 and len(parts[1]) == 1 and parts[1] in _NM_DEFINED and parts[1] not in "wv":
                out.add(parts[0])
    return out


def _hint(sym: str, defined: set[str]) -> str:
    m = re.match(r"tl_(meta|impl|native)_(ufunc_)?", sym)
    if m:
        # compare the names after the prefix: `copysign` for `copysign_Tensor`
        pre, stem = m.group(0), sym[m.end():]
        stems = {d[len(pre):]: d for d in defined if d.startswith(pre)}
        near = [stems[c] for c in difflib.get_close_matches(stem, sorted(stems), n=1, cutoff=0.75)]
        near += [d for c, d in stems.items() if stem.startswith(c + "_") or c.startswith(stem + "_")]
        if near:
            why = "; a meta function is named after the functional overload" if pre == "tl_meta_" else ""
            return f"'{near[-1]}' is defined: the generator expects '{sym}' (docs/OPERATOR_ABI.md{why})"
    if sym.startswith("tl_meta_"):
        return ("write it, or let the generator derive it: a pointwise structured_inherits: TensorIteratorBase "
                "entry with only Tensor inputs gets one (docs/GENERATOR.md)")
    return "define it in a C source of the build (docs/OPERATOR_ABI.md has its signature: see the generated tl_ops.h)"


def check(m: Model, objects: Iterable[str]) -> list[Diagnostic]:
    """One error per hand-written kernel the YAML names and no object defines."""
    defined = defined_symbols(objects)
    diags = []
    for r in required_kernels(m):
        if r.symbol not in defined:
            diags.append(Diagnostic.at(r.pos, f"{r.qualified} ({r.key}) calls '{r.symbol}', "
                                              "which no source file of the build defines", _hint(r.symbol, defined)))
    diags.sort(key=lambda d: (d.path, d.line, d.message))
    return diags


def main(argv: list[str] | None = None) -> int:
    from .model import Inputs, default_tags_path, load_model

    p = argparse.ArgumentParser(prog="python -m codegen.kernel_check")
    p.add_argument("--native-functions", required=True)
    p.add_argument("--derivatives", default=None)
    p.add_argument("--tags", default=None)
    p.add_argument("--autocast", default="")
    p.add_argument("objects", nargs="+")
    args = p.parse_args(argv)
    try:
        tags = args.tags if args.tags is not None else default_tags_path(args.native_functions)
        m = load_model(Inputs(args.native_functions, args.derivatives, tags, args.autocast or None))
        diags = check(m, args.objects)
        if diags:
            raise CodegenError(diags)
    except CodegenError as e:
        print(e.render(), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
