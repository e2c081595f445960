"""torchlet.compile: guards, the per-function cache, graph breaks, autograd.

A call of a compiled function flattens its arguments (tuples, lists, dicts)
and looks its *guard key* up: per tensor the dtype, device, rank,
contiguity, which sizes are 1 and requires_grad; Python values by value; grad
mode, default dtype and the CPU capability.  Sizes are not in the key unless
the trace depended on them (a `SymInt` argument such as a view's shape,
Python reading a size, or a backward graph, whose formulas bake sizes in) or
`dynamic=False`: then the exact sizes join the key.  A miss traces and
compiles; the generated C does not depend on sizes, so a new shape that only
retraces reuses the compiled kernels.

A trace that cannot be recorded (a data read) is a graph break: with
`fullgraph=True` an `Unsupported` error naming the user's file:line and the
reason, otherwise that key runs eagerly (`explain` lists the breaks).  After
`cache_size_limit` keys a function warns once, naming what keeps changing,
and runs eagerly for new keys.

When grad mode is on and an input (or a lifted parameter) requires grad, the
trace is joint: the forward, then `autograd.grad` of the outputs under the
same tracer, which records the derivatives.yaml formulas.  The forward graph
saves what the backward cannot cheaply recompute (inputs, outputs of
reductions and of opaque operators: matrix products); the backward graph
recomputes pointwise values and is fused the same way, built at the first
backward.  One autograd node (`CompiledFunctionBackward`) stands for the
whole graph.
"""
from __future__ import annotations

import functools
import os
import time
import warnings
import weakref

import torchlet

from .. import _fast, _function_mode
from .._C import ffi as _ffi, lib as _lib
from .._errors import check as _check
from .._tensor import _wrap
from ..autograd import function as _fn
from .capture import GraphBreak, _addr, trace
from .fusion import pointwise_formula
from .graph import Graph
from .plan import Plan

cache_size_limit = 8
_STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile")
# TORCHLET_COMPILE=0 in the environment at import: every compiled function runs eagerly
_stance = ["force_eager" if os.environ.get("TORCHLET_COMPILE") == "0" else "default"]
_grad_enabled = torchlet.is_grad_enabled
_default_dtype = torchlet.get_default_dtype
_compiled_functions: "weakref.WeakSet" = weakref.WeakSet()


class Unsupported(RuntimeError):
    """What fullgraph=True raises at a graph break (PyTorch: torch._dynamo.exc.Unsupported)."""


class RecompileError(RuntimeError):
    """A recompilation under set_stance("fail_on_recompile")."""


def set_stance(stance: str = "default") -> None:
    """torch.compiler.set_stance: "default", "force_eager" (run every compiled
    function eagerly), "eager_on_recompile" (new keys run eagerly),
    "fail_on_recompile" (a new key raises)."""
    if stance not in _STANCES:
        raise ValueError(f"invalid stance '{stance}'; expected one of {', '.join(_STANCES)}")
    _stance[0] = stance


def reset() -> None:
    """Forget every compiled graph (torch.compiler.reset); the disk cache stays."""
    for f in list(_compiled_functions):
        f._cache_reset()


# --------------------------------------------------------------- pytrees

def _flatten_call(args, kwargs, leaves: list):
    """Spec of a call's arguments; the common case (positional tensors only) is one check."""
    if not kwargs:
        T = torchlet.Tensor
        for a in args:
            if not isinstance(a, T):
                break
        else:
            leaves.extend(args)
            return len(args)
    return _flatten((args, kwargs), leaves)


def _flatten(x, leaves: list, consts: list | None = None):
    """Spec of x, appending its tensors to `leaves`.  Other values are part
    of the spec (hashable: a guard key), or, with `consts`, appended there
    (an output's numbers, given back as they were)."""
    if isinstance(x, torchlet.Tensor):
        leaves.append(x)
        return ("T",)
    if type(x) in (list, tuple):
        return (type(x).__name__,) + tuple(_flatten(y, leaves, consts) for y in x)
    if type(x) is dict:
        return ("dict",) + tuple((k, _flatten(v, leaves, consts)) for k, v in x.items())
    if consts is not None:
        consts.append(x)
        return ("C",)
    try:
        hash(x)
        return ("C", type(x), x)
    except TypeError:
        return ("C", type(x), id(x))


