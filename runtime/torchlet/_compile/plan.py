"""Plan: the steps one call of a compiled graph runs, and running them.

A step is a fused group (allocate its outputs, make its inputs contiguous,
compute the run-time sizes of its coalesced dimensions, one call into the
generated C) or one operator (called as eager calls it, on real tensors:
matrix products, views, custom operators, anything without a formula),
through the generated binding that calls the overload's C entry directly
where one fits (`direct.py`), else through the OpOverload.

TORCHLET_COMPILE_DIRECT=0 in the environment when a plan is made: every
operator goes through its OpOverload (the reference form, which a plan also
runs while a torch-function mode is active).
"""
from __future__ import annotations

import os

import torchlet

from .._C import ffi as _C_ffi, lib as _lib
from .._tensor import _wrap
from .. import _function_mode
from . import build
from .cgen import Layout, emit_source
from .fusion import Group, OpStep, fuse
from .graph import Graph, Value, map_values


def mutates(op) -> bool:
    return any(a.alias_info is not None and a.alias_info.is_write for a in op._schema.arguments)


class _GroupRunner:
    """Everything a call of one fused group needs, computed once."""

    def __init__(self, g: Group, fn, pfor, grain: int):
        lay = Layout(g)
        self.group, self.fn, self.pfor, self.grain = g, fn, pfor, grain
        self.dim_source = lay.dim_source      # per space dim: (input position, axis) or None (size 1)
        self.segments = lay.segments          # coalesced dims: lists of space dims
        self.outputs = []                     # (Value, per output dim: space dim or None)
        for v in g.outputs:
            off = Layout._offset(g, v)
            dims = tuple((j + off) if lay._kind(g, v, j + off) == "C" else None for j in range(v.ndim))
            self.outputs.append((v, dims))

    def descriptor(self, stream_min: int) -> bytes:
        """What runtime/python/compile_group.c reads to run this group in one
        C call: the kernel, the dims' sources, the segments, the outputs."""
        import struct
        w = [int(_ffi.cast("uintptr_t", self.fn)), int(_ffi.cast("uintptr_t", self.pfor)), self.grain, stream_min,
             int(self.group.is_row), len(self.group.inputs), len(self.outputs), len(self.dim_source)]
        for src in self.dim_source:
            w += list(src) if src is not None else [-1, 0]
        w.append(len(self.segments))
        for seg in self.segments:
            w += [len(seg), *seg]
        for v, dims in self.outputs:
            w += [v.dtype._id, len(dims)] + [d if d is not None else -1 for d in dims]
        return struct.pack(f"{len(w)}q", *w)

    def run_eagerly(self, env) -> None:
        """The group's operators one by one (a row kernel over an empty last dim)."""
        for node in self.group.nodes:
            run_node(node, env)


_ffi = None


def _stream_min() -> int:
    """The store policy's stream_min_bytes when the plan is made (a call of a
    fused kernel moving that many bytes streams its outputs, as eager's loops)."""
    from ..backends import cpu
    return int(cpu.info()["policy"]["stream_min_bytes"])


def _raise_pending():
    from .._errors import raise_pending_error
    raise_pending_error()


def run_node(node, env) -> None:
    """One operator on real tensors; env maps value index -> tensor."""
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
        self.build_error = None
        self.mutates = any(mutates(n.op) for n in graph.nodes)
        if backend == "eager" or self.mutates:
            if backend != "eager":
                self.fallback_reason = "the graph mutates a tensor in place: its operators run one by one"
            self.steps = [OpStep(n) for n in graph.nodes]
        else:
            self.steps = fuse(graph)
        self.groups = [s for s in self.steps if isinstance(s, Group)]
        self.stream_min = _stream_min()
        if self.groups:
            try:
                self.source, self.kernel_names = emit_source(self.groups, title)
                lib, self.so_path, self.compile_seconds = build.build(self.source, self.kernel_names)
                pfor = _ffi.cast("void *", build.parallel_for_address())
                grain = torchlet._C.lib.tl_get_grain_size()
                fns = {n: getattr(lib, n) for n in self.kernel_names}
                self._lib = lib      # the loaded object lives as long as the plan
                for g, name in zip(self.groups, self.kernel_names):
                    g.runner = _GroupRunner(g, fns[name], pfor, grain)
            except build.BuildError as e:
                self.fallback_reason = self.build_error = str(e)
                self.steps = [OpStep(n) for n in graph.nodes]
                self.groups = []
        # the operators' generated bindings and the fused groups' C call
        # (runtime/python/compile_group.c); "0": the reference form
        direct = os.environ.get("TORCHLET_COMPILE_DIRECT") != "0"
        self._program_keep = []     # constants the program points to (wrapped numbers)
        self.program = (_c_program(graph, self.steps, self.stream_min, self._program_keep)
                        if direct and not self.mutates else None)
        self.python, self.run = _write_runner(graph, self.steps, self.stream_min, direct, self.program)

    def kernel_count(self) -> int:
        return len(self.groups) + sum(1 for s in self.steps if isinstance(s, OpStep))


