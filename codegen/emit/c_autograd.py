"""Autograd, generated from yaml/derivatives.yaml (docs/AUTOGRAD.md,
"Generated nodes and kernels").

Outputs (paths relative to ``generated/``):

* ``csrc/autograd_<name>.c``: for one operator name (``mul``: ``mul.Tensor``,
  ``mul_.Tensor``, ``mul.out``, ``mul.Scalar``, ...) the backward node types
  of its derivatives.yaml entries (``MulBackward0``: saved variables,
  ``apply``, ``release_saved_variables``, ``destroy``), its autograd kernels
  (one per overload with tensor arguments: record a node and redispatch below
  Autograd; the out= error; the "not implemented" error) and
  ``tl_autograd_register_<name>()``;
* ``csrc/autograd_register_all.c``: ``tl_autograd_register_all()`` (run after
  ``tl_ops_register_all()``);
* ``include/tl_autograd_ops.h`` / ``cdef/autograd.h``: their prototypes.

The heart is :class:`FormulaCompiler`, a small expression compiler from the
formula AST (:mod:`codegen.formula`, after the saved-variable rewrite) to C:
every call becomes one statement assigning a numbered temporary, failures
jump to one cleanup label, and each temporary is released right after its
last use.  Formula names resolve, in order, to ``grad``, unpacked saved
tensors, saved metadata fields of the node, the hand-written helpers of
runtime/include/tl_autograd_formulas.h, and finally torchlet's own operators
(``grad.t()`` -> ``tl_ops_t(grad)``, ``at::mm`` -> ``tl_ops_mm``), whose
overload is picked by the argument kinds, so gradients stay differentiable.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import api_c
from ..derivatives import DifferentiabilityInfo, SavedVariable
from ..diagnostics import DiagnosticSink
from ..formula import Binary, Call, Expr, Index, Member, Name, Number, Paren, Unary, to_source
from ..model import Model
from ..native import NativeFunction
from ..schema import BaseTy, BaseType, OptionalType
from . import EmitContext

C_COMMENT = ("/*", " * ", "")

# Functions whose outputs never require grad although they take tensors
# (PyTorch's DONT_REQUIRE_DERIVATIVE): no autograd kernel, the Autograd keys
# fall through.
DONT_REQUIRE_DERIVATIVE = frozenset(
    {"empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like", "randint_like", "isnan",
     "eq", "ne", "lt", "le", "gt", "ge", "argmax", "argmin", "sign", "floor_divide", "result_type"}
)  # fmt: skip


class UnsupportedFormula(ValueError):
    """A formula uses something the C translation does not cover (yet);
    reported as a diagnostic at the formula (``pos``) or its entry."""

    pos = None


# ------------------------------------------------------------------ values

@dataclass(frozen=True)
class Val:
    """A compiled value: its ``kind`` and the C expressions that pass it.

    kinds: tensor (``c`` = one ``tl_tensor *`` expression; ``temp`` names an
    owned temporary), scalar, int, double, bool, dtype, device, layout,
    optstr (``const char *`` or NULL), geometry (sizes, strides, storage offset),
    intlist (data, len), optintlist (data or NULL, len), optint (value, has),
    options (dtype, device), info (sizes, len, dtype, device), none, number
    (a literal that converts to int/double/scalar/bool).
    """

    kind: str
    c: tuple[str, ...]
    temp: str | None = None
    text: str = ""  # literal text for numbers


def _number_as(v: Val, kind: str) -> Val | None:
    t = v.text.rstrip("fFlLuU")
    is_float = any(ch in t for ch in ".eE") and not t.lower().startswith("0x")
    if kind == "scalar":
        return Val("scalar", (f"tl_scalar_from_double({t})" if is_float else f"tl_scalar_from_int({t})",))
    if kind == "double":
        return Val("double", (t if is_float else f"{t}.0",))
    if kind in ("int", "layout") and not is_float:
        return Val(kind, (t,))
    if kind == "optint" and not is_float:
        return Val("optint", (t, "true"))
    if kind == "bool" and not is_float:
        return Val("bool", ("true" if t != "0" else "false",))
    return None


# C parameter kinds of the helpers (runtime/include/tl_autograd_formulas.h)
_HELPERS: dict[str, list[tuple[tuple[str, ...], str]]] = {
    "handle_r_to_c": [(("dtype", "tensor"), "tl_ag_handle_r_to_c")],
    "maybe_multiply": [(("tensor", "scalar"), "tl_ag_maybe_multiply")],
    "sum_to": [(("tensor", "intlist"), "tl_ag_sum_to")],
    "at::sum_to": [(("tensor", "intlist"), "tl_ag_sum_to")],
    "mul_tensor_backward": [
        (("tensor", "tensor", "dtype"), "tl_ag_mul_tensor_backward"),
        (("tensor", "scalar", "dtype"), "tl_ag_mul_tensor_backward_scalar"),
    ],
    "div_tensor_self_backward": [
        (("tensor", "tensor", "dtype"), "tl_ag_div_tensor_self_backward"),
        (("tensor", "scalar", "dtype"), "tl_ag_div_tensor_self_backward_scalar"),
        (("tensor", "tensor", "dtype", "optstr"), "tl_ag_div_tensor_self_backward_mode"),
        (("tensor", "scalar", "dtype", "optstr"), "tl_ag_div_tensor_self_backward_scalar_mode"),
    ],
    "div_tensor_other_backward": [
        (("tensor", "tensor", "tensor"), "tl_ag_div_tensor_other_backward"),
        (("tensor", "tensor", "tensor", "optstr"), "tl_ag_div_tensor_other_backward_mode"),
    ],
    "sum_backward": [(("tensor", "intlist", "optintlist", "bool"), "tl_ag_sum_backward")],
    "mm_mat1_backward": [(("tensor", "tensor", "intlist", "intlist", "layout", "scalar"), "tl_ag_mm_mat1_backward")],
    "mm_mat2_backward": [(("tensor", "tensor", "intlist", "intlist", "layout", "scalar"), "tl_ag_mm_mat2_backward")],
    "permute_backwards": [(("tensor", "intlist"), "tl_ag_permute_backwards")],
    "unsqueeze_to": [
        (("tensor", "intlist"), "tl_ag_unsqueeze_to"),
        (("tensor", "int", "intlist"), "tl_ag_unsqueeze_to_dim"),
        (("tensor", "intlist", "intlist"), "tl_ag_unsqueeze_to_dims"),
    ],
    "slice_backward_wrapper": [(("tensor", "intlist", "int", "optint", "optint", "int"), "tl_ag_slice_backward_wrapper")],
    "_to_copy_backward": [(("tensor", "options"), "tl_ag_to_copy_backward")],
    "as_strided_backward": [(("tensor", "geometry", "intlist", "intlist", "optint"), "tl_ag_as_strided_backward")],
}

# schema argument kind (api_c) -> the value kinds that can be passed to it
_ACCEPTS = {
    "tensor": ("tensor",),
    "opt_tensor": ("tensor", "none"),
    "scalar": ("scalar", "number", "int", "double"),
    "opt_scalar": ("scalar", "number", "none"),
    "int": ("int", "number"),
    "opt_int": ("optint", "int", "number", "none"),
    "int_list": ("intlist",),
    "opt_int_list": ("optintlist", "intlist", "none"),
    "double": ("double", "number"),
    "opt_double": ("double", "number", "none"),
    "bool": ("bool", "number"),
    "opt_bool": ("bool", "none"),
    "dtype": ("dtype", "none"),
    "device": ("device", "none"),
    "enum": ("layout", "none"),
}


def _convert(v: Val, want: str) -> tuple[str, ...] | None:
    """C argument expressions passing value ``v`` to a parameter of kind ``want``
    (an api_c kind or a helper kind), or None when it does not fit."""
    # helper kinds are value kinds
    if want == v.kind and want not in _ACCEPTS:
        return v.c
    if want in ("optintlist",) and v.kind == "intlist":
        return v.c
    if want in ("optintlist",) and v.kind == "none":
        return ("NULL", "0")
    if want in ("optint",) and v.kind == "int":
        return (v.c[0], "true")
    if want in ("optint",) and v.kind == "none":
        return ("0", "false")
    if v.kind == "number" and want not in _ACCEPTS:
        n = _number_as(v, want)
        return n.c if n else None
    if want not in _ACCEPTS:
        return None
    if v.kind not in _ACCEPTS[want]:
        return None
    if v.kind == "number":
        target = {"scalar": "scalar", "opt_scalar": "scalar", "int": "int", "opt_int": "optint", "double": "double",
                  "opt_double": "double", "bool": "bool"}[want]  # fmt: skip
        n = _number_as(v, target)
        if n is None:
            return None
        if want == "opt_double":
            return (n.c[0], "true")
        if want == "opt_scalar":
            return None  # would need an lvalue
        return n.c
    if v.kind == "none":
        return {"opt_tensor": ("NULL",), "opt_scalar": ("NULL",), "opt_int": ("0", "false"), "opt_int_list": ("NULL", "0"),
                "opt_double": ("0.0", "false"), "opt_bool": ("false", "false"), "dtype": ("TL_DTYPE_UNDEFINED",),
                "device": ("-1",), "enum": ("-1",)}[want]  # fmt: skip
    if want == "scalar" and v.kind == "int":
        return (f"tl_scalar_from_int({v.c[0]})",)
    if want == "scalar" and v.kind == "double":
        return (f"tl_scalar_from_double({v.c[0]})",)
    if want == "opt_int" and v.kind == "int":
        return (v.c[0], "true")
    if want in ("opt_double", "opt_bool") and v.kind in ("double", "bool"):
        return (v.c[0], "true")
    return v.c


def _default_c(arg, kind: str) -> tuple[str, ...]:
    """C expressions for a schema default."""
    d = arg.default
    if d is None:
        raise UnsupportedFormula(f"argument '{arg.name}' has no default")
    if d.kind == "none":
        return _convert(Val("none", ()), kind) or ()
    if d.kind == "bool":
        b = "true" if d.value else "false"
        return (b, "true") if kind == "opt_bool" else (b,)
    if d.kind in ("int", "float"):
        v = _convert(Val("number", (), text=d.text), kind)
        if v is None:
            raise UnsupportedFormula(f"default '{d.text}' of '{arg.name}'")
        return v
    if d.kind == "enum":
        return (str(api_c.ENUM_VALUES[d.text]),)
    if d.kind == "list" and not d.value:
        return ("NULL", "0")
    raise UnsupportedFormula(f"default '{d.text}' of '{arg.name}'")


# --------------------------------------------------------- saved variables

@dataclass
class Field:
    """One saved value of a node: its struct members and how it is captured."""

    name: str  # saved-variable name (self, self_sym_sizes, alpha ...)
    kind: str  # tensor | scalar | int | double | bool | dtype | device | layout | intlist | optintlist | optint | options | info
    decls: list[str]
    capture: list[str]  # statements run in the forward (n_ is the node)
    val: Val  # how formulas see it inside apply
    is_output: bool = False
    edges: set[int] = field(default_factory=set)  # edge indices whose formulas use it


def _int_list_field(name: str, kind: str, data: str, length: str) -> Field:
    return Field(name, kind, [f"tl_ag_int_list {name};"], [f"if (tl_ag_int_list_set(&n_->{name}, {data}, {length}) < 0) goto fail;"],
                 Val(kind, (f"n_->{name}.data", f"n_->{name}.len")))  # fmt: skip


def _field(sv: SavedVariable, var: str, suffix: str, c_arg: api_c.CArg | None, is_output: bool) -> Field:
    n = sv.name
    if suffix == "":
        if sv.type.startswith("Tensor") or sv.type == "const Tensor&":
            if sv.type != "Tensor" and not sv.type.startswith("Tensor("):
                raise UnsupportedFormula(f"saved variable '{n}' of type '{sv.type}'")
            return Field(n, "tensor", [f"tl_saved_variable {n}_;"], [], Val("tensor", (n,)), is_output)
        assert c_arg is not None
        k = c_arg.kind
        p = [x.name for x in c_arg.params]
        if k == "scalar":
            return Field(n, "scalar", [f"tl_scalar {n};"], [f"n_->{n} = {p[0]};"], Val("scalar", (f"n_->{n}",)))
        if k == "int":
            return Field(n, "int", [f"int64_t {n};"], [f"n_->{n} = {p[0]};"], Val("int", (f"n_->{n}",)))
        if k == "double":
            return Field(n, "double", [f"double {n};"], [f"n_->{n} = {p[0]};"], Val("double", (f"n_->{n}",)))
        if k == "bool":
            return Field(n, "bool", [f"bool {n};"], [f"n_->{n} = {p[0]};"], Val("bool", (f"n_->{n}",)))
        if k == "dtype":
            return Field(n, "dtype", [f"tl_dtype {n};"], [f"n_->{n} = {p[0]};"], Val("dtype", (f"n_->{n}",)))
        if k == "opt_int":
            return Field(n, "optint", [f"int64_t {n};", f"bool {n}_has;"], [f"n_->{n} = {p[0]};", f"n_->{n}_has = {p[1]};"],
                         Val("optint", (f"n_->{n}", f"n_->{n}_has")))  # fmt: skip
        if k == "int_list":
            return _int_list_field(n, "intlist", p[0], p[1])
        if k == "opt_int_list":
            f = _int_list_field(n, "optintlist", p[0], p[1])
            f.val = Val("optintlist", (f"(n_->{n}.has ? n_->{n}.data : NULL)", f"n_->{n}.len"))
            return f
        if k == "str":  # only str? arguments such as rounding_mode: None or a short name
            return Field(n, "optstr", [f"char {n}[32];", f"bool {n}_has;"],
                         [f"n_->{n}_has = {p[0]} != NULL;", f"if ({p[0]}) snprintf(n_->{n}, sizeof n_->{n}, \"%s\", {p[0]});"],
                         Val("optstr", (f"(n_->{n}_has ? n_->{n} : NULL)",)))  # fmt: skip
        if k in ("device", "enum"):
            return Field(n, "int", [f"int {n};"], [f"n_->{n} = {p[0]};"], Val("layout" if k == "enum" else "device", (f"n_->{n}",)))
        raise UnsupportedFormula(f"saved argument '{n}' of kind '{k}'")
    if c_arg is not None and c_arg.kind != "tensor":
        raise UnsupportedFormula(f"metadata '{n}' of a non-tensor argument")
    x = var
    if suffix in ("_sym_sizes",):
        return _int_list_field(n, "intlist", f"tl_tensor_sizes({x})", f"tl_tensor_ndim({x})")
    if suffix == "_sym_strides":
        return _int_list_field(n, "intlist", f"tl_tensor_strides({x})", f"tl_tensor_ndim({x})")
    if suffix == "_scalar_type":
        return Field(n, "dtype", [f"tl_dtype {n};"], [f"n_->{n} = tl_tensor_dtype({x});"], Val("dtype", (f"n_->{n}",)))
    if suffix == "_layout":
        return Field(n, "layout", [f"int {n};"], [f"n_->{n} = 0; /* strided */"], Val("layout", (f"n_->{n}",)))
    if suffix in ("_dim",):
        return Field(n, "int", [f"int64_t {n};"], [f"n_->{n} = tl_tensor_ndim({x});"], Val("int", (f"n_->{n}",)))
    if suffix in ("_numel", "_sym_numel"):
        return Field(n, "int", [f"int64_t {n};"], [f"n_->{n} = tl_tensor_numel({x});"], Val("int", (f"n_->{n}",)))
    if suffix.startswith("_sym_argsize_"):
        d = suffix[len("_sym_argsize_"):].replace("minus_", "-")
        return Field(n, "int", [f"int64_t {n};"], [f"n_->{n} = tl_tensor_size({x}, {d});", f"if (n_->{n} < 0) goto fail;"],
                     Val("int", (f"n_->{n}",)))  # fmt: skip
    if suffix == "_options":
        return Field(n, "options", [f"tl_dtype {n}_dtype;", f"int {n}_device;"],
                     [f"n_->{n}_dtype = tl_tensor_dtype({x});", f"n_->{n}_device = (int)tl_tensor_device({x});"],
                     Val("options", (f"n_->{n}_dtype", f"n_->{n}_device")))  # fmt: skip
    if suffix == "_info":
        return Field(n, "info", [f"tl_ag_int_list {n}_sizes;", f"tl_dtype {n}_dtype;", f"int {n}_device;"],
                     [f"if (tl_ag_int_list_set(&n_->{n}_sizes, tl_tensor_sizes({x}), tl_tensor_ndim({x})) < 0) goto fail;",
                      f"n_->{n}_dtype = tl_tensor_dtype({x});", f"n_->{n}_device = (int)tl_tensor_device({x});"],
                     Val("info", (f"n_->{n}_sizes.data", f"n_->{n}_sizes.len", f"n_->{n}_dtype", f"n_->{n}_device")))  # fmt: skip
    if suffix == "_geometry":
        return Field(n, "geometry", [f"tl_ag_int_list {n}_sizes;", f"tl_ag_int_list {n}_strides;", f"int64_t {n}_offset;"],
                     [f"if (tl_ag_int_list_set(&n_->{n}_sizes, tl_tensor_sizes({x}), tl_tensor_ndim({x})) < 0) goto fail;",
                      f"if (tl_ag_int_list_set(&n_->{n}_strides, tl_tensor_strides({x}), tl_tensor_ndim({x})) < 0) goto fail;",
                      f"n_->{n}_offset = tl_tensor_storage_offset({x});"],
                     Val("geometry", (f"n_->{n}_sizes.data", f"n_->{n}_sizes.len", f"n_->{n}_strides.data",
                                      f"n_->{n}_strides.len", f"n_->{n}_offset")))  # fmt: skip
    if suffix == "_conjugate":
        return Field(n, "bool", [f"bool {n};"], [f"n_->{n} = false;"], Val("bool", (f"n_->{n}",)))
    raise UnsupportedFormula(f"saved metadata '{n}'")


# ----------------------------------------------------------- the compiler

class FormulaCompiler:
    """Compiles formula ASTs of one node's ``apply`` into C statements.

    ``env`` maps formula names to values.  Temporaries ``t0_``, ``t1_`` ...
    are numbered per node; :attr:`temps` lists them for the declarations and
    the cleanup.  Every statement that can fail is followed by ``goto done``.
    """

    def __init__(self, m: Model, env: dict[str, Val]):
        self.m = m
        self.env = env
        self.temps: list[str] = []
        self.lines: list[str] = []
        self.used: set[str] = set()  # env names used

    # -- temporaries
    def _new_temp(self) -> str:
        t = f"t{len(self.temps)}_"
        self.temps.append(t)
        return t

    def _release(self, vals: list[Val]) -> list[str]:
        return [f"tl_tensor_release({v.temp}); {v.temp} = NULL;" for v in vals if v.temp]

    def call_tensor(self, fn: str, args: list[str], consumed: list[Val], what: str) -> Val:
        t = self._new_temp()
        self.lines.append(f"{t} = {fn}({', '.join(args)});")
        self.lines.extend(self._release(consumed))
        self.lines.append(f"if (!{t}) goto done;")
        return Val("tensor", (t,), temp=t)

    # -- expressions
    def compile(self, e: Expr) -> Val:
        if isinstance(e, Paren):
            return self.compile(e.expr)
        if isinstance(e, Name):
            return self._name(e)
        if isinstance(e, Number):
            return Val("number", (), text=e.text)
        if isinstance(e, Unary):
            if e.op == "-":
                v = self.compile(e.operand)
                if v.kind == "tensor":
                    return self._op_call("neg", None, [v], to_source(e))
                if v.kind == "number":
                    return Val("number", (), text="-" + v.text)
                if v.kind in ("int", "double"):
                    return Val(v.kind, (f"(-{v.c[0]})",))
            if e.op == "!":
                v = self.compile(e.operand)
                if v.kind == "dtype":  # an optional ScalarType: "is None"
                    return Val("bool", (f"({v.c[0]} == TL_DTYPE_UNDEFINED)",))
                if v.kind == "bool":
                    return Val("bool", (f"(!{v.c[0]})",))
            if e.op == "*":
                v = self.compile(e.operand)
                if v.kind == "dtype":  # the value of an optional ScalarType
                    return v
            raise UnsupportedFormula(f"unary '{e.op}' in '{to_source(e)}'")
        if isinstance(e, Binary):
            return self._binary(e)
        if isinstance(e, Call):
            return self._call(e)
        if isinstance(e, Index) and isinstance(e.obj, Name) and e.obj.simple == "grads" and isinstance(e.index, Number):
            return self._name(Name((f"grads[{e.index.text}]",)))
        raise UnsupportedFormula(f"'{to_source(e)}'")

    def _name(self, e: Name) -> Val:
        key = "::".join(e.parts)
        if key in self.env:
            self.used.add(key)
            return self.env[key]
        if key in ("true", "false"):
            return Val("bool", (key,))
        if key in ("c10::nullopt", "std::nullopt", "::std::nullopt", "None"):
            return Val("none", ())
        raise UnsupportedFormula(f"unknown name '{key}'")

    def _binary(self, e: Binary) -> Val:
        a = self.compile(e.left)
        b = self.compile(e.right)
        if e.op in ("||", "&&") and a.kind == "bool" and b.kind == "bool":
            return Val("bool", (f"({a.c[0]} {e.op} {b.c[0]})",))
        if a.kind == "tensor" and b.kind == "tensor":
            op = {"+": "add", "-": "sub", "*": "mul", "/": "div"}.get(e.op)
            if op:
                return self._op_call(op, None, [a, b], to_source(e))
        if a.kind == "tensor" and b.kind in ("scalar", "number", "int", "double"):
            op = {"+": "add", "-": "sub", "*": "mul", "/": "div"}.get(e.op)
            if op:
                return self._op_call(op, None, [a, b], to_source(e))
        if a.kind in ("scalar", "number", "int", "double") and b.kind == "tensor" and e.op in ("*", "+"):
            return self._op_call({"*": "mul", "+": "add"}[e.op], None, [b, a], to_source(e))
        raise UnsupportedFormula(f"operator '{e.op}' on {a.kind} and {b.kind} in '{to_source(e)}'")

    def _call(self, e: Call) -> Val:
        f = e.func
        if isinstance(f, Member):
            obj = self.compile(f.obj)
            args = [self.compile(a) for a in e.args]
            name = f.name
            if name == "conj" and not args and obj.kind in ("scalar", "tensor", "number"):
                return obj  # real dtypes only: conj is the identity
            if obj.kind == "info" and name == "zeros" and not args:
                return self.call_tensor("tl_ag_zeros_info", list(obj.c), [], to_source(e))
            if obj.kind == "tensor":
                return self._op_call(name, obj, args, to_source(e))
            raise UnsupportedFormula(f"method '{name}' on {obj.kind} in '{to_source(e)}'")
        if isinstance(f, Name):
            key = "::".join(f.parts)
            args = [self.compile(a) for a in e.args]
            if key == "isDifferentiableType" and len(args) == 1 and args[0].kind == "dtype":
                return Val("bool", (f"tl_ag_is_differentiable_type({args[0].c[0]})",))
            if key in _HELPERS:
                return self._helper(key, args, to_source(e))
            base = key[4:] if key.startswith("at::") else key
            return self._op_call(base, None, args, to_source(e))
        raise UnsupportedFormula(f"call of '{to_source(f)}'")

    def _helper(self, key: str, args: list[Val], src: str) -> Val:
        for kinds, cname in _HELPERS[key]:
            if len(kinds) != len(args):
                continue
            conv = [_convert(a, k) for a, k in zip(args, kinds)]
            if any(c is None for c in conv):
                continue
            flat = [x for c in conv for x in c]  # type: ignore[union-attr]
            return self.call_tensor(cname, flat, [a for a in args if a.temp], src)
        kinds_s = ", ".join(a.kind for a in args)
        raise UnsupportedFormula(f"no overload of helper '{key}' takes ({kinds_s}) in '{src}'")

    def _op_call(self, name: str, self_val: Val | None, args: list[Val], src: str) -> Val:
        base = name[: -len("_symint")] if name.endswith("_symint") else name
        cands = [f for f in self.m.functions if str(f.func.name.name) == base and not f.func.is_out_fn()]
        best = None
        for f in cands:
            bound = self._bind(f, self_val, args)
            if bound is not None and (best is None or bound[0] < best[0]):
                best = (bound[0], f, bound[1])
        if best is None:
            kinds_s = ", ".join(a.kind for a in ([self_val] if self_val else []) + args)
            raise UnsupportedFormula(f"no operator '{base}' takes ({kinds_s}) in '{src}'")
        _, f, flat = best
        if api_c.c_return(f).kind != "tensor":
            raise UnsupportedFormula(f"'{f.func.name}' does not return one tensor")
        consumed = [a for a in ([self_val] if self_val else []) + args if a.temp]
        return self.call_tensor(api_c.c_entry_name(f), flat, consumed, src)

    def _bind(self, f: NativeFunction, self_val: Val | None, args: list[Val]) -> tuple[int, list[str]] | None:
        """(cost, C arguments) passing ``args`` to ``f``, or None."""
        params = [a for a in f.func.arguments.flat_all if a not in f.func.arguments.out]
        given = list(args)
        if self_val is not None:
            if not params or params[0].name != "self":
                return None
            given = [self_val] + given
        if len(given) > len(params):
            return None
        flat: list[str] = []
        cost = 0
        for i, p in enumerate(params):
            ca = api_c.c_arg(p, str(f.func.name))
            if i < len(given):
                c = _convert(given[i], ca.kind)
                if c is None:
                    return None
                if given[i].kind != {"tensor": "tensor", "opt_tensor": "tensor", "int": "int", "opt_int": "optint",
                                     "int_list": "intlist", "opt_int_list": "optintlist", "scalar": "scalar",
                                     "bool": "bool", "dtype": "dtype", "double": "double"}.get(ca.kind, ""):  # fmt: skip
                    cost += 1
                flat.extend(c)
            else:
                if p.default is None:
                    return None
                try:
                    flat.extend(_default_c(p, ca.kind))
                except UnsupportedFormula:
                    return None
                cost += 0
        return cost, flat


# ------------------------------------------------------------- per node

@dataclass
class _Formula:
    edge: int
    var: str
    text: str
    line: int
    unpack: list[str]  # saved tensors to unpack first
    lines: list[str]
    result: str  # C expression of the gradient
    result_is_temp: bool


@dataclass
class _Node:
    name: str
    entry_line: int
    schema: str
    fields: list[Field]
    formulas: list[_Formula]
    temps: list[str]
    num_next: int
    edge_args: list[str]
    tensor_fields: list[Field]
    list_fields: list[str]  # tl_ag_int_list members to free


def _split_saved(sv: SavedVariable, names: list[str]) -> tuple[str, str]:
    """(variable, suffix) of a saved variable: ``self_sym_sizes`` -> (self, _sym_sizes)."""
    for var in sorted(names, key=len, reverse=True):
        if sv.name == var:
            return var, ""
        if sv.name.startswith(var + "_"):
            return var, sv.name[len(var):]
    raise UnsupportedFormula(f"saved variable '{sv.name}' of no known input or output")


def _node(m: Model, info: DifferentiabilityInfo, entry_line: int, schema: str) -> _Node:
    f = info.func
    arg_by_name = {a.name: a for a in f.func.arguments.flat_all}
    inputs = [a.name for a in f.func.arguments.flat_all if a not in f.func.arguments.out]
    edges = list(info.args_with_derivatives)
    outputs = ["result"]
    if len(f.func.returns) != 1:
        raise UnsupportedFormula(f"{f.func.name}: several outputs")
    fields: dict[str, Field] = {}
    for d in info.derivatives:
        if len(d.var_names) != 1:
            raise UnsupportedFormula(f"{f.func.name}: a formula for several inputs ({', '.join(d.var_names)})")
        e = edges.index(d.var_names[0])
        for sv, is_out in [(s, False) for s in d.saved_inputs] + [(s, True) for s in d.saved_outputs]:
            var, suffix = _split_saved(sv, outputs if is_out else inputs)
            if sv.name not in fields:
                ca = None if is_out else api_c.c_arg(arg_by_name[var], str(f.func.name))
                fields[sv.name] = _field(sv, var, suffix, ca, is_out)
            fields[sv.name].edges.add(e)
    env: dict[str, Val] = {"grad": Val("tensor", ("grad",)), "grads[0]": Val("tensor", ("grad",))}
    for fl in fields.values():
        env[fl.name] = fl.val
    formulas: list[_Formula] = []
    comp = FormulaCompiler(m, env)
    for d in info.derivatives:
        comp.lines = []
        comp.used = set()
        try:
            v = comp.compile(d.rewritten)
        except UnsupportedFormula as ex:
            ex.pos = d.pos
            raise
        if v.kind != "tensor":
            raise UnsupportedFormula(f"{f.func.name}: formula for '{d.var_names[0]}' is not a tensor: {d.text}")
        unpack = [n for n in comp.used if n in fields and fields[n].kind == "tensor"]
        formulas.append(_Formula(edges.index(d.var_names[0]), d.var_names[0], d.text, d.pos.line, sorted(unpack),
                                 comp.lines, v.c[0], v.temp is not None))  # fmt: skip
    formulas.sort(key=lambda x: x.edge)
    flist = list(fields.values())
    lists = []
    for fl in flist:
        for decl in fl.decls:
            if decl.startswith("tl_ag_int_list "):
                lists.append(decl.split()[1].rstrip(";"))
    return _Node(
        name=info.op or "",
        entry_line=entry_line,
        schema=schema,
        fields=flist,
        formulas=formulas,
        temps=comp.temps,
        num_next=len(edges),
        edge_args=edges,
        tensor_fields=[x for x in flist if x.kind == "tensor"],
        list_fields=lists,
    )


# ----------------------------------------------------------- per kernel

def _kernel(m: Model, f: NativeFunction, nodes: dict[int, _Node]) -> dict | None:
    """Template slots of the autograd kernel of ``f``, or None for no kernel."""
    args = api_c.c_args(f)
    tensors = [a for a in args if a.kind in ("tensor", "opt_tensor")]
    if not any(a.is_tensor for a in args):
        return None  # factories: nothing to differentiate, Autograd never selected
    kernels = m.kernels(f)
    if "CompositeImplicitAutograd" in kernels:
        return None  # works through its decomposition
    r = api_c.c_return(f)
    common = {
        "name": f"tl_autograd_{api_c.unambiguous_name(f)}",
        "schema": str(f.func),
        "line": f.pos.line,
        "kparams": api_c.c_param_decls(api_c.c_params(f, with_ks=True)),
        "ret_type": r.ctype,
        "fail": r.fail,
        "redispatch": api_c.c_redispatch_name(f),
        "call_args": ", ".join(p.name for p in api_c.c_params(f)),
        "handle": api_c.op_handle_name(f),
        "boxed": api_c.boxed_adapter_name(f),
        "tensors": [a.name for a in tensors],
        "opname": f.func.name.name.base,
        "qualified": str(f.func.name),
    }
    if any(a.kind in ("tensor_list", "opt_tensor_list") for a in args):
        return None  # not supported yet: falls through
    if f.func.is_out_fn():
        return {**common, "kind": "out", "comment": "out= variants are not differentiable"}
    info_entry = m.autograd_of(f)
    info = info_entry.default if info_entry is not None else None
    if info is None or info.op is None:
        if f.func.name.name.base in DONT_REQUIRE_DERIVATIVE or r.kind != "tensor":
            return None
        return {**common, "kind": "not_implemented", "base": str(f.func.name.name),
                "comment": "no derivatives.yaml entry: an error when an input requires grad"}
    node = nodes.get(id(info))
    if node is None:
        return None  # its formula could not be translated (reported)
    inplace = f.func.name.name.inplace
    if r.kind != "tensor":
        raise UnsupportedFormula(f"{f.func.name}: autograd kernels for '{r.kind}' returns")
    edge_exprs = []
    pnames = {a.arg.name: a.name for a in args}
    for e in node.edge_args:
        edge_exprs.append(pnames[e])
    saves_before = []
    saves_after = []
    clone_self = False
    for fl in node.fields:
        cond = " || ".join(f"tl_node_next_edge(&n_->base, {i}).node" for i in sorted(fl.edges))
        if fl.kind == "tensor" and fl.is_output:
            # the result: for an in-place op, self after the op
            saves_after.append({"cond": cond, "lines": [f"if (tl_saved_variable_save(&n_->{fl.name}_, r_, 1) < 0) goto fail;"]})
        elif fl.kind == "tensor":
            src = pnames[fl.name]
            if inplace and fl.name == "self":
                clone_self = True
                saves_before.append({"cond": cond, "lines": [
                    "/* self is overwritten: save a copy taken before the op (PyTorch's original_self) */",
                    f"{{ tl_tensor *c_ = tl_ops_clone({src}, -1);",
                    "  if (!c_) goto fail;",
                    f"  int rc_ = tl_saved_variable_save(&n_->{fl.name}_, c_, 0);",
                    "  tl_tensor_release(c_);",
                    "  if (rc_ < 0) goto fail; }",
                ]})  # fmt: skip
            else:
                saves_before.append({"cond": cond, "lines": [f"if (tl_saved_variable_save(&n_->{fl.name}_, {src}, 0) < 0) goto fail;"]})
        else:
            lines = [ln.replace("(self)", f"({pnames.get('self', 'self')})") for ln in fl.capture]
            if fl.is_output:
                lines = [ln.replace("(result)", "(r_)") for ln in fl.capture]
                saves_after.append({"cond": cond, "lines": lines})
            else:
                saves_before.append({"cond": cond, "lines": lines})
    condition = None
    if info.output_differentiability_conditions:
        env = {}
        for a in args:
            if a.kind == "dtype":
                env[a.arg.name] = Val("dtype", (a.name,))
            elif a.kind == "bool":
                env[a.arg.name] = Val("bool", (a.name,))
        comp = FormulaCompiler(m, env)
        conds = []
        for text in info.output_differentiability_conditions:
            from ..formula import parse_formula

            v = comp.compile(parse_formula(text))
            if v.kind != "bool" or comp.lines:
                raise UnsupportedFormula(f"output_differentiability condition '{text}'")
            conds.append(v.c[0])
        condition = " && ".join(conds)
    return {
        **common,
        "condition": condition,
        "comment": f"records {node.name}" + (" (in place: self's history is rebased onto it)" if inplace else ""),
        "kind": "inplace" if inplace else "functional",
        "node": node.name,
        "num_next": node.num_next,
        "edges": edge_exprs,
        "saves_before": _merge(saves_before),
        "saves_after": _merge(saves_after),
        "clone_self": clone_self,
    }


def _merge(saves: list[dict]) -> list[dict]:
    """Join consecutive saves under the same condition into one block."""
    out: list[dict] = []
    for s in saves:
        if out and out[-1]["cond"] == s["cond"]:
            out[-1]["lines"] = out[-1]["lines"] + s["lines"]
        else:
            out.append(dict(s))
    return out


def _base(f: NativeFunction) -> str:
    n = f.func.name.name
    return f"__{n.base}__" if n.dunder_method else n.base


def emit_c_autograd(ctx: EmitContext) -> dict[str, str]:
    m = ctx.model
    sink = DiagnosticSink()
    out: dict[str, str] = {}
    nodes_by_base: dict[str, list[_Node]] = {}
    nodes: dict[int, _Node] = {}
    entries_by_base: dict[str, list[str]] = {}
    for entry in m.derivatives:
        for info in entry.infos.values():
            if info.dispatch_key != "Default" or info.op is None:
                continue
            try:
                node = _node(m, info, entry.pos.line, entry.text)
            except (UnsupportedFormula, api_c.UnsupportedCType) as e:
                sink.error(getattr(e, "pos", None) or entry.pos, f"cannot translate the derivative of '{entry.schema.name}' to C: {e}")
                continue
            nodes[id(info)] = node
            base = _base(entry.function)
            nodes_by_base.setdefault(base, []).append(node)
            entries_by_base.setdefault(base, []).append(entry.text)
    kernels_by_base: dict[str, list[dict]] = {}
    for f in m.functions:
        try:
            k = _kernel(m, f, nodes)
        except (UnsupportedFormula, api_c.UnsupportedCType) as e:
            sink.error(f.pos, f"cannot generate the autograd kernel of '{f.func.name}': {e}")
            continue
        if k is not None:
            kernels_by_base.setdefault(_base(f), []).append(k)
    sink.check()
    bases = [b for b in dict.fromkeys(_base(f) for f in m.functions) if b in kernels_by_base or b in nodes_by_base]
    blocks = []
    for base in bases:
        path = f"csrc/autograd_{base}.c"
        kernels = kernels_by_base.get(base, [])
        for k in kernels:
            k["debug"] = f"{k['name']} registered at generated/{path}"
        register = api_c.register_fn_name(base, "tl_autograd_register_")
        out[path] = ctx.render(
            "c_autograd.c.j2", C_COMMENT, name=base, nodes=nodes_by_base.get(base, []), kernels=kernels,
            register=register, entries=entries_by_base.get(base, []),
            ops=[k["schema"] for k in kernels],
        )  # fmt: skip
        blocks.append({"name": base, "register": register})
    out["csrc/autograd_register_all.c"] = ctx.render("c_autograd_register_all.c.j2", C_COMMENT, blocks=blocks)
    out["include/tl_autograd_ops.h"] = ctx.render("c_autograd_ops.h.j2", C_COMMENT, blocks=blocks, cdef=False)
    out["cdef/autograd.h"] = ctx.render("c_autograd_ops.h.j2", C_COMMENT, blocks=blocks, cdef=True)
    return out
