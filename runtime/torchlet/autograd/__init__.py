"""torchlet.autograd: reverse-mode automatic differentiation.

The graph is recorded in C by the generated autograd kernels (one backward
node per derivatives.yaml entry) and run by the C engine
(runtime/src/autograd_engine.c); this package is the Python face of it:
``backward``, ``grad``, grad-mode context managers, ``gradcheck``,
``Function`` (custom backward in Python, ``function.py``), and the autograd
attributes of ``torchlet.Tensor`` (installed by ``_install``).
See docs/AUTOGRAD.md.
"""
from __future__ import annotations

from collections.abc import Sequence

from .._C import ffi, lib
from .._errors import check_status, raise_pending_error
from . import graph
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from . import function
from .function import Function, FunctionCtx, once_differentiable

__all__ = [
    "backward",
    "grad",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "gradcheck",
    "gradgradcheck",
    "GradcheckError",
    "graph",
    "function",
    "Function",
    "FunctionCtx",
    "once_differentiable",
]

_NULL = ffi.NULL


_TensorClass = None


def _Tensor():
    global _TensorClass
    if _TensorClass is None:
        from .._tensor import Tensor
        _TensorClass = Tensor
    return _TensorClass


def _as_tensors(x, what: str) -> tuple:
    T = _Tensor()
    if isinstance(x, T):
        return (x,)
    if isinstance(x, Sequence) and not isinstance(x, (str, bytes)):
        for i, t in enumerate(x):
            if not isinstance(t, T):
                raise TypeError(f"{what}[{i}] must be a Tensor, not {type(t).__name__}")
        return tuple(x)
    raise TypeError(f"{what} must be a Tensor or a sequence of Tensors, not {type(x).__name__}")


def _as_grads(g, n: int, what: str):
    """grad_tensors / grad_outputs: None, a Tensor, or a sequence of Tensor-or-None."""
    T = _Tensor()
    if g is None:
        return None
    if isinstance(g, T):
        g = (g,)
    elif not isinstance(g, Sequence):
        raise TypeError(f"{what} must be a Tensor, a sequence of Tensors or None, not {type(g).__name__}")
    g = tuple(g)
    if len(g) != n:
        raise RuntimeError(f"{what} should have the same length as the outputs (got {len(g)} and {n})")
    for i, x in enumerate(g):
        if x is not None and not isinstance(x, T):
            raise TypeError(f"{what}[{i}] must be a Tensor or None, not {type(x).__name__}")
    return g


def _ptrs(ts):
    return ffi.new("tl_tensor *[]", [t._p for t in ts]) if ts else _NULL