_STEP_GROUP, _STEP_VIEW, _STEP_ALIAS, _STEP_EXPAND, _STEP_OP = 0, 1, 2, 3, 4
_REF_SLOT, _REF_CONST, _REF_NONE = 0, 1, 2


def _expand_step(node):
    """expand(x, int sizes) (implicit=False): its sizes, or None"""
    op = node.op
    if getattr(op, "namespace", None) != "aten" or f"{op._opname}.{op._overloadname}" != "expand.default" \
            or len(node.args) != 2 or not isinstance(node.args[0], Value) or node.kwargs.get("implicit", False):
        return None
    sizes = node.args[1]
    if not isinstance(sizes, (list, tuple)) or len(sizes) > 64 or not all(type(s) is int for s in sizes):
        return None
    return tuple(sizes)


def _op_step(node, slot_of, new_slot, keep: list) -> list | None:
    """An operator's boxed call as program words: its arguments as
    OpOverload's flat streams (torchlet.ops packs them, with a stand-in tensor
    per Value), each tensor a slot, a constant (a wrapped number, kept in
    `keep`) or None; or None when the call does not fit (a string argument,
    a return that is not one Tensor each)."""
    import struct
    op = node.op
    if not hasattr(op, "_bind") or op._unboxable is not None:
        return None
    rets = op._schema.returns
    if len(rets) != len(node.outputs) or any(str(r.type) != "Tensor" for r in rets) or len(rets) > 64:
        return None
    stand_in = {}

    def mark(v):
        if v.index not in stand_in:
            stand_in[v.index] = (v, torchlet.empty(0))
        return stand_in[v.index][1]
    try:
        streams = op._bind(map_values(list(node.args), mark), map_values(dict(node.kwargs), mark))
    except Exception:   # noqa: BLE001 - arguments the boxed call does not take: the Python form
        return None
    kinds, ints, doubles, tensors, strings, kept = streams
    if strings or len(kinds) > 64 or len(tensors) > 64 or len(doubles) > 256:
        return None
    by_addr = {int(_C_ffi.cast("uintptr_t", t._p)): v for v, t in stand_in.values()}
    refs = []
    for p in tensors:
        a = int(_C_ffi.cast("uintptr_t", p))
        if a == 0:
            refs += [_REF_NONE, 0]
        elif a in by_addr:
            if slot_of(by_addr[a]) is None:
                return None
            refs += [_REF_SLOT, slot_of(by_addr[a])]
        else:
            refs += [_REF_CONST, a]
    keep.extend(kept)
    bits = [struct.unpack("q", struct.pack("d", d))[0] for d in doubles]
    outs = [new_slot(o) if o is not None else -1 for o in node.outputs]
    return [_STEP_OP, int(_C_ffi.cast("uintptr_t", op._op)), len(kinds), *kinds, len(ints), *ints, len(bits), *bits,
            len(tensors), *refs, len(outs), *outs]


def _seeded(op) -> bool:
    """op draws from a random generator (PyTorch's nondeterministic_seeded tag)"""
    return any(getattr(t, "name", "") == "nondeterministic_seeded" for t in getattr(op, "tags", ()))


