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

from .. import api, api_c
from ..derivatives import DifferentiabilityInfo, SavedVariable
from ..diagnostics import DiagnosticSink
from ..formula import Binary, Call, Conditional, Expr, Index, Member, Name, Number, Paren, String, Unary, to_source
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
     "eq", "ne", "lt", "le", "gt", "ge", "argmax", "argmin", "sign", "result_type",
     "logical_and", "logical_or", "logical_xor", "logical_not"}
)  # fmt: skip


# grad_fn names of the functions PyTorch differentiates by hand
# (VariableTypeManual.cpp) instead of a derivatives.yaml entry: the node keeps
# its generated C name, name() says PyTorch's (Python class CopyBackwards)
MANUAL_NODE_NAMES = {"copy_": "torch::autograd::CopyBackwards"}


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
    "tensor_list": ("tensorlist",),
    "opt_tensor_list": ("tensorlist",),
    "scalar": ("scalar", "number", "int", "double"),
    "opt_scalar": ("optscalar", "scalar", "none"),
    "int": ("int", "number"),
    "opt_int": ("optint", "int", "number", "none"),
    "int_list": ("intlist",),
    "opt_int_list": ("optintlist", "intlist", "none"),
    "double": ("double", "number", "int"),
    "opt_double": ("optdouble", "double", "number", "none"),
    "bool": ("bool", "number"),
    "opt_bool": ("optbool", "bool", "none"),
    "bool_list": ("boolarray",),
    "dtype": ("dtype", "none"),
    "device": ("device", "none"),
    "enum": ("layout", "none"),
    "str": ("str", "optstr", "none"),
}
# helper parameter kinds (tl_autograd_formulas.h) that take other value kinds too
_HELPER_ACCEPTS = {
    "optintlist": ("intlist", "none"),
    "optint": ("int", "number", "none"),
    "optdouble": ("double", "number", "int", "none"),
    "optbool": ("bool", "none"),
    "optscalar": ("scalar", "none"),
    "optstr": ("str", "none"),
    "double": ("int", "number"),
    "int": ("number",),
    "bool": ("number",),
    "scalar": ("number", "int", "double"),
    "layout": ("number",),
}


def _lvalue_addr(c: str) -> str | None:
    """``&x`` for a node member (Scalar? arguments take a pointer), else None."""
    return f"&{c}" if c.startswith("n_->") or c.startswith("(*") else None


def _convert(v: Val, want: str) -> tuple[str, ...] | None:
    """C argument expressions passing value ``v`` to a parameter of kind ``want``
    (an api_c kind or a helper kind), or None when it does not fit."""
    if want not in _ACCEPTS:  # a helper kind: a value kind
        if v.kind == want:
            return v.c
        if v.kind not in _HELPER_ACCEPTS.get(want, ()):
            return None
        if v.kind == "none":
            return {"optintlist": ("NULL", "0"), "optint": ("0", "false"), "optdouble": ("0.0", "false"),
                    "optbool": ("false", "false"), "optscalar": ("NULL",), "optstr": ("NULL",)}[want]  # fmt: skip
        if v.kind == "number":
            base = {"optint": "int", "optdouble": "double"}.get(want, want)
            n = _number_as(v, base)
            if n is None:
                return None
            return (n.c[0], "true") if want in ("optint", "optdouble") else n.c
        if want == "optscalar":
            a = _lvalue_addr(v.c[0])
            return (a,) if a else None
        if want == "scalar":
            return (f"tl_scalar_from_{'int' if v.kind == 'int' else 'double'}({v.c[0]})",)
        if want == "double":
            return (f"(double){v.c[0]}",)
        if want in ("optint", "optdouble", "optbool"):
            return (v.c[0], "true")
        return v.c
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
                "device": ("-1",), "enum": ("-1",), "str": ("NULL",)}[want]  # fmt: skip
    if want == "scalar" and v.kind == "int":
        return (f"tl_scalar_from_int({v.c[0]})",)
    if want == "scalar" and v.kind == "double":
        return (f"tl_scalar_from_double({v.c[0]})",)
    if want == "double" and v.kind == "int":
        return (f"(double){v.c[0]}",)
    if want == "opt_scalar" and v.kind == "scalar":
        a = _lvalue_addr(v.c[0])
        return (a,) if a else None
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
    var: str = ""  # the input or output it comes from
    edges: set[str] = field(default_factory=set)  # inputs whose formulas use it


def _int_list_field(name: str, kind: str, data: str, length: str) -> Field:
    return Field(name, kind, [f"tl_ag_int_list {name};"], [f"if (tl_ag_int_list_set(&n_->{name}, {data}, {length}) < 0) goto fail;"],
                 Val(kind, (f"n_->{name}.data", f"n_->{name}.len")))  # fmt: skip


