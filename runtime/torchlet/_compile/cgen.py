"""C text for fused groups: one C file per graph, one function per group.

Every group is a loop nest over its iteration space, coalesced to K
dimensions (adjacent dimensions merge when every operand is contiguous or
broadcast over both alike): an outer loop over rows (the first K-1
dimensions, run on the runtime's thread pool) and, per row, passes over the
last dimension in chunks of `CH` elements.  Within a chunk each node is its
own short loop from a temporary in L1 to a temporary, `tN[k] = TL_UFUNC_f(...)`:
the same formula macro, the same C types and the same compiler flags as
eager's loop for that operator, and no expression spanning two operators, so
the compiler contracts (FMA) exactly where eager did and a pointwise chain is
bit-equal to eager.  float16/bfloat16 values are computed in float and
rounded where eager stores.

A row group (one with reductions over the last dimension) runs one pass per
reduction level (softmax: the max, then the sum), computes its per-row values
once per row, then a last pass writes the element outputs; an element value
a later pass reads again is kept in a row scratch buffer instead of being
recomputed.  Sums accumulate in 32 (float) or 16 (double) independent lanes,
combined pairwise at the end of the row, as eager's softmax and layer_norm
rows do, so the compiler vectorizes them without reassociating.

Operands are contiguous (the plan makes them so) and are indexed from the
run-time sizes: nothing here depends on a size, so one kernel serves every
shape with the same broadcast pattern.
"""
from __future__ import annotations

import math

from .fusion import Formula, Group, dtype_name
from .graph import Value

CH = 256

_STORAGE = {"bool": "uint8_t", "uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t",
            "int64": "int64_t", "float16": "uint16_t", "bfloat16": "uint16_t", "float32": "float",
            "float64": "double"}
_ITEMSIZE = {"uint8_t": 1, "int8_t": 1, "int16_t": 2, "uint16_t": 2, "int32_t": 4, "int64_t": 8, "float": 4,
             "double": 8}
_COMPUTE = dict(_STORAGE, bool="bool", float16="float", bfloat16="float")


def storage_t(dt) -> str:
    return _STORAGE[dtype_name(dt)]


def compute_t(dt) -> str:
    return _COMPUTE[dtype_name(dt)]


def _load(dt, x: str) -> str:
    n = dtype_name(dt)
    return {"bool": f"({x} != 0)", "float16": f"tl_f16_to_f32({x})", "bfloat16": f"tl_bf16_to_f32({x})"}.get(n, x)


def _store(dt, v: str) -> str:
    n = dtype_name(dt)
    return {"bool": f"(uint8_t)(({v}) != 0)", "float16": f"tl_f32_to_f16({v})",
            "bfloat16": f"tl_f32_to_bf16({v})"}.get(n, f"({storage_t(dt)})({v})")


def _round(dt, v: str) -> str:
    """v (a compute value) as eager leaves it after storing in dt."""
    n = dtype_name(dt)
    return {"bool": f"(({v}) != 0)", "float16": f"tl_f16_to_f32(tl_f32_to_f16({v}))",
            "bfloat16": f"tl_bf16_to_f32(tl_f32_to_bf16({v}))"}.get(n, f"({compute_t(dt)})({v})")


def c_number(x, dt) -> str:
    """Python number x as a C constant of dt's compute type (exact: hex floats)."""
    ct = compute_t(dt)
    if isinstance(x, bool):
        return f"(({ct}){int(x)})"
    if isinstance(x, int):
        return f"(({ct})INT64_C({x}))" if -2**63 <= x < 2**63 else f"(({ct}){float(x).hex()})"
    if math.isnan(x):
        return f"(({ct})__builtin_nan(\"\"))"
    if math.isinf(x):
        return f"(({ct}){'-' if x < 0 else ''}__builtin_inf())"
    return f"(({ct}){x.hex()})"


def _round_number(x, dt):
    """A Python number rounded once into dt (eager wraps it in a 0-dim tensor
    and casts that to the loop's dtype)."""
    n = dtype_name(dt)
    if isinstance(x, bool) or n in ("float32", "float64") or not isinstance(x, float):
        return x
    if n == "float16":
        import numpy as np
        return float(np.float16(x))
    if n == "bfloat16" and math.isfinite(x) and x != 0:
        m, e = math.frexp(x)
        return math.ldexp(round(m * 256), e - 8)
    return x


# ------------------------------------------------------------------ layout