def _c_program(graph: Graph, steps: list, stream_min: int, keep: list) -> bytes | None:
    """The plan as one C program (runtime/python/compile_program.c): when
    every step is a fused group, a view or expand with constant sizes, an
    alias or an operator the boxed call takes, and the fast module is loaded;
    else None.  `keep` receives the constants the program points to."""
    import struct
    from .. import _fast
    from .direct import inline_step
    if _fast._mod is None or len(graph.inputs) > 64:
        return None
    # a program hands a call it cannot finish (a row kernel over an empty row)
    # to the Python form, which runs the plan again: a random operator before
    # it would draw twice, so such a plan keeps the Python form
    if any(isinstance(s, Group) and s.is_row for s in steps) and any(
            not isinstance(s, Group) and _seeded(s.node.op) for s in steps):
        return None
    slot = {v.index: i for i, v in enumerate(graph.inputs)}
    words = []

    def slot_of(v):
        return slot[v.index] if isinstance(v, Value) and v.index in slot else None

    def new_slot(v):
        slot[v.index] = len(slot)
        return slot[v.index]

    for s in steps:
        if isinstance(s, Group):
            ins = [slot_of(v) for v in s.inputs]
            if getattr(s, "runner", None) is None or None in ins:
                return None
            raw = s.runner.descriptor(stream_min)
            desc = struct.unpack(f"{len(raw) // 8}q", raw)
            words += [_STEP_GROUP, len(desc), *desc, len(ins), *ins, len(s.runner.outputs)]
            words += [new_slot(v) for v, _ in s.runner.outputs]
            continue
        step = inline_step(s.node, graph.outputs)
        if step is None and _expand_step(s.node) is not None:
            step = ("expand", _expand_step(s.node))
        src = slot_of(s.node.args[0]) if step is not None else None
        if src is None or len(s.node.outputs) != 1 or s.node.outputs[0] is None:
            op_words = _op_step(s.node, slot_of, new_slot, keep)
            if op_words is None:
                return None
            words += op_words
            continue
        if step[0] in ("view", "expand"):
            kind = _STEP_VIEW if step[0] == "view" else _STEP_EXPAND
            words += [kind, src, new_slot(s.node.outputs[0]), len(step[1]), *step[1]]
        else:
            words += [_STEP_ALIAS, src, new_slot(s.node.outputs[0])]
    results = []
    for v in graph.outputs:
        if v is None:
            results.append(-1)
        elif slot_of(v) is None:
            return None
        else:
            results.append(slot_of(v))
    if len(slot) > 256 or len(results) > 64:
        return None
    words = [len(slot), len(graph.inputs), len(steps), *words, len(results), *results]
    return struct.pack(f"{len(words)}q", *words)