def _field(sv: SavedVariable, var: str, suffix: str, c_arg: api_c.CArg | None, is_output: bool) -> Field:
    n = sv.name
    if suffix == "":
        if sv.type in ("Tensor?[]", "Tensor[]") and c_arg is not None:
            # index's `indices`: the list held by strong references (None kept as NULL)
            p = [x.name for x in c_arg.params]
            return Field(n, "tensorlist", [f"tl_ag_saved_tensors {n};"],
                         [f"if (tl_ag_saved_tensors_set(&n_->{n}, {p[0]}, {p[1]}) < 0) goto fail;"],
                         Val("tensorlist", (f"n_->{n}.data", f"n_->{n}.n")))  # fmt: skip
        if sv.type.startswith("Tensor") or sv.type == "const Tensor&":
            if sv.type not in ("Tensor", "Tensor?") and not sv.type.startswith("Tensor("):
                raise UnsupportedFormula(f"saved variable '{n}' of type '{sv.type}'")
            # Tensor? (weight=None): saved undefined, unpacked as NULL
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
        if k in ("opt_bool", "opt_double"):
            ct, vk = ("bool", "optbool") if k == "opt_bool" else ("double", "optdouble")
            return Field(n, vk, [f"{ct} {n};", f"bool {n}_has;"], [f"n_->{n} = {p[0]};", f"n_->{n}_has = {p[1]};"],
                         Val(vk, (f"n_->{n}", f"n_->{n}_has")))  # fmt: skip
        if k == "opt_scalar":
            return Field(n, "optscalar", [f"tl_scalar {n};", f"bool {n}_has;"],
                         [f"n_->{n}_has = {p[0]} != NULL;", f"if ({p[0]}) n_->{n} = *{p[0]};"],
                         Val("optscalar", (f"(n_->{n}_has ? &n_->{n} : NULL)",)))  # fmt: skip
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
    if c_arg is not None and c_arg.kind == "tensor_list" and suffix not in ("_args_sizes", "_args_sizes_symint", "_args_scalartypes"):
        raise UnsupportedFormula(f"metadata '{n}' of a Tensor[] argument")
    if c_arg is not None and c_arg.kind not in ("tensor", "tensor_list"):
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
    if suffix in ("_args_sizes", "_args_sizes_symint"):
        return Field(n, "sizeslist", [f"tl_ag_sizes_list {n};"],
                     [f"if (tl_ag_sizes_list_set(&n_->{n}, {x}, {x}_len) < 0) goto fail;"],
                     Val("sizeslist", (f"(const int64_t *const *)n_->{n}.sizes", f"n_->{n}.ndims", f"n_->{n}.n")))  # fmt: skip
    if suffix == "_args_scalartypes":
        return Field(n, "dtypelist", [f"tl_ag_dtype_list {n};"],
                     [f"if (tl_ag_dtype_list_set(&n_->{n}, {x}, {x}_len) < 0) goto fail;"],
                     Val("dtypelist", (f"n_->{n}.data", f"n_->{n}.n")))  # fmt: skip
    if suffix == "_conjugate":
        return Field(n, "bool", [f"bool {n};"], [f"n_->{n} = false;"], Val("bool", (f"n_->{n}",)))
    raise UnsupportedFormula(f"saved metadata '{n}'")


# ----------------------------------------------------------- the compiler