def _unflatten(spec, it, consts):
    tag = spec[0]
    if tag == "T":
        return next(it)
    if tag in ("list", "tuple"):
        vals = [_unflatten(s, it, consts) for s in spec[1:]]
        return vals if tag == "list" else tuple(vals)
    if tag == "dict":
        return {k: _unflatten(s, it, consts) for k, s in spec[1:]}
    return next(consts)


def _guard(t, exact: bool) -> tuple:
    """What a trace specialised on, for one tensor, as a flat tuple of small
    values (read straight from C: this runs on every call, and the cache's
    dict compares it on every hit)."""
    p = t._p
    nd = _lib.tl_tensor_ndim(p)
    sizes = _ffi.unpack(_lib.tl_tensor_sizes(p), nd)
    g = (type(t), _lib.tl_tensor_dtype(p), _lib.tl_tensor_device(p), _lib.tl_tensor_is_contiguous(p),
         _lib.tl_autograd_requires_grad(p), nd, *map(_ONE, sizes))
    return g + tuple(sizes) if exact else g


_ONE = (1).__eq__
# the guard key read in C (runtime/python/compile_guard.c): the same fields as
# _guard's tuple in one bytes object; TORCHLET_COMPILE_C_GUARD=0 at import
# keeps the Python tuples (the reference form)
_guard_key_c = (_fast._mod._guard_key if _fast._mod is not None and os.environ.get("TORCHLET_COMPILE_C_GUARD") != "0"
                else None)
_TYPE_IDS: dict = {}     # tensor type -> its number in the C key (the types stay alive here)


def _key_of(tensors, exact: bool):
    """The guard key of a list of tensors with the grad mode and the CPU
    capability: bytes from C, or the tuple of their `_guard`s where C cannot
    read one (not a plain Tensor object, or C keys turned off).  Equal keys
    for equal guards, in either form."""
    if _guard_key_c is not None:
        k = _guard_key_c(tensors, exact, _TYPE_IDS)
        if k is not None:
            return k
        for t in tensors:    # a tensor type seen for the first time
            if isinstance(t, torchlet.Tensor) and type(t) not in _TYPE_IDS:
                _TYPE_IDS[type(t)] = len(_TYPE_IDS)
        k = _guard_key_c(tensors, exact, _TYPE_IDS)
        if k is not None:
            return k
    return (_grad_enabled(), _lib.tl_cpu_capability(), *[_guard(t, exact) for t in tensors])


_ONE_TENSOR = ("T",)
_GUARD_FIELDS = ("type", "dtype", "device", "contiguity", "requires_grad", "rank")


# --------------------------------------------------------------- entries

class _Entry:
    """One traced and compiled graph for one guard key."""

    def __init__(self):
        self.eager_reason = None      # set: this key runs the function eagerly
        self.breaks = []              # (reason, where)
        self.plan = None
        self.backward = None          # _Backward, for a joint trace
        self.lifted = []
        self.lifted_key = None        # _key_of(lifted): checked on every call
        self.size_dependent = False
        self.out_spec = None
        self.one_tensor = False       # the function returns one tensor
        self.out_consts = []
        self.n_out = 0
        self.graph = None
        self.trace_seconds = 0.0
        self.direct_node = False      # the backward node is made without autograd.Function
        self.eager_op = None          # a Plan: the forward is one eager operator, run with its own autograd
        self.out_meta = []
        self.c_bwd = None             # the C backward node's shared part (compile_program.c), made at first use
        self.c_bwd_program = False    # the backward program is in c_bwd
        self.c_bwd_item = None        # (handle, _CompiledNode): the C nodes' Python apply


class _Backward:
    """The backward half of a joint trace, planned at its first use."""

    def __init__(self, graph: Graph, primal_rg: list, title: str, backend: str):
        self.graph, self.primal_rg, self.title, self.backend = graph, primal_rg, title, backend
        self._plan = None

    @property
    def plan(self) -> Plan:
        if self._plan is None:
            self._plan = Plan(self.graph, self.backend, self.title + " (backward)")
        return self._plan


