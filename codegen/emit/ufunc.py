"""Pointwise kernels from ufunc formulas: ``generated/kernels/ufunc_<op>.{c,h}``.

A structured out= function with ``ufunc_inner_loop:`` (PyTorch's field, e.g.
``Generic: add (AllAndComplex, BFloat16, Half)`` / ``ScalarOnly: add (Bool)``)
names a formula per dtype; the formula ``TL_UFUNC_<name>(...)`` lives in
``kernels/ufunc/<name>.h``.  This emitter expands it into one inner loop per
dtype (``tl_loop_fn``: contiguous fast path on restrict pointers, a fast path
per broadcast-scalar input, a strided path; float16/bfloat16 computed in
float and rounded once), a per-dtype loop table compiled once per CPU
capability, its kernel stub, and the structured impl ``tl_impl_<kernel>`` that
runs the table over the iterator the meta function built.

Standalone kernels, for operators that cannot be structured ufunc operators
(relu: PyTorch has no ``relu.out``; div's rounding modes: a ``str`` argument
picks the formula): a header ``kernels/ufunc/<kernel>.h`` declares the loops
in comment lines of the same syntax, ``ufunc_inner_loop: Generic: relu (All,
BFloat16, Half)`` (several lines may name several formulas), and the
hand-written kernel calls the generated ``tl_ufunc_<kernel>_run(it, ...)``.

docs/UFUNC.md documents the field, the dtype-set names and the expansion.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from pathlib import Path

from ..diagnostics import CodegenError, Diagnostic, Pos
from ..native import NativeFunction, UfuncInnerLoop, UfuncKey
from ..schema import BaseTy, BaseType
from .. import api_c
from . import EmitContext

C_COMMENT = ("/*", " * ", " */")
from ..paths import DATA as ROOT  # formula headers are named relative to it
from ..paths import FORMULA_DIR


@dataclass(frozen=True)
class DType:
    scalar_name: str  # PyTorch's ScalarType name
    enum: str  # tl_dtype enumerator
    suffix: str  # short name used in loop names and the tl_opmath union
    storage: str  # C type of a stored element
    compute: str  # C type the formula computes in (opmath)
    load: str  # stored element {x} -> compute value
    store: str  # compute value {v} -> stored element
    reduced: str | None = None  # "f16" / "bf16": converted in chunks through float

    @property
    def opmath_field(self) -> str:
        # complex loops take real scalar arguments (tl_opmath stays 8 bytes: the CUDA parameter block)
        return {"Half": "f32", "BFloat16": "f32", "Bool": "b", "ComplexFloat": "f32",
                "ComplexDouble": "f64"}.get(self.scalar_name, self.suffix)

    @property
    def is_complex(self) -> bool:
        return self.scalar_name.startswith("Complex")


def _int(name: str, enum: str, suffix: str, ctype: str) -> DType:
    return DType(name, enum, suffix, ctype, ctype, "{x}", f"({ctype})({{v}})")


#: torchlet's dtypes in tl_dtype order (the order of every loop table)
DTYPES: tuple[DType, ...] = (
    DType("Bool", "TL_BOOL", "b", "uint8_t", "bool", "({x} != 0)", "(uint8_t)(({v}) != 0)"),
    _int("Byte", "TL_UINT8", "u8", "uint8_t"),
    _int("Char", "TL_INT8", "i8", "int8_t"),
    _int("Short", "TL_INT16", "i16", "int16_t"),
    _int("Int", "TL_INT32", "i32", "int32_t"),
    _int("Long", "TL_INT64", "i64", "int64_t"),
    DType("Half", "TL_FLOAT16", "f16", "uint16_t", "float", "tl_f16_to_f32({x})", "tl_f32_to_f16({v})", "f16"),
    DType("BFloat16", "TL_BFLOAT16", "bf16", "uint16_t", "float", "tl_bf16_to_f32({x})", "tl_f32_to_bf16({v})", "bf16"),
    DType("Float", "TL_FLOAT32", "f32", "float", "float", "{x}", "{v}"),
    DType("Double", "TL_FLOAT64", "f64", "double", "double", "{x}", "{v}"),
    DType("ComplexFloat", "TL_COMPLEX64", "c64", "float _Complex", "float _Complex", "{x}", "{v}"),
    DType("ComplexDouble", "TL_COMPLEX128", "c128", "double _Complex", "double _Complex", "{x}", "{v}"),
)
BY_NAME = {d.scalar_name: d for d in DTYPES}
_INTEGRAL = ("Byte", "Char", "Short", "Int", "Long")
_FLOATING = ("Float", "Double")
_COMPLEX = ("ComplexFloat", "ComplexDouble")
#: dtype-set names of the ufunc_inner_loop field (PyTorch's AT_DISPATCH sets).
#: ComplexHalf does not exist in torchlet and is skipped silently; complex64 /
#: complex128 loops are made only for formulas whose header says
#: `ufunc_complex: yes` (C's complex arithmetic is right for them; a formula
#: calling fabs or expf would silently drop the imaginary part).
DTYPE_SETS: dict[str, tuple[str, ...]] = {
    "All": _INTEGRAL + _FLOATING,
    "AllAndComplex": _INTEGRAL + _FLOATING + _COMPLEX,
    "Integral": _INTEGRAL,
    "Floating": _FLOATING,
    "FloatingAndComplex": _FLOATING + _COMPLEX,
    "Complex": _COMPLEX,
    "ComplexHalf": (),
    **{d.scalar_name: (d.scalar_name,) for d in DTYPES},
}
#: which ufunc key provides the CPU loop of a dtype listed under several keys
CPU_KEY_ORDER = (UfuncKey.CPUScalar, UfuncKey.CPUVector, UfuncKey.ScalarOnly, UfuncKey.Generic)
#: schema types a formula may take as scalar extra arguments (converted once per call)
_SCALAR_ARG_TYPES = (BaseTy.Scalar, BaseTy.float, BaseTy.int, BaseTy.bool)

_DEFINE_RE = re.compile(r"^\s*#\s*define\s+TL_UFUNC_(\w+)\s*\(([^)]*)\)", re.M)
_MARKER_RE = re.compile(r"ufunc_inner_loop:\s*(\w+)\s*:\s*(\w+)\s*\(([^)]*)\)")
_SCALARS_RE = re.compile(r"ufunc_scalar_args:\s*([\w ,]+)")
_RESULT_RE = re.compile(r"ufunc_result_dtype:\s*(\w+)")
_INPUT_DTYPE_RE = re.compile(r"ufunc_input_dtype:\s*(\w+)\s+(\w+)")
_ERROR_NAME_RE = re.compile(r"ufunc_error_name:\s*(\w+)")
_FALLBACK_RE = re.compile(r"ufunc_fallback:\s*(\w+)\s*->\s*(\w+)\s+if\s+(\w+)")
_COMPLEX_RE = re.compile(r"ufunc_complex:\s*yes")


@dataclass(frozen=True)
class Formula:
    name: str
    params: tuple[str, ...]
    path: str  # relative to the repository root
    #: dtype every loop of this formula stores (``ufunc_result_dtype: Bool`` in
    #: its header: comparisons, predicates); None: the loop's own dtype
    result: str | None = None
    #: tensor parameters read in a fixed dtype whatever the loop's dtype
    #: (``ufunc_input_dtype: condition Bool``: where's condition), as
    #: (param, dtype) pairs; the others are read in the loop's dtype
    input_dtypes: tuple[tuple[str, str], ...] = ()
    #: kernel name of the "not implemented for" error (``ufunc_error_name:
    #: addcmul_cpu_out``, PyTorch's AT_DISPATCH name); None: ufunc_<kernel>_cpu
    error_name: str | None = None
    #: (exact formula, predicate formula) from ``ufunc_fallback: fast -> exact
    #: if slow``: this formula is vectorized and right wherever the predicate is
    #: 0; a chunk where it is not takes the exact formula for those elements
    fallback: tuple[str, str] | None = None
    #: the header says ``ufunc_complex: yes``: its formulas are right on C99
    #: complex values, so complex sets in ufunc_inner_loop make complex loops
    complex_ok: bool = False


def _rel(p: Path) -> str:
    """A formula header as generated files name it: relative to torchlet's
    source tree (whatever the current folder), else to the current folder (an
    operator library's, with an installed generator), else its file name."""
    p = p.resolve()
    for base in (ROOT, Path.cwd().resolve()):
        if p.is_relative_to(base):
            return p.relative_to(base).as_posix()
    return p.name


def read_formulas(directory: Path | None = None) -> dict[str, Formula]:
    directory = FORMULA_DIR if directory is None else directory
    formulas = {}
    if directory.is_dir():
        for p in sorted(directory.glob("*.h")):
            text = p.read_text()
            rm = _RESULT_RE.search(text)
            result = rm.group(1) if rm else None
            if result is not None and result not in BY_NAME:
                raise CodegenError([Diagnostic.at(Pos(_rel(p), 1, 1), f"unknown ufunc_result_dtype '{result}'",
                                                  "use a ScalarType name: " + ", ".join(BY_NAME))])
            fixed = tuple((m.group(1), m.group(2)) for m in _INPUT_DTYPE_RE.finditer(text))
            for _, d in fixed:
                if d not in BY_NAME:
                    raise CodegenError([Diagnostic.at(Pos(_rel(p), 1, 1), f"unknown ufunc_input_dtype '{d}'",
                                                      "use a ScalarType name: " + ", ".join(BY_NAME))])
            em = _ERROR_NAME_RE.search(text)
            fallbacks = {m.group(1): (m.group(2), m.group(3)) for m in _FALLBACK_RE.finditer(text)}
            defined = {}
            for m in _DEFINE_RE.finditer(text):
                params = tuple(x.strip() for x in m.group(2).split(",") if x.strip())
                defined[m.group(1)] = params
                formulas[m.group(1)] = Formula(m.group(1), params, _rel(p), result,
                                               tuple(x for x in fixed if x[0] in params), em.group(1) if em else None,
                                               fallbacks.get(m.group(1)), bool(_COMPLEX_RE.search(text)))
            for fast, names in fallbacks.items():
                for n in (fast, *names):
                    if defined.get(n) != defined.get(fast) or n not in defined:
                        raise CodegenError([Diagnostic.at(
                            Pos(_rel(p), 1, 1), f"ufunc_fallback of '{fast}': no formula TL_UFUNC_{n} with the "
                            f"parameters of TL_UFUNC_{fast} in this header")])
    return formulas


def dtype_names(spec: tuple[str, ...], where: Pos, errors: list[Diagnostic]) -> list[str]:
    out: list[str] = []
    for s in spec:
        if s not in DTYPE_SETS:
            errors.append(Diagnostic.at(where, f"unknown dtype or dtype set '{s}' in ufunc_inner_loop",
                                     "use " + ", ".join(sorted(DTYPE_SETS))))
            continue
        out += [d for d in DTYPE_SETS[s] if d not in out]
    return out


def dtype_formulas(loops: tuple[UfuncInnerLoop, ...], where: Pos, errors: list[Diagnostic],
                   formulas: dict[str, Formula] | None = None) -> dict[str, str]:
    """dtype name -> formula name, for the CPU loops (CPU_KEY_ORDER decides ties);
    complex dtypes only for formulas marked complex-safe (given the formulas)."""
    chosen: dict[str, str] = {}
    for key in CPU_KEY_ORDER:
        for loop in loops:
            if loop.ufunc_key is key:
                for d in dtype_names(loop.supported_dtypes, where, errors):
                    chosen.setdefault(d, loop.name)
    if formulas is not None:
        chosen = {d: n for d, n in chosen.items()
                  if d not in _COMPLEX or (n in formulas and formulas[n].complex_ok)}
    return chosen


def real_only(per_dtype: dict[str, str]) -> dict[str, str]:
    """per_dtype without the complex dtypes (the CUDA kernels have no complex loops yet)."""
    return {d: n for d, n in per_dtype.items() if d not in _COMPLEX}


# ------------------------------------------------------------------ loop text


def _loop_cases(idt: dict[int, DType], out: DType) -> list[dict[str, object]]:
    """The fast paths of one loop: all contiguous, then each proper subset of
    the inputs broadcast scalars (stride 0) with the others contiguous: one
    input (`a + 2.5`), or two of three (`where(c, x, 0.0)` is one;
    `clamp(x, lo, hi)` with 0-dim bounds is two)."""
    ins = sorted(idt)
    osize = f"(int64_t)sizeof({out.storage})"

    def case(scalars: tuple[int, ...]) -> dict[str, object]:
        conds = [f"strides[0] == {osize}"] + [
            f"strides[{i}] == {'0' if i in scalars else f'(int64_t)sizeof({idt[i].storage})'}" for i in ins]
        return {"cond": " && ".join(conds), "scalars": list(scalars)}

    subsets = [c for k in range(1, len(ins)) for c in itertools.combinations(ins, k)]
    return [case(())] + [case(c) for c in subsets]


#: names the loop functions declare themselves: a scalar argument named so
#: (polygamma's `int n`) gets the local `<name>_arg`
_LOOP_NAMES = frozenset({"data", "strides", "n", "ctx", "ctx_", "o", "k", "m", "base"})


def _scalar_local(name: str) -> str:
    return f"{name}_arg" if name in _LOOP_NAMES else name


def _loop(op: str, formula: Formula, dt: DType, tensor_args: list[str], scalar_args: list[str]) -> dict[str, object]:
    nin = len(tensor_args)
    xargs = ", ".join([f"x{i}" for i in range(1, nin + 1)] + [_scalar_local(a) for a in scalar_args])
    call = f"TL_UFUNC_{formula.name}({xargs})"
    out = BY_NAME[formula.result] if formula.result else dt
    fallback = None
    if formula.fallback:   # the exact formula where the predicate holds (strided path: per element)
        exact, pred = formula.fallback
        checked = f"(TL_UFUNC_{pred}({xargs}) ? TL_UFUNC_{exact}({xargs}) : {call})"
        fallback = {"pred": f"TL_UFUNC_{pred}({xargs})", "call": checked, "store": out.store.format(v=checked)}
    fixed = dict(formula.input_dtypes)
    # each input's dtype: fixed by the formula's header, else the loop's
    idt = {i: BY_NAME[fixed[p]] if p in fixed else dt for i, p in enumerate(formula.params[:nin], 1)}
    return {
        "name": f"ufunc_{op}_{dt.suffix}",
        "dtype": dt,
        "out": out,
        "same_out": out is dt,
        "formula": formula.name,
        "nin": nin,
        "inputs": list(range(1, nin + 1)),
        "in_dtype": idt,
        # inputs converted in chunks through float in a float16/bfloat16 loop
        # (the others, e.g. a bool condition, are loaded one by one)
        "chunked": [i for i in idt if idt[i] is dt] if dt.reduced else [],
        "cases": _loop_cases(idt, out),
        "call": call,
        "store": out.store.format(v=call),
        "fallback": fallback,
        "load": {i: idt[i].load.format(x=f"p{i}[k]") for i in idt},
        "load_at_base": {i: idt[i].load.format(x=f"p{i}[base + k]") for i in idt},
        "load_scalar": {i: idt[i].load.format(x=f"*(const {idt[i].storage} *)data[{i}]") for i in idt},
        "load_strided": {i: idt[i].load.format(x=f"*(const {idt[i].storage} *)(data[{i}] + k * strides[{i}])")
                         for i in idt},
        "scalar_args": [{"name": a, "local": _scalar_local(a), "field": dt.opmath_field} for a in scalar_args],
    }


def _not_implemented_message(name: str) -> str:
    return f'\\"{name}\\" not implemented for \'%s\''


def _render(ctx: EmitContext, op: str, sources: list[str], formulas: dict[str, Formula], per_dtype: dict[str, str],
            tensor_args: list[str], scalar_args: list[str], impl: dict[str, object] | None,
            error_name: str | None = None) -> dict[str, str]:
    loops = []
    table = []
    for dt in DTYPES:
        fname = per_dtype.get(dt.scalar_name)
        if fname is None:
            table.append(None)
            continue
        lp = _loop(op, formulas[fname], dt, tensor_args, scalar_args)
        loops.append(lp)
        table.append(lp["name"])
    includes = sorted({formulas[n].path for n in per_dtype.values()})
    slots = dict(
        op=op,
        sources=sources,
        includes=[Path(p).name for p in includes],
        formula_paths=includes,
        loops=loops,
        table=table,
        scalar_args=scalar_args,
        tensor_args=tensor_args,
        impl=impl,
        dtypes=", ".join(d for d in (x.scalar_name for x in DTYPES) if d in per_dtype),
        not_implemented=_not_implemented_message(error_name or f"{impl['kernel'] if impl else op}_cpu"),
    )
    return {
        f"kernels/ufunc_{op}.h": ctx.render("ufunc_kernel.h.j2", C_COMMENT, **slots),
        f"kernels/ufunc_{op}.c": ctx.render("ufunc_kernel.c.j2", C_COMMENT, **slots),
    }


def _as_scalar(f: NativeFunction, name: str) -> str:
    """C expression turning impl parameter ``name`` into a tl_scalar."""
    t = next(a.type for a in f.func.arguments.flat_all if a.name == name)
    conv = {BaseTy.float: "tl_scalar_from_double", BaseTy.int: "tl_scalar_from_int", BaseTy.bool: "tl_scalar_from_bool"}
    fn = conv.get(t.name) if isinstance(t, BaseType) else None
    return f"{fn}({name})" if fn else name


def _structured_args(f: NativeFunction, errors: list[Diagnostic]) -> tuple[list[str], list[str]]:
    tensors, scalars = [], []
    for a in f.func.arguments.non_out:
        t = a.type
        if isinstance(t, BaseType) and t.name is BaseTy.Tensor:
            tensors.append(a.name)
        elif isinstance(t, BaseType) and t.name in _SCALAR_ARG_TYPES:
            scalars.append(a.name)
        else:
            errors.append(Diagnostic.at(f.pos, f"ufunc operator '{f.func.name}': argument '{a.name}' of type "
                                     f"'{t.render()}' cannot reach a ufunc formula",
                                     "formulas take Tensors and Scalar/float/int/bool arguments only"))
    return tensors, scalars


def emit_ufunc_kernels(ctx: EmitContext) -> dict[str, str]:
    from .ufunc_cuda import render_copy_program, render_cuda, render_params_header  # it imports our dtype tables
    from .reduce_cuda import render_reduce_program
    from .index_cuda import render_index_program
    from .cuda_program import render_shared_texts

    m = ctx.model
    formulas = read_formulas()
    # an operator library: its own formula headers, beside (and before) torchlet's
    own_dir = ctx.formula_dir if ctx.formula_dir is not None else (None if ctx.extension else FORMULA_DIR)
    if ctx.extension and own_dir is not None:
        formulas.update(read_formulas(own_dir))
    errors: list[Diagnostic] = []
    files: dict[str, str] = {}
    for f in m.functions:
        if not f.ufunc_inner_loop:
            continue
        where = f.kpos("ufunc_inner_loop")
        per_dtype = dtype_formulas(f.ufunc_inner_loop, where, errors, formulas)
        tensors, scalars = _structured_args(f, errors)
        for name in sorted(set(per_dtype.values())):
            fm = formulas.get(name)
            if fm is None:
                errors.append(Diagnostic.at(where, f"no ufunc formula '{name}'",
                                         f"define TL_UFUNC_{name}(...) in {_rel(own_dir) if own_dir else 'kernels/ufunc'}/{name}.h"
                                         + (" (--ufunc-dir)" if ctx.extension else "")))
            elif len(fm.params) != len(tensors) + len(scalars):
                errors.append(Diagnostic.at(where, f"ufunc formula TL_UFUNC_{name} ({fm.path}) takes {len(fm.params)} "
                                         f"arguments but '{f.func.name}' passes {len(tensors) + len(scalars)} "
                                         f"({', '.join(tensors + scalars)})"))
        if errors:
            continue
        kernel = m.kernels(f)["CPU"].kernel
        op = f.root_name
        g = m.group_of(f)
        assert g is not None and g.out is f
        params = api_c.impl_params(g)
        impl = {"kernel": kernel, "name": api_c.impl_name(kernel), "params": api_c.c_param_decls(params),
                "unused": [p.name for p in params if p.name != "s" and p.name not in scalars],
                "call_args": [_as_scalar(f, a) for a in scalars]}
        sources = [f"{ctx.inputs[0]}: {f.func}"]
        error_name = next((formulas[n].error_name for n in sorted(set(per_dtype.values())) if formulas[n].error_name),
                          None)
        files.update(_render(ctx, op, sources, formulas, per_dtype, tensors, scalars, impl, error_name))
        if not ctx.extension:  # an operator library builds CPU loops only (its CUDA: not yet)
            files.update(render_cuda(ctx, op, sources, formulas, real_only(per_dtype), tensors, scalars, impl,
                                     error_name, where, errors))
    # standalone kernels (no structured operator): a header in kernels/ufunc
    # whose comment lines declare `ufunc_inner_loop: KEY: formula (dtypes)`;
    # the kernel is named after the file and may use several formulas
    for path in sorted(own_dir.glob("*.h")) if own_dir is not None and own_dir.is_dir() else ():
        text = path.read_text()
        marks = list(_MARKER_RE.finditer(text))
        if not marks:
            continue
        op = path.stem
        rel = _rel(path)
        where = Pos(rel, 1, 1)
        loops = []
        for mk in marks:
            try:
                key = UfuncKey(mk.group(1))
            except ValueError:
                errors.append(Diagnostic.at(where, f"unknown ufunc key '{mk.group(1)}'"))
                continue
            if mk.group(2) not in formulas:
                errors.append(Diagnostic.at(where, f"no ufunc formula '{mk.group(2)}'",
                                            f"define TL_UFUNC_{mk.group(2)}(...) in kernels/ufunc/"))
                continue
            loops.append(UfuncInnerLoop(key, mk.group(2), tuple(x.strip() for x in mk.group(3).split(","))))
        if f"kernels/ufunc_{op}.c" in files:
            errors.append(Diagnostic.at(where, f"standalone ufunc kernel '{op}' has the name of a structured ufunc operator"))
            continue
        per_dtype = dtype_formulas(tuple(loops), where, errors, formulas)
        sm = _SCALARS_RE.search(text)
        scalar_names = [x.strip() for x in sm.group(1).split(",")] if sm else []
        params = [formulas[n].params for n in sorted(set(per_dtype.values()))]
        if not params or errors:
            continue
        if any(len(p) != len(params[0]) for p in params):
            errors.append(Diagnostic.at(where, f"the formulas of standalone ufunc kernel '{op}' differ in arity"))
            continue
        tensors = [p for p in params[0] if p not in scalar_names]
        scalars = [p for p in params[0] if p in scalar_names]
        sources = [f"{rel}: " + "; ".join(mk.group(0) for mk in marks) + " (standalone kernel)"]
        em = _ERROR_NAME_RE.search(text)   # the kernel's own header names its error
        files.update(_render(ctx, op, sources, formulas, per_dtype, tensors, scalars, None, em.group(1) if em else None))
        if not ctx.extension:
            files.update(render_cuda(ctx, op, sources, formulas, real_only(per_dtype), tensors, scalars, None,
                                     em.group(1) if em else None, where, errors))
    if errors:
        raise CodegenError(errors)
    if not ctx.extension:
        files.update(render_params_header(ctx))
        files.update(render_copy_program(ctx, errors))
        files.update(render_reduce_program(ctx))
        files.update(render_index_program(ctx))
        files.update(render_shared_texts(ctx, files))
    if errors:
        raise CodegenError(errors)
    return files
