"""Fusion: cut a captured graph into steps, each a fused group or one operator.

Classes of node (docs/COMPILE.md "Fusion"):
* pointwise: an operator with a ufunc formula (generated/python/_pointwise_table.py),
  or one of the few rewritten here (`pow(x, 2)` is `x * x`, a dtype-only
  `_to_copy` is a conversion);
* reduction: sum / mean / amax / amin over the last dimension of a float32 or
  float64 tensor (keepdim or not);
* everything else is opaque and runs as its operator: matrix products,
  views, random operators, in-place operators, operators without a formula.

Greedy, in topological order, a fusible node joins the group of one of its
producers when the shapes agree (Inductor's CPU rules, simplified):
* a pointwise node whose output has the group's shape joins as an *element*
  node; a pointwise chain is one loop, broadcast inputs read through zero
  strides;
* a reduction over the last dimension of the group's shape joins as a *row*
  node (a pointwise prologue feeds it); the group becomes a row kernel;
* a pointwise node shaped like a row result ([..., 1]) joins a row group as a
  row node, computed once per row; element nodes may read row nodes, so a
  reduction and its broadcast-back consumers (RMSNorm, softmax, layer_norm)
  are one kernel, one outer loop over rows with an inner loop per level.
A join that would make a cycle between steps is refused.  A value is
written to memory only when another step or the graph's output reads it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torchlet

from .._ops import ops
from .graph import Graph, Node, Value

aten = ops.aten
MAX_GROUP_NODES = 64

_REDUCTIONS = {
    "aten::sum.dim_IntList": "sum",
    "aten::mean.dim": "mean",
    "aten::amax": "amax",
    "aten::amin": "amin",
}
_FLOATS = ("float32", "float64")


def _pointwise_table():
    from .._generated._pointwise_table import POINTWISE
    return POINTWISE


def dtype_name(dt) -> str:
    return str(dt).split(".")[-1]


@dataclass
class Formula:
    """How a pointwise node computes: the C expression's operands."""
    name: str                 # TL_UFUNC_<name> (or a builtin: "square", "convert")
    tensors: list             # operands in formula order: Value or a Python number (wrapped)
    scalars: list             # Python numbers, in formula order
    compute: object           # the dtype the formula computes in (eager's common dtype)
    headers: tuple = ()
    fixed: dict = field(default_factory=dict)   # operand index -> dtype it is read in
    fallback: tuple | None = None               # (exact formula, predicate)


def _bind(node: Node) -> dict:
    """The node's arguments by schema name, defaults filled in."""
    sch = node.op._schema
    out, pos = {}, list(node.args)
    for a in sch.arguments:
        if a.kwarg_only:
            out[a.name] = node.kwargs.get(a.name, a.default_value)
        elif pos:
            out[a.name] = pos.pop(0)
        else:
            out[a.name] = node.kwargs.get(a.name, a.default_value)
    return out


def _number_dtype(x):
    return torchlet.bool if isinstance(x, bool) else torchlet.int64 if isinstance(x, int) else torchlet.float64


def pointwise_formula(node: Node) -> Formula | None:
    """The node's formula, or None when it is not fusible pointwise work."""
    out = node.outputs[0] if len(node.outputs) == 1 else None
    if out is None or out.device.type != "cpu":
        return None
    name = node.op.name()
    if name == "aten::pow.Tensor_Scalar":
        a = _bind(node)
        if a["exponent"] == 2 and not isinstance(a["exponent"], bool) and isinstance(a["self"], Value) \
                and a["self"].dtype is out.dtype and dtype_name(out.dtype) in _FLOATS + ("float16", "bfloat16"):
            return Formula("square", [a["self"]], [], out.dtype)
        return None
    if name == "aten::_to_copy":
        a = _bind(node)
        extra = {k: v for k, v in a.items() if k not in ("self", "dtype", "non_blocking") and v is not None}
        if extra or not isinstance(a["self"], Value) or a["self"].device.type != "cpu":
            return None
        return Formula("convert", [a["self"]], [], out.dtype)
    row = _pointwise_table().get(name)
    if row is None:
        return None
    a = _bind(node)
    tensors = [a[n] for n, k in row["args"] if k == "tensor"]
    scalars = [a[n] for n, k in row["args"] if k == "scalar"]
    if any(not isinstance(t, (Value, bool, int, float)) for t in tensors):
        return None
    if any(not isinstance(s, (bool, int, float)) for s in scalars):
        return None
    if any(isinstance(t, Value) and t.device.type != "cpu" for t in tensors):
        return None
    compute = out.dtype
    if row["result"]:
        compute = getattr(node, "common_dtype", None)
        if compute is None:
            return None
    formula = row["dtypes"].get(_TL_NAMES.get(dtype_name(compute), ""))
    if formula is None:
        return None
    if name.split("::")[1].split(".")[0] in _DATA_CHECKED and dtype_name(compute) in _INTEGRAL:
        return None
    fixed = {i: getattr(torchlet, _DTYPE_ATTR[row["input_dtypes"][n]])
             for i, (n, k) in enumerate([x for x in row["args"] if x[1] == "tensor"]) if n in row["input_dtypes"]}
    return Formula(formula, tensors, scalars, compute, tuple(row["headers"]), fixed,
                   row["fallbacks"].get(formula))


