"""Layer 3 (continued): derivatives.yaml.

Each entry is bound to its native function by exact schema, its formulas are
parsed into ASTs (:mod:`codegen.formula`), and the saved-variable analysis
walks those ASTs to decide what a backward node must keep: a whole input or
output, or only a piece of metadata (``self.sym_sizes()`` -> ``self_sym_sizes``)
when that is all the formula uses.  Names follow PyTorch's convention.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from . import api
from .diagnostics import DiagnosticSink, Pos, did_you_mean
from .formula import (
    Call,
    Expr,
    FormulaParseError,
    Index,
    Member,
    Name,
    Number,
    Unary,
    parse_formula,
    to_source,
)
from .native import AUTOGRAD_KEYS, NativeFunction, parse_schema_at
from .reader import YList, YMap, load_yaml, type_name
from .schema import FunctionSchema, SchemaKind

# --------------------------------------------------------------------------
# model


@dataclass(frozen=True, slots=True)
class SavedVariable:
    """A value a backward node stores: its ``name`` in the node, its C-level
    ``type`` and the ``expr`` evaluated in the forward to produce it."""

    name: str
    type: str
    expr: str


@dataclass(frozen=True, eq=False)
class Derivative:
    """The formula giving the gradient of one or more inputs."""

    var_names: tuple[str, ...]
    formula: Expr  # as written
    rewritten: Expr  # metadata uses replaced by saved names (zeros_like(self) -> self_info.zeros())
    text: str
    pos: Pos
    saved_inputs: tuple[SavedVariable, ...]
    saved_outputs: tuple[SavedVariable, ...]
    named_gradients: frozenset[str] = frozenset()
    #: unqualified names used by the formula -> their offsets
    names: dict[str, list[int]] = field(default_factory=dict, repr=False)
    #: ``grads[i]`` uses as (i, offset of ``grads``)
    grads_indices: tuple[tuple[int, int], ...] = ()
    indexed_grads: frozenset[int] = frozenset()


@dataclass(frozen=True, eq=False)
class ForwardDerivative:
    """A forward-mode formula for one or more outputs; ``kind`` is
    ``formula``, ``auto_element_wise`` or ``auto_linear`` (then ``formula`` is None)."""

    var_names: tuple[str, ...]
    kind: str
    formula: Expr | None
    text: str
    pos: Pos


@dataclass(frozen=True, eq=False)
class DifferentiabilityInfo:
    """Everything about the derivatives of one function for one autograd key."""

    name: str  # the base name ("mul")
    func: NativeFunction  # the canonical function of the signature
    dispatch_key: str  # "Default" or an Autograd* key
    op: str | None  # backward node name, MulBackward0; None when nothing is differentiable
    derivatives: tuple[Derivative, ...]
    forward_derivatives: tuple[ForwardDerivative, ...]
    non_differentiable_arg_names: tuple[str, ...]
    args_with_derivatives: tuple[str, ...]
    all_saved_inputs: tuple[SavedVariable, ...]
    all_saved_outputs: tuple[SavedVariable, ...]
    available_named_gradients: tuple[str, ...]
    used_named_gradients: frozenset[str]
    output_differentiability: tuple[bool, ...] | None = None
    output_differentiability_conditions: tuple[str, ...] | None = None

    @property
    def saved_names(self) -> tuple[str, ...]:
        return tuple(v.name for v in self.all_saved_inputs + self.all_saved_outputs)


@dataclass(frozen=True, eq=False)
class DerivativeEntry:
    """One ``- name:`` entry of derivatives.yaml, bound to its function."""

    schema: FunctionSchema
    text: str
    pos: Pos
    function: NativeFunction
    infos: dict[str, DifferentiabilityInfo] = field(default_factory=dict)
    output_differentiability: tuple[Any, ...] | None = None

    @property
    def default(self) -> DifferentiabilityInfo | None:
        return self.infos.get("Default") or next(iter(self.infos.values()), None)


# --------------------------------------------------------------------------
# saved-variable analysis

# method calls that only need metadata: method -> (suffix, C type)
_METHOD_META = {
    ("sym_sizes", False): ("_sym_sizes", "SymIntArrayRef"),
    ("sym_sizes", True): ("_sym_sizes_opt", "std::optional<SymIntArrayRef>"),
    ("sym_blocksize", False): ("_self_sym_blocksize_opt", "std::optional<SymIntArrayRef>"),
    ("options", False): ("_options", "TensorOptions"),
    ("numel", False): ("_numel", "int64_t"),
    ("sym_numel", False): ("_sym_numel", "SymInt"),
    ("scalar_type", False): ("_scalar_type", "ScalarType"),
    ("dim", False): ("_dim", "int64_t"),
    ("sym_strides", False): ("_sym_strides", "SymIntArrayRef"),
    ("layout", False): ("_layout", "Layout"),
    ("is_conj", False): ("_conjugate", "bool"),
}
# functions of one variable that only need metadata: function -> (suffix, C type)
_FUNC_META = {
    "zeros_like": ("_info", "TypeAndSize"),
    "to_args_sizes": ("_args_sizes", "std::vector<std::vector<int64_t>>"),
    "to_args_sizes_symint": ("_args_sizes_symint", "std::vector<std::vector<SymInt>>"),
    "to_args_scalartypes": ("_args_scalartypes", "std::vector<ScalarType>"),
    "TensorGeometry": ("_geometry", "TensorGeometry"),
}
# the order in which one variable's saved values are listed (PyTorch's)
_ORDER = [
    "_sym_sizes", "_sym_sizes_opt", "_self_sym_blocksize_opt", "_options", "_info",
    "_sym_argsize_", "_numel", "_sym_numel", "_args_sizes", "_args_sizes_symint",
    "_args_scalartypes", "_geometry", "_scalar_type", "_dim", "_sym_strides",
    "_layout", "_conjugate",
]  # fmt: skip
# metadata accessors that are rejected, with the replacement to suggest
_REJECTED = {"sizes": "sym_sizes", "strides": "sym_strides", "size": "sym_size"}


def _order_key(suffix: str) -> int:
    for i, s in enumerate(_ORDER):
        if suffix == s or (s.endswith("_") and suffix.startswith(s)):
            return i
    return len(_ORDER)


class SavedAnalysis:
    """Finds what one formula needs from the forward, on its AST.

    ``variables`` maps each name that can be saved (inputs or outputs) to its
    type.  :meth:`run` returns the rewritten formula; the findings are in
    ``uses`` (variable -> {suffix: (type, expr)}, suffix "" for the whole
    value) and ``problems`` (offset, message, hint).
    """

    def __init__(self, variables: dict[str, str]):
        self.variables = variables
        self.uses: dict[str, dict[str, tuple[str, str]]] = {}
        self.problems: list[tuple[int, str, str | None]] = []
        #: every unqualified name of the formula, with its offsets
        self.names: dict[str, list[int]] = {}
        #: ``grads[i]`` uses: (i, offset); and the offsets of those ``grads`` names
        self.grads_indices: list[tuple[int, int]] = []
        self.indexed_grads: set[int] = set()

    def _use(self, var: str, suffix: str, typ: str, expr: str) -> Name:
        self.uses.setdefault(var, {}).setdefault(suffix, (typ, expr))
        return Name((var + suffix,))

    def _var(self, e: Expr) -> str | None:
        if isinstance(e, Name):
            n = e.simple
            if n is not None and n in self.variables:
                return n
        return None

    def run(self, e: Expr) -> Expr:
        return self._visit(e)

    def _visit(self, e: Expr) -> Expr:
        import dataclasses

        if isinstance(e, Call):
            f = e.func
            if isinstance(f, Member) and f.name in _REJECTED:
                # PyTorch's rule, on any object: sizes and strides only in their SymInt forms
                numeric = len(e.args) == 1 and isinstance(_strip_minus(e.args[0]), Number)
                if (f.name != "size" and not e.args) or (f.name == "size" and numeric):
                    good = _REJECTED[f.name]
                    self.problems.append(
                        (e.offset, f".{f.name}() is not supported in derivative formulas", f"use the SymInt version, .{good}()")
                    )
            if isinstance(f, Member):
                var = self._var(f.obj)
                if var is not None:
                    meta = _METHOD_META.get((f.name, f.arrow)) if not e.args else None
                    if meta is not None:
                        return self._use(var, meta[0], meta[1], to_source(e))
                    if f.name == "sym_size" and len(e.args) == 1 and not f.arrow:
                        k = _literal_index(e.args[0])
                        if k is not None:
                            return self._use(var, "_sym_argsize_" + k.replace("-", "minus_"), "SymInt", to_source(e))
            elif isinstance(f, Name) and f.simple in _FUNC_META and len(e.args) == 1:
                var = self._var(e.args[0])
                if var is not None:
                    suffix, typ = _FUNC_META[f.simple]  # type: ignore[index]
                    name = self._use(var, suffix, typ, var if suffix == "_info" else to_source(e))
                    if suffix == "_info":
                        return Call(Member(name, "zeros"), ())
                    return name
        if isinstance(e, Name):
            n = e.simple
            if n is not None:
                self.names.setdefault(n, []).append(e.offset)
                if n in self.variables:
                    self._use(n, "", self.variables[n], n)
            return e
        if isinstance(e, Index) and isinstance(e.obj, Name) and e.obj.simple == "grads":
            if isinstance(e.index, Number) and e.index.text.isdigit():
                self.grads_indices.append((int(e.index.text), e.obj.offset))
                self.indexed_grads.add(e.obj.offset)
        cls = type(e)
        changes = None
        for fname in cls._children:
            v = getattr(e, fname)
            new = self._visit(v)
            if new is not v:
                changes = changes or {}
                changes[fname] = new
        for fname in cls._seq_children:
            v = getattr(e, fname)
            items = tuple(self._visit(x) for x in v)
            if any(a is not b for a, b in zip(items, v)):
                changes = changes or {}
                changes[fname] = items
        return dataclasses.replace(e, **changes) if changes else e

    def saved(self, order: list[str]) -> tuple[SavedVariable, ...]:
        out = []
        for var in order:
            uses = self.uses.get(var)
            if not uses:
                continue
            for suffix in sorted((s for s in uses if s), key=_order_key):
                typ, expr = uses[suffix]
                out.append(SavedVariable(var + suffix, typ, expr))
            if "" in uses:
                typ, expr = uses[""]
                out.append(SavedVariable(var, typ, expr))
        return tuple(out)


def _strip_minus(e: Expr) -> Expr:
    return e.operand if isinstance(e, Unary) and e.op == "-" else e


def _literal_index(e: Expr) -> str | None:
    if isinstance(e, Number):
        return e.text
    if isinstance(e, Unary) and e.op == "-" and isinstance(e.operand, Number):
        return "-" + e.operand.text
    if isinstance(e, Name) and e.simple is not None:
        return e.simple
    return None


def derivative_inputs(func: FunctionSchema) -> dict[str, str]:
    """The inputs a formula may use, name -> type, in C++ argument order.

    As in PyTorch's C++ API the four TensorOptions keywords become one
    ``options`` value; out arguments are not inputs.
    """
    a = func.arguments
    topts = a.tensor_options
    out: dict[str, str] = {}
    for arg in a.positional + a.kwarg_only:
        if topts and arg in topts:
            if "options" not in out:
                out["options"] = "TensorOptions"
            continue
        out[arg.name] = str(arg.type)
    return out


def derivative_outputs(func: FunctionSchema) -> dict[str, str]:
    return {n: str(r.type) for n, r in zip(api.saved_output_names(func), func.returns)}


# --------------------------------------------------------------------------
# loading and binding

ENTRY_FIELDS = ("name", "dispatch", "output_differentiability")
_FORWARD_SHORTHANDS = ("auto_element_wise", "auto_linear")


class _Binder:
    def __init__(self, sink: DiagnosticSink, functions: list[NativeFunction]):
        self.sink = sink
        self.by_schema: dict[str, NativeFunction] = {f.schema_text: f for f in functions}
        self.by_signature: dict[str, list[NativeFunction]] = {}
        self.by_base: dict[str, list[NativeFunction]] = {}
        for f in functions:
            self.by_signature.setdefault(f.signature_key, []).append(f)
            self.by_base.setdefault(f.func.name.name.base, []).append(f)
        self.op_counter: Counter[str] = Counter()
        self.bound: dict[str, Pos] = {}

    def near_matches(self, schema: FunctionSchema | None, text: str) -> str | None:
        base = schema.name.name.base if schema else text.split("(")[0].split(".")[0].rstrip("_")
        cands = [str(f.func) for f in self.by_base.get(base, [])]
        if not cands:
            names = did_you_mean(base, self.by_base)
            return names
        return "functions with this name:\n    " + "\n    ".join(cands[:8])

    def canonical(self, f: NativeFunction, name: str) -> NativeFunction:
        group = self.by_signature.get(f.signature_key, [f])
        for g in group:
            if (
                "functional" not in g.func.name.overload_name
                and not g.func.is_out_fn()
                and str(g.func.name.name) == name
            ):
                return g
        return f

    def entry(self, e: YMap, pos: Pos) -> DerivativeEntry | None:
        sink = self.sink
        for k in e:
            if k not in ENTRY_FIELDS and "dispatch" in e:
                sink.error(e.kpos(k), f"formula for '{k}' must go under a dispatch key when the entry has 'dispatch:'", "move it under 'Default:'")
        if "name" not in e:
            sink.error(pos, "derivative entry has no 'name:' field", "every entry starts with '- name: schema'")
            return None
        text = e["name"]
        if not isinstance(text, str):
            sink.error(e.vpos("name"), f"'name' must be a schema string, not {type_name(text)}")
            return None
        f = self.by_schema.get(text)
        if f is not None:
            schema = f.func
        else:  # not an exact match: parse it for a precise diagnostic
            schema = parse_schema_at(text, e.vpos("name"), sink, "schema in 'name'")
            if schema is None:
                return None
            f = self.by_schema.get(str(schema))
            if f is not None:
                sink.error(e.vpos("name"), "schema in 'name' does not match the declaration exactly", f"write '{schema}'")
                return None
        if f is None:
            sink.error(e.vpos("name"), f"no native function has the schema '{text}'", self.near_matches(schema, text))
            return None
        if str(schema) in self.bound:
            sink.error(e.vpos("name"), f"duplicate derivative for '{schema.name}'", f"first defined on line {self.bound[str(schema)].line}")
            return None
        self.bound[str(schema)] = e.vpos("name")
        # PyTorch's "name" of a derivative: the operator name without its overload
        defn_name = str(schema.name.name)
        canonical = self.canonical(f, defn_name)
        inputs = derivative_inputs(canonical.func)
        for bad in ("grad_input_mask", "result"):
            if bad in inputs:
                sink.error(e.vpos("name"), f"'{canonical.func.name}' has an argument named '{bad}', which derivative formulas reserve", "rename the argument in native_functions.yaml")

        od, conditions = self.output_differentiability(e, canonical.func)
        tables: list[tuple[str, YMap, Pos]] = []
        if "dispatch" in e:
            d = e["dispatch"]
            if not isinstance(d, YMap) or not d:
                sink.error(e.vpos("dispatch"), f"'dispatch' must be a mapping of autograd keys to formulas, not {type_name(d)}")
                return None
            for key, table in d.items():
                if key != "Default" and key not in AUTOGRAD_KEYS:
                    sink.error(d.kpos(key), f"invalid autograd dispatch key '{key}'", did_you_mean(str(key), ["Default", *AUTOGRAD_KEYS]) or "use 'Default' or an Autograd<Backend> key")
                    continue
                if not isinstance(table, YMap):
                    sink.error(d.vpos(key), f"formulas for '{key}' must be a mapping of inputs to formulas, not {type_name(table)}")
                    continue
                tables.append((key, table, d.kpos(key)))
        else:
            table = YMap(e.pos)
            for k, v in e.items():
                if k not in ENTRY_FIELDS:
                    table[k] = v
                    table.key_pos[k] = e.kpos(k)
                    table.value_pos[k] = e.vpos(k)
            tables.append(("Default", table, pos))

        entry = DerivativeEntry(schema, text, e.vpos("name"), f, {}, od if conditions is None else tuple(conditions))
        for key, table, kpos in tables:
            info = self.info(defn_name, canonical, key, table, od, conditions)
            if info is not None:
                entry.infos[key] = info
        return entry

    def output_differentiability(self, e: YMap, func: FunctionSchema) -> tuple[tuple[bool, ...] | None, tuple[str, ...] | None]:
        if "output_differentiability" not in e:
            return None, None
        v = e["output_differentiability"]
        vpos = e.vpos("output_differentiability")
        if not isinstance(v, YList) or not v:
            self.sink.error(vpos, f"'output_differentiability' must be a list of True/False, not {type_name(v)}")
            return None, None
        if any(isinstance(x, str) for x in v):
            if len(v) != 1 or not isinstance(v[0], str):
                self.sink.error(vpos, "a condition in 'output_differentiability' is only supported as the single entry of a single-output function")
                return None, None
            return (True,), (v[0],)
        for i, x in enumerate(v):
            if not isinstance(x, bool):
                self.sink.error(v.ipos(i), f"'output_differentiability' entries must be True or False, not {type_name(x)}")
                return None, None
        if len(v) > len(func.returns):
            self.sink.error(vpos, f"'output_differentiability' has {len(v)} entries but '{func.name}' returns {len(func.returns)} outputs")
            return None, None
        return tuple(v), None

    def info(
        self,
        defn_name: str,
        f: NativeFunction,
        key: str,
        table: YMap,
        od: tuple[bool, ...] | None,
        conditions: tuple[str, ...] | None,
    ) -> DifferentiabilityInfo | None:
        sink = self.sink
        func = f.func
        inputs = derivative_inputs(func)
        outputs = derivative_outputs(func)
        ret_names = [r.name for r in func.returns]
        differentiability = od or (True,) * len(func.returns)
        available_names = tuple(
            f"grad_{r.name}"
            for r, d in zip(func.returns, differentiability)
            if d and r.name is not None and r.type.is_tensor_like()
        )
        available = frozenset(available_names)
        output_names = set(outputs) | {n for n in ret_names if n} | set(api.return_names(func))
        derivatives: list[Derivative] = []
        forwards: list[ForwardDerivative] = []
        non_diff: list[str] = []
        non_diff_pos: dict[str, Pos] = {}
        with_derivs: set[str] = set()
        before = len(sink)
        for raw, value in table.items():
            kpos = table.kpos(raw)
            vpos = table.vpos(raw)
            if not isinstance(raw, str):
                sink.error(kpos, f"formula key must be input names, not {type_name(raw)}")
                continue
            names = tuple(n.strip() for n in raw.split(","))
            if any(not n for n in names):
                sink.error(kpos, f"empty name in '{raw}'")
                continue
            is_forward = names[0] not in inputs
            ok = True
            for n in names:
                if n not in inputs and n not in output_names:
                    hint = did_you_mean(n, list(inputs) + sorted(output_names))
                    sink.error(kpos, f"'{n}' is not an argument or output of '{func.name}'", hint)
                    ok = False
                    break
                if (n in inputs) == is_forward:
                    sink.error(kpos, f"'{raw}' mixes inputs and outputs", "backward formulas are keyed by inputs, forward formulas by outputs")
                    ok = False
                    break
            if not ok:
                continue
            if not isinstance(value, str):
                sink.error(vpos, f"formula for '{raw}' must be a string, not {type_name(value)}")
                continue
            stripped = value.strip()
            if is_forward:
                if stripped in _FORWARD_SHORTHANDS:
                    forwards.append(ForwardDerivative(names, stripped, None, value, vpos))
                    continue
                expr = self.parse(value, vpos)
                if expr is not None:
                    forwards.append(ForwardDerivative(names, "formula", expr, value, vpos))
                continue
            if stripped.lower() == "non_differentiable":
                non_diff.extend(names)
                non_diff_pos.update((n, kpos) for n in names)
                continue
            expr = self.parse(value, vpos)
            if expr is None:
                continue
            # one walk for inputs and outputs (an input shadows an output of the same name)
            ins = SavedAnalysis({**outputs, **inputs})
            rewritten = ins.run(expr)
            for off, msg, hint in ins.problems:
                sink.error(vpos.at(off), msg, hint)
            used_named = frozenset(available.intersection(ins.names)) if available else frozenset()
            derivatives.append(
                Derivative(
                    names, expr, rewritten, value, vpos, ins.saved(list(inputs)), ins.saved([o for o in outputs if o not in inputs]), used_named,
                    ins.names, tuple(ins.grads_indices), frozenset(ins.indexed_grads),
                )
            )
            with_derivs.update(names)
        for n in sorted(with_derivs.intersection(non_diff)):
            sink.error(non_diff_pos[n], f"'{n}' is both non_differentiable and given a formula")
        self.check_grad_usage(str(func.name), derivatives, func)
        if len(sink) > before:
            return None

        op = None
        args_with = tuple(n for n in inputs if n in with_derivs)
        if args_with:
            prefix = api.backward_node_prefix(defn_name) + ("" if key == "Default" else key)
            op = f"{prefix}{self.op_counter[prefix]}"
            self.op_counter[prefix] += 1
        return DifferentiabilityInfo(
            name=defn_name,
            func=f,
            dispatch_key=key,
            op=op,
            derivatives=tuple(derivatives),
            forward_derivatives=tuple(forwards),
            non_differentiable_arg_names=tuple(non_diff),
            args_with_derivatives=args_with,
            all_saved_inputs=_dedup(v for d in derivatives for v in d.saved_inputs),
            all_saved_outputs=_dedup(v for d in derivatives for v in d.saved_outputs),
            available_named_gradients=available_names,
            used_named_gradients=frozenset().union(*(d.named_gradients for d in derivatives)),
            output_differentiability=od,
            output_differentiability_conditions=conditions,
        )

    def parse(self, text: str, pos: Pos) -> Expr | None:
        try:
            return parse_formula(text)
        except FormulaParseError as e:
            self.sink.error(pos.at(e.offset), f"invalid formula: {e.message}", e.hint)
            return None

    def check_grad_usage(self, fname: str, derivatives: list[Derivative], func: FunctionSchema) -> None:
        grad_at: Pos | None = None
        grads_at: Pos | None = None
        named_at: Pos | None = None
        indices: list[tuple[int, Pos]] = []
        plain_grads = 0
        for d in derivatives:
            for i, off in d.grads_indices:
                indices.append((i, d.pos.at(off)))
            if grad_at is None and "grad" in d.names:
                grad_at = d.pos.at(d.names["grad"][0])
            offs = d.names.get("grads", ())
            if offs and grads_at is None:
                grads_at = d.pos.at(offs[0])
            plain_grads += sum(1 for o in offs if o not in d.indexed_grads)
            if d.named_gradients and named_at is None:
                named_at = d.pos
        if grad_at is not None and grads_at is not None:
            self.sink.error(
                grads_at,
                f"derivative of '{fname}' mixes 'grad' and 'grads'",
                "use 'grads[0]' instead of 'grad' when the function has several differentiable outputs",
            )
        elif plain_grads == 0 and indices and {i for i, _ in indices} == {0}:
            self.sink.error(
                indices[0][1],
                f"derivative of '{fname}' only uses 'grads[0]'",
                "if the first output is the only differentiable one, write 'grad' instead",
            )
        if named_at is not None and (grad_at is not None or grads_at is not None):
            self.sink.error(named_at, f"derivative of '{fname}' mixes 'grad_<output name>' with 'grad' or 'grads[i]'", "use one way to name output gradients")
        for i, p in indices:
            if i >= len(func.returns):
                self.sink.error(p, f"'grads[{i}]' is out of range: '{fname}' returns {len(func.returns)} output{'s' if len(func.returns) != 1 else ''}")


def _dedup(vs) -> tuple[SavedVariable, ...]:
    seen: set[str] = set()
    out = []
    for v in vs:
        if v.name not in seen:
            seen.add(v.name)
            out.append(v)
    return tuple(out)


def load_derivatives(
    path: str,
    sink: DiagnosticSink,
    functions: list[NativeFunction],
    display: str | None = None,
) -> list[DerivativeEntry]:
    shown = display if display is not None else str(path)
    data = load_yaml(path, sink, shown)
    if data is None:
        return []
    if not isinstance(data, YList):
        sink.error(getattr(data, "pos", Pos(shown, 1, 1)), "derivatives file must be a list of '- name:' entries")
        return []
    binder = _Binder(sink, functions)
    entries = []
    for i, e in enumerate(data):
        pos = data.ipos(i)
        if not isinstance(e, YMap):
            sink.error(pos, f"derivative entry must be a mapping with a 'name:' field, not {type_name(e)}")
            continue
        entry = binder.entry(e, pos)
        if entry is not None:
            entries.append(entry)
    _name_view_copies(entries)
    return entries


def _name_view_copies(entries: list[DerivativeEntry]) -> None:
    """The node of a ``{view}_copy`` operator (tag ``view_copy``) is named
    after its view's, as torchgen names the entries it adds for them:
    alias_copy records ``AliasBackward0_copy``, squeeze_copy.dim
    ``SqueezeBackward1_copy``."""
    by_name = {str(e.function.func.name): e for e in entries}
    for e in entries:
        f = e.function
        base = str(f.func.name.name)
        if "view_copy" not in f.tags or not base.endswith("_copy"):
            continue
        overload = f.func.name.overload_name
        view = by_name.get(base[: -len("_copy")] + (f".{overload}" if overload else ""))
        if view is None:
            continue
        for key, info in list(e.infos.items()):
            vinfo = view.infos.get(key)
            if info.op and vinfo is not None and vinfo.op:
                e.infos[key] = replace(info, op=vinfo.op + "_copy")


def all_saved_names(info: DifferentiabilityInfo) -> list[str]:
    return [v.name for v in info.all_saved_inputs] + [v.name for v in info.all_saved_outputs]


__all__ = [
    "Derivative",
    "DerivativeEntry",
    "DifferentiabilityInfo",
    "ForwardDerivative",
    "SavedAnalysis",
    "SavedVariable",
    "SchemaKind",
    "load_derivatives",
]
