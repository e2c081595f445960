"""``register_autograd``: a custom operator's backward as a node of the C
autograd engine.

When grad mode is on and a Tensor argument requires grad, the C autograd
gate (tl_autograd_gate_boxed) calls the operator's Autograd kernel, which
runs the forward below the autograd keys inside a ``torchlet.autograd.Function`` named
``GeneratedBackwardFor_<ns>_<name>_<overload>`` (PyTorch's name), so the
outputs get one node per call whose backward is the user's: saved tensors go
through the engine's saved variables (version checks), ``create_graph``
works when the backward is made of differentiable operators. Without a
registered formula the node's backward raises PyTorch's "no autograd formula
was registered" error, so a missing formula is found, never a silent zero.
Otherwise the gate redispatches below autograd in C.
"""
from __future__ import annotations

from .._C import lib
from .._dispatch import DispatchKeySet, _key


def _below_autograd(keyset) -> DispatchKeySet:
    return DispatchKeySet(lib.tl_keyset_below(int(keyset), _key("AutogradOther")))


def _function_class(opdef, n_pos: int, kw_names: list, returns_list: bool):
    from ..autograd.function import Function

    ov = opdef._opoverload

    def forward(ctx, keyset, *flat):
        args, kwvals = flat[:n_pos], flat[n_pos:]
        kwargs = dict(zip(kw_names, kwvals))
        out = ov.redispatch(keyset, *args, **kwargs)
        setup = opdef._setup_context_fn
        if setup is not None:
            if kw_names:
                setup(ctx, tuple(args), kwargs, out)
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
    """The Autograd-key kernel of a custom operator. It is registered behind the C
    autograd gate (tl_autograd_gate_boxed), which calls it only with grad mode on
    and an argument requiring grad: it always records a node."""
    args = opdef._schema.arguments
    n_pos = sum(1 for a in args if not a.kwarg_only)
    kw_names = [a.name for a in args if a.kwarg_only]
    rets = opdef._schema.returns
    returns_list = len(rets) == 1 and str(rets[0].type) == "Tensor[]"
    cls_holder = []

    def autograd_kernel(keyset, *args, **kwargs):
        if not cls_holder:
            cls_holder.append(_function_class(opdef, n_pos, kw_names, returns_list))
        kwvals = [kwargs[k] for k in kw_names]     # the trampoline passes every keyword-only argument
        out = cls_holder[0].apply(_below_autograd(keyset), *args[:n_pos], *kwvals)
        return list(out) if returns_list else out

    autograd_kernel.__name__ = f"autograd_{opdef._name}"
    return autograd_kernel


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    """Register the backward formula of ``op`` (a CustomOpDef, or the name /
    OpOverload of a custom operator)."""
    from .custom_ops import CustomOpDef, custom_def_of

    if isinstance(op, CustomOpDef):
        return op.register_autograd(backward, setup_context=setup_context)
    from ..library import _opname_of
    qn = _opname_of(op)
    opdef = custom_def_of(qn)
    if opdef is None:
        raise RuntimeError(
            f"register_autograd({qn}): torchlet registers autograd formulas for operators made by custom_op; "
            f"for an operator defined with Library.define, register an Autograd kernel with "
            f"lib.impl(name, fn, 'Autograd') whose body applies a torchlet.autograd.Function")
    return opdef.register_autograd(backward, setup_context=setup_context)