def _cut(graph: Graph, n_fwd: int, grads: list, tangents: list, primals: list, written=()):
    """Partition a joint graph: (forward graph, saved values, backward graph).

    Walking back from the gradients, forward pointwise nodes are recomputed
    in the backward; the outputs of other forward nodes (reductions, matrix
    products, views, custom operators) are saved, and so are the values the
    forward writes anyway (`written`: its outputs; softmax's backward reads
    the output, which would otherwise be recomputed, exp and all) and the
    results of a decomposed operator (layer_norm's rstd: what eager saves;
    then a layer_norm with nothing fused around it runs eager's kernel)."""
    fwd_nodes = set(graph.nodes[:n_fwd])
    written = set(written)
    saved, need, keep = [], {v for v in grads if v is not None}, []
    for n in reversed(graph.nodes):
        outs = [o for o in n.outputs if o is not None and o in need]
        if not outs:
            continue
        origin = getattr(n, "origin", None)
        if n in fwd_nodes and (len(n.outputs) != 1 or pointwise_formula(n) is None or n.outputs[0] in written
                               or (origin is not None and n.outputs[0] in origin.outputs)):
            for o in outs:
                if o not in saved:
                    saved.append(o)
            continue
        keep.append(n)
        need.update(n.inputs())
    bwd = Graph(list(primals) + saved + list(tangents), keep[::-1], list(grads), graph.values)
    return saved, bwd


class _CompiledAutograd(torchlet.autograd.Function):
    @staticmethod
    def forward(ctx, entry, *primals):
        res = entry.plan.run(list(primals))
        outs, saved = res[:entry.n_out], res[entry.n_out:]
        ctx.entry = entry
        ctx.n_primals = len(primals)
        ctx.save_for_backward(*primals, *saved)
        ctx.out_meta = [(o.shape, o.dtype) for o in outs]
        ctx.mark_non_differentiable(*[o for o, rg in zip(outs, entry.out_rg) if not rg])
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grad_outputs):
        entry = ctx.entry
        saved = list(ctx.saved_tensors)
        tangents = [g if g is not None else torchlet.zeros(shape, dtype=dt)
                    for (shape, dt), g, rg in zip(ctx.out_meta, grad_outputs, entry.out_rg) if rg]
        create_graph = torchlet.is_grad_enabled()
        with torchlet.no_grad():
            grads = entry.backward.plan.run(saved + tangents)
        if create_graph:     # the gradients exist; differentiating them again is refused when it happens
            live = [g for g in grads if g is not None]
            # the inputs that require grad go in too, so the marked gradients get a grad_fn
            anchors = [t for t in saved[:ctx.n_primals] if t.requires_grad]
            marked = iter(_NoDoubleBackward.apply(len(live), *live, *anchors)) if live else iter(())
            grads = [next(marked) if g is not None else None for g in grads]
        out = [None] * ctx.n_primals
        for i, g in zip(entry.backward.primal_rg, grads):
            out[i] = g
        return (None, *out)


_CompiledAutograd.__name__ = "CompiledFunction"


