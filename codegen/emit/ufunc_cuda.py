"""CUDA kernels from the ufunc formulas: ``generated/cuda/ufunc_<op>.cu`` (the
readable program) and ``generated/cuda/ufunc_<op>_cuda.c`` (the host side: the
program's own text as C strings, its kernels per dtype, the launcher).

The same formula header that feeds the CPU loops (``kernels/ufunc/<name>.h``)
is pasted into one CUDA C++ program per operator after the prelude
``kernels/cuda/tl_cuda_prelude.cuh`` and the parameter struct (shared texts
the program includes, embedded once: cuda_program.py); the formula's
``#include`` lines are dropped (headers
of kernels/ufunc that the formula includes are pasted before it), and C11
``_Generic`` selections become C++17 ``if constexpr`` chains. ``#line``
directives make NVRTC report an error in a formula at its file and line.

Per dtype three kernels (docs/CUDA.md): ``<loop>_vec`` (contiguous, VEC
elements per 128-bit access, scalar tail in the last block), ``<loop>_strided``
(offsets from sizes/strides, 32-bit indices) and ``<loop>_cast`` (strided, each
operand loaded from / stored to its own dtype). Inputs that are CPU scalars
come in the parameter struct (``scalar_mask``) in every variant. Every kernel
takes ONE parameter struct, ``tl_cuda_ufunc_params``, whose layout is emitted
here into both the CUDA source and the C header with a size assertion.
"""

from __future__ import annotations

import re

from ..diagnostics import Diagnostic, Pos
from . import EmitContext
from .cuda_program import C_COMMENT, host_source
from .ufunc import BY_NAME, DTYPES, ROOT, DType, Formula


#: limits of the parameter struct (one layout for every operator)
MAX_DIMS = 25
MAX_OPS = 4
MAX_ARGS = 4
THREADS = 128
STRIDED_VT = 4

#: bytes of a stored element per dtype
ITEMSIZE = {"Bool": 1, "Byte": 1, "Char": 1, "Short": 2, "Int": 4, "Long": 8, "Half": 2, "BFloat16": 2,
            "Float": 4, "Double": 8}
#: the C/C++ field list of tl_cuda_ufunc_params: (type, name, array suffix, bytes)
PARAM_FIELDS = (
    ("uint64_t", "data", f"[{MAX_OPS}]", 8 * MAX_OPS),
    ("tl_opmath", "args", f"[{MAX_ARGS}]", 8 * MAX_ARGS),
    ("tl_opmath", "in_scalar", f"[{MAX_OPS}]", 8 * MAX_OPS),
    ("uint32_t", "numel", "", 4),
    ("uint32_t", "ndim", "", 4),
    ("uint32_t", "scalar_mask", "", 4),
    ("uint32_t", "pad_", "", 4),
    ("int32_t", "dtypes", f"[{MAX_OPS}]", 4 * MAX_OPS),
    ("uint32_t", "sizes", f"[{MAX_DIMS}]", 4 * MAX_DIMS),
    ("uint32_t", "div_magic", f"[{MAX_DIMS}]", 4 * MAX_DIMS),
    ("uint32_t", "div_shift", f"[{MAX_DIMS}]", 4 * MAX_DIMS),
    ("int32_t", "strides", f"[{MAX_DIMS}][{MAX_OPS}]", 4 * MAX_DIMS * MAX_OPS),
)
if sum(f[3] for f in PARAM_FIELDS) % 8:   # both sides then agree on the tail padding
    PARAM_FIELDS += (("uint32_t", "pad_end_", "", 4),)
PARAMS_SIZE = sum(f[3] for f in PARAM_FIELDS)


