"""yaml/autocast.yaml: the autocast cast policies, per device type.

The file maps a device type (``cpu``, ``cuda``) to a mapping of policy ->
list of operator overloads (``mm``, ``prod.dim_int``).  Every entry is
checked against the operators of native_functions.yaml; each problem is a
diagnostic at the entry's ``path:line:col``:

* an unknown device type, policy, or operator (with a "did you mean" hint);
* an in-place or ``out=`` overload (autocast casts only out-of-place calls);
* an operator listed twice for one device type;
* a ``fp32_set_opt_dtype`` operator without a ``ScalarType? dtype`` argument.
"""

from __future__ import annotations

from dataclasses import dataclass

from .diagnostics import DiagnosticSink, Pos, did_you_mean
from .native import NativeFunction
from .reader import YList, YMap, load_yaml, type_name
from .schema import SchemaKind

DEVICES = ("cpu", "cuda")
#: policy -> the number the C kernel switches on (tl_autocast_policy)
POLICIES = {"lower_precision_fp": 0, "fp32": 1, "fp32_set_opt_dtype": 2, "promote": 3, "banned": 5}


@dataclass(frozen=True)
class AutocastRule:
    """One entry: ``op`` ("mm", "prod.dim_int") runs under ``policy`` at the
    autocast key of ``device``."""

    device: str
    policy: str
    op: str
    function: NativeFunction
    pos: Pos
    dtype_arg: int = -1  # fp32_set_opt_dtype: index of the `dtype` argument

    @property
    def qualified(self) -> str:
        return f"aten::{self.op}"


def _dtype_arg(f: NativeFunction) -> int:
    for i, a in enumerate(f.func.arguments.flat_all):
        if a.name == "dtype" and str(a.type) == "ScalarType?":
            return i
    return -1


def load_autocast(path: str, sink: DiagnosticSink, functions: list[NativeFunction]) -> list[AutocastRule]:
    """Read and check ``path``; rules in file order (device, then policy)."""
    doc = load_yaml(path, sink)
    if doc is None:
        return []
    if not isinstance(doc, YMap):
        sink.error(Pos(path, 1, 1), f"expected a mapping of device type to policies, got {type_name(doc)}")
        return []
    by_name = {f.func.name.unqualified: f for f in functions if not f.func.name.namespace}
    rules: list[AutocastRule] = []
    for device, policies in doc.items():
        if device not in DEVICES:
            sink.error(doc.kpos(device), f"unknown device type '{device}' (expected one of: {', '.join(DEVICES)})",
                       did_you_mean(str(device), DEVICES))
            continue
        if not isinstance(policies, YMap):
            sink.error(doc.vpos(device), f"'{device}': expected a mapping of policy to operators, got {type_name(policies)}")
            continue
        seen: dict[str, Pos] = {}
        for policy, ops in policies.items():
            if policy not in POLICIES:
                sink.error(policies.kpos(policy), f"unknown autocast policy '{policy}' (expected one of: {', '.join(POLICIES)})",
                           did_you_mean(str(policy), POLICIES))
                continue
            if ops is None:
                continue
            if not isinstance(ops, YList):
                sink.error(policies.vpos(policy), f"'{device}.{policy}': expected a list of operators, got {type_name(ops)}")
                continue
            for i, op in enumerate(ops):
                pos = ops.ipos(i)
                if not isinstance(op, str):
                    sink.error(pos, f"expected an operator name, got {type_name(op)}")
                    continue
                f = by_name.get(op)
                if f is None:
                    sink.error(pos, f"unknown operator '{op}' in the {device} {policy} list",
                               did_you_mean(op, by_name) or "list only operators of native_functions.yaml; "
                               "keep the others as a comment")
                    continue
                kind = f.func.kind()
                if kind is not SchemaKind.functional:
                    sink.error(pos, f"'{op}' is {'an in-place' if kind is SchemaKind.inplace else 'an out= or mutable'} "
                               "overload: autocast casts only out-of-place overloads")
                    continue
                if op in seen:
                    sink.error(pos, f"'{op}' is listed twice for {device}", f"the first is on line {seen[op].line}")
                    continue
                seen[op] = pos
                dtype_arg = -1
                if policy == "fp32_set_opt_dtype":
                    dtype_arg = _dtype_arg(f)
                    if dtype_arg < 0:
                        sink.error(pos, f"'{op}' has no 'ScalarType? dtype' argument, which fp32_set_opt_dtype sets")
                        continue
                rules.append(AutocastRule(device, policy, op, f, pos, dtype_arg))
    return rules