# operators whose eager meta function reads the data of integer inputs first
# (a zero divisor is a ZeroDivisionError, a negative integer power an error):
# the fused loop would divide by zero, so integers run them as operators
_DATA_CHECKED = {"fmod", "remainder", "pow"}
_INTEGRAL = ("uint8", "int8", "int16", "int32", "int64", "bool")

_TL_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
             "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double"}
_DTYPE_ATTR = {v: k for k, v in _TL_NAMES.items()}


def reduction_kind(node: Node) -> str | None:
    """'sum' / 'mean' / 'amax' / 'amin' for a reduction over the last dim, else None."""
    kind = _REDUCTIONS.get(node.op.name())
    if kind is None:
        return None
    a = _bind(node)
    x, out = a["self"], node.outputs[0]
    if not isinstance(x, Value) or x.ndim == 0 or x.device.type != "cpu" or a.get("dtype") is not None:
        return None
    if dtype_name(x.dtype) not in _FLOATS or out.dtype is not x.dtype:
        return None
    dims = a["dim"]
    if dims is None or len(dims) != 1 or dims[0] not in (-1, x.ndim - 1) or x.shape[-1] == 0:
        return None
    return kind


def column_kind(node: Node) -> str | None:
    """'sum' / 'mean' over every dimension but the last (a bias's or a norm
    weight's gradient: one value per column), else None."""
    kind = _REDUCTIONS.get(node.op.name())
    if kind not in ("sum", "mean"):
        return None
    a = _bind(node)
    x, out = a["self"], node.outputs[0]
    if not isinstance(x, Value) or x.ndim < 2 or x.device.type != "cpu" or a.get("dtype") is not None:
        return None
    if dtype_name(x.dtype) not in _FLOATS or out.dtype is not x.dtype or x.shape[-1] == 0:
        return None
    dims = a["dim"]
    if dims is None or sorted(d % x.ndim for d in dims) != list(range(x.ndim - 1)):
        return None
    return kind


# ------------------------------------------------------------------ groups

@dataclass(eq=False)
class Group:
    """Nodes run as one generated loop nest over `space` (a trace shape)."""
    index: int
    space: tuple
    nodes: list = field(default_factory=list)
    level: dict = field(default_factory=dict)      # node -> "elem" | "row"
    formulas: dict = field(default_factory=dict)   # node -> Formula (pointwise)
    reductions: dict = field(default_factory=dict)  # node -> kind
    columns: dict = field(default_factory=dict)     # node -> kind: sums over every row, per column
    inputs: list = field(default_factory=list)     # external Values read
    outputs: list = field(default_factory=list)    # Values written to memory
    is_row: bool = False                           # a row kernel: an outer loop over rows of the last dim
    reads: set = field(default_factory=set)        # every Value its nodes read (while fusing)

    @property
    def row_shapes(self) -> tuple:
        return (self.space[:-1] + (1,), self.space[:-1])

    def name(self) -> str:
        seen = []
        for n in self.nodes:
            base = n.op.name().split("::")[-1].split(".")[0].lstrip("_")
            if base not in seen:
                seen.append(base)
        return f"fused_{'_'.join(seen[:6])}_{self.index}"

    def produces(self, v: Value) -> bool:
        return v.producer in self.level


@dataclass(eq=False)
class OpStep:
    """One operator run as itself (opaque, or a group too small to fuse)."""
    node: Node
    covers: tuple = ()     # the recorded nodes it stands for (a decomposition put back together)


def _grows_to_rows(g: Group, shape: tuple) -> bool:
    """A pointwise group computed on row-shaped values ([..., 1]) can become
    the per-row part of a row kernel over `shape` ([..., D])."""
    return (not g.is_row and len(shape) == len(g.space) >= 1 and g.space[-1] == 1 and shape[-1] != 1
            and g.space[:-1] == shape[:-1])


