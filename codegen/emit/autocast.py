"""Emitter: the autocast policy table (yaml/autocast.yaml).

* ``csrc/autocast_policy.c``: ``tl_autocast_rules[]``, one row per entry, read
  by the generic kernel of runtime/src/autocast.c;
* ``python/_autocast_policy.py``: the same rows for ``torchlet.amp.policy``.
"""

from __future__ import annotations

from ..autocast import DEVICES, POLICIES
from . import EmitContext

C_COMMENT = ("/*", " * ", " */")
PY_COMMENT = ("", "# ", "")


def emit_autocast(ctx: EmitContext) -> dict[str, str]:
    model = ctx.model
    source = model.inputs.autocast
    if not source:
        return {}
    inputs = (source, ctx.inputs[0])
    rules = [
        {
            "op": r.qualified,
            "device": "TL_" + r.device.upper(),
            "policy": POLICIES[r.policy],
            "policy_name": r.policy,
            "dtype_arg": r.dtype_arg,
            "debug": f"autocast {r.policy} kernel for {r.device} ({source}:{r.pos.line})",
            "line": r.pos.line,
        }
        for r in model.autocast
    ]
    table = {d: {p: [r.op for r in model.autocast if r.device == d and r.policy == p] for p in POLICIES} for d in DEVICES}
    return {
        "csrc/autocast_policy.c": ctx.render("c_autocast_policy.c.j2", C_COMMENT, inputs, rules=rules, source=source),
        "python/_autocast_policy.py": ctx.render("py_autocast_policy.py.j2", PY_COMMENT, inputs, table=table,
                                                 policies=list(POLICIES), source=source),
    }