class _CompiledNode:
    """The Python side of one CompiledFunctionBackward node made directly
    (`_apply_compiled`): the C callback node, its next edges the primals'
    gradient edges, its saved variables the primals and the saved values.
    The same node `_CompiledAutograd` records, without autograd.Function's
    general machinery (dirty tensors, non-differentiable outputs, per-call
    ctx objects), which costs more than a small graph's kernels."""

    __slots__ = ("entry", "node", "n_primals", "__weakref__")

    def __init__(self, entry, n_primals: int):
        self.entry, self.n_primals, self.node = entry, n_primals, None

    def _tl_node_apply(self, node, grads_in, grads_out):
        entry = self.entry
        n_out = entry.n_out
        # the saved tensors and the gradients in one C call (compile_node.c);
        # None: an unpack failed, and the loop below raises its error
        vals = _node_inputs_c(_fn._addr(node), _fn._addr(grads_in), n_out) if _node_inputs_c is not None else None
        if vals is not None:
            saved, grads = vals[:-n_out], vals[-n_out:]
        else:
            grads = _fn._grads_in(grads_in, n_out)
            out = _ffi.new("tl_tensor **")
            saved = []
            for i in range(_lib.tl_callback_node_num_saved(node)):
                _check(_lib.tl_callback_node_unpack(node, i, out))
                saved.append(_wrap(out[0]))
        tangents = [g if g is not None else torchlet.zeros(shape, dtype=dt)
                    for (shape, dt), g in zip(entry.out_meta, grads)]
        create_graph = _fn._grad_mode()
        prev = _fn._guard_enter(0)
        try:
            res = entry.backward.plan.run(saved + tangents)
        finally:
            _fn._guard_exit(prev)
        if entry.c_bwd is not None and not entry.c_bwd_program:   # planned now: the C apply runs it from here on
            entry.c_bwd_program = True
            if entry.backward.plan.program is not None:
                _fast._mod._compiled_bwd_program(entry.c_bwd, entry.backward.plan.program)
        if create_graph:     # as _CompiledAutograd.backward: differentiating them again is refused
            live = [g for g in res if g is not None]
            anchors = [t for t in saved[:self.n_primals] if t.requires_grad]
            marked = iter(_NoDoubleBackward.apply(len(live), *live, *anchors)) if live else iter(())
            res = [next(marked) if g is not None else None for g in res]
        for i, g in zip(entry.backward.primal_rg, res):
            if g is not None and _lib.tl_node_should_compute_output(node, i):
                _fn._store_grad(grads_out, i, g)

    def _tl_node_released(self):
        self.node = None


# the node made in one C call (runtime/python/compile_node.c); the Python
# version below under TORCHLET_COMPILE_C_NODE=0 (the reference form)
_attach_node_c = (_fast._mod._attach_node if _fast._mod is not None and os.environ.get("TORCHLET_COMPILE_C_NODE") != "0"
                  else None)
_NODE_NAME = b"CompiledFunctionBackward"
_node_inputs_c = _fast._mod._node_inputs if _attach_node_c is not None else None
_call_compiled_c = _fast._mod._call_compiled if _attach_node_c is not None else None


def _apply_compiled(entry, primals):
    """The forward plan's outputs, with one CompiledFunctionBackward node as
    their history; None when the outputs need what only autograd.Function
    does (an output that is an input or repeats, one that is not
    differentiable), and the caller goes through `_CompiledAutograd`.
    The primals' gradient edges are taken before the plan runs (as PyTorch
    takes them before forward), which matters only to a graph that mutates
    one; for the others the node is made in C after the plan ran: with the
    whole forward in the same call when the plan is a C program, and then
    the node's apply runs the backward program in C too."""
    if _attach_node_c is None or entry.plan.mutates:
        return _apply_compiled_py(entry, primals, None)
    if _call_compiled_c is not None and entry.plan.program is not None and not _function_mode._active:
        bwd = entry.c_bwd if entry.c_bwd is not None else _make_c_bwd(entry, len(primals))
        r = _call_compiled_c(entry.plan.program, bwd, primals, entry.n_out, _NODE_NAME)
        if r is not None:
            return r if r != -1 else _fn.raise_pending_error()
    res = _run_no_grad(entry.plan, primals)
    n_out = entry.n_out
    target = _CompiledNode(entry, len(primals))
    h = _ffi.new_handle(target)
    addr = _fn._addr(h)
    _fn._live[addr] = (h, target)     # the node's release drops it (autograd/function.py)
    rc = _attach_node_c(primals, res[:n_out], res[n_out:], _NODE_NAME, _APPLY, _RELEASE, addr)
    if rc == 1:
        return res[:n_out]
    _fn._live.pop(addr, None)
    if rc == -1:
        _fn.raise_pending_error()
    if rc == 0:
        return None
    return _apply_compiled_py(entry, primals, res)    # -2: a tensor C cannot read