class Layout:
    """Operands (outputs, then inputs), each one's kind per coalesced dim
    ('C' walks memory, 'B' is broadcast), and where each dim's size comes from."""

    def __init__(self, g: Group):
        n = len(g.space)
        self.operands = list(g.outputs) + list(g.inputs)
        self.nout = len(g.outputs)
        kept = [d for d in range(n) if g.space[d] != 1 or (g.is_row and d == n - 1)]
        kinds = {v: [self._kind(g, v, d) for d in range(n)] for v in self.operands}
        segments = []
        for d in kept:
            last = segments[-1][-1] if segments else None
            merge = (last is not None and not (g.is_row and d == n - 1)
                     and all(kinds[v][last] == kinds[v][d] for v in self.operands))
            if merge:
                segments[-1].append(d)
            else:
                segments.append([d])
        if not segments or (g.is_row and segments[-1] != [n - 1]):
            segments.append([n - 1] if g.is_row else [])
        self.segments = segments
        # an all-ones space: one dim of size 1 that every operand walks
        self.kinds = {v: [kinds[v][s[0]] if s else "C" for s in segments] for v in self.operands}
        # the original dims' sizes at run time: (input index, axis) of an input walking that dim
        self.dim_source = []
        for d in range(n):
            src = None
            for i, v in enumerate(g.inputs):
                if kinds[v][d] == "C":
                    src = (i, d - self._offset(g, v))
                    break
            self.dim_source.append(src)

    @staticmethod
    def _offset(g: Group, v: Value) -> int:
        """v's dim j is the space's dim j + offset."""
        n = len(g.space)
        if g.produces(v) and g.level[v.producer] == "col":
            return n - v.ndim       # one value per column: aligned to the last dim
        if g.produces(v):
            return 0 if v.ndim >= n - 1 else n - v.ndim
        row_only = [u for u in g.nodes if v in u.inputs() and u.outputs[0].shape == g.space[:-1]
                    and g.level[u] == "row" and u not in g.reductions]
        return (n - 1 - v.ndim) if row_only and v.ndim <= n - 1 else n - v.ndim

    def _kind(self, g, v, d) -> str:
        j = d - self._offset(g, v)
        last = d == len(g.space) - 1
        if g.produces(v) and g.level[v.producer] == "row" and last:
            return "B"
        # a row kernel walks its last dim even when it is 1 wide
        return "C" if 0 <= j < v.ndim and v.shape[j] == g.space[d] and (g.space[d] != 1 or (last and g.is_row)) \
            else "B"

    def inner(self, v) -> str:
        return self.kinds[v][-1]


# ------------------------------------------------------------------ emitter