def _fits(g: Group, node: Node, formula, red, col=None) -> str | None:
    """The level `node` would have in `g`, or None if it cannot join."""
    if len(g.nodes) >= MAX_GROUP_NODES:
        return None
    if any(g.produces(v) and g.level[v.producer] == "col" for v in node.inputs()):
        return None      # a column result exists only after every row: read it outside
    if col is not None:
        x = node.inputs()[0]
        if x.shape != g.space or (g.produces(x) and g.level[x.producer] != "elem"):
            return None
        return "col"
    if red is None and _grows_to_rows(g, node.outputs[0].shape):
        return "grow"
    if red is not None:
        x = node.inputs()[0]
        if x.shape != g.space or (g.produces(x) and g.level[x.producer] != "elem"):
            return None
        return "row"
    out = node.outputs[0].shape
    if out == g.space:
        return "elem"
    if g.is_row and out in g.row_shapes:
        # a row node reads only row values of its group (and external inputs)
        if all(not g.produces(v) or g.level[v.producer] == "row" for v in node.inputs()):
            return "row"
    return None


def _keeps_shape(u, e) -> bool:
    """Another tensor operand of u has the expand's shape, so u's result keeps
    it even where u runs as an operator (a lone `div(expand(g), n)` does not:
    reading g itself would shrink its result)."""
    operands = list(u.args) + list(u.kwargs.values())
    return any(isinstance(a, Value) and a is not e and a.shape == e.shape for a in operands)


def _read_through_expands(graph: Graph) -> None:
    """A pointwise consumer of `expand(v, shape)` whose output has that shape
    (and that has another operand of that shape) reads `v` itself:
    broadcasting does what the expand did, through zero
    strides, and the expand no longer stands between two fusible nodes.  (The
    rewrite is valid wherever the nodes appear, so nodes shared by a joint
    trace's forward and backward graphs are rewritten in place.)"""
    users = graph.users()
    outs = {v for v in graph.outputs if isinstance(v, Value)}
    for n in graph.nodes:
        if n.op.name() != "aten::expand" or not isinstance(n.args[0], Value):
            continue
        src, e = n.args[0], n.outputs[0]
        consumers = users.get(e, [])
        if not consumers or e in outs:
            continue
        if all(pointwise_formula(u) is not None and u.outputs[0].shape == e.shape and _keeps_shape(u, e)
               for u in consumers):
            for u in consumers:
                u.args = tuple(src if a is e else a for a in u.args)
                u.kwargs = {k: (src if a is e else a) for k, a in u.kwargs.items()}


def fuse(graph: Graph) -> list:
    """The graph's steps in a valid order: Groups and OpSteps."""
    _read_through_expands(graph)
    graph = graph.prune()
    steps: list = []
    step_of: dict = {}          # Value -> step producing it
    deps: dict = {}             # step -> set of steps it depends on (transitively)
    for node in graph.nodes:
        formula = pointwise_formula(node) if len(node.outputs) == 1 else None
        red = reduction_kind(node) if formula is None else None
        col = column_kind(node) if formula is None and red is None else None
        producers = []
        for v in node.inputs():
            s = step_of.get(v)
            if s is not None and s not in producers:
                producers.append(s)
        chosen, level = None, None
        if formula is not None or red is not None or col is not None:
            # a producer's group first; else a group reading the same inputs (siblings)
            siblings = [g for g in reversed(steps) if isinstance(g, Group) and g not in producers
                        and any(v in g.reads for v in node.inputs())][:4]
            for s in producers + siblings:
                if not isinstance(s, Group):
                    continue
                lv = _fits(s, node, formula, red, col)
                if lv is None:
                    continue
                if any(p is not s and s in deps[p] for p in producers):
                    continue   # would make a cycle
                chosen, level = s, lv
                if lv == "grow":   # the group's nodes become its per-row values
                    s.space, s.is_row, level = node.outputs[0].shape, True, "elem"
                    for n in s.nodes:
                        s.level[n] = "row"
                break
            if chosen is None and col is not None:
                step = OpStep(node)     # a column sum of an input alone: eager's sum does it
                steps.append(step)
                deps[step] = set()
                chosen = step
            elif chosen is None:
                space = node.inputs()[0].shape if red is not None else node.outputs[0].shape
                chosen = Group(len(steps), space)
                steps.append(chosen)
                deps[chosen] = set()
                level = "row" if red is not None else "elem"
            if isinstance(chosen, Group):
                chosen.nodes.append(node)
                chosen.level[node] = level
                chosen.reads.update(node.inputs())
                if red is not None or col is not None:
                    chosen.is_row = True
                if formula is not None:
                    chosen.formulas[node] = formula
                elif red is not None:
                    chosen.reductions[node] = red
                else:
                    chosen.columns[node] = col
            step = chosen
        else:
            step = OpStep(node)
            steps.append(step)
            deps[step] = set()
        for p in producers:
            if p is not step:
                deps[step] |= deps[p] | {p}
        for o in node.outputs:
            if o is not None:
                step_of[o] = step
    return _finish(graph, steps, step_of, deps)


