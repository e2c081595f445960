"""``torchlet.autograd.Function``: custom differentiable operations whose
backward is Python, run by the C autograd engine (PyTorch's
``torch.autograd.Function``).

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            y, = ctx.saved_tensors
            return g * y

    y = Exp.apply(x)          # y.grad_fn.name() == "ExpBackward"

``apply`` runs ``forward`` with grad mode off. When grad mode is on and a
Tensor input requires grad, the outputs get one C *callback node*
(``tl_callback_node_new``, runtime/src/autograd_callback.c) named
``<class>Backward``: its next edges are the Tensor inputs' gradient edges
(collected before forward runs, as PyTorch does), the saved tensors are the
node's saved variables (version checks, freed after backward unless
``retain_graph``), and its apply is the cffi callback ``tl_py_node_apply``,
which calls ``backward`` under the grad mode the engine chose (on with
``create_graph``). The node owns a cffi handle to the ctx (which holds the
class); ``tl_py_node_release`` drops it when the node dies. An exception
raised in ``backward`` reaches the caller of ``backward()`` / ``grad()``
as itself (``_errors.set_pending_exception``). See docs/AUTOGRAD.md.
"""
from __future__ import annotations

import functools
import inspect
import warnings
import weakref

from .._C import ffi, lib
from .._errors import check, raise_pending_error, set_pending_exception
from .._tensor import Tensor, _wrap

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "FunctionMeta", "InplaceFunction", "once_differentiable"]

_NULL = ffi.NULL
_addr = lambda p: int(ffi.cast("uintptr_t", p))  # noqa: E731
_retain = lib.tl_tensor_retain
_grad_mode = lib.tl_grad_mode_is_enabled
_guard_enter = lib.tl_grad_mode_guard_enter
_guard_exit = lib.tl_autograd_mode_guard_exit


# ------------------------------------------------------------ callback nodes
# handle address -> (cffi handle, target): what keeps each node's Python side
# alive; the node's release callback removes the entry.
_live: dict = {}


@ffi.def_extern()
def tl_py_node_apply(ctx, node, grads_in, grads_out):
    """apply of every node made by _new_node: the target's _tl_node_apply."""
    try:
        ffi.from_handle(ctx)._tl_node_apply(node, grads_in, grads_out)
        return 0
    except BaseException as e:  # noqa: BLE001 - becomes the thread-local error, raised again by the caller
        set_pending_exception(e)
        return -1


@ffi.def_extern()
def tl_py_node_release(ctx):
    """The node died: drop its handle (and with it the target)."""
    try:
        entry = _live.pop(_addr(ctx), None)
        if entry is not None:
            entry[1]._tl_node_released()
    except BaseException:  # noqa: BLE001 - interpreter shutdown (module globals gone): nothing to keep alive
        pass


def _new_node(target, name: str, num_inputs: int, num_next: int, num_saved: int = 0):
    """A C callback node (new reference) whose apply calls
    target._tl_node_apply(node, grads_in, grads_out) and whose death calls
    target._tl_node_released()."""
    h = ffi.new_handle(target)
    node = lib.tl_callback_node_new(name.encode(), num_inputs, num_next, lib.tl_py_node_apply,
                                    lib.tl_py_node_release, h, num_saved)
    if node == _NULL:
        raise_pending_error()
    _live[_addr(h)] = (h, target)
    return node


def _target_of(node):
    """The Python object behind a callback node made here, or None."""
    h = lib.tl_callback_node_ctx(node)
    entry = _live.get(_addr(h)) if h != _NULL else None
    return entry[1] if entry is not None else None


def _grads_in(grads_in, n: int) -> list:
    out = []
    for i in range(n):
        p = grads_in[i]
        if p == _NULL:
            out.append(None)
        else:
            _retain(p)
            out.append(_wrap(p))
    return out


def _store_grad(grads_out, i: int, g: Tensor) -> None:
    _retain(g._p)
    grads_out[i] = g._p


