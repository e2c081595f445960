"""torchlet.compiler.explain(fn)(*args): what torchlet.compile makes of a call.

It compiles `fn` afresh (no shared cache), calls it twice (cold, warm) and
reports the captured graphs, the fused groups and their kernels, the guards,
the times of each stage, and every graph break with the user's file:line and
the reason.  Field names follow torch._dynamo.explain's ExplainOutput.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from .fusion import Group


@dataclass
class BreakReason:
    reason: str
    where: str

    def __str__(self):
        return f"{self.reason} at {self.where}" if self.where else self.reason


@dataclass
class ExplainOutput:
    graphs: list = field(default_factory=list)          # captured graphs (printable)
    graph_count: int = 0
    graph_break_count: int = 0
    break_reasons: list = field(default_factory=list)   # BreakReason
    op_count: int = 0
    ops_per_graph: list = field(default_factory=list)
    groups: list = field(default_factory=list)          # (kernel name, [operator names])
    kernel_count: int = 0                               # fused kernels + operators run alone, per call
    out_guards: list = field(default_factory=list)
    compile_times: dict = field(default_factory=dict)   # seconds: trace, build, first_call, warm_call
    kernels: str = ""                                   # the generated C
    fallback: str | None = None

    def __str__(self):
        lines = [f"Graph Count: {self.graph_count}", f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}", f"Kernels per call: {self.kernel_count}"]
        if self.break_reasons:
            lines.append("Break Reasons:")
            lines += [f"  Break Reason {i + 1}: {b}" for i, b in enumerate(self.break_reasons)]
        if self.groups:
            lines.append("Fused groups:")
            lines += [f"  {name}: {', '.join(ops)}" for name, ops in self.groups]
        if self.fallback:
            lines.append(f"Runs eagerly: {self.fallback}")
        lines.append("Guards:")
        lines += [f"  {g}" for g in self.out_guards]
        lines.append("Times: " + ", ".join(f"{k} {v * 1e3:.2f} ms" for k, v in self.compile_times.items()))
        for i, g in enumerate(self.graphs):
            lines.append(f"Graph {i}:")
            lines.append(str(g))
        return "\n".join(lines)


def explain(fn, *extra_args, **extra_kwargs):
    """explain(fn)(*args, **kwargs) -> ExplainOutput."""
    from .api import CompiledFunction

    def run(*args, **kwargs):
        cf = CompiledFunction(fn)
        t0 = time.perf_counter()
        cf(*args, **kwargs)
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        cf(*args, **kwargs)
        warm = time.perf_counter() - t0
        e = cf.last_entry
        out = ExplainOutput()
        out.break_reasons = [BreakReason(r, w) for r, w in e.breaks]
        out.graph_break_count = len(e.breaks)
        out.compile_times = {"trace": e.trace_seconds, "build": e.plan.compile_seconds if e.plan else 0.0,
                             "first_call": first, "warm_call": warm}
        if e.plan is None:
            out.fallback = e.eager_reason
            return out
        plans = [e.plan] + ([e.backward.plan] if e.backward is not None else [])
        for p in plans:
            out.graphs.append(p.graph)
            out.ops_per_graph.append([str(n.op) for n in p.graph.nodes])
            out.kernel_count += p.kernel_count()
            for s in p.steps:
                if isinstance(s, Group):
                    out.groups.append((s.name(),
                                       [str(n.op) for n in s.nodes]))
            out.kernels += p.source
            out.fallback = out.fallback or p.fallback_reason
        out.graph_count = len(out.graphs)
        out.op_count = sum(len(o) for o in out.ops_per_graph)
        flat = []
        from .api import _flatten_call
        _flatten_call(args, kwargs, flat)
        exact = e.size_dependent
        for i, t in enumerate(flat + e.lifted):
            what = "argument" if i < len(flat) else "lifted tensor"
            ones = tuple(s == 1 for s in t.shape)
            desc = f"{what} {i}: {type(t).__name__}, {t.dtype}, {t.device}, rank {t.dim()}, " \
                   f"contiguous={t.is_contiguous()}, size-1 dims {ones}, requires_grad={t.requires_grad}" + \
                   (f", sizes {tuple(t.shape)}" if exact else "")
            out.out_guards.append(desc)
        out.out_guards.append("grad mode, default dtype, CPU capability" +
                              ("; sizes are exact (the graph depends on them)" if exact else "; sizes are dynamic"))
        return out

    if extra_args or extra_kwargs:
        return run(*extra_args, **extra_kwargs)
    return run