class _GroupEmitter:
    def __init__(self, g: Group, fname: str):
        self.g, self.fname = g, fname
        self.lay = Layout(g)
        self.K = len(self.lay.segments)
        self.op_index = {v: i for i, v in enumerate(self.lay.operands)}
        self.stage = self._stages()
        self._names = None
        self.node_fns: dict = {}

    # -- stages (reduction levels)
    def _stages(self):
        g, st = self.g, {}
        for n in g.nodes:
            ins = [st[v.producer] for v in n.inputs() if g.produces(v)]
            s = max(ins, default=0)
            st[n] = s + 1 if n in g.reductions else s
        return st

    # -- operand references inside a row body
    def ref(self, v, ct: str, chunk: bool) -> str:
        """C expression for value v converted to compute type ct."""
        g = self.g
        if self._names is not None:     # inside a node's own loop function
            x = self._names[v]
            return f"({ct})({x})" if compute_t(v.dtype) != ct else x
        if g.produces(v) and v.producer in g.level:
            node = v.producer
            name = f"t{v.index}[k]" if g.level[node] == "elem" else f"r{v.index}"
            return f"({ct})({name})" if compute_t(v.dtype) != ct else name
        i = self.op_index[v]
        if self.lay.inner(v) == "C":
            x = _load(v.dtype, f"p{i}[j0 + k]")
        else:
            x = f"s{i}"
        return f"({ct})({x})" if compute_t(v.dtype) != ct else x

    def formula_call(self, node, chunk=True) -> str:
        f: Formula = self.g.formulas[node]
        ct = compute_t(f.compute)
        args = []
        for i, t in enumerate(f.tensors):
            want = compute_t(f.fixed[i]) if i in f.fixed else ct
            if isinstance(t, Value):
                args.append(self.ref(t, want, chunk))
            else:
                args.append(c_number(_round_number(t, f.fixed.get(i, f.compute)), f.fixed.get(i, f.compute)))
        args += [c_number(s, f.compute) for s in f.scalars]
        a = ", ".join(args)
        if f.name == "square":
            return f"(({args[0]}) * ({args[0]}))"
        if f.name == "convert":
            return f"({args[0]})"
        call = f"TL_UFUNC_{f.name}({a})"
        if f.fallback:
            exact, pred = f.fallback
            call = f"(TL_UFUNC_{pred}({a}) ? TL_UFUNC_{exact}({a}) : {call})"
        return call

    def node_value(self, node, chunk=True) -> str:
        """The node's result as eager stores it, in its output's compute type."""
        out = node.outputs[0]
        return _round(out.dtype, self.formula_call(node, chunk))

    def node_call(self, node) -> str:
        """A call of the element node's own loop function over one chunk.

        Each element node is a small function (one loop, `o[k] = formula`),
        not inlined: the loop is what eager runs for that operator, and a
        kernel of many operators stays fast to compile (GCC's -O3 cost grows
        faster than linearly with a function's size)."""
        g = self.g
        out = node.outputs[0]
        name = f"{self.fname}_n{out.index}"
        params, args, names = [], [], {}
        for v in dict.fromkeys(x for x in self.g.formulas[node].tensors if isinstance(x, Value)):
            j = len(params)
            if g.produces(v) and g.level[v.producer] == "elem":
                params.append(f"const {compute_t(v.dtype)} *restrict a{j}")
                args.append(f"t{v.index}")
                names[v] = f"a{j}[k]"
            elif g.produces(v):
                params.append(f"{compute_t(v.dtype)} s{j}")
                args.append(f"r{v.index}")
                names[v] = f"s{j}"
            elif self.lay.inner(v) == "C":
                i = self.op_index[v]
                params.append(f"const {storage_t(v.dtype)} *restrict a{j}")
                args.append(f"p{i} + j0")
                names[v] = _load(v.dtype, f"a{j}[k]")
            else:
                params.append(f"{compute_t(v.dtype)} s{j}")
                args.append(f"s{self.op_index[v]}")
                names[v] = f"s{j}"
        if name not in self.node_fns:
            self._names = names
            try:
                value = self.node_value(node)
            finally:
                self._names = None
            self.node_fns[name] = "\n".join([
                f"/* {_node_comment(node)} */",
                f"static __attribute__((noinline)) void {name}(int64_t m, {compute_t(out.dtype)} *restrict o"
                + "".join(", " + p for p in params) + ") {",
                f"    for (int64_t k = 0; k < m; k++) o[k] = {value};",
                "}", ""])
        return f"{name}(m, t{out.index}{''.join(', ' + a for a in args)});"

    # -- needed element nodes of a pass, in order
    def elem_closure(self, targets, cached=frozenset()):
        """The element nodes a pass computes for `targets`, in order; a value
        in `cached` (a row scratch buffer filled by an earlier pass) is read,
        not recomputed."""
        g, need = self.g, set()
        stack = [v.producer for v in targets if g.produces(v) and g.level[v.producer] == "elem"
                 and v not in cached]
        while stack:
            n = stack.pop()
            if n in need:
                continue
            need.add(n)
            stack += [v.producer for v in n.inputs() if g.produces(v) and g.level[v.producer] == "elem"
                      and v not in cached]
        return [n for n in g.nodes if n in need]

    def _plan_scratch(self):
        """Which element values go to a row scratch buffer: one computed by a
        pass and read directly by a node of a later pass (softmax's exp is
        computed once, for the sum, and read back for the division, as
        Inductor's CPU kernels do)."""
        g, cached, done = self.g, set(), set()
        for targets in self._pass_targets():
            # walk back from the pass's targets: a value an earlier pass computed
            # is read from its buffer, and what produced it is not recomputed
            nodes, stack = set(), list(targets)
            while stack:
                v = stack.pop()
                if not g.produces(v) or g.level[v.producer] != "elem":
                    continue
                if v.producer in done:
                    cached.add(v)
                elif v.producer not in nodes:
                    nodes.add(v.producer)
                    stack += v.producer.inputs()
            done.update(nodes)
        return cached

    def _pass_targets(self):
        g = self.g
        nstages = max([self.stage[n] for n in g.reductions], default=0)
        out = [[n.inputs()[0] for n in g.nodes if n in g.reductions and self.stage[n] == s]
               for s in range(1, nstages + 1)]
        out.append([v for v in self.lay.operands[:self.lay.nout] if g.level[v.producer] == "elem"]
                   + [n.inputs()[0] for n in g.columns])
        return out

    def chunk_loop(self, out, elem_nodes, body_after, c0="c0", c1="c1", reads=()):
        streamed = []
        out.append(f"        for (int64_t j0 = {c0}; j0 < {c1}; j0 += CH) {{")
        out.append(f"            const int64_t m = {c1} - j0 < CH ? {c1} - j0 : CH;")
        for v in reads:    # computed by an earlier pass
            out.append(f"            const {compute_t(v.dtype)} *t{v.index} = sc{v.index} + j0;")
        for n in elem_nodes:
            v = n.outputs[0]
            out.append(f"            /* {_node_comment(n)} */")
            if v in self.scratch:
                out.append(f"            {compute_t(v.dtype)} *t{v.index} = sc{v.index} + j0;")
            elif v in self.direct:   # an output stored as computed: the loop writes it in place
                # (or, when the call streams, into L1, then with streaming stores)
                ct = compute_t(v.dtype)
                out.append(f"            _Alignas(64) {ct} b{v.index}[CH];")
                out.append(f"            {ct} *t{v.index} = c->stream ? b{v.index} : p{self.op_index[v]} + j0;")
                streamed.append(v)
            else:
                out.append(f"            _Alignas(64) {compute_t(v.dtype)} t{v.index}[CH];")
            out.append(f"            {self.node_call(n)}")
        for v in streamed:
            out.append(f"            if (c->stream) tl_ustream_copy(p{self.op_index[v]} + j0, b{v.index}, "
                       f"m * (int64_t)sizeof(*b{v.index}));")
        out += ["            " + line for line in body_after]
        out.append("        }")

    def emit(self) -> str:
        g, lay, K = self.g, self.lay, self.K
        L = []
        nops = len(lay.operands)
        L.append(f"/* {self.fname}: {'row kernel' if g.is_row else 'pointwise'} over {_shape(g.space)}, "
                 f"{len(g.nodes)} operators")
        for n in g.nodes:
            L.append(f" *   {_node_comment(n)}" + (f"  ({n.where})" if n.where else ""))
        L.append(" */")
        blocks = f" int64_t rows, block; double *partial[{len(g.columns)}];" if g.columns else ""
        L.append(f"typedef struct {{ int64_t size[{K}]; char *ptr[{nops}]; int64_t st[{nops}][{K}]; int *failed; int stream;{blocks} }} "
                 f"{self.fname}_ctx;")
        L.append("")
        self.scratch = sorted(self._plan_scratch(), key=lambda v: v.index) if g.is_row else []
        self.filled = set()
        # element outputs whose compute type is their storage type (float32, float64, integers), written by
        # their node's loop straight into the output; the others (bool, float16, bfloat16) are converted
        self.direct = {v for v in lay.operands[:lay.nout] if g.level[v.producer] == "elem"
                       and compute_t(v.dtype) == storage_t(v.dtype) and v not in self.scratch}
        sc = "".join(f", {compute_t(v.dtype)} *restrict sc{v.index}" for v in self.scratch)
        sc += "".join(f", double *restrict pc{n.outputs[0].index}" for n in g.columns)
        L.append(f"static inline void {self.fname}_row(const {self.fname}_ctx *c, int64_t r, int64_t c0, int64_t c1{sc}) {{")
        # operand bases for this row
        L.append("    (void)c0;")
        L.append("    int64_t rem = r;")
        for i in range(nops):
            L.append(f"    int64_t b{i} = 0;")
        if K > 1:
            L.append(f"    for (int d = {K - 2}; d >= 0; d--) {{")
            L.append("        const int64_t ix = rem % c->size[d];")
            L.append("        rem /= c->size[d];")
            for i in range(nops):
                L.append(f"        b{i} += ix * c->st[{i}][d];")
            L.append("    }")
        L.append("    (void)rem;")
        for i, v in enumerate(lay.operands):
            st, cst = storage_t(v.dtype), "" if i < lay.nout else "const "
            if g.produces(v) and g.level[v.producer] == "col":
                continue      # written by the driver, once every row is done
            if lay.inner(v) == "C":
                L.append(f"    {cst}{st} *restrict p{i} = ({cst}{st} *)c->ptr[{i}] + b{i};")
            elif i >= lay.nout:
                L.append(f"    const {compute_t(v.dtype)} s{i} = {_load(v.dtype, f'((const {st} *)c->ptr[{i}])[b{i}]')};")
            else:
                L.append(f"    {st} *o{i} = ({st} *)c->ptr[{i}] + b{i};")
        nstages = max([self.stage[n] for n in g.reductions], default=0)
        self.emit_row_nodes(L, 0)
        for s in range(1, nstages + 1):
            reds = [n for n in g.nodes if n in g.reductions and self.stage[n] == s]
            self.emit_reduction_pass(L, reds)
            self.emit_row_nodes(L, s)
        elem_outs = [v for v in lay.operands[:lay.nout] if g.level[v.producer] == "elem"]
        col_ins = [n.inputs()[0] for n in g.columns]
        if elem_outs or col_ins:
            stores = [f"for (int64_t k = 0; k < m; k++) p{self.op_index[v]}[j0 + k] = "
                      f"{_store(v.dtype, f't{v.index}[k]')};" for v in elem_outs if v not in self.direct]
            for n in g.columns:     # this row's values, added to its block's column sums
                x = n.inputs()[0]
                stores.append(f"for (int64_t k = 0; k < m; k++) pc{n.outputs[0].index}[j0 + k] += "
                              f"(double)({self.ref(x, compute_t(x.dtype), True)});")
            L.append("    {")
            self.run_pass(L, elem_outs + col_ins, stores, "c0")
            L.append("    }")
        L.append("}")
        L.append("")
        self.emit_drivers(L)
        head = L.index("") + 1      # after the ctx typedef: the node loops, then the row function
        return "\n".join(L[:head] + list(self.node_fns.values()) + L[head:])

    def emit_row_nodes(self, L, stage):
        g = self.g
        for n in g.nodes:
            if g.level[n] != "row" or n in g.reductions or self.stage[n] != stage:
                continue
            v = n.outputs[0]
            L.append(f"    /* {_node_comment(n)} */")
            L.append(f"    const {compute_t(v.dtype)} r{v.index} = tl_fused_keep_{_sfx(v.dtype)}({self.node_value(n, False)});")
            self.store_row(L, v)

    def store_row(self, L, v):
        if v in self.lay.operands[:self.lay.nout]:
            L.append(f"    *o{self.op_index[v]} = {_store(v.dtype, f'r{v.index}')};")

    def emit_reduction_pass(self, L, reds):
        g = self.g
        for n in reds:
            v = n.outputs[0]
            L.append(f"    {compute_t(v.dtype)} r{v.index};")
        L.append("    {")
        for n in reds:
            v, kind = n.outputs[0], g.reductions[n]
            at = compute_t(v.dtype)
            lanes = 32 if at == "float" else 16
            init = "0" if kind in ("sum", "mean") else ("-__builtin_inf()" if kind == "amax" else "__builtin_inf()")
            L.append(f"        /* {_node_comment(n)} */")
            L.append(f"        {at} a{v.index}[{lanes}];")
            L.append(f"        for (int u = 0; u < {lanes}; u++) a{v.index}[u] = {init};")
        inputs = [n.inputs()[0] for n in reds]
        acc = []
        for n, x in zip(reds, inputs):
            v, kind = n.outputs[0], g.reductions[n]
            at = compute_t(v.dtype)
            lanes = 32 if at == "float" else 16
            xe = self.ref(x, compute_t(v.dtype), True)
            xu = xe.replace("[k]", "[k + u]").replace("[j0 + k]", "[j0 + k + u]")
            upd = (lambda a, e: f"{a} += ({at})({e});") if kind in ("sum", "mean") else \
                (lambda a, e, op=(">" if kind == "amax" else "<"): f"{a} = ({e} {op} {a} || {e} != {e}) ? {e} : {a};")
            src = self.reduction_source(x)
            if src is not None:     # the lanes stay in registers inside the chunk's own function
                acc.append(f"{self.reduction_fn(n, at, lanes, upd)}(m, {src}, a{v.index});")
                continue
            acc.append("{ int64_t k = 0;")
            acc.append(f"  for (; k + {lanes} <= m; k += {lanes})")
            acc.append(f"      for (int u = 0; u < {lanes}; u++) {{ const {compute_t(v.dtype)} e = {xu}; {upd(f'a{v.index}[u]', 'e')} }}")
            acc.append(f"  for (; k < m; k++) {{ const {compute_t(v.dtype)} e = {xe}; {upd(f'a{v.index}[0]', 'e')} }} }}")
        self.run_pass(L, inputs, acc, "0")
        for n in reds:
            v, kind = n.outputs[0], g.reductions[n]
            at = compute_t(v.dtype)
            lanes = 32 if at == "float" else 16
            comb = (f"a{v.index}[u] += a{v.index}[u + w];" if kind in ("sum", "mean") else
                    f"a{v.index}[u] = (a{v.index}[u + w] {'>' if kind == 'amax' else '<'} a{v.index}[u] || "
                    f"a{v.index}[u + w] != a{v.index}[u + w]) ? a{v.index}[u + w] : a{v.index}[u];")
            L.append(f"        for (int w = {lanes // 2}; w > 0; w /= 2) for (int u = 0; u < w; u++) {comb}")
            val = f"a{v.index}[0] / (double)c1" if kind == "mean" else f"a{v.index}[0]"
            L.append(f"        r{v.index} = ({compute_t(v.dtype)})({val});")
        L.append("    }")
        for n in reds:
            self.store_row(L, n.outputs[0])

    def reduction_source(self, x):
        """A pointer to the chunk of a reduction's input (computed in this
        pass, or an input walked in memory), or None (a broadcast input)."""
        g = self.g
        if g.produces(x):
            return f"t{x.index}" if g.level[x.producer] == "elem" else None
        if self.lay.inner(x) == "C" and compute_t(x.dtype) == storage_t(x.dtype):
            return f"p{self.op_index[x]} + j0"
        return None

    def reduction_fn(self, node, at: str, lanes: int, upd) -> str:
        """A reduction's work on one chunk, its own small function: the lanes
        are loaded into locals and stored back once per chunk (inline in the
        row loop they would live in memory across the node calls, which
        clobber every vector register)."""
        name = f"{self.fname}_red{node.outputs[0].index}"
        if name in self.node_fns:
            return name
        head = [f"/* {_node_comment(node)} */",
                f"static __attribute__((noinline)) void {name}(int64_t m, const {at} *restrict x, {at} *restrict acc) {{"]
        if self.g.reductions[node] in ("amax", "amin"):
            # exact in any order: a plain compare-and-select (one max / min
            # instruction) per element, and a lane flag per NaN, applied per chunk
            op = ">" if self.g.reductions[node] == "amax" else "<"
            body = [f"    {at} a[{lanes}];",
                    f"    int32_t nan[{lanes}];",
                    f"    for (int u = 0; u < {lanes}; u++) {{ a[u] = acc[u]; nan[u] = 0; }}",
                    "    int64_t k = 0;",
                    f"    for (; k + {lanes} <= m; k += {lanes})",
                    f"        for (int u = 0; u < {lanes}; u++) {{ const {at} e = x[k + u]; "
                    f"a[u] = e {op} a[u] ? e : a[u]; nan[u] |= e != e; }}",
                    f"    for (; k < m; k++) {{ const {at} e = x[k]; {upd('a[0]', 'e')} }}",
                    f"    for (int u = 0; u < {lanes}; u++) acc[u] = nan[u] ? ({at})__builtin_nan(\"\") : a[u];"]
        else:
            body = [f"    {at} a[{lanes}];",
                    f"    for (int u = 0; u < {lanes}; u++) a[u] = acc[u];",
                    "    int64_t k = 0;",
                    f"    for (; k + {lanes} <= m; k += {lanes})",
                    f"        for (int u = 0; u < {lanes}; u++) {{ const {at} e = x[k + u]; {upd('a[u]', 'e')} }}",
                    f"    for (; k < m; k++) {{ const {at} e = x[k]; {upd('a[0]', 'e')} }}",
                    f"    for (int u = 0; u < {lanes}; u++) acc[u] = a[u];"]
        self.node_fns[name] = "\n".join(head + body + ["}", ""])
        return name

    def run_pass(self, L, targets, body, c0):
        cached = frozenset(self.filled)
        nodes = self.elem_closure(targets, cached)
        reads = [v for v in self.scratch if v in cached and (
            v in targets or any(v in n.inputs() for n in nodes))]
        self.chunk_loop(L, nodes, body, c0, "c1", reads)
        self.filled.update(n.outputs[0] for n in nodes if n.outputs[0] in set(self.scratch))

    def emit_block_range(self, L):
        """A group with column sums runs blocks of rows: each block adds its
        rows into its own partial sums (so the result does not depend on
        which thread ran which block), the driver adds the blocks up."""
        g, K = self.g, self.K
        D = f"c->size[{K - 1}]"
        for v in self.scratch:
            L.append(f"    {compute_t(v.dtype)} *sc{v.index} = malloc(sizeof({compute_t(v.dtype)}) * (size_t){D});")
        if self.scratch:
            L.append("    if (" + " || ".join(f"!sc{v.index}" for v in self.scratch) + ") {")
            L.append("        *c->failed = 1;")
            L += [f"        free(sc{v.index});" for v in self.scratch]
            L.append("        return;")
            L.append("    }")
        L.append("    for (int64_t blk = i0; blk < i1; blk++) {")
        L.append("        const int64_t r0 = blk * c->block, r1 = r0 + c->block < c->rows ? r0 + c->block : c->rows;")
        args = "".join(f", sc{v.index}" for v in self.scratch) + \
            "".join(f", c->partial[{j}] + blk * {D}" for j in range(len(g.columns)))
        L.append(f"        for (int64_t r = r0; r < r1; r++) {self.fname}_row(c, r, 0, {D}{args});")
        L.append("    }")
        L += [f"    free(sc{v.index});" for v in self.scratch]

    def emit_block_driver(self, L):
        g = self.g
        cols = list(g.columns)
        L.append("    c.rows = rows;")
        L.append("    c.block = grain / D > 0 ? grain / D : 1;")
        L.append("    const int64_t nblocks = (rows + c.block - 1) / c.block;")
        for j in range(len(cols)):
            L.append(f"    c.partial[{j}] = calloc((size_t)(nblocks * D), sizeof(double));")
        L.append("    if (" + " || ".join(f"!c.partial[{j}]" for j in range(len(cols))) + ") {")
        L += [f"        free(c.partial[{j}]);" for j in range(len(cols))]
        L.append("        return 1;")
        L.append("    }")
        L.append(f"    run(nblocks, 1, {self.fname}_range, &c);")
        for j, n in enumerate(cols):
            v = n.outputs[0]
            o = f"(({storage_t(v.dtype)} *)c.ptr[{self.op_index[v]}])"
            div = " / (double)rows" if g.columns[n] == "mean" else ""
            L.append(f"    /* {_node_comment(n)} */")
            # block by block into the first block's sums (each column still adds its blocks in
            # order), walking memory in order rather than one column across every block
            L.append("    for (int64_t blk = 1; blk < nblocks; blk++)")
            L.append(f"        for (int64_t j = 0; j < D; j++) c.partial[{j}][j] += c.partial[{j}][blk * D + j];")
            L.append(f"    for (int64_t j = 0; j < D; j++) {o}[j] = ({storage_t(v.dtype)})(c.partial[{j}][j]{div});")
            L.append(f"    free(c.partial[{j}]);")

    def emit_drivers(self, L):
        g, lay, K = self.g, self.lay, self.K
        nops = len(lay.operands)
        L.append(f"static void {self.fname}_range(int64_t i0, int64_t i1, void *ctx) {{")
        L.append(f"    const {self.fname}_ctx *c = ctx;")
        if g.columns:
            self.emit_block_range(L)
        elif g.is_row:
            D = f"c->size[{K - 1}]"
            for v in self.scratch:   # one row's values, reused for every row of this range
                L.append(f"    {compute_t(v.dtype)} *sc{v.index} = malloc(sizeof({compute_t(v.dtype)}) * (size_t){D});")
            if self.scratch:
                L.append("    if (" + " || ".join(f"!sc{v.index}" for v in self.scratch) + ") {")
                L.append("        *c->failed = 1;")
                L += [f"        free(sc{v.index});" for v in self.scratch]
                L.append("        return;")
                L.append("    }")
            args = "".join(f", sc{v.index}" for v in self.scratch)
            L.append(f"    for (int64_t r = i0; r < i1; r++) {self.fname}_row(c, r, 0, {D}{args});")
            L += [f"    free(sc{v.index});" for v in self.scratch]
        else:
            L.append(f"    const int64_t D = c->size[{K - 1}];")
            L.append("    for (int64_t i = i0; i < i1;) {")
            L.append("        const int64_t r = i / D, c0 = i % D, c1 = D < c0 + (i1 - i) ? D : c0 + (i1 - i);")
            L.append(f"        {self.fname}_row(c, r, c0, c1);")
            L.append("        i += c1 - c0;")
            L.append("    }")
        if self.direct:
            L.append("    if (c->stream) tl_ustream_fence();   /* order the streaming stores before the join */")
        L.append("}")
        L.append("")
        L.append(f"/* sizes: the {K} coalesced dims; ptrs: the {nops} operands' data (outputs first) */")
        L.append(f"TL_FUSED_EXPORT int {self.fname}(const int64_t *sizes, void *const *ptrs, void *pfor, int64_t grain, "
                 "int64_t stream_min) {")
        L.append(f"    {self.fname}_ctx c;")
        L.append("    int failed = 0;")
        L.append("    c.failed = &failed;")
        L.append(f"    for (int d = 0; d < {K}; d++) c.size[d] = sizes[d];")
        L.append(f"    for (int i = 0; i < {nops}; i++) c.ptr[i] = (char *)ptrs[i];")
        for i, v in enumerate(lay.operands):
            L.append("    {")
            L.append("        int64_t run = 1;")
            for d in range(K - 1, -1, -1):
                if lay.kinds[v][d] == "C":
                    L.append(f"        c.st[{i}][{d}] = run; run *= c.size[{d}];")
                else:
                    L.append(f"        c.st[{i}][{d}] = 0;")
            L.append("        (void)run;")
            L.append("    }")
        L.append("    int64_t rows = 1;")
        L.append(f"    for (int d = 0; d < {K - 1}; d++) rows *= c.size[d];")
        L.append(f"    const int64_t D = c.size[{K - 1}];")
        if g.columns:    # no rows: the column sums are 0, the means NaN (0 / 0), as eager's
            for n in g.columns:
                v = n.outputs[0]
                o = f"(({storage_t(v.dtype)} *)c.ptr[{self.op_index[v]}])"
                zero = "0.0" if g.columns[n] == "sum" else "__builtin_nan(\"\")"
                L.append(f"    if (rows == 0) for (int64_t j = 0; j < D; j++) {o}[j] = ({storage_t(v.dtype)}){zero};")
        L.append("    if (rows == 0 || D == 0) return 0;")
        # the runtime's store policy, as eager's loops apply it: a call moving at least stream_min
        # bytes (its full-size operands) writes its outputs with streaming stores
        full = sum(_ITEMSIZE[storage_t(v.dtype)] for v in lay.operands if all(k == "C" for k in lay.kinds[v]))
        L.append(f"    c.stream = stream_min > 0 && rows * D * {full} >= stream_min;")
        L.append("    tl_fused_pfor_fn run = (tl_fused_pfor_fn)pfor;")
        if g.columns:
            self.emit_block_driver(L)
        elif g.is_row:
            L.append(f"    run(rows, grain / D > 0 ? grain / D : 1, {self.fname}_range, &c);")
        else:
            L.append(f"    run(rows * D, grain, {self.fname}_range, &c);")
        L.append("    return failed;   /* 1: a row scratch buffer could not be allocated */")
        L.append("}")


