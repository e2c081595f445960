"""Emitter: generated/python/_op_tags.py, each operator's tags (OpOverload.tags)."""

from __future__ import annotations

from . import EmitContext

PY_COMMENT = ("", "# ", "")


def emit_op_tags(ctx: EmitContext) -> dict[str, str]:
    rows = []
    for f in ctx.model.functions:
        if f.tags:
            name = f.func.name
            qual = f"aten::{name.unqualified}" if not name.namespace else str(name)
            rows.append((qual, tuple(f.tags)))
    rows.sort()
    all_tags = sorted(set(ctx.model.tags) | {t for _, ts in rows for t in ts})
    return {"python/_op_tags.py": ctx.render("py_op_tags.py.j2", PY_COMMENT, rows=rows, all_tags=all_tags)}