def _make_c_bwd(entry, n_primals: int):
    """entry.c_bwd: what its C nodes share, with the Python apply (one
    _CompiledNode for the entry).  The entry holds the apply's handle; C
    puts it in _fn._live while nodes exist (compile_program.c), so a graph
    outlives its compiled function, and an entry nobody uses is collected."""
    target = _CompiledNode(entry, n_primals)
    h = _ffi.new_handle(target)
    addr = _fn._addr(h)
    entry.c_bwd_item = (h, target)
    entry.c_bwd = _fast._mod._compiled_bwd(tuple(entry.backward.primal_rg), entry.n_out, _APPLY, addr, _fn._live,
                                           entry.c_bwd_item)
    return entry.c_bwd


def _run_no_grad(plan, inputs):
    prev = _fn._guard_enter(0)
    try:
        return plan.run(inputs)
    finally:
        _fn._guard_exit(prev)


def _apply_compiled_py(entry, primals, res):
    """_apply_compiled one cffi call at a time; `res`: the plan's results when
    it already ran."""
    edges = []
    try:
        for t in primals:
            e = _lib.tl_autograd_gradient_edge(t._p)
            if e.node == _ffi.NULL and t.requires_grad:   # allocation failure: the error is pending
                _fn.raise_pending_error()
            edges.append(e)
        if res is None:
            res = _run_no_grad(entry.plan, primals)
        n_out = entry.n_out
        outs, saved = res[:n_out], res[n_out:]
        ins = {_fn._addr(t._p) for t in primals}
        out_ptrs = {_fn._addr(o._p) for o in outs}
        if len(out_ptrs) != n_out or out_ptrs & ins:
            return None      # (rare: the graph returns an input, or one value twice)
        target = _CompiledNode(entry, len(primals))
        node = _fn._new_node(target, "CompiledFunctionBackward", n_out, len(primals), len(primals) + len(saved))
        target.node = node
        try:
            for i, e in enumerate(edges):
                _check(_lib.tl_node_set_next_edge(node, i, e))
            for i, o in enumerate(outs):
                _check(_lib.tl_autograd_set_history(o._p, node, i))
            for i, t in enumerate(primals):
                _check(_lib.tl_callback_node_save(node, i, t._p, False))
            for i, t in enumerate(saved, len(primals)):
                _check(_lib.tl_callback_node_save(node, i, t._p, _fn._addr(t._p) in out_ptrs))
        finally:
            _lib.tl_node_release(node)   # the outputs hold it now
        return outs
    finally:
        for e in edges:
            _lib.tl_node_release(e.node)


_APPLY = int(_ffi.cast("uintptr_t", _lib.tl_py_node_apply))
_RELEASE = int(_ffi.cast("uintptr_t", _lib.tl_py_node_release))


class _NoDoubleBackward(torchlet.autograd.Function):
    """Stands between a compiled function's gradients (create_graph=True) and
    whatever differentiates them: AOTAutograd's refusal, at the same moment."""

    @staticmethod
    def forward(ctx, n, *tensors):
        return tuple(g.view_as(g) for g in tensors[:n])

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("torchlet.compile does not currently support double backward")


# --------------------------------------------------------------- compiled functions