def _grad_ptrs(gs):
    if gs is None:
        return _NULL
    return ffi.new("tl_tensor *[]", [_NULL if g is None else g._p for g in gs])


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None,
             inputs=None) -> None:
    """Accumulate the gradients of `tensors` into the ``.grad`` of the leaves
    (or of `inputs` only). Scalars get an implicit gradient of 1."""
    if grad_variables is not None:
        if grad_tensors is not None:
            raise RuntimeError("'grad_tensors' and 'grad_variables' (deprecated) arguments both passed to "
                               "backward(). Please only use 'grad_tensors'.")
        grad_tensors = grad_variables
    tensors = _as_tensors(tensors, "tensors")
    if inputs is not None:
        inputs = _as_tensors(inputs, "inputs")
        if len(inputs) == 0:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    else:
        inputs = ()
    grads = _as_grads(grad_tensors, len(tensors), "grad_tensors")
    if retain_graph is None:
        retain_graph = create_graph
    # warnings the backward functions recorded are shown (after them, an error)
    check_status(lib.tl_autograd_backward(_ptrs(tensors), len(tensors), _grad_ptrs(grads), bool(retain_graph),
                                          bool(create_graph), _ptrs(inputs), len(inputs)))


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Gradients of `outputs` with respect to `inputs` (a tuple, one per input);
    ``.grad`` is left alone."""
    if is_grads_batched:
        raise NotImplementedError("torchlet.autograd.grad: is_grads_batched=True is not supported")
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = _as_tensors(outputs, "outputs")
    inputs_t = _as_tensors(inputs, "inputs")
    if not inputs_t:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    grads = _as_grads(grad_outputs, len(outputs), "grad_outputs")
    if retain_graph is None:
        retain_graph = create_graph
    n = len(inputs_t)
    out = ffi.new("tl_tensor *[]", max(n, 1))
    check_status(lib.tl_autograd_grad(_ptrs(outputs), len(outputs), _grad_ptrs(grads), _ptrs(inputs_t), n,
                                      bool(retain_graph), bool(create_graph), bool(allow_unused), out))
    from .._tensor import _wrap
    res = []
    for i in range(n):
        h = out[i]
        if h == _NULL:
            if materialize_grads:
                from .. import zeros_like
                res.append(zeros_like(inputs_t[i]))
            else:
                res.append(None)
        else:
            res.append(_wrap(h))
    return tuple(res)


def _factory_requires_grad(t):
    """requires_grad=True of factory functions (torchlet.tensor, ones, ..._like)."""
    if not (t.is_floating_point() or t.is_complex()):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    if lib.tl_autograd_set_requires_grad(t._p, True) < 0:
        raise_pending_error()
    return t


# ------------------------------------------------------------ Tensor attributes
def _install(Tensor) -> None:
    """Attach the autograd attributes to torchlet.Tensor."""
    from .. import _tensor as _tensor_mod
    from .._tensor import _wrap

    _requires_grad = lib.tl_autograd_requires_grad
    _set_requires_grad = lib.tl_autograd_set_requires_grad

    def _get_requires_grad(self):
        return bool(_requires_grad(self._p))

    def _put_requires_grad(self, value):
        if not isinstance(value, bool):
            raise RuntimeError("requires_grad must be a bool")
        if _set_requires_grad(self._p, value) < 0:
            raise_pending_error()

    def requires_grad_(self, requires_grad=True):
        """Set requires_grad in place (on leaves; True on a non-leaf is a no-op)."""
        if not isinstance(requires_grad, bool):
            raise TypeError(f"requires_grad_(): argument 'requires_grad' must be bool, not "
                            f"{type(requires_grad).__name__}")
        p = self._p
        if requires_grad and not lib.tl_autograd_is_leaf(p):
            return self
        if requires_grad and not (self.is_floating_point() or self.is_complex()):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if _set_requires_grad(p, requires_grad) < 0:
            raise_pending_error()
        return self

    import weakref

    grads = weakref.WeakValueDictionary()  # C grad tensor -> its Python object: `a.grad is a.grad`
    addr = lambda p: int(ffi.cast("uintptr_t", p))  # noqa: E731

    def _get_grad(self):
        h = lib.tl_autograd_get_grad(self._p)
        if h != _NULL:
            key = addr(h)
            g = grads.get(key)
            if g is not None:
                lib.tl_tensor_release(h)  # the cached object holds its own reference
                return g
            g = _wrap(h)
            grads[key] = g
            return g
        if h == _NULL:
            if not lib.tl_autograd_is_leaf(self._p) and not lib.tl_autograd_retains_grad(self._p):
                import warnings
                warnings.warn(
                    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
                    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
                    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
                    "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
                    "instead.", UserWarning, stacklevel=2)
            return None

    def _put_grad(self, value):
        if value is None:
            lib.tl_autograd_set_grad(self._p, _NULL)
            return
        if not isinstance(value, Tensor):
            raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                            f"{type(value).__name__}")
        if lib.tl_autograd_set_grad(self._p, value._p) < 0:
            raise_pending_error()

    def _del_grad(self):
        lib.tl_autograd_set_grad(self._p, _NULL)

    def _get_grad_fn(self):
        return graph._node(lib.tl_autograd_grad_fn(self._p))

    def _get_is_leaf(self):
        return bool(lib.tl_autograd_is_leaf(self._p))

    def detach(self):
        """A new tensor sharing storage with this one, without history."""
        r = _wrap(lib.tl_autograd_detach(self._p))
        if type(self) is not Tensor and _tensor_mod._subclassed:
            from .._subclass import detached_like
            return detached_like(self, r)
        return r

    def detach_(self):
        """Remove this tensor from the graph in place (it becomes a leaf)."""
        if lib.tl_autograd_detach_(self._p) < 0:
            raise_pending_error()
        return self

    def retain_grad(self):
        """Keep .grad for this non-leaf tensor after backward."""
        if lib.tl_autograd_retain_grad(self._p) < 0:
            raise_pending_error()

    def _get_retains_grad(self):
        return bool(lib.tl_autograd_retains_grad(self._p))

    def _get_output_nr(self):
        return lib.tl_autograd_output_nr(self._p)

    def _get_data(self):
        return _wrap(lib.tl_autograd_detach(self._p))

    _backward1 = lib.tl_autograd_backward1

    def tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Compute the gradient of this tensor w.r.t. the graph leaves (see torchlet.autograd.backward)."""
        if inputs is None and (gradient is None or gradient.__class__ is Tensor):
            # the common call, straight to C (one root, no arrays to build)
            if retain_graph is None:
                retain_graph = create_graph
            check_status(_backward1(self._p, _NULL if gradient is None else gradient._p, bool(retain_graph),
                                    bool(create_graph)))
            return
        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    Tensor.requires_grad = property(_get_requires_grad, _put_requires_grad,
                                    doc="Whether gradients are computed for this tensor.")
    Tensor.requires_grad_ = requires_grad_
    Tensor.grad = property(_get_grad, _put_grad, _del_grad, doc="Accumulated gradient (leaves), or None.")
    Tensor.grad_fn = property(_get_grad_fn, doc="The backward node that produced this tensor, or None.")
    Tensor.is_leaf = property(_get_is_leaf, doc="True for tensors not produced by a recorded operation.")
    Tensor.detach = detach
    Tensor.detach_ = detach_
    Tensor.retain_grad = retain_grad
    Tensor.retains_grad = property(_get_retains_grad)
    Tensor.output_nr = property(_get_output_nr)
    Tensor.data = property(_get_data, doc="This tensor without history (shares storage).")
    Tensor.backward = tensor_backward
