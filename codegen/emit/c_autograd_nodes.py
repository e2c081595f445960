"""Backward nodes of derivatives.yaml entries: :func:`build_node` turns one
entry's formulas into a :class:`Node` (the saved-variable struct members and
how the forward captures them, and per formula the compiled C of ``apply``
and the stores handing each gradient to its edge), which
templates/c_autograd.c.j2 writes out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import api, api_c
from ..derivatives import DifferentiabilityInfo, SavedVariable
from ..model import Model
from .c_autograd_compiler import FormulaCompiler
from .c_autograd_values import UnsupportedFormula, Val

# grad_fn names of the functions PyTorch differentiates by hand
# (VariableTypeManual.cpp) instead of a derivatives.yaml entry: the node keeps
# its generated C name, name() says PyTorch's (Python class CopyBackwards)
MANUAL_NODE_NAMES = {"copy_": "torch::autograd::CopyBackwards"}

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
    if c_arg is not None and c_arg.kind == "opt_tensor" and suffix == "_sym_sizes_opt":
        # `bias->sym_sizes()` of a Tensor? argument (convolution): the sizes, or None when undefined
        f = _int_list_field(n, "optintlist", f"{var} ? tl_tensor_sizes({var}) : NULL", f"{var} ? tl_tensor_ndim({var}) : 0")
        f.val = Val("optintlist", (f"(n_->{n}.has ? n_->{n}.data : NULL)", f"n_->{n}.len"))
        return f
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
class Node:
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


def build_node(m: Model, info: DifferentiabilityInfo, entry_line: int, schema: str) -> Node:
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
                "for (int64_t j_ = 0; j_ < nl_; j_++) {",
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
    return Node(
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

