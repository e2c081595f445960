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

This module emits the autograd kernels and the files; the parts it uses:

* :mod:`.c_autograd_nodes`: the backward node of a derivatives.yaml entry;
* :mod:`.c_autograd_compiler`: the formula -> C expression compiler;
* :mod:`.c_autograd_values`: compiled values and their conversions;
* :mod:`.c_autograd_helpers`: the hand-written helpers formulas may call.
"""

from __future__ import annotations

from .. import api, api_c
from ..diagnostics import DiagnosticSink
from ..model import Model
from ..native import NativeFunction
from . import EmitContext
from .c_autograd_compiler import FormulaCompiler
from .c_autograd_nodes import Node, build_node
from .c_autograd_values import UnsupportedFormula, Val

C_COMMENT = ("/*", " * ", "")

# Functions whose outputs never require grad although they take tensors
# (PyTorch's DONT_REQUIRE_DERIVATIVE): no autograd kernel, the Autograd keys
# fall through.
DONT_REQUIRE_DERIVATIVE = frozenset(
    {"empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like", "randint_like", "isnan",
     "new_empty", "new_full", "new_zeros", "new_ones", "allclose",
     "eq", "ne", "lt", "le", "gt", "ge", "argmax", "argmin", "sign", "result_type",
     "logical_and", "logical_or", "logical_xor", "logical_not"}
)  # fmt: skip


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


# functions of the autograd runtime (runtime/include/tl_autograd.h) that an
# operator's kernel name would shadow (aten::detach, aten::detach_)
RUNTIME_AUTOGRAD_NAMES = frozenset({"tl_autograd_detach", "tl_autograd_detach_"})


def autograd_kernel_name(f: NativeFunction) -> str:
    """``tl_autograd_<unambiguous name>``; ``..._kernel`` where the runtime has that name."""
    name = f"tl_autograd_{api_c.unambiguous_name(f)}"
    return name + "_kernel" if name in RUNTIME_AUTOGRAD_NAMES else name


def _common(m: Model, f: NativeFunction) -> dict:
    """The template slots every autograd kernel of ``f`` has."""
    args = api_c.c_args(f)
    tensors = [a for a in args if a.is_tensor]
    r = api_c.c_return(f)
    ins_lines, nin = _inputs_lines(tensors)
    return {
        "name": autograd_kernel_name(f),
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


def _kernel(m: Model, f: NativeFunction, nodes: dict[int, Node], untranslated: frozenset[int] = frozenset()) -> dict | None:
    """Template slots of the autograd kernel of ``f``, or None for no kernel.

    ``untranslated``: ids of derivative infos whose formulas were not
    translated (``--untranslated-derivatives not-implemented``); their
    operators get the not-implemented kernel."""
    args = api_c.c_args(f)
    tensors = [a for a in args if a.is_tensor]
    if not tensors:
        return None  # factories: nothing to differentiate, Autograd never selected
    if f.category_override == "factory":
        return None  # tensors as a factory's arguments (linspace.Tensor_Tensor): outputs never require grad
    kernels = m.kernels(f)
    if "CompositeImplicitAutograd" in kernels:
        return None  # works through its decomposition
    r = api_c.c_return(f)
    common = _common(m, f)
    if f.func.is_out_fn():
        outs = {a.name for a in f.func.arguments.out}
        if not any(a.name not in outs for a in tensors):
            # no tensor input (zeros.out, arange.out): PyTorch's autograd
            # fallback checks it and names the op by its schema name
            common["opname"] = f"{f.func.name.namespace or 'aten'}::{common['opname']}"
        return {**common, "kind": "out", "comment": "out= variants are not differentiable"}
    info_entry = m.autograd_of(f)
    info = info_entry.default if info_entry is not None else None
    if info is not None and id(info) in untranslated:
        return _not_implemented(f, common, r, "its derivatives.yaml formula has no C translation: "
                                "a NotImplemented node, the error comes in backward")
    if info is None or info.op is None:
        if f.func.name.name.base in DONT_REQUIRE_DERIVATIVE or r.kind not in ("tensor", "tensors", "tensor_list"):
            return None
        od = info_entry.output_differentiability if info_entry is not None else None
        if od and not any(x is True for x in od):
            return None  # output_differentiability: [False] (isinf): outputs never require grad, keys fall through
        return _not_implemented(f, common, r, "no derivatives.yaml entry: a NotImplemented node, the error comes in backward")
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


def _not_implemented(f: NativeFunction, common: dict, r: api_c.CReturn, comment: str) -> dict | None:
    """PyTorch's autograd-not-implemented fallback: the forward runs, the
    outputs get a NotImplemented grad_fn, backward fails
    (tl_autograd_not_implemented). None for returns without tensors only."""
    if r.kind not in ("tensor", "tensors", "tensor_list"):
        return None
    return {**common, "kind": "not_implemented", "aten": f"{f.func.name.namespace or 'aten'}::{f.func.name.name}",
            "inplace": bool(f.func.name.name.inplace) and r.kind == "tensor",
            "n_out": len(f.func.returns), "comment": comment}


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
    nodes_by_base: dict[str, list[Node]] = {}
    nodes: dict[int, Node] = {}
    entries_by_base: dict[str, list[str]] = {}
    lenient = ctx.untranslated_derivatives == "not-implemented"
    untranslated: set[int] = set()
    for entry in m.derivatives:
        for info in entry.infos.values():
            if info.dispatch_key != "Default" or info.op is None:
                continue
            try:
                node = build_node(m, info, entry.pos.line, entry.text)
            except (UnsupportedFormula, api_c.UnsupportedCType) as e:
                if lenient:
                    untranslated.add(id(info))
                    continue
                sink.error(getattr(e, "pos", None) or entry.pos, f"cannot translate the derivative of '{entry.schema.name}' to C: {e}")
                continue
            nodes[id(info)] = node
            base = _base(entry.function)
            nodes_by_base.setdefault(base, []).append(node)
            entries_by_base.setdefault(base, []).append(entry.text)
    kernels_by_base: dict[str, list[dict]] = {}
    untranslated_kernels = 0
    frozen = frozenset(untranslated)
    for f in m.functions:
        try:
            k = _kernel(m, f, nodes, frozen)
        except (UnsupportedFormula, api_c.UnsupportedCType) as e:
            if not lenient:
                sink.error(f.pos, f"cannot generate the autograd kernel of '{f.func.name}': {e}")
                continue
            untranslated_kernels += 1
            try:
                k = _not_implemented(f, _common(m, f), api_c.c_return(f), f"no C autograd kernel ({e}): a NotImplemented node")
            except api_c.UnsupportedCType:
                k = None
        if k is not None:
            kernels_by_base.setdefault(_base(f), []).append(k)
    sink.check()
    if untranslated or untranslated_kernels:
        ctx.notes.append(f"{len(untranslated)} derivatives.yaml formulas and {untranslated_kernels} autograd kernels have no C "
                         "translation: their operators get the autograd-not-implemented kernel (backward raises)")
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
    guard = f"TL_AUTOGRAD_OPS_H_{ctx.namespace.upper()}" if ctx.extension else "TL_AUTOGRAD_OPS_H"
    out["include/tl_autograd_ops.h"] = ctx.render("c_autograd_ops.h.j2", C_COMMENT, blocks=blocks, cdef=False,
                                                  guard=guard, library=ctx.extension)
    if not ctx.extension:  # an operator library has no cffi module
        out["cdef/autograd.h"] = ctx.render("c_autograd_ops.h.j2", C_COMMENT, blocks=blocks, cdef=True,
                                            guard=guard, library=False)
    return out
