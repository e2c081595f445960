"""Emitter: generated/python/_pointwise_table.py, the ufunc formula behind
each functional pointwise operator, for torchlet.compile's fused kernels.

torchlet.compile emits fused loops from the same formula headers eager
expands (kernels/ufunc/<name>.h); it needs, per operator overload, which
formula computes it in each dtype and which of the schema's arguments are
the formula's tensor inputs and scalars.  Three kinds of operator qualify:

* a functional variant whose ``structured_delegate`` is a ufunc out=
  function (``add.Tensor`` -> ``add.out``'s ``ufunc_inner_loop``);
* the ``.Scalar`` twin of such an operator, identical but for one ``Scalar``
  where the twin has a ``Tensor`` (``add.Scalar``): eager wraps the number
  in a 0-dim tensor and runs the twin's kernel;
* an operator named after a standalone kernel header whose parameters are
  the operator's arguments (``relu`` -> kernels/ufunc/relu.h), unless it is
  CompositeImplicitAutograd (it decomposes before a capture could see it).
"""

from __future__ import annotations

from . import EmitContext
from .ufunc import _MARKER_RE, _SCALARS_RE, FORMULA_DIR, _rel, dtype_formulas, read_formulas, real_only
from ..diagnostics import Diagnostic
from ..schema import BaseTy, BaseType
from ..native import UfuncInnerLoop, UfuncKey

PY_COMMENT = ("", "# ", "")
_SCALAR_TYPES = (BaseTy.Scalar, BaseTy.float, BaseTy.int, BaseTy.bool)


def _kind(t) -> str | None:
    if isinstance(t, BaseType) and t.name is BaseTy.Tensor:
        return "tensor"
    if isinstance(t, BaseType) and t.name in _SCALAR_TYPES:
        return "scalar"
    return None


def _row(f, per_dtype, formulas, params, source, wrapped=()):
    """One table row: the schema arguments in formula order, each with its kind."""
    names = [a.name for a in f.func.arguments.flat_all]
    kinds = {a.name: _kind(a.type) for a in f.func.arguments.flat_all}
    if sorted(params) != sorted(names) or any(kinds[p] is None for p in params):
        return None
    fm = {formulas[n].name: formulas[n] for n in set(per_dtype.values())}
    return {
        "name": f"aten::{f.func.name}",
        "args": [(p, "tensor" if p in wrapped else kinds[p]) for p in params],
        "wrapped": list(wrapped),
        "dtypes": sorted(per_dtype.items()),
        "headers": sorted({fm[n].path for n in fm}),
        "result": next((fm[n].result for n in fm if fm[n].result), None),
        "input_dtypes": sorted({pair for n in fm for pair in fm[n].input_dtypes}),
        "fallbacks": sorted((n, fm[n].fallback) for n in fm if fm[n].fallback),
        "source": source,
        "entry": source.split(": ", 1)[-1].split("(")[0].strip(),
    }


def emit_pointwise_table(ctx: EmitContext) -> dict[str, str]:
    m = ctx.model
    formulas = read_formulas()
    errors: list[Diagnostic] = []
    by_name = {str(f.func.name): f for f in m.functions}
    rows = {}
    for f in m.functions:
        d = by_name.get(str(f.structured_delegate)) if f.structured_delegate else None
        if d is None or not d.ufunc_inner_loop or f.func.is_out_fn() or f.func.name.name.inplace:
            continue
        # (torchlet.compile fuses real dtypes only)
        per_dtype = real_only(dtype_formulas(d.ufunc_inner_loop, d.kpos("ufunc_inner_loop"), errors))
        if not per_dtype or any(n not in formulas for n in per_dtype.values()):
            continue
        params = list(formulas[next(iter(per_dtype.values()))].params)
        row = _row(f, per_dtype, formulas, params, f"{ctx.inputs[0]}: {d.func}")
        if row:
            rows[row["name"]] = row
        # the .Scalar twin: one Scalar where this one has a Tensor
        if f.func.name.overload_name == "Tensor":
            twin = by_name.get(f"{f.func.name.name}.Scalar")
            if twin is not None:
                mine = [(a.name, _kind(a.type)) for a in f.func.arguments.flat_all]
                theirs = [(a.name, _kind(a.type)) for a in twin.func.arguments.flat_all]
                diff = [a for a, b in zip(mine, theirs) if a != b]
                if len(mine) == len(theirs) and len(diff) == 1 and diff[0][1] == "tensor":
                    trow = _row(twin, per_dtype, formulas, params, f"{ctx.inputs[0]}: {d.func}", wrapped=(diff[0][0],))
                    if trow:
                        rows[trow["name"]] = trow
    # operators named after a standalone kernel header
    for path in sorted(FORMULA_DIR.glob("*.h")) if FORMULA_DIR.is_dir() else ():
        text = path.read_text()
        marks = list(_MARKER_RE.finditer(text))
        f = by_name.get(path.stem)
        if not marks or f is None or f"aten::{path.stem}" in rows:
            continue
        if set(m.kernels(f)) <= {"CompositeImplicitAutograd"}:
            continue  # decomposes above the dispatcher: a capture never sees it (log_sigmoid)
        loops = tuple(UfuncInnerLoop(UfuncKey(mk.group(1)), mk.group(2), tuple(x.strip() for x in mk.group(3).split(",")))
                      for mk in marks if mk.group(2) in formulas)
        per_dtype = real_only(dtype_formulas(loops, f.pos, errors))
        if not per_dtype:
            continue
        params = formulas[next(iter(per_dtype.values()))].params
        sm = _SCALARS_RE.search(text)
        row = _row(f, per_dtype, formulas, list(params), f"{_rel(path)} (standalone kernel)")
        if row and (not sm or all(dict(row["args"])[s.strip()] == "scalar" for s in sm.group(1).split(","))):
            rows[row["name"]] = row
    return {"python/_pointwise_table.py": ctx.render("py_pointwise_table.py.j2", PY_COMMENT,
                                                   rows=[rows[k] for k in sorted(rows)])}