class FormulaCompiler:
    """Compiles formula ASTs of one node's ``apply`` into C statements.

    ``env`` maps formula names to values.  Temporaries ``t0_``, ``t1_`` ...
    are numbered per node; :attr:`temps` lists them for the declarations and
    the cleanup (tensor lists: :attr:`list_temps`, ``l0_`` with its length
    ``l0_n``).  Every statement that can fail is followed by ``goto done``.
    """

    def __init__(self, m: Model, env: dict[str, Val]):
        self.m = m
        self.env = env
        self.temps: list[str] = []
        self.list_temps: list[str] = []
        self.lines: list[str] = []
        self.used: set[str] = set()  # env names used

    # -- temporaries
    def _new_temp(self) -> str:
        t = f"t{len(self.temps)}_"
        self.temps.append(t)
        return t

    def _release(self, vals: list[Val]) -> list[str]:
        out = []
        for v in vals:
            if not v.temp:
                continue
            if v.kind == "tensorlist":
                out.append(f"tl_ag_tensor_list_release({v.temp}, {v.temp}n); {v.temp} = NULL;")
            elif v.kind == "tuple":
                out.extend(f"tl_tensor_release({t}); {t} = NULL;" for t in v.c)
            else:
                out.append(f"tl_tensor_release({v.temp}); {v.temp} = NULL;")
        return out

    def call_tensor(self, fn: str, args: list[str], consumed: list[Val], what: str) -> Val:
        t = self._new_temp()
        self.lines.append(f"{t} = {fn}({', '.join(args)});")
        self.lines.extend(self._release(consumed))
        self.lines.append(f"if (!{t}) goto done;")
        return Val("tensor", (t,), temp=t)

    def call_tuple(self, fn: str, args: list[str], n: int, consumed: list[Val]) -> Val:
        """An operator with ``n`` tensor outputs (trailing ``tl_tensor **`` parameters)."""
        ts = tuple(self._new_temp() for _ in range(n))
        self.lines.append(f"if ({fn}({', '.join(args + [f'&{t}' for t in ts])}) < 0) goto done;")
        self.lines.extend(self._release(consumed))
        return Val("tuple", ts, temp=ts[0])

    def call_list(self, fn: str, args: list[str], consumed: list[Val]) -> Val:
        """An operator or helper returning Tensor[] (``tl_tensor ***ret, int64_t *ret_len``)."""
        t = f"l{len(self.list_temps)}_"
        self.list_temps.append(t)
        self.lines.append(f"if ({fn}({', '.join(args + [f'&{t}', f'&{t}n'])}) < 0) goto done;")
        self.lines.extend(self._release(consumed))
        return Val("tensorlist", (t, f"{t}n"), temp=t)

    # -- expressions
    def compile(self, e: Expr) -> Val:
        if isinstance(e, Paren):
            v = self.compile(e.expr)
            if v.kind == "number":
                return Val("number", (), text=f"({v.text})")
            return v
        if isinstance(e, Name):
            return self._name(e)
        if isinstance(e, Number):
            return Val("number", (), text=e.text)
        if isinstance(e, String):
            return Val("str", (e.text,))
        if isinstance(e, Unary):
            return self._unary(e)
        if isinstance(e, Binary):
            return self._binary(e)
        if isinstance(e, Conditional):
            return self._conditional(e)
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
        if key in ("M_PI", "M_LN2", "M_SQRT1_2", "M_2_SQRTPI", "M_SQRT2"):
            return Val("double", (key,))
        raise UnsupportedFormula(f"unknown name '{key}'")

    def _unary(self, e: Unary) -> Val:
        v = self.compile(e.operand)
        if e.op == "-":
            if v.kind == "tensor":
                return self._op_call("neg", None, [v], to_source(e))
            if v.kind == "number":
                return Val("number", (), text="-" + v.text)
            if v.kind in ("int", "double"):
                return Val(v.kind, (f"(-{v.c[0]})",))
            if v.kind == "scalar":
                return Val("double", (f"(-tl_ag_scalar_to_double({v.c[0]}))",))
        if e.op == "!":
            if v.kind == "dtype":  # an optional ScalarType: "is None"
                return Val("bool", (f"({v.c[0]} == TL_DTYPE_UNDEFINED)",))
            if v.kind == "bool":
                return Val("bool", (f"(!{v.c[0]})",))
            if v.kind == "number":
                return Val("bool", (f"(!{v.text})",))
        if e.op == "*":
            if v.kind == "dtype":  # the value of an optional ScalarType
                return v
        raise UnsupportedFormula(f"unary '{e.op}' on {v.kind} in '{to_source(e)}'")

    def _numeric(self, v: Val) -> tuple[str, str] | None:
        """(C kind int|double|bool, C expression) of a plain number-like value, else None."""
        if v.kind == "number":
            t = v.text.rstrip("fFlLuU")
            is_float = any(ch in t for ch in ".eE") and not t.lower().startswith("0x")
            return ("double" if is_float else "int"), t
        if v.kind in ("int", "double", "bool"):
            return v.kind, v.c[0]
        if v.kind == "scalar":
            return "double", f"tl_ag_scalar_to_double({v.c[0]})"
        return None

    _CMP = {"==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}
    _FLIP = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
    _ARITH = {"+": "add", "-": "sub", "*": "mul", "/": "div"}

    def _binary(self, e: Binary) -> Val:
        a = self.compile(e.left)
        b = self.compile(e.right)
        src = to_source(e)
        if e.op in ("||", "&&") and a.kind == "bool" and b.kind == "bool":
            return Val("bool", (f"({a.c[0]} {e.op} {b.c[0]})",))
        if a.kind == "tensor" and (b.kind == "tensor" or b.kind in ("scalar", "number", "int", "double")):
            if e.op in self._ARITH:
                return self._op_call(self._ARITH[e.op], None, [a, b], src)
            if e.op in self._CMP:  # self > 0, result == self: bool tensors
                return self._op_call(self._CMP[e.op], None, [a, b], src)
        if a.kind in ("scalar", "number", "int", "double") and b.kind == "tensor":
            if e.op in ("*", "+"):
                return self._op_call(self._ARITH[e.op], None, [b, a], src)
            if e.op == "-":  # 1 - x: rsub(x, 1)
                return self._op_call("rsub", None, [b, a], src)
            if e.op == "/":  # 2 / x: x.reciprocal() * 2
                r = self._op_call("reciprocal", None, [b], src)
                return self._op_call("mul", None, [r, a], src)
            if e.op in self._CMP:
                return self._op_call(self._CMP[self._FLIP[e.op]], None, [b, a], src)
        if a.kind == "number" and b.kind == "number" and e.op in ("+", "-", "*", "/"):
            return Val("number", (), text=f"({a.text} {e.op} {b.text})")
        na, nb = self._numeric(a), self._numeric(b)
        if na and nb:
            if e.op in self._CMP:
                return Val("bool", (f"({na[1]} {e.op} {nb[1]})",))
            if e.op in ("+", "-", "*", "/"):
                kind = "double" if "double" in (na[0], nb[0]) else "int"
                return Val(kind, (f"({na[1]} {e.op} {nb[1]})",))
        raise UnsupportedFormula(f"operator '{e.op}' on {a.kind} and {b.kind} in '{src}'")

    def _block(self, e: Expr) -> tuple[Val, list[str]]:
        saved, self.lines = self.lines, []
        try:
            v = self.compile(e)
            return v, self.lines
        finally:
            self.lines = saved

    def _conditional(self, e: Conditional) -> Val:
        """``c ? a : b``: a C conditional for numbers, an if/else block for tensors and tuples."""
        src = to_source(e)
        c = self.compile(e.cond)
        if c.kind == "number":
            c = Val("bool", (f"({c.text} != 0)",))
        if c.kind != "bool":
            raise UnsupportedFormula(f"condition of kind {c.kind} in '{src}'")
        a, la = self._block(e.then)
        b, lb = self._block(e.else_)
        na, nb = self._numeric(a), self._numeric(b)
        if na and nb and not la and not lb:
            kind = "double" if "double" in (na[0], nb[0]) else ("bool" if na[0] == nb[0] == "bool" else "int")
            return Val(kind, (f"({c.c[0]} ? {na[1]} : {nb[1]})",))
        if a.kind == b.kind == "tensor":
            r = self._new_temp()
            self.lines.append(f"if ({c.c[0]}) {{")
            self.lines += ["    " + ln for ln in la + self._move(a, r)]
            self.lines.append("} else {")
            self.lines += ["    " + ln for ln in lb + self._move(b, r)]
            self.lines.append("}")
            return Val("tensor", (r,), temp=r)
        if a.kind == b.kind == "tuple" and len(a.c) == len(b.c):
            rs = tuple(self._new_temp() for _ in a.c)
            moves_a = [ln for i, r in enumerate(rs) for ln in self._move(Val("tensor", (a.c[i],), temp=a.c[i] if a.temp else None), r)]
            moves_b = [ln for i, r in enumerate(rs) for ln in self._move(Val("tensor", (b.c[i],), temp=b.c[i] if b.temp else None), r)]
            self.lines.append(f"if ({c.c[0]}) {{")
            self.lines += ["    " + ln for ln in la + moves_a]
            self.lines.append("} else {")
            self.lines += ["    " + ln for ln in lb + moves_b]
            self.lines.append("}")
            return Val("tuple", rs, temp=rs[0])
        raise UnsupportedFormula(f"'?:' with branches of kinds {a.kind} and {b.kind} in '{src}'")

    @staticmethod
    def _move(v: Val, r: str) -> list[str]:
        """Statements making temporary ``r`` own the tensor ``v`` (NULL stays NULL)."""
        if v.temp:
            return [f"{r} = {v.temp}; {v.temp} = NULL;"]
        if v.c[0] == "NULL":
            return [f"{r} = NULL;"]
        return [f"{r} = {v.c[0]}; tl_tensor_retain({r});"]

    # tensor methods that read metadata (no operator call)
    _TENSOR_META = {
        "defined": ("bool", "({0} != NULL)"),
        "scalar_type": ("dtype", "tl_tensor_dtype({0})"),
        "dim": ("int", "tl_tensor_ndim({0})"),
        "numel": ("int", "tl_tensor_numel({0})"),
        "sym_numel": ("int", "tl_tensor_numel({0})"),
        "is_complex": ("bool", "false"),
        "requires_grad": ("bool", "(tl_autograd_requires_grad({0}) != 0)"),
    }

    def _call(self, e: Call) -> Val:
        f = e.func
        src = to_source(e)
        if isinstance(f, Member):
            obj = self.compile(f.obj)
            args = [self.compile(a) for a in e.args]
            name = f.name
            if name == "conj" and not args and obj.kind in ("scalar", "tensor", "number", "double", "int"):
                return obj  # real dtypes only: conj is the identity
            if obj.kind == "info" and name == "zeros" and not args:
                return self.call_tensor("tl_ag_zeros_info", list(obj.c), [], src)
            if obj.kind == "tensor":
                if name in self._TENSOR_META and not args:
                    kind, fmt = self._TENSOR_META[name]
                    return Val(kind, (fmt.format(obj.c[0]),))
                if name in ("sym_sizes", "sizes") and not args:
                    return Val("intlist", (f"tl_tensor_sizes({obj.c[0]})", f"tl_tensor_ndim({obj.c[0]})"))
                if name in ("sym_strides", "strides") and not args:
                    return Val("intlist", (f"tl_tensor_strides({obj.c[0]})", f"tl_tensor_ndim({obj.c[0]})"))
                if name in ("sym_size", "size") and len(args) == 1 and args[0].kind in ("int", "number"):
                    d = args[0].c[0] if args[0].kind == "int" else args[0].text
                    return Val("int", (f"tl_tensor_size({obj.c[0]}, {d})",))
                if name == "options" and not args:
                    return Val("options", (f"tl_tensor_dtype({obj.c[0]})", f"(int)tl_tensor_device({obj.c[0]})"))
                if name in ("new_zeros", "new_zeros_symint") and not self._has_op("new_zeros") and len(args) in (1, 2) \
                        and args[0].kind == "intlist" and (len(args) == 1 or args[1].kind == "options"):
                    # x.new_zeros(sizes[, options]): zeros of x's (or the given) dtype and device
                    opts = args[1].c if len(args) == 2 else (f"tl_tensor_dtype({obj.c[0]})", f"(int)tl_tensor_device({obj.c[0]})")
                    return self.call_tensor("tl_ag_zeros_info", list(args[0].c) + list(opts), [a for a in [obj] + args if a.temp], src)
                if name == "expand_as" and len(args) == 1 and args[0].kind == "tensor" and not self._has_op("expand_as"):
                    sizes = Val("intlist", (f"tl_tensor_sizes({args[0].c[0]})", f"tl_tensor_ndim({args[0].c[0]})"))
                    return self._op_call("expand", obj, [sizes], src)  # x.expand(other.sizes())
                return self._op_call(name, obj, args, src)
            if obj.kind in ("scalar", "number", "double", "int"):
                if name in ("isComplex", "is_complex") and not args:
                    return Val("bool", ("false",))
                n = self._numeric(obj)
                if name == "toDouble" and not args and n:
                    return Val("double", (n[1] if n[0] == "double" else f"(double){n[1]}",))
            if obj.kind in ("optbool", "optint", "optdouble", "optscalar") and not args:
                if name == "has_value":
                    return Val("bool", (obj.c[1] if obj.kind != "optscalar" else f"({obj.c[0]} != NULL)",))
                if name == "value":
                    if obj.kind == "optscalar":
                        return Val("scalar", (f"(*{obj.c[0]})",))
                    return Val({"optbool": "bool", "optint": "int", "optdouble": "double"}[obj.kind], (obj.c[0],))
            raise UnsupportedFormula(f"method '{name}' on {obj.kind} in '{src}'")
        if isinstance(f, Name):
            key = "::".join(f.parts)
            args = [self.compile(a) for a in e.args]
            if key == "isDifferentiableType" and len(args) == 1 and args[0].kind == "dtype":
                return Val("bool", (f"tl_ag_is_differentiable_type({args[0].c[0]})",))
            if key in ("GradMode::is_enabled", "at::GradMode::is_enabled") and not args:
                return Val("bool", ("(tl_grad_mode_is_enabled() != 0)",))
            if key == "not_implemented" and len(args) == 1 and args[0].kind == "str":
                # FunctionsManual's not_implemented(name): the backward raises when it runs
                self.lines.append(f"tl_set_error(TL_ERR_NOT_IMPLEMENTED, \"the derivative for '%s' is not implemented.\", {args[0].c[0]});")
                self.lines.append("(void)grad_inputs;")
                self.lines.append("goto done;")
                return Val("tensor", ("NULL",))
            if key in ("Tensor", "at::Tensor") and not args:
                return Val("tensor", ("NULL",))  # an undefined tensor
            if key == "std::tuple" and not args and f.template_args and all(t.strip() == "Tensor" for t in f.template_args):
                return Val("tuple", ("NULL",) * len(f.template_args))
            if key in _HELPERS:
                return self._helper(key, args, src)
            base = key[4:] if key.startswith("at::") else key
            base = base[: -len("_symint")] if base.endswith("_symint") else base
            if base in _HELPERS:
                return self._helper(base, args, src)
            helper = _header_helpers().get(base)
            if helper is not None and not self._has_op(base):
                return self._helper_call(base, helper, args, src)
            return self._op_call(base, None, args, src)
        raise UnsupportedFormula(f"call of '{to_source(f)}'")

    def _has_op(self, base: str) -> bool:
        return any(str(f.func.name.name) == base for f in self.m.functions)

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

    def _helper_call(self, key: str, h: "_HeaderHelper", args: list[Val], src: str) -> Val:
        """A helper found in tl_autograd_formulas.h by its name ``tl_ag_<key>``."""
        if len(h.kinds) != len(args):
            raise UnsupportedFormula(f"helper '{key}' ({h.cname}) takes {len(h.kinds)} arguments, not {len(args)}, in '{src}'")
        flat: list[str] = []
        for a, k in zip(args, h.kinds):
            c = _convert(a, k)
            if c is None:
                raise UnsupportedFormula(f"helper '{key}' ({h.cname}) takes {k}, not {a.kind}, in '{src}'")
            flat.extend(c)
        consumed = [a for a in args if a.temp]
        if h.ret == "tensor":
            return self.call_tensor(h.cname, flat, consumed, src)
        if h.ret == "tensorlist":
            return self.call_list(h.cname, flat, consumed)
        return self.call_tuple(h.cname, flat, int(h.ret[len("tuple"):]), consumed)

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
        r = api_c.c_return(f)
        consumed = [a for a in ([self_val] if self_val else []) + args if a.temp]
        if r.kind == "tensor":
            return self.call_tensor(api_c.c_entry_name(f), flat, consumed, src)
        if r.kind == "tensors":
            return self.call_tuple(api_c.c_entry_name(f), flat, len(r.returns), consumed)
        if r.kind == "tensor_list":
            return self.call_list(api_c.c_entry_name(f), flat, consumed)
        raise UnsupportedFormula(f"'{f.func.name}' does not return tensors")

    def _bind(self, f: NativeFunction, self_val: Val | None, args: list[Val]) -> tuple[tuple[int, int], list[str]] | None:
        """(cost, C arguments) passing ``args`` to ``f``, or None; the cost counts
        converted arguments, then defaults filled in (``x.to(dtype)`` is to.dtype,
        not to.dtype_layout)."""
        params = [a for a in f.func.arguments.flat_all if a not in f.func.arguments.out]
        given = list(args)
        if self_val is not None:
            if not params or params[0].name != "self":
                return None
            given = [self_val] + given
        if len(given) > len(params):
            return None
        flat: list[str] = []
        cost = defaults = 0
        for i, p in enumerate(params):
            try:
                ca = api_c.c_arg(p, str(f.func.name))
            except api_c.UnsupportedCType:
                return None
            if i < len(given):
                c = _convert(given[i], ca.kind)
                if c is None:
                    return None
                if given[i].kind != _EXACT.get(ca.kind, ""):
                    cost += 1
                flat.extend(c)
            else:
                if p.default is None:
                    return None
                try:
                    flat.extend(_default_c(p, ca.kind))
                except UnsupportedFormula:
                    return None
                defaults += 1
        return (cost, defaults), flat


# the value kind that matches a schema argument kind exactly (overload ranking)
_EXACT = {"tensor": "tensor", "opt_tensor": "tensor", "int": "int", "opt_int": "optint", "int_list": "intlist",
          "opt_int_list": "optintlist", "scalar": "scalar", "bool": "bool", "dtype": "dtype", "double": "double",
          "tensor_list": "tensorlist", "opt_scalar": "optscalar", "opt_bool": "optbool", "opt_double": "optdouble",
          "str": "str", "bool_list": "boolarray"}  # fmt: skip


# ------------------------------------------- helpers from the C header

@dataclass(frozen=True)
class _HeaderHelper:
    cname: str
    kinds: tuple[str, ...]
    ret: str  # tensor | tensorlist | tupleN


# C parameter types of tl_autograd_formulas.h (spaces around '*' removed) -> value kinds, pairs first
_C_PAIRS = [
    (("const int64_t*", "int64_t"), "optintlist"),
    (("int64_t", "bool"), "optint"),
    (("double", "bool"), "optdouble"),
    (("bool", "bool"), "optbool"),
    (("tl_tensor*const*", "int64_t"), "tensorlist"),
    (("const bool*", "int64_t"), "boolarray"),
    (("const tl_dtype*", "int64_t"), "dtypelist"),
    (("tl_dtype", "int"), "options"),  # x.options(): dtype, device
]
_C_SINGLE = {"tl_tensor*": "tensor", "tl_scalar": "scalar", "const tl_scalar*": "optscalar", "tl_dtype": "dtype",
             "int64_t": "int", "double": "double", "bool": "bool", "const char*": "optstr"}  # fmt: skip


def _parse_helper(ret: str, name: str, params: str) -> _HeaderHelper | None:
    import re

    types, names = [], []
    for p in params.split(","):
        m = re.match(r"^(.*[\s*])(\w+)$", p.strip())
        if not m:
            return None
        types.append(re.sub(r"\s*\*\s*", "*", " ".join(m.group(1).split())).strip())
        names.append(m.group(2))
    out_ret = "tensor"
    if ret == "int":
        if types[-2:] == ["tl_tensor***", "int64_t*"]:
            out_ret, types = "tensorlist", types[:-2]
        else:
            n = 0
            while types and types[-1] == "tl_tensor**":
                n, types = n + 1, types[:-1]
            if n < 2:
                return None
            out_ret = f"tuple{n}"
    kinds: list[str] = []
    i = 0
    while i < len(types):
        if tuple(types[i : i + 3]) == ("const int64_t*const*", "const int64_t*", "int64_t"):
            kinds.append("sizeslist")
            i += 3
            continue
        pair = tuple(types[i : i + 2])
        k = next((k for tys, k in _C_PAIRS if tys == pair), None)
        if k in ("optint", "optdouble", "optbool") and not names[i + 1].endswith("_has"):
            k = None  # `int64_t dim, bool keepdim`: two arguments; `int64_t x, bool x_has`: an int?
        if k is not None:
            kinds.append(k)
            i += 2
            continue
        if types[i] not in _C_SINGLE:
            return None
        kinds.append(_C_SINGLE[types[i]])
        i += 1
    return _HeaderHelper(f"tl_ag_{name}", tuple(kinds), out_ret)


_HEADER_CACHE: dict[str, dict[str, _HeaderHelper]] = {}


def _header_helpers() -> dict[str, _HeaderHelper]:
    """``tl_ag_<name>`` functions of runtime/include/tl_autograd_formulas.h by formula name:
    a helper written there is found without registering it here (parameters by C type:
    ``const int64_t *, int64_t`` an int list or None, ``int64_t, bool`` an int?, ...)."""
    import re
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "runtime/include/tl_autograd_formulas.h"
    key = str(path)
    if key not in _HEADER_CACHE:
        found: dict[str, _HeaderHelper] = {}
        text = re.sub(r"/\*.*?\*/", "", path.read_text() if path.exists() else "", flags=re.S)
        for m in re.finditer(r"(tl_tensor\s*\*|\bint)\s*tl_ag_(\w+)\s*\(([^;{]*?)\)\s*;", text):
            ret = "tensor" if m.group(1).startswith("tl_tensor") else "int"
            h = _parse_helper(ret, m.group(2), m.group(3))
            if h is not None:
                found[m.group(2)] = h
        _HEADER_CACHE[key] = found
    return _HEADER_CACHE[key]


# ------------------------------------------------------------- per node

@dataclass
class _Formula:
    vars: tuple[str, ...]
    text: str
    line: int
    cond: str  # C: does the engine want any of its gradients?
    unpack: list[str]  # saved tensors to unpack first
    lines: list[str]  # computing the gradient(s)
    stores: list[str]  # handing each gradient to its edge
    mask: list[str] | None = None  # grad_input_mask initialisers, when the formula uses it

    @property
    def var(self) -> str:
        return ", ".join(self.vars)


@dataclass
class _Node:
    name: str  # the C struct (MulBackward0)
    display_name: str  # tl_node_name(): PyTorch's grad_fn name() (MANUAL_NODE_NAMES)
    entry_line: int
    schema: str
    fields: list[Field]
    formulas: list[_Formula]
    temps: list[str]
    list_temps: list[str]
    num_next: int  # static edges (a Tensor[] argument counts as 1)
    edge_args: list[str]
    list_arg: str | None  # the Tensor[] argument with one edge per element
    num_outputs: int  # static outputs; 0 for a Tensor[] return (its length)
    tensor_fields: list[Field]
    list_fields: list[str]  # tl_ag_int_list members to free
    other_frees: list[str]  # other statements for destroy


def _split_saved(sv: SavedVariable, names: list[str]) -> tuple[str, str]:
    """(variable, suffix) of a saved variable: ``self_sym_sizes`` -> (self, _sym_sizes)."""
    for var in sorted(names, key=len, reverse=True):
        if sv.name == var:
            return var, ""
        if sv.name.startswith(var + "_"):
            return var, sv.name[len(var):]
    raise UnsupportedFormula(f"saved variable '{sv.name}' of no known input or output")


def _edge_index(edges: list[str], list_arg: str | None, var: str) -> str:
    """C expression of the first edge of input ``var`` inside apply (``nl_``: the Tensor[]'s length)."""
    k = edges.index(var)
    if list_arg is None or k <= edges.index(list_arg):
        return str(k)
    return f"({k - 1} + nl_)"


def _store(edge: str, v: Val, check: bool) -> list[str]:
    """Hand tensor ``v`` (a temporary or borrowed; NULL = no gradient) to the edge."""
    out = []
    if v.temp:
        out += [f"if (tl_ag_set_grad_input(node_, {edge}, {v.temp}, &grad_inputs[{edge}]) < 0) {{ {v.temp} = NULL; goto done; }}",
                f"{v.temp} = NULL;"]  # fmt: skip
    elif v.c[0] == "NULL":
        return []
    else:
        out += [f"tl_tensor_retain({v.c[0]});",
                f"if (tl_ag_set_grad_input(node_, {edge}, {v.c[0]}, &grad_inputs[{edge}]) < 0) goto done;"]  # fmt: skip
    if check:
        return [f"if (tl_node_should_compute_output(node_, {edge})) {{"] + ["    " + ln for ln in out] + ["}"]
    return out


def _node(m: Model, info: DifferentiabilityInfo, entry_line: int, schema: str) -> _Node:
    f = info.func
    fname = str(f.func.name)
    arg_by_name = {a.name: a for a in f.func.arguments.flat_all}
    inputs = [a.name for a in f.func.arguments.flat_all if a not in f.func.arguments.out]
    edges = list(info.args_with_derivatives)
    list_edges = [e for e in edges if api_c.c_arg(arg_by_name[e], fname).kind in ("tensor_list", "opt_tensor_list")]
    if len(list_edges) > 1:
        raise UnsupportedFormula(f"{fname}: more than one differentiable Tensor[] argument")
    list_arg = list_edges[0] if list_edges else None
    ret = api_c.c_return(f)
    if ret.kind not in ("tensor", "tensors", "tensor_list"):
        raise UnsupportedFormula(f"{fname}: returns '{ret.kind}'")
    outputs = list(api.saved_output_names(f.func))
    fields: dict[str, Field] = {}
    for d in info.derivatives:
        if len(d.var_names) > 1 and list_arg in d.var_names:
            raise UnsupportedFormula(f"{fname}: a formula for several inputs including the Tensor[] '{list_arg}'")
        for sv, is_out in [(s, False) for s in d.saved_inputs] + [(s, True) for s in d.saved_outputs]:
            var, suffix = _split_saved(sv, outputs if is_out else inputs)
            if sv.name not in fields:
                ca = None if is_out else api_c.c_arg(arg_by_name[var], fname)
                if is_out and ret.kind == "tensor_list":
                    raise UnsupportedFormula(f"{fname}: saved outputs of a Tensor[] return")
                fields[sv.name] = _field(sv, var, suffix, ca, is_out)
                fields[sv.name].var = var
                fields[sv.name].is_output = is_out  # metadata of an output (S.sym_size(-1)): read after the call
            fields[sv.name].edges.update(d.var_names)
    env: dict[str, Val] = {"grad": Val("tensor", ("grad",)), "grads[0]": Val("tensor", ("grad",))}
    if ret.kind == "tensor_list":
        env["grads"] = Val("tensorlist", ("grads", "tl_node_num_inputs(node_)"))
    else:
        for i in range(1, len(f.func.returns)):
            env[f"grads[{i}]"] = Val("tensor", (f"grads[{i}]",))
        env["grads"] = Val("tensorlist", ("grads", str(len(f.func.returns))))
        for i, r in enumerate(f.func.returns):
            if r.name:
                env[f"grad_{r.name}"] = Val("tensor", ("grad",) if i == 0 else (f"grads[{i}]",))
    for fl in fields.values():
        env[fl.name] = fl.val
    formulas: list[_Formula] = []
    comp = FormulaCompiler(m, env)
    for d in info.derivatives:
        comp.lines = []
        comp.used = set()
        nv = len(d.var_names)
        idx = [_edge_index(edges, list_arg, v) for v in d.var_names]
        comp.env["grad_input_mask"] = Val("boolarray", ("grad_input_mask", str(nv)))
        try:
            v = comp.compile(d.rewritten)
        except UnsupportedFormula as ex:
            ex.pos = d.pos
            raise
        stores: list[str] = []
        if d.var_names[0] == list_arg:
            if v.kind != "tensorlist" or not v.temp:
                raise UnsupportedFormula(f"{fname}: formula for the Tensor[] '{list_arg}' is not a Tensor[]: {d.text}")
            t = v.temp
            cond = f"tl_ag_any_should_compute(node_, {idx[0]}, nl_)"
            j = "j_" if idx[0] == "0" else f"{idx[0]} + j_"
            stores = [
                f"if ({t}n != nl_) {{",
                f'    tl_set_error(TL_ERR_RUNTIME, "{info.op}: the formula for {list_arg} gave %lld gradients for %lld tensors", (long long){t}n, (long long)nl_);',
                "    goto done;",
                "}",
                f"for (int64_t j_ = 0; j_ < nl_; j_++) {{",
                f"    if (!tl_node_should_compute_output(node_, (int32_t)({j}))) continue;",
                f"    if (tl_ag_set_grad_input(node_, (int32_t)({j}), {t}[j_], &grad_inputs[{j}]) < 0) {{ {t}[j_] = NULL; goto done; }}",
                f"    {t}[j_] = NULL;",
                "}",
            ]  # fmt: skip
        elif nv == 1:
            if v.kind != "tensor":
                raise UnsupportedFormula(f"{fname}: formula for '{d.var_names[0]}' is not a tensor: {d.text}")
            cond = f"tl_node_should_compute_output(node_, {idx[0]})"
            stores = _store(idx[0], v, False)
        else:
            if v.kind != "tuple" or len(v.c) != nv:
                raise UnsupportedFormula(f"{fname}: formula for '{', '.join(d.var_names)}' does not give {nv} tensors: {d.text}")
            cond = " || ".join(f"tl_node_should_compute_output(node_, {i})" for i in idx)
            for i, e in enumerate(idx):
                stores += _store(e, Val("tensor", (v.c[i],), temp=v.c[i] if v.temp else None), True)
        mask = [f"tl_node_should_compute_output(node_, {i}) != 0" for i in idx] if "grad_input_mask" in comp.used else None
        unpack = [n for n in comp.used if n in fields and fields[n].kind == "tensor"]
        text = d.text.replace("/*", "/ *").replace("*/", "* /")  # shown in a C comment
        formulas.append(_Formula(tuple(d.var_names), text, d.pos.line, cond, sorted(unpack), comp.lines, stores, mask))
    formulas.sort(key=lambda x: edges.index(x.vars[0]))
    flist = list(fields.values())
    lists, frees = [], []
    for fl in flist:
        for decl in fl.decls:
            if decl.startswith("tl_ag_int_list "):
                lists.append(decl.split()[1].rstrip(";"))
            elif decl.startswith("tl_ag_sizes_list "):
                frees.append(f"tl_ag_sizes_list_free(&n_->{decl.split()[1].rstrip(';')});")
            elif decl.startswith("tl_ag_dtype_list "):
                frees.append(f"tl_ag_dtype_list_free(&n_->{decl.split()[1].rstrip(';')});")
            elif decl.startswith("tl_ag_saved_tensors "):
                frees.append(f"tl_ag_saved_tensors_free(&n_->{decl.split()[1].rstrip(';')});")
    return _Node(
        name=info.op or "",
        display_name=MANUAL_NODE_NAMES.get(str(f.func.name), info.op or ""),
        entry_line=entry_line,
        schema=schema,
        fields=flist,
        formulas=formulas,
        temps=comp.temps,
        list_temps=comp.list_temps,
        num_next=len(edges),
        edge_args=edges,
        list_arg=list_arg,
        num_outputs=0 if ret.kind == "tensor_list" else len(f.func.returns),
        tensor_fields=[x for x in flist if x.kind == "tensor"],
        list_fields=lists,
        other_frees=frees,
    )


# ----------------------------------------------------------- per kernel

def _inputs_lines(args: list[api_c.CArg]) -> tuple[list[str], str]:
    """Statements declaring ``ins_`` (the tensors, Tensor[] elements spliced in) and its length."""
    if not any(a.kind in ("tensor_list", "opt_tensor_list") for a in args):
        names = [a.name for a in args]
        return [f"tl_tensor *ins_[{len(names)}] = {{ {', '.join(names)} }};"], str(len(names))
    if len(args) == 1:
        a = args[0]
        return [f"tl_tensor *const *ins_ = {a.name};", f"const int32_t nin_ = (int32_t){a.name}_len;"], "nin_"
    size = " + ".join([str(sum(1 for a in args if a.kind in ("tensor", "opt_tensor")))]
                      + [f"{a.name}_len" for a in args if a.kind not in ("tensor", "opt_tensor")])  # fmt: skip
    lines = [f"tl_tensor *ins_[{size} + 1];", "int32_t nin_ = 0;"]
    for a in args:
        if a.kind in ("tensor", "opt_tensor"):
            lines.append(f"ins_[nin_++] = {a.name};")
        else:
            lines.append(f"for (int64_t i_ = 0; i_ < {a.name}_len; i_++) ins_[nin_++] = {a.name}[i_];")
    return lines, "nin_"


def _kernel(m: Model, f: NativeFunction, nodes: dict[int, _Node]) -> dict | None:
    """Template slots of the autograd kernel of ``f``, or None for no kernel."""
    args = api_c.c_args(f)
    tensors = [a for a in args if a.is_tensor]
    if not tensors:
        return None  # factories: nothing to differentiate, Autograd never selected
    kernels = m.kernels(f)
    if "CompositeImplicitAutograd" in kernels:
        return None  # works through its decomposition
    r = api_c.c_return(f)
    ins_lines, nin = _inputs_lines(tensors)
    common = {
        "name": f"tl_autograd_{api_c.unambiguous_name(f)}",
        "schema": str(f.func),
        "line": f.pos.line,
        "kparams": api_c.c_param_decls(api_c.c_params(f, with_ks=True)),
        "ret_type": r.ctype,
        "fail": r.fail,
        "ret_kind": r.kind,
        "redispatch": api_c.c_redispatch_name(f),
        "call_args": ", ".join(p.name for p in api_c.c_params(f)),
        "handle": api_c.op_handle_name(f),
        "boxed": api_c.boxed_adapter_name(f),
        "ins_lines": ins_lines,
        "nin": nin,
        "opname": f.func.name.name.base,
        "qualified": str(f.func.name),
    }
    if f.func.is_out_fn():
        outs = {a.name for a in f.func.arguments.out}
        if not any(a.name not in outs for a in tensors):
            # no tensor input (zeros.out, arange.out): PyTorch's autograd
            # fallback checks it and names the op by its schema name
            common["opname"] = f"aten::{common['opname']}"
        return {**common, "kind": "out", "comment": "out= variants are not differentiable"}
    info_entry = m.autograd_of(f)
    info = info_entry.default if info_entry is not None else None
    if info is None or info.op is None:
        if f.func.name.name.base in DONT_REQUIRE_DERIVATIVE or r.kind not in ("tensor", "tensors", "tensor_list"):
            return None
        od = info_entry.output_differentiability if info_entry is not None else None
        if od and not any(x is True for x in od):
            return None  # output_differentiability: [False] (isinf): outputs never require grad, keys fall through
        # PyTorch's autograd-not-implemented fallback: the forward runs, the
        # outputs get a NotImplemented grad_fn, backward fails (tl_autograd_not_implemented)
        return {**common, "kind": "not_implemented", "aten": f"aten::{f.func.name.name}",
                "inplace": bool(f.func.name.name.inplace) and r.kind == "tensor",
                "n_out": len(f.func.returns),
                "comment": "no derivatives.yaml entry: a NotImplemented node, the error comes in backward"}
    node = nodes.get(id(info))
    if node is None:
        return None  # its formula could not be translated (reported)
    inplace = f.func.name.name.inplace
    if r.kind not in ("tensor", "tensors", "tensor_list") or (inplace and r.kind != "tensor"):
        raise UnsupportedFormula(f"{f.func.name}: autograd kernels for '{r.kind}' returns")
    pnames = {a.arg.name: a.name for a in args}
    edge_args = [a for a in args if a.arg.name in node.edge_args]
    edge_args.sort(key=lambda a: node.edge_args.index(a.arg.name))
    edge_lines, num_next = _inputs_lines(edge_args)
    # the C expression of each edge input's first edge, and its edge count
    first: dict[str, str] = {}
    count: dict[str, str] = {}
    pos = "0"
    for a in edge_args:
        first[a.arg.name] = pos
        count[a.arg.name] = "1" if a.kind in ("tensor", "opt_tensor") else f"(int32_t){a.name}_len"
        pos = str(int(pos) + 1) if pos.isdigit() and count[a.arg.name] == "1" else f"{pos} + {count[a.arg.name]}"
    # outputs: C expressions after the call
    out_names = list(api.saved_output_names(f.func))
    if r.kind == "tensor":
        out_c = {out_names[0]: "r_"}
    elif r.kind == "tensors":
        out_c = {n: f"o_[{i}]" for i, n in enumerate(out_names)}
    else:
        out_c = {}
    od = info.output_differentiability or (True,) * len(f.func.returns)
    saves_before = []
    saves_after = []
    clone_self = False
    for fl in node.fields:
        conds = []
        for v in sorted(fl.edges, key=node.edge_args.index):
            if count[v] == "1":
                conds.append(f"tl_node_next_edge(&n_->base, {first[v]}).node")
            else:
                conds.append(f"tl_ag_any_edge(&n_->base, {first[v]}, {count[v]})")
        cond = " || ".join(conds)
        if fl.kind == "tensor" and fl.is_output:
            # the result: for an in-place op, self after the op
            saves_after.append({"cond": cond, "lines": [f"if (tl_saved_variable_save(&n_->{fl.name}_, {out_c[fl.var]}, 1) < 0) goto fail;"]})
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
            if fl.is_output:
                lines = [ln.replace(f"({fl.var})", f"({out_c[fl.var]})").replace(f"({fl.var}, ", f"({out_c[fl.var]}, ")
                         for ln in fl.capture]
                saves_after.append({"cond": cond, "lines": lines})
            else:
                lines = [ln.replace(f"({fl.var})", f"({pnames.get(fl.var, fl.var)})") for ln in fl.capture]
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
    n_out = len(f.func.returns)
    diff_outputs = [i for i in range(n_out) if i >= len(od) or od[i]]
    if any("grad" in d.names for d in info.derivatives):
        # PyTorch's uses_single_grad: formulas that name `grad` differentiate the
        # first output only; the others (max.dim's indices, layer norm's mean and
        # rstd, nll_loss's total_weight) never require grad
        diff_outputs = diff_outputs[:1]
    return {
        **common,
        "condition": condition,
        "comment": f"records {node.name}" + (" (in place: self's history is rebased onto it)" if inplace else ""),
        "kind": "inplace" if inplace else "functional",
        "node": node.name,
        "num_next": num_next,
        "edge_lines": edge_lines,
        "n_out": n_out,
        "diff_outputs": diff_outputs,
        "call_args_noret": ", ".join(p.name for p in api_c.c_params(f)[: len(api_c.c_params(f)) - len(r.out_params)]),
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
