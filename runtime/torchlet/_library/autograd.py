"""``register_autograd``: a custom operator's backward as a node of the C
autograd engine.

The operator's Autograd kernel runs the forward below the autograd keys.
When grad mode is on and a positional Tensor argument requires grad, it runs
it inside a ``torchlet.autograd.Function`` named
``GeneratedBackwardFor_<ns>_<name>_<overload>`` (PyTorch's name), so the
outputs get one node per call whose backward is the user's: saved tensors go
through the engine's saved variables (version checks), ``create_graph``
works when the backward is made of differentiable operators. Without a
registered formula the node's backward raises PyTorch's "no autograd formula
was registered" error, so a missing formula is found, never a silent zero.
"""
from __future__ import annotations

from .._C import lib
from .._dispatch import DispatchKeySet, _key
from .._tensor import Tensor
from .custom_ops import _tensors


def _below_autograd(keyset) -> DispatchKeySet:
    return DispatchKeySet(lib.tl_keyset_below(int(keyset), _key("AutogradOther")))


def _function_class(opdef):
    from ..autograd.function import Function

    ov = opdef._opoverload
    n_pos = sum(1 for a in opdef._schema.arguments if not a.kwarg_only)
    kw_names = [a.name for a in opdef._schema.arguments if a.kwarg_only]
    kw_defaults = {a.name: a.default_value for a in opdef._schema.arguments if a.kwarg_only and a.has_default}
    returns_list = len(opdef._schema.returns) == 1 and str(opdef._schema.returns[0].type) == "Tensor[]"

    def forward(ctx, keyset, *flat):
        args, kwvals = flat[:n_pos], flat[n_pos:]
        kwargs = dict(zip(kw_names, kwvals))
        out = ov.redispatch(keyset, *args, **kwargs)
        setup = opdef._setup_context_fn
        if setup is not None:
            if kw_names:
                setup(ctx, tuple(args), {**kw_defaults, **kwargs}, out)
            else:
                setup(ctx, tuple(args), out)
        ctx.needs_input_grad = tuple(ctx.needs_input_grad[1:1 + n_pos])
        return tuple(out) if returns_list else out

    def backward(ctx, *grads):
        if opdef._backward_fn is None:
            raise RuntimeError(f"Trying to backward through {ov} but no autograd formula was registered. "
                               f"Please use register_autograd to add one.")
        if returns_list:
            grads = (list(grads),)
        got = opdef._backward_fn(ctx, *grads)
        got = tuple(got) if isinstance(got, (tuple, list)) and n_pos != 1 or (
            isinstance(got, tuple) and n_pos == 1) else (got,)
        if len(got) != n_pos:
            raise RuntimeError(
                f"{opdef._qualname}: the backward registered with register_autograd returned {len(got)} "
                f"gradients; expected {n_pos} (one per positional input, None where there is none)")
        return (None,) + got + (None,) * len(kw_names)

    name = f"GeneratedBackwardFor_{opdef._namespace}_{opdef._name}_{ov._overloadname}"
    return type(name, (Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward)})


def make_autograd_kernel(opdef):
    """The Autograd-key kernel of a custom operator (see the module docstring)."""
    cls_holder = []
    n_pos = sum(1 for a in opdef._schema.arguments if not a.kwarg_only)
    kw_names = [a.name for a in opdef._schema.arguments if a.kwarg_only]

    def autograd_kernel(keyset, *args, **kwargs):
        below = _below_autograd(keyset)
        if not (lib.tl_grad_mode_is_enabled() and any(
                isinstance(t, Tensor) and t.requires_grad for t in _tensors(args[:n_pos]))):
            return opdef._opoverload.redispatch(below, *args, **kwargs)
        if not cls_holder:
            cls_holder.append(_function_class(opdef))
        kwvals = [kwargs[k] if k in kwargs else _default(opdef, k) for k in kw_names]
        out = cls_holder[0].apply(below, *args[:n_pos], *kwvals)
        if len(opdef._schema.returns) == 1 and str(opdef._schema.returns[0].type) == "Tensor[]":
            return list(out)
        return out

    autograd_kernel.__name__ = f"autograd_{opdef._name}"
    return autograd_kernel


def _default(opdef, name):
    for a in opdef._schema.arguments:
        if a.name == name:
            return a.default_value
    return None


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    """Register the backward formula of ``op`` (a CustomOpDef, or the name /
    OpOverload of a custom operator)."""
    from .custom_ops import CustomOpDef, _defs

    if isinstance(op, CustomOpDef):
        return op.register_autograd(backward, setup_context=setup_context)
    from ..library import _opname_of
    qn = _opname_of(op)
    opdef = _defs.get(qn) or _defs.get(qn.rsplit(".", 1)[0])
    if opdef is None:
        raise RuntimeError(
            f"register_autograd({qn}): torchlet registers autograd formulas for operators made by custom_op; "
            f"for an operator defined with Library.define, register an Autograd kernel with "
            f"lib.impl(name, fn, 'Autograd') whose body applies a torchlet.autograd.Function")
    return opdef.register_autograd(backward, setup_context=setup_context)