def _sfx(dt) -> str:
    return {"float": "f", "double": "d"}.get(compute_t(dt), "i")


def _shape(s) -> str:
    return "[" + ", ".join(map(str, s)) + "]"


def _node_comment(n) -> str:
    from .fusion import _pointwise_table
    row = _pointwise_table().get(n.op.name())
    src = f"  [{row['entry']}]" if row else ""
    return (repr(n) + src).replace("*/", "* /")


PRELUDE = """\
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include "tl_half.h"
#include "tl_ustream.h"
{includes}

#define CH {ch}
#define TL_FUSED_EXPORT __attribute__((visibility("default")))
typedef void (*tl_fused_range_fn)(int64_t, int64_t, void *);
typedef void (*tl_fused_pfor_fn)(int64_t, int64_t, tl_fused_range_fn, void *);
/* a per-row value goes through memory, so no expression spans two operators
 * (the compiler cannot contract across it, as it cannot across eager's loops) */
static inline float tl_fused_keep_f(float x) {{ volatile float v = x; return v; }}
static inline double tl_fused_keep_d(double x) {{ volatile double v = x; return v; }}
static inline int64_t tl_fused_keep_i(int64_t x) {{ return x; }}
"""


def emit_source(groups: list, title: str) -> tuple[str, list]:
    """(C source, exported function names) for the graph's groups."""
    headers = sorted({h for g in groups for f in g.formulas.values() for h in f.headers})
    includes = "\n".join(f'#include "{h.split("/")[-1]}"' for h in headers)
    parts = [f"/* torchlet.compile: {title}\n * generated from the ufunc formulas named below; "
             f"each line of a group's comment is one operator of the captured graph */",
             PRELUDE.format(includes=includes, ch=CH)]
    names = []
    for g in groups:
        fname = g.name()
        names.append(fname)
        parts.append(_GroupEmitter(g, fname).emit())
    return "\n".join(parts) + "\n", names