class CompiledFunction:
    """What torchlet.compile returns for a function."""

    def __init__(self, fn, *, fullgraph=False, dynamic=None, backend="inductor", check=False):
        if backend not in ("inductor", "eager"):
            raise ValueError(f"torchlet.compile: unknown backend '{backend}' (expected 'inductor' or 'eager')")
        self._fn = fn
        self.fullgraph, self.dynamic, self.backend, self.check = fullgraph, dynamic, backend, check
        functools.update_wrapper(self, fn)
        self._cache_reset()
        _compiled_functions.add(self)

    def _cache_reset(self):
        self._generic: dict = {}
        self._exact: dict = {}
        self._keys: list = []
        self._warned = False
        self.last_entry = None

    def __get__(self, obj, objtype=None):   # a compiled method binds like a function
        return self if obj is None else functools.partial(self.__call__, obj)

    def __call__(self, *args, **kwargs):
        if _stance[0] == "force_eager":
            return self._fn(*args, **kwargs)
        flat: list = []
        spec = _flatten_call(args, kwargs, flat)
        state = _default_dtype()      # the grad mode and CPU capability are in the tensors' keys
        # size-free keys first (when any entry has one), then exact ones (when any has one)
        key = entry = xkey = None
        if self._generic:
            key = (spec, _key_of(flat, False), state)
            entry = self._generic.get(key)
        if entry is None or (entry.lifted and not self._lifted_ok(entry)):
            xkey = (spec, _key_of(flat, True), state)
            entry = self._exact.get(xkey) if self._exact else None
            if entry is not None and entry.lifted and not self._lifted_ok(entry):
                entry = None
        if entry is None:
            if key is None and self.dynamic is not False:
                key = (spec, _key_of(flat, False), state)
            entry = self._miss(args, kwargs, flat, key, xkey)
            if entry is None:
                return self._fn(*args, **kwargs)
        self.last_entry = entry
        if entry.eager_reason is not None:
            return self._fn(*args, **kwargs)
        out = self._run(entry, flat)
        if self.check:
            _compare(out, self._fn(*args, **kwargs))
        return out

    @staticmethod
    def _lifted_ok(entry) -> bool:
        return _key_of(entry.lifted, entry.size_dependent) == entry.lifted_key

    def _run(self, entry, flat):
        primals = flat + entry.lifted
        if entry.eager_op is not None:
            outs = entry.eager_op.run(primals)
        elif entry.backward is not None:
            outs = None
            if entry.direct_node:
                outs = _apply_compiled(entry, primals)
            if outs is None:
                outs = _CompiledAutograd.apply(entry, *primals)
        else:
            outs = entry.plan.run(primals)
        if entry.one_tensor:
            return outs[0]
        return _unflatten(entry.out_spec, iter(outs), iter(entry.out_consts))

    # -- a new key
    def _miss(self, args, kwargs, flat, key, xkey):
        # the guards as Python tuples, which _what_changed reads field by field
        described = (xkey[0], tuple([_guard(t, True) for t in flat]),
                     (_grad_enabled(), xkey[2], _lib.tl_cpu_capability()))
        if self._keys:
            if _stance[0] == "fail_on_recompile":
                raise RecompileError(f"torchlet.compile: {self.__name__} would recompile ({_what_changed(self._keys[-1], described)} "
                                     "changed) under set_stance('fail_on_recompile')")
            if _stance[0] == "eager_on_recompile":
                return None
        if len(self._keys) >= cache_size_limit:
            if not self._warned:
                self._warned = True
                warnings.warn(f"torchlet.compile: {getattr(self, '__name__', 'function')} hit cache_size_limit "
                              f"({cache_size_limit}); the last change was in {_what_changed(self._keys[-1], described)}. "
                              "New inputs of this kind run eagerly.", stacklevel=3)
            return None
        entry = self._compile(args, kwargs, flat)
        self._keys.append(described)
        if entry.size_dependent or key is None:
            self._exact[xkey] = entry
        else:
            self._generic[key] = entry
        return entry

    def _compile(self, args, kwargs, flat) -> _Entry:
        entry = _Entry()
        title = f"{getattr(self._fn, '__qualname__', 'fn')} ({_where(self._fn)})"
        t0 = time.perf_counter()
        joint = {}

        def grad_of(out, fakes, tracer):
            if not torchlet.is_grad_enabled():
                return None
            leaves: list = []
            _flatten(out, leaves, [])
            outs_rg = [o for o in leaves if o.requires_grad]
            # autograd sits above the tracer: it saw the user inputs' fakes, but
            # lifted tensors (parameters) as themselves
            n_user = len(fakes)
            ins = list(tracer.input_fakes[:n_user]) + list(tracer.lifted)
            ins_rg = [(i, f) for i, f in enumerate(ins) if f.requires_grad]
            if not outs_rg or not ins_rg:
                return None
            joint["n_fwd"] = len(tracer.graph.nodes)
            joint["n_primals"] = len(tracer.graph.inputs)
            tangents = []
            from ..utils._python_dispatch import _disable_current_modes
            for o in outs_rg:
                with _disable_current_modes():
                    real = torchlet.empty(tuple(o.shape), dtype=o.dtype)
                f = tracer.fake_mode.from_tensor(real)
                tracer.add_input(real, f)
                tangents.append(f)
            joint["tangents"] = tangents
            joint["outs_rg"] = outs_rg
            joint["ins_rg"] = [i for i, _ in ins_rg]
            return torchlet.autograd.grad(outs_rg, [f for _, f in ins_rg], tangents, allow_unused=True)

        try:
            tracer, out, grads = trace(self._fn, args, kwargs, flat, grad_of=grad_of)
        except GraphBreak as e:
            if self.fullgraph:
                raise Unsupported(f"torchlet.compile(fullgraph=True): graph break: {e.reason} at {e.where}") from None
            entry.eager_reason = f"graph break: {e.reason}"
            entry.breaks.append((e.reason, e.where))
            return entry
        except Exception as e:   # a genuine error raises again when the function runs eagerly
            entry.eager_reason = f"the trace failed: {type(e).__name__}: {e}"
            entry.breaks.append((entry.eager_reason, ""))
            if self.fullgraph:
                raise
            return entry
        entry.trace_seconds = time.perf_counter() - t0
        g = tracer.graph
        leaves: list = []
        entry.out_spec = _flatten(out, leaves, entry.out_consts)
        entry.one_tensor = entry.out_spec == _ONE_TENSOR
        outs = [tracer.env[_addr(t)] if _addr(t) in tracer.env else tracer.value_of(t)[0] for t in leaves]
        entry.n_out = len(outs)
        entry.lifted = list(tracer.lifted)
        entry.size_dependent = self.dynamic is False or tracer.sizes_read or bool(joint) or _has_sizes(g)
        entry.lifted_key = _key_of(entry.lifted, entry.size_dependent)
        if joint:
            n_primals = joint["n_primals"]
            primals = g.inputs[:n_primals]
            tangents = g.inputs[n_primals:]
            grad_vals = [tracer.env[_addr(x)] if x is not None else None for x in grads]
            fwd_graph = Graph(list(primals), g.nodes[:joint["n_fwd"]], outs, g.values)
            saved, bwd = _cut(g, joint["n_fwd"], grad_vals, tangents, primals, outs)
            fwd_graph = Graph(list(primals), g.nodes[:joint["n_fwd"]], outs + saved, g.values).prune()
            entry.graph = fwd_graph
            out_rg_ids = {_addr(o) for o in joint["outs_rg"]}
            entry.out_rg = [_addr(t) in out_rg_ids for t in leaves]
            entry.out_meta = [(tuple(t.shape), t.dtype) for t in leaves]
            # every output differentiable: the node is made directly
            entry.direct_node = all(entry.out_rg)
            entry.plan = Plan(fwd_graph, self.backend, title)
            entry.backward = _Backward(bwd, joint["ins_rg"], title, self.backend)
            if entry.direct_node:
                entry.eager_op = _single_op_plan(entry.plan, primals, outs, self.backend, title)
        else:
            entry.graph = Graph(list(g.inputs), g.nodes, outs, g.values).prune()
            entry.plan = Plan(entry.graph, self.backend, title)
        if entry.plan.build_error:
            _warn_once_build(entry.plan.build_error)
        return entry

    # -- introspection
    def kernels(self) -> str:
        """The generated C of every graph compiled so far (each group's loop
        commented with its operators and the YAML entries they came from)."""
        srcs = []
        for e in list(self._generic.values()) + list(self._exact.values()):
            if e.plan is not None and e.plan.source:
                srcs.append(e.plan.source)
            if e.backward is not None and e.backward.plan.source:
                srcs.append(e.backward.plan.source)
        return "\n".join(srcs)