def params_struct() -> str:
    """The struct with its size assertion: one text for C11 (static_assert
    from <assert.h>) and CUDA C++."""
    lines = ["typedef struct tl_cuda_ufunc_params {"]
    lines += [f"    {t} {n}{a};" for t, n, a, _ in PARAM_FIELDS]
    lines.append("} tl_cuda_ufunc_params;")
    lines.append(f'static_assert(sizeof(tl_cuda_ufunc_params) == {PARAMS_SIZE}, '
                 f'"tl_cuda_ufunc_params: the C and CUDA layouts must agree");')
    return "\n".join(lines)


# ------------------------------------------------------------- formula text

_INCLUDE_RE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]')
#: headers the prelude replaces (or that only the CPU build needs)
_NOT_PASTED = {"tl_umath.h", "tl_mvec.h", "tl_vexp.h", "tl_vtanh.h", "tl_dtype.h", "tl_error.h", "tl_half.h",
               "tl_kernel.h", "tl_thresholds.h", "tl_ustream.h", "tl_ufunc.h"}


def _balanced(text: str, i: int) -> int:
    """index just past the parenthesis closing the one at text[i]"""
    depth = 0
    for j in range(i, len(text)):
        if text[j] == "(":
            depth += 1
        elif text[j] == ")":
            depth -= 1
            if depth == 0:
                return j + 1
    raise ValueError("unbalanced parentheses")