# ------------------------------------------------------------------ the ctx
class FunctionCtx:
    """What ``forward`` / ``setup_context`` record for ``backward``: saved
    tensors, dirty and non-differentiable tensors, grad materialization, and
    any attribute the user sets."""

    def save_for_backward(self, *tensors):
        """Save tensors (or None) for backward; read them back with ``saved_tensors``."""
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        """Kept for PyTorch compatibility (forward-mode AD is not implemented)."""
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise AssertionError("save_for_forward expects all arguments to be tensors; you should "
                                     "save non-tensors as attributes on ctx.")
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        """Mark input tensors modified in place by forward (they must be returned)."""
        self.dirty_tensors = args

    def mark_shared_storage(self, *pairs):
        warnings.warn("`mark_shared_storage` is deprecated. Tensors with shared storages are automatically "
                      "tracked. Note that calls to `set_()` are not tracked", FutureWarning, stacklevel=2)

    def mark_non_differentiable(self, *args):
        """Mark outputs as not requiring grad (backward still gets a gradient for each: zeros)."""
        self.non_differentiable = args

    def set_materialize_grads(self, value: bool):
        """Whether undefined output gradients reach backward as zeros (default True) or None."""
        self.materialize_grads = value


class BackwardCFunction(FunctionCtx):
    """The ctx of one ``Function.apply`` call and the Python side of its node:
    ``MyFn._backward_cls`` (named ``MyFnBackward``) is a subclass."""

    _forward_cls = None
    _node = None          # the C node while it lives (weak: the node owns this object)
    _freed = False        # the node died (saved tensors are gone)

    def _get_user_fn(self):
        fwd = self._forward_cls
        backward_fn, vjp_fn = fwd.backward, fwd.vjp
        if backward_fn is not Function.backward and vjp_fn is not Function.vjp:
            raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is not allowed. "
                               "You should only implement one of them.")
        return vjp_fn if vjp_fn is not Function.vjp else backward_fn

    def apply(self, *args):
        """Run the user's backward (or vjp) with this ctx."""
        return self._get_user_fn()(self, *args)

    def name(self) -> str:
        return type(self).__name__

    @property
    def saved_tensors(self):
        """The tensors given to save_for_backward, through the node's saved
        variables: the version check and the freed-graph error apply."""
        node = self._node
        if node is None:
            if self._freed:   # a ctx kept past its node: the saved variables died with it
                raise RuntimeError(f"the saved tensors of {self.name()} were freed with its graph")
            return ()
        out = ffi.new("tl_tensor **")
        res = []
        inputs = self.__dict__.get("_saved_inputs", {})
        for i in range(lib.tl_callback_node_num_saved(node)):
            check(lib.tl_callback_node_unpack(node, i, out))
            p = out[0]
            if p == _NULL:
                res.append(None)
                continue
            ref = inputs.get(_addr(p))   # a saved input comes back as the caller's object
            t = ref() if ref is not None else None
            if t is not None and t._p == p:
                lib.tl_tensor_release(p)
                res.append(t)
            else:
                res.append(_wrap(p))
        return tuple(res)

    saved_variables = saved_tensors

    # ------------------------------------------------------ node callbacks
    def _tl_node_apply(self, node, grads_in, grads_out):
        infos = self._output_info
        grads = _grads_in(grads_in, len(infos))
        if self.__dict__.get("materialize_grads", True):
            from .. import zeros
            for i, info in enumerate(infos):
                if grads[i] is None and info is not None:
                    grads[i] = zeros(info[0], dtype=info[1], device=info[2])
        result = self.apply(*grads)
        if not isinstance(result, tuple):
            result = (result,)
        is_tensor = self._is_tensor_input
        n = len(is_tensor)
        if len(result) > n and all(r is None for r in result[n:]):
            result = result[:n]
        if len(result) != n:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients "
                               f"(expected {n}, got {len(result)})")
        ready, edge = [], 0
        for i, g in enumerate(result):
            if not is_tensor[i]:
                if g is not None:
                    raise RuntimeError(f"function {self.name()} returned a gradient different than None at "
                                       f"position {i + 1}, but the corresponding forward input was not a Variable")
                continue
            if g is not None:
                if not isinstance(g, Tensor):
                    raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
                if lib.tl_node_should_compute_output(node, edge):
                    ready.append((edge, g))
            edge += 1
        for e, g in ready:
            _store_grad(grads_out, e, g)

    def _tl_node_released(self):
        self._node = None
        self._freed = True


# --------------------------------------------------------------- Function
class FunctionMeta(type):
    """Gives every Function subclass its ctx class, ``_backward_cls``
    (``<name>Backward``, a BackwardCFunction), as PyTorch's metaclass does."""

    def __init__(cls, name, bases, attrs):
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,),
                                 {"_forward_cls": cls, "__module__": cls.__module__})
        super().__init__(name, bases, attrs)


def _is_setup_context_defined(fn) -> bool:
    return fn is not Function.setup_context


