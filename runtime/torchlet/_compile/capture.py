"""Capture: run the user's function once over fake tensors and record every
operator call the dispatcher sees.

The tracer is a TorchDispatchMode stacked above a FakeTensorMode, so no data
is computed: each operator runs its Meta kernel (structured meta functions,
`register_fake` kernels, composite decompositions) and the tracer records
`(OpOverload, arguments, output metadata)` into a `Graph`.  Autograd sits
above the Python key, so composites decompose below it and a backward pass
run under the tracer records the derivatives.yaml formulas as operators
(the joint graph of compiled autograd).

Real tensors reaching an operator (a module's parameters, a closure's
tensors, globals) are *lifted*: they become graph inputs, passed by identity
on every call, never frozen as constants.  A data read (`item`, `bool`,
`float`, `tolist`, `numpy`) cannot be traced: it raises `GraphBreak` naming
the user's file:line.  A few whole operators are recorded as their
decomposition so that fusion sees their pointwise parts (`DECOMPOSITIONS`).
"""
from __future__ import annotations

import os
import sys

import torchlet

from .._ops import ops
from .._subclasses.fake_tensor import DataDependentOutputException, FakeTensor, FakeTensorMode
from ..utils._python_dispatch import TorchDispatchMode
from .graph import Graph, Node, Value

aten = ops.aten
_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _library_dirs() -> tuple:
    """torchlet's own folders (the package and its generated bindings):
    frames there are not the user's."""
    from .. import _generated
    return (_PKG, os.path.dirname(os.path.realpath(_generated.__file__)), os.path.dirname(os.path.abspath(_generated.__file__)))


def _is_library(filename: str) -> bool:
    fn = os.path.realpath(filename)
    return fn.startswith(_library_dirs()) or "importlib" in fn or fn.startswith("<torchlet")


class GraphBreak(Exception):
    """The trace met something it cannot record (a data read, an unsupported construct)."""

    def __init__(self, reason: str, where: str = ""):
        super().__init__(f"{reason} at {where}" if where else reason)
        self.reason, self.where = reason, where


def user_frame(depth: int = 1) -> str:
    """'file:line' of the innermost frame outside the torchlet package."""
    f = sys._getframe(depth)
    while f is not None:
        if not _is_library(f.f_code.co_filename):
            return f"{f.f_code.co_filename}:{f.f_lineno}"
        f = f.f_back
    return "<unknown>"


def _addr(t) -> int:
    from .._rt import ffi
    return int(ffi.cast("uintptr_t", t._p))


def _alias_key(t) -> tuple:
    """What identifies a traced tensor when autograd hands back a new C
    tensor over the same data (a saved output unpacked in backward)."""
    from .._rt import ffi, lib
    return (int(ffi.cast("uintptr_t", lib.tl_tensor_storage(t._p))), t.storage_offset(), tuple(t.shape),
            tuple(t.stride()), t.dtype)


# ------------------------------------------------------------ decompositions

def _softmax(call, x, dim, half_to_float):
    # eager's row loop (kernels/cpu/nn_kernel.c, as PyTorch's vectorized one)
    # multiplies by the sum's reciprocal: one division per row
    m = call(aten.amax.default, x, [dim], True)
    e = call(aten.exp.default, call(aten.sub.Tensor, x, m))
    return call(aten.mul.Tensor, e, call(aten.reciprocal.default, call(aten.sum.dim_IntList, e, [dim], True)))


def _log_softmax(call, x, dim, half_to_float):
    m = call(aten.amax.default, x, [dim], True)
    s = call(aten.sub.Tensor, x, m)
    lse = call(aten.log.default, call(aten.sum.dim_IntList, call(aten.exp.default, s), [dim], True))
    return call(aten.sub.Tensor, s, lse)


def _softmax_backward_data(call, grad, out, dim, input_dtype):
    gs = call(aten.sum.dim_IntList, call(aten.mul.Tensor, grad, out), [dim], True)
    return call(aten.mul.Tensor, out, call(aten.sub.Tensor, grad, gs))


def _native_layer_norm(call, x, shape, w, b, eps):
    mean = call(aten.mean.dim, x, [-1], True)
    xc = call(aten.sub.Tensor, x, mean)
    var = call(aten.mean.dim, call(aten.mul.Tensor, xc, xc), [-1], True)
    rstd = call(aten.rsqrt.default, call(aten.add.Scalar, var, eps))
    out = call(aten.mul.Tensor, xc, rstd)
    if w is not None:
        out = call(aten.mul.Tensor, out, w)
    if b is not None:
        out = call(aten.add.Tensor, out, b)
    return out, mean, rstd


def _decomposable(func, args):
    """Decompose only float32/float64 inputs over the last dimension (the
    fused row kernels' shape); anything else stays one operator."""
    x = args[0]
    if x.dtype not in (torchlet.float32, torchlet.float64) or x.dim() == 0:
        return False
    if func is aten.native_layer_norm.default:
        return len(args[1]) == 1 and all(a is None or a.dim() == 1 for a in args[2:4])
    dim = args[2] if func is aten._softmax_backward_data.default else args[1]
    if func is aten._softmax_backward_data.default and args[0].dtype != args[1].dtype:
        return False
    return dim in (-1, x.dim() - 1) and not args[-1] is True


