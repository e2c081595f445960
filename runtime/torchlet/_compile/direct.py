"""The fast entry of an operator a plan runs whole.

Eager `torchlet.native_layer_norm(x, ...)` is a generated binding that
converts its arguments inline and calls the overload's C entry
(`tl_ops_native_layer_norm`, the dispatcher's typed call).  `OpOverload.__call__`
reaches the same kernel through the boxed path (arguments packed into
streams, results unpacked from a stack), several microseconds dearer: on a
small graph that is most of a call.  A plan therefore calls, per operator,
the generated function whose body calls exactly that overload's C entry,
found by what its code references (`_C_<name>_<overload>`).

Used only where the call is equivalent: a function without `*args` that
takes the node's positional arguments and keyword names, and a node whose
Tensor arguments are all tensors (a Python number in a Tensor slot, a
wrapped scalar, goes through the boxed path as recorded).  The generated
binding checks torch-function modes, the boxed path does not: a plan runs
its reference form (`OpOverload` calls) while any such mode is active.
"""
from __future__ import annotations

import inspect

_index: dict | None = None


def _build_index() -> dict:
    """C entry name -> the generated functions whose code calls it."""
    from .. import _generated
    mod = _generated._ops
    idx: dict = {}
    for name, f in vars(mod).items():
        code = getattr(f, "__code__", None)
        if code is None or getattr(f, "__module__", None) != mod.__name__:
            continue
        for n in code.co_names:
            if n.startswith("_C_"):
                idx.setdefault(n, []).append(f)
    return idx


def binding_for(node):
    """The generated function to call for `node` (an OpStep's node), or None."""
    global _index
    if _index is None:
        _index = _build_index()
    op = node.op
    if getattr(op, "namespace", None) != "aten":
        return None
    over = op._overloadname
    cname = f"_C_{op._opname}" + ("" if over == "default" else f"_{over}")
    cands = _index.get(cname)
    if not cands:
        return None
    schema = op._schema
    for a, v in zip(schema.arguments, node.args):
        if _is_tensor_type(a.type) and not _is_value(v):
            return None
    for a in schema.arguments:
        if a.name in node.kwargs and _is_tensor_type(a.type) and not _is_value(node.kwargs[a.name]):
            return None
    # the function with the fewest C entries (one overload's implementation,
    # not a dispatcher over several) that binds these arguments
    for f in sorted(cands, key=lambda f: sum(1 for n in f.__code__.co_names if n.startswith("_C_"))):
        if _binds(f, len(node.args), node.kwargs):
            return f
    return None


def _binds(f, nargs: int, kwargs: dict) -> bool:
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        return False
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        return False
    pos = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if nargs > len(pos) or any(p.default is p.empty for p in pos[nargs:]):
        return False
    names = {p.name for p in params[nargs:] if p.kind != p.POSITIONAL_ONLY}
    if not set(kwargs) <= names:
        return False
    return all(p.default is not p.empty or p.name in kwargs
               for p in params if p.kind == p.KEYWORD_ONLY)


def _is_tensor_type(t) -> bool:
    return str(t) == "Tensor"


def _is_value(v) -> bool:
    from .graph import Value
    return isinstance(v, Value)


def inline_step(node, graph_outputs):
    """("view", sizes) or ("alias",) for a node shorter than any call, or
    None: a view with int sizes is the Tensor's C method (runtime/python/
    fastcall.c, the same tl_ops_view), and conj of a real tensor, whose value
    is its input, is that input where no one but the plan's own kernels sees
    the result (the dtype is part of the guard)."""
    op = node.op
    if getattr(op, "namespace", None) != "aten" or not node.args or not _is_value(node.args[0]) or node.kwargs:
        return None
    name = f"{op._opname}.{op._overloadname}"
    if name == "view.default" and len(node.args) == 2 and isinstance(node.args[1], (list, tuple)) \
            and 0 < len(node.args[1]) <= 8 and all(type(s) is int for s in node.args[1]):
        return ("view", tuple(node.args[1]))
    if name == "conj.default" and not node.args[0].dtype.is_complex \
            and not any(o is v for o in node.outputs for v in graph_outputs):
        return ("alias",)
    return None


def inline_form(node, graph_outputs) -> str | None:
    """inline_step's Python, with `{0}` for the node's first argument."""
    step = inline_step(node, graph_outputs)
    if step is None:
        return None
    if step[0] == "view":
        return "{0}.view(" + ", ".join(map(str, step[1])) + ")"
    return "{0}"


# operators with several results whose first alone is also an operator's
# whole result, computed by the same kernel: where the plan reads only the
# first (a layer_norm forward under no_grad), that operator's binding makes
# one Tensor instead of three (PyTorch: layer_norm is native_layer_norm's
# first output, CompositeImplicitAutograd)
_FIRST_ONLY = {"native_layer_norm.default": "layer_norm"}


def first_only_binding(node, read: set):
    """The binding computing only node's first result when no one reads the
    others (`read`: the Values the plan reads or returns), or None."""
    op = node.op
    if getattr(op, "namespace", None) != "aten" or len(node.outputs) < 2:
        return None
    name = _FIRST_ONLY.get(f"{op._opname}.{op._overloadname}")
    if name is None or node.kwargs or any(o is not None and o in read for o in node.outputs[1:]):
        return None
    if not all(_is_value(a) or a is None for a in node.args[:1] + node.args[2:4]):
        return None
    from .. import _generated
    return getattr(_generated._ops, name, None)
