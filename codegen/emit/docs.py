"""The operator reference, ``generated/docs/ops.md``."""

from __future__ import annotations

from ..formula import to_source
from . import EmitContext

HTML_COMMENT = ("<!--", "  ", "-->")


def emit_ops_reference(ctx: EmitContext) -> dict[str, str]:
    m = ctx.model
    ops = []
    for f in m.functions:
        d = m.autograd_of(f)
        info = d.default if d is not None else None
        ops.append(
            {
                "name": str(f.func.name),
                "schema": str(f.func),
                "kind": f.func.kind().value,
                "variants": sorted(v.value for v in f.variants),
                "dispatch": [(k, md.kernel, str(md.delegate) if md.delegate else None) for k, md in m.kernels(f).items()],
                "structured": f.structured,
                "structured_delegate": str(f.structured_delegate) if f.structured_delegate else None,
                "tags": list(f.tags),
                "line": f.pos.line,
                "backward": None
                if info is None
                else {
                    "node": info.op,
                    "formulas": [(", ".join(x.var_names), to_source(x.formula)) for x in info.derivatives],
                    "forward": [
                        (", ".join(x.var_names), to_source(x.formula) if x.formula is not None else x.kind)
                        for x in info.forward_derivatives
                    ],
                    "non_differentiable": list(info.non_differentiable_arg_names),
                    "saved": [(v.name, v.type, v.expr) for v in info.all_saved_inputs + info.all_saved_outputs],
                    "line": d.pos.line,  # type: ignore[union-attr]
                    "inherited_from": None if d.function is f else str(d.function.func.name),  # type: ignore[union-attr]
                },
            }
        )
    text = ctx.render(
        "ops.md.j2",
        HTML_COMMENT,
        ops=ops,
        native_functions=ctx.inputs[0],
        derivatives=ctx.inputs[1] if len(ctx.inputs) > 1 else None,
    )
    return {"docs/ops.md": text}