def _single_op_plan(plan: Plan, primals: list, outs: list, backend: str, title: str):
    """A forward that is one eager operator with nothing fused around it (a
    lone layer_norm): a plan running just that operator for the outputs, with
    autograd on, so that it records the operator's own backward node, as
    eager does.  Then the call is eager's call, and neither a
    CompiledFunctionBackward node nor a backward plan runs.  None otherwise."""
    if plan.groups or len(plan.steps) != 1 or plan.mutates:
        return None
    node = plan.steps[0].node
    if getattr(node.op, "namespace", None) != "aten" or not all(any(o is v for v in node.outputs) for o in outs):
        return None
    return Plan(Graph(list(primals), [node], list(outs), plan.graph.values), backend, title)


def _has_sizes(g: Graph) -> bool:
    """An operator took a size (SymInt) argument: the graph holds that size."""
    for n in g.nodes:
        for a in n.op._schema.arguments:
            t = str(a.type)
            if "SymInt" in t:
                return True
    return False


def _what_changed(old, new) -> str:
    (ospec, oguards, ostate), (nspec, nguards, nstate) = old, new
    if ospec != nspec:
        return "the arguments' structure or a Python value"
    if ostate != nstate:
        names = ("grad mode", "default dtype", "CPU capability")
        return next(n for n, a, b in zip(names, ostate, nstate) if a != b)
    for i, (a, b) in enumerate(zip(oguards, nguards)):
        for name, x, y in zip(_GUARD_FIELDS, a, b):
            if x != y:
                return f"the {name} of tensor argument {i}"
        if a != b:
            nd = a[5]
            return f"the {'size-1 pattern' if a[6:6 + nd] != b[6:6 + nd] else 'sizes'} of tensor argument {i}"
    return "the arguments"


