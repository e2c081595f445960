"""The model as JSON: the stable interface of ``torchlet-gen inspect``.

    {"functions": [{"schema", "name", "overload", "kind", "variants", "dispatch",
                    "structured", "structured_delegate", "tags", "line", ...}],
     "derivatives": [{"name", "line", "formulas", "saved", "output_differentiability", ...}]}

The keys listed above are the contract; further keys may be added, never
removed or renamed.
"""

from __future__ import annotations

import json
from typing import Any

from .derivatives import DerivativeEntry, DifferentiabilityInfo
from .formula import to_source
from .model import Model
from .native import NativeFunction


def function_json(m: Model, f: NativeFunction) -> dict[str, Any]:
    return {
        "schema": f.schema_text,
        "name": str(f.func.name.name),
        "overload": f.func.name.overload_name,
        "kind": f.func.kind().value,
        "variants": sorted(v.value for v in f.variants),
        "dispatch": {k: md.kernel for k, md in m.kernels(f).items()},
        "structured": f.structured,
        "structured_delegate": str(f.structured_delegate) if f.structured_delegate else None,
        "tags": list(f.tags),
        "line": f.pos.line,
        "python_module": f.python_module,
        "autogen": [str(a) for a in f.autogen],
        "generated_from": str(f.generated_from) if f.generated_from else None,
    }


def _info_json(info: DifferentiabilityInfo) -> dict[str, Any]:
    return {
        "op": info.op,
        "formulas": {", ".join(d.var_names): to_source(d.formula) for d in info.derivatives},
        "forward": {
            ", ".join(fd.var_names): (to_source(fd.formula) if fd.formula is not None else fd.kind)
            for fd in info.forward_derivatives
        },
        "non_differentiable": list(info.non_differentiable_arg_names),
        "saved": list(info.saved_names),
    }


def derivative_json(e: DerivativeEntry) -> dict[str, Any]:
    default = e.default
    out: dict[str, Any] = {"name": e.text, "line": e.pos.line}
    body = _info_json(default) if default is not None else {"op": None, "formulas": {}, "forward": {}, "non_differentiable": [], "saved": []}
    out.update(body)
    od = e.output_differentiability
    out["output_differentiability"] = list(od) if od is not None else None
    if len(e.infos) > 1 or (default is not None and default.dispatch_key != "Default"):
        out["dispatch"] = {k: _info_json(i) for k, i in e.infos.items()}
    return out


def model_json(m: Model) -> dict[str, Any]:
    return {
        "functions": [function_json(m, f) for f in m.functions],
        "derivatives": [derivative_json(e) for e in m.derivatives],
    }


def dumps(m: Model, indent: int | None = None) -> str:
    return json.dumps(model_json(m), indent=indent, sort_keys=False) + "\n"