def _split_top(text: str, sep: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def rewrite_generic(text: str) -> str:
    """C11 ``_Generic(e, T: v, ..., default: d)`` (optionally followed by a
    call ``(args)``) -> a C++17 immediately-invoked lambda whose ``if
    constexpr`` chain returns the selected value (called with the args)."""
    out = []
    pos = 0
    while True:
        k = text.find("_Generic", pos)
        if k < 0:
            out.append(text[pos:])
            return "".join(out)
        open_ = text.index("(", k)
        close = _balanced(text, open_)
        items = _split_top(text[open_ + 1:close - 1], ",")
        ctrl, assocs = items[0].strip(), []
        for a in items[1:]:
            t, _, v = a.partition(":")
            assocs.append((t.strip(), rewrite_generic(v.strip())))
        end = close
        j = close
        while j < len(text) and text[j] in " \t":
            j += 1
        call = ""
        if j < len(text) and text[j] == "(":
            end = _balanced(text, j)
            call = rewrite_generic(text[j:end])
        ctrl = rewrite_generic(ctrl)
        typed = [(t, v) for t, v in assocs if t != "default"]
        default = next((v for t, v in assocs if t == "default"), None)
        branches = []
        for n, (t, v) in enumerate(typed):
            kw = "if" if n == 0 else "else if"
            branches.append(f"{kw} constexpr (TL_IS(tl_g_, {t})) return {v}{call};")
        if default is not None:
            branches.append(f"else return {default}{call};" if branches else f"return {default}{call};")
        out.append(text[pos:k] + f"([&]() {{ auto tl_g_ = ({ctrl}); (void)tl_g_; " + " ".join(branches) + " }())")
        pos = end


def _logical_lines(text: str) -> list[str]:
    """Physical lines with backslash continuations joined; each joined line is
    followed by blank lines so line numbers stay those of the file."""
    out: list[str] = []
    buf: list[str] = []
    for line in text.split("\n"):
        if line.endswith("\\"):
            buf.append(line[:-1])
            continue
        buf.append(line)
        out.append(" ".join(buf))
        out += [""] * (len(buf) - 1)
        buf = []
    if buf:
        out.append(" ".join(buf))
    return out


def formula_text(rel: str, seen: set[str]) -> str:
    """One formula header for the CUDA program: local headers it includes
    first, then its own text under ``#line`` directives."""
    if rel in seen:
        return ""
    seen.add(rel)
    from . import ufunc   # its FORMULA_DIR (tests point it elsewhere; paths outside the tree are bare names)

    path = ROOT / rel if (ROOT / rel).is_file() else ufunc.FORMULA_DIR / rel
    pre: list[str] = []
    lines = _logical_lines(path.read_text())
    for n, line in enumerate(lines):
        m = _INCLUDE_RE.match(line)
        if not m:
            continue
        lines[n] = ""
        name = m.group(1)
        inc = path.parent / name
        if name not in _NOT_PASTED and inc.is_file():
            pre.append(formula_text(inc.relative_to(ROOT).as_posix() if inc.is_relative_to(ROOT) else name, seen))
    body = rewrite_generic("\n".join(lines))
    return "".join(pre) + f'#line 1 "{rel}"\n' + body + "\n#line @@\n"


# ------------------------------------------------------------- the kernels

def _field(d: DType) -> str:
    return d.opmath_field


def loop_info(op: str, formula: Formula, dt: DType, nin: int, scalar_args: list[str]) -> dict[str, object]:
    fixed = dict(formula.input_dtypes)
    ins = [BY_NAME[fixed[p]] if p in fixed else dt for p in formula.params[:nin]]
    out = BY_NAME[formula.result] if formula.result else dt
    xargs = ", ".join([f"x{i}" for i in range(1, nin + 1)] + [f"a_{a}" for a in scalar_args])
    expr = f"TL_UFUNC_{formula.name}({xargs})"
    if formula.fallback:
        exact, pred = formula.fallback
        expr = f"(TL_UFUNC_{pred}({xargs}) ? TL_UFUNC_{exact}({xargs}) : {expr})"
    # the kernels call the formula through a function placed (#line) at the
    # formula's #define: NVRTC reports an error in it at kernels/ufunc/<f>.h
    name = f"ufunc_{op}_{dt.suffix}"
    call = f"{name}_op({xargs})"
    params = [f"{d.compute} x{i}" for i, d in enumerate(ins, 1)] + [f"{dt.compute} a_{a}" for a in scalar_args]
    sizes = [ITEMSIZE[out.scalar_name]] + [ITEMSIZE[d.scalar_name] for d in ins]
    # 128-bit accesses, but at most 8 lanes (4 with three inputs): more lanes
    # of narrow dtypes made ptxas spill (clamp int8 / int16), PyTorch caps them too
    vec = min(16 // max(sizes), 8 if nin < 3 else 4)
    ept = 16 if max(sizes) == 1 else 8
    return {
        "name": name,
        "op_params": ", ".join(params),
        "expr": expr,
        "formula_path": formula.path,
        "def_line": _define_line(formula),
        "dtype": dt,
        "out": out,
        "ins": ins,
        "nin": nin,
        "nops": nin + 1,
        "call": call,
        "store": out.store.format(v=call),
        "vec": vec,
        "ept": ept,
        "operand_dtypes": [out.enum] + [d.enum for d in ins],
        "scalar_args": [{"name": a, "compute": dt.compute, "field": _field(dt)} for a in scalar_args],
        "in_fields": [_field(d) for d in ins],
        "load_vec": [d.load.format(x=f"v{i}.v[k]") for i, d in enumerate(ins, 1)],
        "load_flat": [d.load.format(x=f"in{i}[i0]") for i, d in enumerate(ins, 1)],
        "load_off": [d.load.format(x=f"*(const {d.storage} *)(in{i} + off[{i}])") for i, d in enumerate(ins, 1)],
    }


def _define_line(formula: Formula) -> int:
    """line of ``#define TL_UFUNC_<name>(`` in the formula's header (1 if not found)"""
    from . import ufunc

    path = ROOT / formula.path if (ROOT / formula.path).is_file() else ufunc.FORMULA_DIR / formula.path
    pat = re.compile(rf"^\s*#\s*define\s+TL_UFUNC_{formula.name}\s*\(")
    for n, line in enumerate(path.read_text().split("\n"), 1):
        if pat.match(line):
            return n
    return 1


def _fix_lines(src: str, name: str) -> str:
    """``#line @@`` (end of a pasted formula) -> the line that follows in the
    generated program itself"""
    lines = src.split("\n")
    for n, line in enumerate(lines):
        if line == "#line @@":
            lines[n] = f'#line {n + 2} "{name}"'
    return "\n".join(lines)


def render_cuda(ctx: EmitContext, op: str, sources: list[str], formulas: dict[str, Formula],
                per_dtype: dict[str, str], tensor_args: list[str], scalar_args: list[str],
                impl: dict[str, object] | None, error_name: str | None, where: Pos,
                errors: list[Diagnostic]) -> dict[str, str]:
    nin = len(tensor_args)
    if nin + 1 > MAX_OPS or len(scalar_args) > MAX_ARGS:
        errors.append(Diagnostic.at(where, f"ufunc operator '{op}': the CUDA kernels take at most {MAX_OPS - 1} "
                                           f"tensor inputs and {MAX_ARGS} scalar arguments"))
        return {}
    loops = []
    table = []
    for dt in DTYPES:
        fname = per_dtype.get(dt.scalar_name)
        if fname is None:
            table.append(None)
            continue
        lp = loop_info(op, formulas[fname], dt, nin, scalar_args)
        loops.append(lp)
        table.append(lp)
    paths = sorted({formulas[n].path for n in per_dtype.values()})
    seen: set[str] = set()
    formula_src = "".join(formula_text(p, seen) for p in paths)
    cu_name = f"generated/cuda/ufunc_{op}.cu"
    slots = dict(op=op, sources=sources, formula_paths=paths, loops=loops, nin=nin, threads=THREADS,
                 vt=STRIDED_VT, scalar_args=scalar_args, tensor_args=tensor_args,
                 dtypes=", ".join(d.scalar_name for d in DTYPES if d.scalar_name in per_dtype),
                 limits=(MAX_DIMS, MAX_OPS, MAX_ARGS))
    cu = ctx.render("ufunc_cuda.cu.j2", C_COMMENT, formulas=formula_src.rstrip("\n"), **slots)
    cu = _fix_lines(cu, cu_name).rstrip("\n") + "\n"
    base = error_name.replace("_cpu", "") if error_name else (impl["kernel"] if impl else "ufunc_" + op)
    not_impl = f'\\"{base}_cuda\\" not implemented for \'%s\''
    host = ctx.render("ufunc_cuda_host.c.j2", C_COMMENT, source=host_source(f"tl_ufunc_{op}_cuda", cu_name, cu), table=table, impl=impl,
                      not_implemented=not_impl, **slots)
    return {f"cuda/ufunc_{op}.cu": cu, f"cuda/ufunc_{op}_cuda.c": host}


#: the CUDA-only copy / cast / fill program (kernels/cuda/tl_cuda_copy.c uses it)
COPY_FORMULA = Formula("copy", ("self",), "kernels/cuda/tl_cuda_copy.h")


def render_copy_program(ctx: EmitContext, errors: list[Diagnostic]) -> dict[str, str]:
    per_dtype = {d.scalar_name: "copy" for d in DTYPES if not d.is_complex}   # no complex CUDA copies yet
    return render_cuda(ctx, "copy", [f"{COPY_FORMULA.path} (CUDA copy, cast and fill; no operator)"],
                       {"copy": COPY_FORMULA}, per_dtype, ["self"], [], None, "copy", Pos(COPY_FORMULA.path, 1, 1),
                       errors)


def render_params_header(ctx: EmitContext) -> dict[str, str]:
    """the struct (.cuh: a shared text the programs include, and the host's
    header .h includes it too)"""
    return {"cuda/tl_cuda_ufunc_params.h": ctx.render("ufunc_cuda_params.h.j2", C_COMMENT,
                                                      limits=(MAX_DIMS, MAX_OPS, MAX_ARGS)),
            "cuda/tl_cuda_ufunc_params.cuh": ctx.render("ufunc_cuda_params.cuh.j2", C_COMMENT,
                                                        params=params_struct(), size=PARAMS_SIZE)}
