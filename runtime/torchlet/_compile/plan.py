"""Plan: the steps one call of a compiled graph runs, and running them.

A step is a fused group (allocate its outputs, make its inputs contiguous,
compute the run-time sizes of its coalesced dimensions, one call into the
generated C) or one operator (called as eager calls it, on real tensors:
matrix products, views, custom operators, anything without a formula).
"""
from __future__ import annotations

import torchlet

from . import build
from .cgen import Layout, emit_source
from .fusion import Group, OpStep, fuse
from .graph import Graph, Value, map_values


def mutates(op) -> bool:
    return any(a.alias_info is not None and a.alias_info.is_write for a in op._schema.arguments)


class _GroupRunner:
    """Everything a call of one fused group needs, computed once."""

    def __init__(self, g: Group, fn, pfor: int, grain: int):
        lay = Layout(g)
        self.group, self.fn, self.pfor, self.grain = g, fn, pfor, grain
        self.inputs = [v.index for v in g.inputs]
        self.dim_source = lay.dim_source
        self.segments = lay.segments
        n = len(g.space)
        self.outputs = []
        for v in g.outputs:
            off = Layout._offset(g, v)
            dims = tuple((j + off) if lay._kind(g, v, j + off) == "C" else None for j in range(v.ndim))
            self.outputs.append((v.index, dims, v.dtype))
        self.row = g.is_row
        self.n = n

    def run(self, env: list) -> None:
        ins = []
        for i in self.inputs:
            t = env[i]
            ins.append(t if t.is_contiguous() else t.contiguous())
        orig = [ins[s[0]].shape[s[1]] if s is not None else 1 for s in self.dim_source]
        if self.row and orig[-1] == 0:
            return self._run_eager(env)
        outs = []
        for idx, dims, dt in self.outputs:
            t = torchlet.empty(tuple(orig[d] if d is not None else 1 for d in dims), dtype=dt)
            env[idx] = t
            outs.append(t)
        sizes = []
        for seg in self.segments:
            s = 1
            for d in seg:
                s *= orig[d]
            sizes.append(s)
        a = _ffi.new("int64_t[]", sizes + [t.data_ptr() for t in outs] + [t.data_ptr() for t in ins])
        self.fn(a, self.pfor, self.grain)

    def _run_eager(self, env):
        for node in self.group.nodes:
            run_node(node, env)


_ffi = None


def run_node(node, env: list) -> None:
    get = env.__getitem__
    args = map_values(node.args, lambda v: get(v.index))
    kwargs = map_values(node.kwargs, lambda v: get(v.index))
    out = node.op(*args, **kwargs)
    if node.out_structure == "single":
        out = (out,)
    for v, o in zip(node.outputs, out):
        if v is not None:
            env[v.index] = o


class Plan:
    """Steps over one graph; `run(inputs) -> outputs` (real tensors)."""

    def __init__(self, graph: Graph, backend: str = "inductor", title: str = ""):
        global _ffi
        if _ffi is None:
            from cffi import FFI
            _ffi = FFI()
        self.graph = graph
        self.source, self.kernel_names, self.so_path = "", [], None
        self.compile_seconds = 0.0
        self.fallback_reason = None
        if backend == "eager" or any(mutates(n.op) for n in graph.nodes):
            if backend != "eager":
                self.fallback_reason = "the graph mutates a tensor in place: its operators run one by one"
            self.steps = [OpStep(n) for n in graph.nodes]
        else:
            self.steps = fuse(graph)
        self.groups = [s for s in self.steps if isinstance(s, Group)]
        self.runners = []
        if self.groups:
            try:
                self.source, self.kernel_names = emit_source(self.groups, title)
                lib, self.so_path, self.compile_seconds = build.build(self.source, self.kernel_names)
                pfor = _ffi.cast("void *", build.parallel_for_address())
                grain = torchlet._C.lib.tl_get_grain_size()
                fns = {n: getattr(lib, n) for n in self.kernel_names}
                self._lib = lib
                for g, name in zip(self.groups, self.kernel_names):
                    g.runner = _GroupRunner(g, fns[name], pfor, grain)
            except build.BuildError as e:
                self.fallback_reason = str(e)
                self.steps = [OpStep(n) for n in graph.nodes]
                self.groups = []
        self._calls = [s.runner.run if isinstance(s, Group) else _op_caller(s.node) for s in self.steps]
        self._inputs = [v.index for v in graph.inputs]
        self._outputs = [(v.index if isinstance(v, Value) else None, v) for v in graph.outputs]
        self._nvalues = len(graph.values)

    def run(self, inputs: list) -> list:
        env = [None] * self._nvalues
        for i, t in zip(self._inputs, inputs):
            env[i] = t
        for call in self._calls:
            call(env)
        return [env[i] if i is not None else c for i, c in self._outputs]

    def kernel_count(self) -> int:
        return len(self.groups) + sum(1 for s in self.steps if isinstance(s, OpStep))


def _op_caller(node):
    return lambda env: run_node(node, env)