def _write_runner(graph: Graph, steps: list, stream_min: int = 0, direct: bool = False, program=None):
    """(source, function): one straight-line Python function running the
    steps, values in locals: `run(inputs) -> outputs`.  Per fused group it
    makes the inputs contiguous, reads the sizes, allocates the outputs and
    makes one call into C; per other step, one operator call: with `direct`,
    its generated binding where one fits, and the whole reference form (every
    operator through its OpOverload) while a torch-function mode is active."""
    bindings, inline, first_only = {}, {}, {}
    if direct:
        from .direct import binding_for, first_only_binding, inline_form
        read = set(graph.outputs)
        for s in steps:
            read.update(s.inputs if isinstance(s, Group) else s.node.inputs())
        for k, s in enumerate(steps):
            if not isinstance(s, Group):
                form = inline_form(s.node, graph.outputs)
                first = first_only_binding(s.node, read) if form is None else None
                f = binding_for(s.node) if form is None and first is None else None
                if form is not None:
                    inline[k] = form
                elif first is not None:
                    first_only[k] = first
                elif f is not None:
                    bindings[k] = f
    run_group = None
    from .. import _fast
    if direct and any(isinstance(s, Group) for s in steps) and _fast._mod is not None:
        run_group = _fast._mod._run_group
    ref = (_write_runner(graph, steps, stream_min)[1] if bindings or inline or first_only or run_group or program
           else None)
    glb = {"_contig": _lib.tl_tensor_is_contiguous, "_sizes": _lib.tl_tensor_sizes, "_wrap": _wrap,
           "_empty": _lib.tl_empty, "_dptr": _lib.tl_tensor_data_ptr, "_CPU": _lib.TL_CPU}
    lines = ["def run(inputs):"]
    names = [f"v{v.index}" for v in graph.inputs]
    if ref is not None:
        glb["_ref"], glb["_fmode"] = ref, _function_mode
        lines.append("    if _fmode._active:")
        lines.append("        return _ref(inputs)")
    if program is not None:       # the whole plan in one C call; None: the Python form below
        glb["_run_program"], glb["_P"] = _fast._mod._run_program, program
        glb["_raise"] = _raise_pending
        lines.append("    r = _run_program(_P, inputs)")
        lines.append("    if r is not None:")
        lines.append("        return r if r != -1 else _raise()")
    if names:
        lines.append(f"    {', '.join(names)}{',' if len(names) == 1 else ''} = inputs")

    def const(x):
        key = f"c{len(glb)}"
        glb[key] = x
        return key

    def expr(x):
        if isinstance(x, Value):
            return f"v{x.index}"
        if isinstance(x, list):
            return "[" + ", ".join(expr(y) for y in x) + "]"
        if isinstance(x, tuple):
            return "(" + "".join(expr(y) + ", " for y in x) + ")"
        if x is None or isinstance(x, (bool, int)) or (isinstance(x, float) and x == x and abs(x) != float("inf")):
            return repr(x)
        return const(x)

    for k, s in enumerate(steps):
        if isinstance(s, Group):
            r = s.runner
            glb[f"k{k}"], glb[f"g{k}"] = r.fn, r
            lines.append(f"    # {s.name()}")
            ind0 = "    "
            if run_group is not None:     # one C call; None: the Python form below handles the case
                glb["_run_group"], glb[f"D{k}"] = run_group, r.descriptor(stream_min)
                outs = ", ".join(f"v{v.index}" for v, _ in r.outputs) + ("," if len(r.outputs) == 1 else "")
                lines.append(f"    r{k} = _run_group(D{k}, ({''.join(f'v{v.index}, ' for v in s.inputs)}))")
                lines.append(f"    if r{k} is not None:")
                lines.append(f"        {outs} = r{k}")
                lines.append("    else:")
                ind0 = "        "
            body = len(lines)
            ins = []
            for i, v in enumerate(s.inputs):
                a = f"a{k}_{i}"
                lines.append(f"    {a} = v{v.index} if _contig(v{v.index}._p) else v{v.index}.contiguous()")
                ins.append(a)
            used = sorted({src[0] for src in r.dim_source if src is not None})
            for i in used:
                lines.append(f"    s{k}_{i} = _sizes({ins[i]}._p)")
            dims = [f"s{k}_{src[0]}[{src[1]}]" if src is not None else "1" for src in r.dim_source]
            for d, e in enumerate(dims):
                lines.append(f"    d{k}_{d} = {e}")
            if s.is_row:
                env = "{" + ", ".join(f"{v.index}: v{v.index}" for v in s.inputs) + "}"
                outs = ", ".join(f"v{v.index}" for v, _ in r.outputs)
                lines.append(f"    if d{k}_{len(dims) - 1} == 0:")
                lines.append(f"        e = {env}")
                lines.append(f"        g{k}.run_eagerly(e)")
                lines.append(f"        {outs}{',' if len(r.outputs) == 1 else ''} = "
                             f"{', '.join(f'e[{v.index}]' for v, _ in r.outputs)}{',' if len(r.outputs) == 1 else ''}")
                lines.append("    else:")
                ind = "        "
            else:
                ind = "    "
            for v, odims in r.outputs:
                shape = ", ".join(f"d{k}_{d}" if d is not None else "1" for d in odims)
                lines.append(f"{ind}v{v.index} = _wrap(_empty({len(odims)}, [{shape}], {v.dtype._id}, _CPU))")
            sizes = ", ".join(" * ".join(f"d{k}_{d}" for d in seg) or "1" for seg in r.segments)
            ptrs = ", ".join([f"_dptr(v{v.index}._p)" for v, _ in r.outputs] + [f"_dptr({a}._p)" for a in ins])
            glb[f"p{k}"] = r.pfor
            lines.append(f"{ind}if k{k}([{sizes}], [{ptrs}], p{k}, {r.grain}, {stream_min}):")
            lines.append(f"{ind}    raise MemoryError('torchlet.compile: {s.name()}: cannot allocate its row buffers')")
            if ind0 != "    ":
                lines[body:] = [ind0[4:] + ln for ln in lines[body:]]
        else:
            n = s.node
            glb[f"op{k}"] = bindings.get(k, n.op)
            call = f"op{k}(" + ", ".join([expr(a) for a in n.args] +
                                         [f"{key}={expr(a)}" for key, a in n.kwargs.items()]) + ")"
            lines.append(f"    # {n!r}" + ("  (binding)" if k in bindings else "  (inline)" if k in inline else
                                             "  (its first result alone)" if k in first_only else ""))
            if k in inline:
                lines.append(f"    v{n.outputs[0].index} = " + inline[k].format(expr(n.args[0])))
            elif k in first_only:
                glb[f"op{k}"] = first_only[k]
                lines.append(f"    v{n.outputs[0].index} = op{k}(" + ", ".join(expr(a) for a in n.args) + ")")
            elif n.out_structure == "single":
                lines.append(f"    v{n.outputs[0].index} = {call}")
            else:
                lines.append(f"    t{k} = {call}")
                for j, o in enumerate(n.outputs):
                    if o is not None:
                        lines.append(f"    v{o.index} = t{k}[{j}]")
    lines.append("    return [" + ", ".join(expr(v) for v in graph.outputs) + "]")
    src = "\n".join(lines) + "\n"
    exec(compile(src, "<torchlet.compile plan>", "exec"), glb)
    return src, glb["run"]