class Function(FunctionCtx, metaclass=FunctionMeta):
    """Base class of custom autograd operations: implement the static methods
    ``forward(ctx, *args, **kwargs)`` (or ``forward(*args, **kwargs)`` plus
    ``setup_context(ctx, inputs, output)``) and ``backward(ctx, *grads)``
    (one gradient or None per forward input), then call ``MyFn.apply(*args)``."""

    def __init__(self, *args, **kwargs):
        warnings.warn(f"{self.__class__} should not be instantiated. Methods on autograd functions are all "
                      "static, so you should invoke them on the class itself. Instantiating an autograd "
                      "function will raise an error in a future version of PyTorch.", DeprecationWarning,
                      stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please use "
                           "new-style autograd function with static forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(*args, **kwargs):
        """Override: ``forward(ctx, *args, **kwargs)``, or ``forward(*args, **kwargs)`` with ``setup_context``."""
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Override (with a ctx-less forward) to fill ctx from the inputs and the output."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        """Override: one gradient (or None) per forward input, given one per forward output."""
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it "
                                  "with forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward and, when grad mode is on and a Tensor input requires
        grad, record one ``<class>Backward`` node for the outputs."""
        if _is_setup_context_defined(cls.setup_context):
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        return _apply(cls, args, kwargs)


class InplaceFunction(Function):
    """Kept for PyTorch compatibility: a Function with an ``inplace`` flag."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


def _apply(cls, args: tuple, kwargs: dict):
    inputs = args + tuple(kwargs.values()) if kwargs else args
    is_tensor = tuple(isinstance(a, Tensor) for a in inputs)
    needs = tuple(t and a.requires_grad for t, a in zip(is_tensor, inputs))
    ctx = cls._backward_cls.__new__(cls._backward_cls)
    ctx.needs_input_grad = needs
    ctx._is_tensor_input = is_tensor
    tensors = [a for t, a in zip(is_tensor, inputs) if t]
    # the inputs' gradient edges before forward runs (a dirty view keeps its history)
    edges = None
    if _grad_mode() and any(needs):
        edges = []
        for t in tensors:
            e = lib.tl_autograd_gradient_edge(t._p)
            if e.node == _NULL and t.requires_grad:   # allocation failure: the error is pending
                for prev_e in edges:
                    lib.tl_node_release(prev_e.node)
                raise_pending_error()
            edges.append(e)
    try:
        prev = _guard_enter(0)
        try:
            if _is_setup_context_defined(cls.setup_context):
                raw = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, inputs, raw)
            else:
                raw = cls.forward(ctx, *args, **kwargs)
        finally:
            _guard_exit(prev)
        return _process_outputs(cls, ctx, inputs, tensors, edges, raw)
    finally:
        if edges is not None:
            for e in edges:
                lib.tl_node_release(e.node)


def _check_tensor_args(what: str, values) -> None:
    for i, v in enumerate(values):
        if not isinstance(v, Tensor):
            raise TypeError(f"{what} can only accept variables, but argument {i} is of type {type(v).__name__}")


def _process_outputs(cls, ctx, inputs, tensors, edges, raw):
    """Outputs of forward: histories, dirty and non-differentiable tensors,
    saved variables (PyTorch's process_outputs / _wrap_outputs)."""
    d = ctx.__dict__
    to_save = d.pop("to_save", ())
    dirty = d.pop("dirty_tensors", ())
    non_diff = d.pop("non_differentiable", ())
    is_tuple = isinstance(raw, tuple)
    outputs = list(raw) if is_tuple else [raw]
    _check_tensor_args("mark_dirty", dirty)
    _check_tensor_args("mark_non_differentiable", non_diff)
    for i, t in enumerate(to_save):
        if t is not None and not isinstance(t, Tensor):
            raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                            f"{type(t).__name__}")
    input_ptrs = {_addr(t._p) for t in tensors}
    dirty_ptrs = {_addr(t._p) for t in dirty}
    non_diff_ptrs = {_addr(t._p) for t in non_diff}
    for t in dirty:  # PyTorch's _mark_dirty: the version moves once more
        lib.tl_tensor_bump_version(t._p)
    n_tensor_out = sum(isinstance(o, Tensor) for o in outputs)
    returned = {_addr(o._p) for o in outputs if isinstance(o, Tensor)}
    if not dirty_ptrs <= returned:
        raise RuntimeError("Some elements marked as dirty during the forward method were not returned as output. "
                           "The inputs that are modified inplace must all be outputs of the Function.")
    node = None
    if edges is not None:
        node = _new_node(ctx, cls.__name__ + "Backward", len(outputs), len(tensors), len(to_save))
        ctx._node = node
    try:
        if node is not None:
            for i, e in enumerate(edges):
                check(lib.tl_node_set_next_edge(node, i, e))
        infos, with_history = [], set()
        for i, o in enumerate(outputs):
            if not isinstance(o, Tensor):
                infos.append(None)
                continue
            infos.append((o.shape, o.dtype, o.device))
            p = o._p
            key = _addr(p)
            is_input, is_modified = key in input_ptrs, key in dirty_ptrs
            differentiable = node is not None and key not in non_diff_ptrs and (o.is_floating_point() or o.is_complex())
            if not differentiable:
                if not o.requires_grad:
                    if is_input and not is_modified:
                        outputs[i] = o.detach()
                elif is_input:
                    outputs[i] = o.detach()
                else:
                    o.detach_()
                continue
            if is_modified:
                if lib.tl_autograd_is_leaf(p) and o.requires_grad:
                    raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
                check(lib.tl_autograd_check_inplace(p))
                check(lib.tl_autograd_rebase_history(p, node, i))
                grad_fn = lib.tl_autograd_grad_fn(p)
                lib.tl_node_release(grad_fn)
                if grad_fn != node and n_tensor_out > 1:   # a view: the base got a CopySlices history
                    raise RuntimeError(_DIRTY_VIEW_MSG)
            else:
                if is_input:
                    o = outputs[i] = o.detach()
                    p, key = o._p, _addr(o._p)
                check(lib.tl_autograd_set_history(p, node, i))
            with_history.add(key)
        if node is not None:
            ctx._output_info = infos
            saved_inputs = {}
            for i, t in enumerate(to_save):
                if t is None:
                    continue
                key = _addr(t._p)
                is_output = key in with_history
                check(lib.tl_callback_node_save(node, i, t._p, is_output))
                if not is_output:
                    saved_inputs[key] = weakref.ref(t)
            if saved_inputs:
                ctx._saved_inputs = saved_inputs
    finally:
        if node is not None:
            lib.tl_node_release(node)   # the outputs hold it now (or it dies here, with ctx's handle)
    return tuple(outputs) if is_tuple else outputs[0]


_DIRTY_VIEW_MSG = (
    "If your Function modifies inplace an input that is a view of another Tensor, your Function cannot return "
    "more than one Tensor. This is not supported by the current autograd engine. You should either make sure the "
    "input is not a view (using .clone() for example) or make your Function only return one Tensor (potentially "
    "splitting it into two Functions: one doing the inplace that returns a single Tensor and a second one that "
    "does the other operations). You can ask on the forum https://discuss.pytorch.org/ if you need help to do this "
    "change.")


# ------------------------------------------------------- once_differentiable
class _DelayedError:
    """Target of PyTorch's ``torch::autograd::Error`` node: its backward fails."""

    def __init__(self, msg: str):
        self.msg = msg

    def _tl_node_apply(self, node, grads_in, grads_out):
        raise RuntimeError(self.msg)

    def _tl_node_released(self):
        pass


def _delayed_error(msg: str, outputs: tuple) -> tuple:
    """Aliases of `outputs` whose grad_fn is an Error node over leaves that
    require grad (PyTorch's DelayedError)."""
    leaves = [None if o is None else o.detach().requires_grad_() for o in outputs]
    node = _new_node(_DelayedError(msg), "torch::autograd::Error", len(outputs), len(outputs))
    try:
        res = []
        for i, v in enumerate(leaves):
            if v is None:
                res.append(None)
                continue
            e = lib.tl_autograd_gradient_edge(v._p)
            rc = lib.tl_node_set_next_edge(node, i, e)
            lib.tl_node_release(e.node)
            check(rc)
            out = v.detach()
            check(lib.tl_autograd_set_history(out._p, node, i))
            res.append(out)
        return tuple(res) if len(res) != 1 else res[0]
    finally:
        lib.tl_node_release(node)


def once_differentiable(fn):
    """Decorate a backward that is not itself differentiable: it runs under
    no_grad, and differentiating its result fails with PyTorch's error."""

    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        prev = _guard_enter(0)
        try:
            outputs = fn(ctx, *args, **kwargs)
        finally:
            _guard_exit(prev)
        if not _grad_mode():
            return outputs
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            return outputs
        outs = outputs if isinstance(outputs, tuple) else (outputs,)
        return _delayed_error("trying to differentiate twice a function that was marked with "
                              "@once_differentiable", outs)

    return wrapper


def _ctx_of_node(node):
    """The ctx of a Function's node (for grad_fn attribute access), or None."""
    target = _target_of(node)
    return target if isinstance(target, BackwardCFunction) else None