DECOMPOSITIONS = {
    aten._softmax.default: _softmax,
    aten._log_softmax.default: _log_softmax,
    aten._softmax_backward_data.default: _softmax_backward_data,
    aten.native_layer_norm.default: _native_layer_norm,
}


class Origin:
    """The operator a run of recorded nodes decomposes: `Node(op, args, kwargs,
    outputs)` to put back when fusion leaves its decomposition alone."""

    def __init__(self, op, args, kwargs, outputs, out_structure, nodes):
        self.op, self.args, self.kwargs = op, args, kwargs
        self.outputs, self.out_structure, self.nodes = outputs, out_structure, nodes

    def node(self) -> Node:
        return Node(self.op, self.args, self.kwargs, list(self.outputs), self.out_structure,
                    self.nodes[0].where if self.nodes else "")


# ------------------------------------------------------------------ tracer

class Tracer(TorchDispatchMode):
    """Records operator calls over fakes into `self.graph`."""

    # set while the backward half of a joint trace runs: a composite operator a
    # derivative formula calls is recorded as called, not decomposed below the
    # mode (some are computed directly in C, native_layer_norm_backward, and
    # their results must be values of the graph)
    record_composites = False

    def __init__(self, fake_mode: FakeTensorMode, decompose: bool = True):
        super().__init__()
        self.fake_mode = fake_mode
        self.graph = Graph()
        self.env: dict[int, Value] = {}
        self.fakes: dict[int, object] = {}   # keeps every traced tensor alive (addresses stay unique)
        self.aliases: dict[tuple, tuple] = {}
        self.lifted: list = []               # real tensors lifted to inputs, in input order
        self.input_fakes: list = []          # the fake of every graph input, in input order
        self.sizes_read = False              # user code read a size: the graph is shape-specialised
        self.decompose = decompose

    # -- values
    def add_input(self, real, fake) -> Value:
        v = self._new_value(fake, None)
        self.graph.inputs.append(v)
        self.input_fakes.append(fake)
        return v

    def _new_value(self, fake, producer, rebind: bool = True) -> Value:
        v = self.graph.new_value(tuple(fake.shape), fake.dtype, _device_of(fake), tuple(fake.stride()), producer,
                                 bool(fake.requires_grad))
        if rebind or _addr(fake) not in self.env:
            self.env[_addr(fake)] = v
        self.fakes[_addr(fake)] = fake
        self.aliases.setdefault(_alias_key(fake), (v, fake))
        return v

    def value_of(self, t):
        """(Value, fake) for a tensor argument; a real tensor is lifted."""
        key = _addr(t)
        v = self.env.get(key)
        if v is not None:
            return v, self.fakes[key]
        if isinstance(t, FakeTensor) or t.device.type == "meta":
            hit = self.aliases.get(_alias_key(t))
            if hit is not None:
                return hit
            raise GraphBreak("a tensor aliasing a traced value in a way the trace cannot name")
        key = ("real",) + _alias_key(t)
        hit = self.aliases.get(key)
        if hit is not None:
            return hit
        fake = self.fake_mode.from_tensor(t)
        v = self.env.get(_addr(fake))
        if v is None:
            v = self.add_input(t, fake)
            self.lifted.append(t)
        self.aliases[key] = (v, fake)
        return v, fake

    # -- recording
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self.decompose and func in DECOMPOSITIONS and _decomposable(func, args):
            start = len(self.graph.nodes)
            out = DECOMPOSITIONS[func](self.record, *args, **kwargs)
            # what the operator was, should fusion find nothing to fuse it with
            outs = out if isinstance(out, (tuple, list)) else (out,)
            origin = Origin(func, *self._split(args)[:1], self._split(kwargs)[0],
                            [self.env[_addr(o)] for o in outs], "tuple" if isinstance(out, (tuple, list)) else "single",
                            self.graph.nodes[start:])
            for n in origin.nodes:
                n.origin = origin
            return out
        return self.record(func, *args, **kwargs)

    def record(self, func, *args, **kwargs):
        vargs, fargs = self._split(args)
        vkwargs, fkwargs = self._split(kwargs)
        out = func(*fargs, **fkwargs)   # below the tracer: FakeTensorMode computes the metadata
        node = Node(func, vargs, vkwargs, [], "tuple" if isinstance(out, (tuple, list)) else "single",
                    user_frame())
        row = _pointwise_row(func)
        if row is not None and row["result"]:
            # a comparison computes in its inputs' common dtype, not its result's
            from .._rt import result_type
            named = dict(zip([a.name for a in func._schema.arguments], fargs))
            named.update(fkwargs)
            operands = [named[n] for n, k in row["args"] if k == "tensor" and named.get(n) is not None]
            node.common_dtype = result_type(*operands)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        # an operator that returns its input object unchanged (conj of a real
        # tensor, contiguous of a contiguous one) leaves that object naming
        # its value (a function output found by object stays the forward's);
        # one that writes it (add_, out=) names the object's new value
        rebind = any(a.alias_info is not None and a.alias_info.is_write for a in func._schema.arguments)
        for o in outs:
            node.outputs.append(self._new_value(o, node, rebind) if isinstance(o, torchlet.Tensor) else None)
        self.graph.nodes.append(node)
        return out

    def _split(self, x):
        """(structure with Values, structure with fakes) for an argument tree."""
        if isinstance(x, torchlet.Tensor):
            return self.value_of(x)
        if isinstance(x, (list, tuple)):
            pairs = [self._split(y) for y in x]
            return type(x)(p[0] for p in pairs), type(x)(p[1] for p in pairs)
        if isinstance(x, dict):
            pairs = {k: self._split(y) for k, y in x.items()}
            return {k: p[0] for k, p in pairs.items()}, {k: p[1] for k, p in pairs.items()}
        return x, x


