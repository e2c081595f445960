"""The captured graph: an SSA list of operator calls over tensor values.

A `Value` is one tensor: a graph input (a user argument or a tensor lifted
from a closure, a module or a global), or one output of a `Node`.  A `Node`
is one OpOverload call as the dispatcher saw it, with its arguments as they
were passed: tensors replaced by Values, everything else (ints, floats,
lists, dtypes) kept as constants.  Each Value carries the metadata the
trace computed for it (shape, dtype, device, strides), which is all fusion
and code generation look at.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(eq=False)
class Value:
    index: int
    shape: tuple
    dtype: object
    device: object
    stride: tuple
    producer: "Node | None" = None      # None: a graph input
    requires_grad: bool = False
    name: str = ""

    def __repr__(self):
        return f"%{self.name or self.index}"

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n


@dataclass(eq=False)
class Node:
    op: object                 # an OpOverload
    args: tuple
    kwargs: dict
    outputs: list              # Values; a non-tensor output is None
    out_structure: object      # "single" | "tuple" (how the op returned)
    where: str = ""            # the user's file:line that called it

    def inputs(self):
        """The Values this node reads, in argument order."""
        return [v for v in _flatten((self.args, self.kwargs)) if isinstance(v, Value)]

    def __repr__(self):
        return f"{', '.join(map(repr, self.outputs))} = {self.op}({_fmt(self.args, self.kwargs)})"


def _flatten(x):
    if isinstance(x, (list, tuple)):
        for y in x:
            yield from _flatten(y)
    elif isinstance(x, dict):
        for y in x.values():
            yield from _flatten(y)
    else:
        yield x


def map_values(x, fn):
    """`x` with every Value replaced by fn(Value) (lists, tuples, dicts kept)."""
    if isinstance(x, Value):
        return fn(x)
    if isinstance(x, list):
        return [map_values(y, fn) for y in x]
    if isinstance(x, tuple):
        return tuple(map_values(y, fn) for y in x)
    if isinstance(x, dict):
        return {k: map_values(y, fn) for k, y in x.items()}
    return x


def _fmt(args, kwargs):
    parts = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
    return ", ".join(parts)


@dataclass(eq=False)
class Graph:
    inputs: list = field(default_factory=list)     # Values, in call order: user tensors, then lifted ones
    nodes: list = field(default_factory=list)
    outputs: list = field(default_factory=list)    # Values (or constants) in the flattened output order
    values: list = field(default_factory=list)

    def new_value(self, shape, dtype, device, stride, producer=None, requires_grad=False) -> Value:
        v = Value(len(self.values), tuple(shape), dtype, device, tuple(stride), producer, requires_grad)
        self.values.append(v)
        return v

    def users(self) -> dict:
        """Value -> the nodes that read it (graph outputs not included)."""
        out = {}
        for n in self.nodes:
            for v in n.inputs():
                out.setdefault(v, []).append(n)
        return out

    def prune(self, outputs=None) -> "Graph":
        """A graph holding only the nodes the outputs need (same Values)."""
        outs = self.outputs if outputs is None else outputs
        need = {v for v in outs if isinstance(v, Value)}
        keep = []
        for n in reversed(self.nodes):
            if any(o in need for o in n.outputs if o is not None):
                keep.append(n)
                need.update(n.inputs())
        return Graph(list(self.inputs), keep[::-1], list(outs), self.values)

    def __str__(self):
        lines = [f"graph({', '.join(f'{v!r}: {_meta(v)}' for v in self.inputs)}):"]
        for n in self.nodes:
            metas = ", ".join(_meta(o) for o in n.outputs if o is not None)
            lines.append(f"    {n!r}    # {metas}" + (f"  {n.where}" if n.where else ""))
        lines.append(f"    return ({', '.join(map(repr, self.outputs))})")
        return "\n".join(lines)


def _meta(v: Value) -> str:
    dt = str(v.dtype).split(".")[-1]
    return f"{dt}[{', '.join(map(str, v.shape))}]"