def _merge_groups(graph, steps):
    """Merge two groups over the same space when one reads what the other
    produces or both read the same inputs, unless a third step lies on a path
    between them (that would make a cycle).  The backward of a normalization
    has several such groups after the greedy pass."""
    order = {n: i for i, n in enumerate(graph.nodes)}
    while True:
        owner = {}
        for s in steps:
            for n in (s.nodes if isinstance(s, Group) else [s.node]):
                for o in n.outputs:
                    if o is not None:
                        owner[o] = s
        succ = {s: set() for s in steps}
        for s in steps:
            for n in (s.nodes if isinstance(s, Group) else [s.node]):
                for v in n.inputs():
                    p = owner.get(v)
                    if p is not None and p is not s:
                        succ[p].add(s)

        def reach(a):
            seen, stack = set(), [a]
            while stack:
                for t in succ[stack.pop()]:
                    if t not in seen:
                        seen.add(t)
                        stack.append(t)
            return seen
        groups = [s for s in steps if isinstance(s, Group)]
        done = False
        for i, a in enumerate(groups):
            ra = reach(a)
            for b in groups[i + 1:]:
                if a.space != b.space or len(a.nodes) + len(b.nodes) > MAX_GROUP_NODES:
                    continue
                related = b in succ[a] or a in succ[b] or (a.reads & b.reads)
                if not related:
                    continue
                cols = {n.outputs[0] for g in (a, b) for n in g.columns}
                if any(v in cols for g in (a, b) for n in g.nodes for v in n.inputs()):
                    continue     # a column result is read after every row: not in its own group
                rb = reach(b)
                if any(b in reach(x) for x in ra if x is not b) or any(a in reach(x) for x in rb if x is not a):
                    continue
                a.nodes = sorted(a.nodes + b.nodes, key=order.__getitem__)
                a.level.update(b.level)
                a.formulas.update(b.formulas)
                a.reductions.update(b.reductions)
                a.columns.update(b.columns)
                a.reads |= b.reads
                a.is_row = a.is_row or b.is_row
                steps.remove(b)
                done = True
                break
            if done:
                break
        if not done:
            return steps


def _lone_decomposition(g: Group, users, graph_outs):
    """The operator whose decomposition is exactly this group, with nothing
    else fused in and nothing but its results read outside, or None."""
    origin = getattr(g.nodes[0], "origin", None)
    if origin is None or set(origin.nodes) != set(g.nodes):
        return None
    results = set(origin.outputs)
    for n in g.nodes:
        o = n.outputs[0]
        outside = o in graph_outs or any(u not in g.level for u in users.get(o, ()))
        if outside and o not in results:
            return None
    return origin


def _finish(graph, steps, step_of, deps):
    """Inputs and outputs of each group; single-node groups become OpSteps;
    steps ordered so that each runs after the steps it reads."""
    steps = _merge_groups(graph, steps)
    users = graph.users()
    graph_outs = {v for v in graph.outputs if isinstance(v, Value)}
    final = []
    for s in steps:
        if isinstance(s, Group):
            origin = _lone_decomposition(s, users, graph_outs)
            if len(s.nodes) == 1:
                s = OpStep(s.nodes[0])
            elif origin is not None:
                # nothing fused with it: eager's own kernel for the operator does at least as well
                s = OpStep(origin.node(), tuple(origin.nodes))
            else:
                for n in s.nodes:
                    for v in n.inputs():
                        if not s.produces(v) and v not in s.inputs:
                            s.inputs.append(v)
                    o = n.outputs[0]
                    if o in graph_outs or any(u not in s.level for u in users.get(o, ())):
                        s.outputs.append(o)
        final.append(s)
    # order: a topological sort of the step graph, stable in trace order
    node_step = {}
    for s in final:
        for n in (s.nodes if isinstance(s, Group) else [s.node, *s.covers]):
            node_step[n] = s
    order, done = [], set()

    def visit(s):
        if s in done:
            return
        done.add(s)
        for n in (s.nodes if isinstance(s, Group) else [s.node]):
            for v in n.inputs():
                p = node_step.get(v.producer)   # None: a graph input (or a value saved by a forward graph)
                if p is not None and p is not s:
                    visit(p)
        order.append(s)
    for s in final:
        visit(s)
    return order