def _pointwise_row(func):
    from .._generated._pointwise_table import POINTWISE
    return POINTWISE.get(func.name())


def _device_of(t):
    return getattr(t, "fake_device", None) or t.device


_MACHINERY = {"capture.py", "fake_tensor.py", "_python_dispatch.py", "_subclass.py", "_tensor_str.py"}


class _SizeReadWatch:
    """Marks the tracer when Python code (the user's, or a torchlet
    composite's) reads a fake's size: what it computes from the size (a
    branch, a `1 / D` scalar) is only right for that size, so the graph is
    specialised (guarded on exact sizes)."""

    def __init__(self, tracer):
        self.tracer = tracer
        self.saved = {}

    def __enter__(self):
        tracer = self.tracer
        for name in ("shape", "size", "numel", "__len__"):
            base = getattr(torchlet.Tensor, name)
            self.saved[name] = FakeTensor.__dict__.get(name)

            def wrap(base=base, name=name):
                def mark():
                    if os.path.basename(sys._getframe(2).f_code.co_filename) not in _MACHINERY:
                        tracer.sizes_read = True
                if isinstance(base, property):
                    def get(self):
                        mark()
                        return base.fget(self)
                    return property(get)

                def method(self, *a, **k):
                    mark()
                    return base(self, *a, **k)
                return method
            setattr(FakeTensor, name, wrap())
        return self

    def __exit__(self, *exc):
        for name, old in self.saved.items():
            if old is None:
                delattr(FakeTensor, name)
            else:
                setattr(FakeTensor, name, old)


def trace(fn, args: tuple, kwargs: dict, flat_inputs: list, decompose: bool = True,
          grad_of=None):
    """Trace fn(*args, **kwargs) over fakes of `flat_inputs` (the real tensors
    among the arguments, in pytree order).  Returns (tracer, fake outputs).

    grad_of: None, or a function (fake outputs, fake inputs) -> gradient fakes
    run under the tracer after the forward (the joint trace)."""
    fm = FakeTensorMode(allow_non_fake_inputs=True)
    tracer = Tracer(fm, decompose)
    with fm:
        fakes = []
        for t in flat_inputs:
            f = fm.from_tensor(t)
            tracer.add_input(t, f)
            fakes.append(f)
        swap = dict(zip(map(id, flat_inputs), fakes))
        fargs = _replace(args, swap)
        fkwargs = _replace(kwargs, swap)
        try:
            with tracer, _SizeReadWatch(tracer):
                out = fn(*fargs, **fkwargs)
                tracer.record_composites = True
                grads = grad_of(out, fakes, tracer) if grad_of is not None else None
        except DataDependentOutputException as e:
            raise GraphBreak("a data read (item / bool / int / float / tolist of a tensor computed in the "
                             "function)", _traceback_where(e)) from None
        except RuntimeError as e:
            if "Cannot copy out of fake tensor" not in str(e):
                raise
            raise GraphBreak("a data read (numpy / copy out of a tensor computed in the function)",
                             _traceback_where(e)) from None
    return tracer, out, grads


def _traceback_where(exc) -> str:
    """'file:line' of the innermost traceback frame outside torchlet."""
    where, tb = "<unknown>", exc.__traceback__
    while tb is not None:
        if not _is_library(tb.tb_frame.f_code.co_filename):
            where = f"{tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}"
        tb = tb.tb_next
    return where


def _replace(x, swap):
    if isinstance(x, torchlet.Tensor):
        return swap.get(id(x), x)
    if isinstance(x, (list, tuple)) and type(x) in (list, tuple):
        return type(x)(_replace(y, swap) for y in x)
    if isinstance(x, dict):
        return {k: _replace(y, swap) for k, y in x.items()}
    return x


__all__ = ["GraphBreak", "Tracer", "trace", "user_frame", "DECOMPOSITIONS"]