def _where(fn) -> str:
    code = getattr(fn, "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code else type(fn).__name__


_build_warned = []


def warn_build_failure(reason):
    """The one warning a process gets when fused kernels cannot be built."""
    if not _build_warned:
        _build_warned.append(reason)
        warnings.warn(f"torchlet.compile runs eagerly: {reason}", stacklevel=4)


_warn_once_build = warn_build_failure     # tests make a failed build an error instead


def _compare(out, ref):
    got, want = [], []
    _flatten(out, got, [])
    _flatten(ref, want, [])
    for i, (a, b) in enumerate(zip(got, want)):
        if a.shape != b.shape or a.dtype != b.dtype:
            raise RuntimeError(f"torchlet.compile(check=True): output {i}: compiled {a.dtype}{list(a.shape)} "
                               f"vs eager {b.dtype}{list(b.shape)}")
        import numpy as np
        x, y = a.detach().numpy(), b.detach().numpy()
        bad = ~np.isclose(x, y, rtol=1.3e-6 if x.dtype == np.float32 else 1e-7, atol=1e-5, equal_nan=True)
        if bad.any():
            at = tuple(int(j) for j in np.argwhere(bad)[0])
            raise RuntimeError(f"torchlet.compile(check=True): output {i} differs from eager first at {at}: "
                               f"compiled {x[at]!r}, eager {y[at]!r}")


# --------------------------------------------------------------- modules

def _optimized_module_class():
    from ..nn import Module

    class OptimizedModule(Module):
        """A compiled nn.Module: forward runs through torchlet.compile;
        parameters stay the original module's (lifted to graph inputs on
        every call), under the `_orig_mod.` prefix as in PyTorch."""

        def __init__(self, mod, compiled_forward):
            super().__init__()
            self._orig_mod = mod
            object.__setattr__(self, "_compiled_forward", compiled_forward)

        def forward(self, *args, **kwargs):
            return self._compiled_forward(*args, **kwargs)

        def __getattr__(self, name):
            try:
                return super().__getattr__(name)
            except AttributeError:
                return getattr(self._modules["_orig_mod"], name)

        def kernels(self) -> str:
            return self._compiled_forward.kernels()

    return OptimizedModule


def compile(model=None, *, fullgraph: bool = False, dynamic=None, backend="inductor", mode=None, options=None,
            disable: bool = False, check: bool = False):
    """torch.compile: returns the compiled function or module (usable as a decorator)."""
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                 options=options, disable=disable, check=check)
    if mode is not None and mode not in ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"):
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: default, reduce-overhead, max-autotune, "
                           "max-autotune-no-cudagraphs")
    if not callable(model):
        raise RuntimeError("compile() expects a callable (a function or an nn.Module)")
    if disable:
        return model
    from ..nn import Module
    if isinstance(model, Module):
        fwd = CompiledFunction(model.forward, fullgraph=fullgraph, dynamic=dynamic, backend=backend, check=check)
        return _optimized_module_class()(model, fwd)
    return CompiledFunction(model, fullgraph=fullgraph, dynamic=dynamic, backend=backend, check=check)
