"""``opcheck``: the checks an operator author runs on sample inputs.

| util | what it checks |
|---|---|
| ``test_schema`` | the schema tells the truth: no undeclared mutation, no undeclared aliasing of inputs by outputs, outputs do not alias each other, and every argument declared written (``Tensor(a!)``) is written |
| ``test_autograd_registration`` | when an input requires grad, the operator has an autograd kernel, and (custom operators) a registered formula |
| ``test_faketensor`` | the fake (Meta) kernel's outputs have the real kernel's shapes, dtypes and strides |
| ``test_aot_dispatch_dynamic`` | torchlet has no ahead-of-time autograd: the registered backward is gradchecked on float64 copies of the inputs instead (the same util runs under its own name ``test_gradcheck``) |

Inputs are cloned for every util; a sample with meta inputs is skipped.
"""
from __future__ import annotations

import numpy as np

from .. import _ops
from .._C import lib
from .._dispatch import _key
from .._tensor import Tensor
from .custom_ops import _storage_of, _tensors, custom_def_of

DEFAULT_TEST_UTILS = ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")
ALL_TEST_UTILS = DEFAULT_TEST_UTILS + ("test_gradcheck",)


class OpCheckError(Exception):
    """An opcheck util failed (its message names the util, the argument and the fix)."""


def _as_overload(op):
    from .custom_ops import CustomOpDef
    if isinstance(op, CustomOpDef):
        return op._opoverload
    if isinstance(op, _ops.OpOverloadPacket):
        return op.default
    if isinstance(op, _ops.OpOverload):
        return op
    if isinstance(op, str):
        return _ops.lookup(op)
    raise ValueError(f"opcheck(op, ...): op must be an OpOverload, a CustomOpDef or an 'ns::op' name, got "
                     f"{type(op).__name__}")


def _clone(x):
    if isinstance(x, Tensor):
        c = x.detach().clone()
        c.requires_grad_(x.requires_grad)
        return c
    if isinstance(x, (list, tuple)):
        return type(x)(_clone(y) for y in x)
    if isinstance(x, dict):
        return {k: _clone(v) for k, v in x.items()}
    return x


def _snapshot(t: Tensor):
    return t.detach().numpy().copy() if t.numel() else np.zeros(0)


def _bind(ov, args, kwargs) -> list:
    """(argument, value) for every schema argument given."""
    out = []
    for i, a in enumerate(ov._schema.arguments):
        if i < len(args):
            out.append((a, args[i]))
        elif a.name in kwargs:
            out.append((a, kwargs[a.name]))
    return out


def _flat_out(out):
    return list(_tensors(out if isinstance(out, (list, tuple)) else (out,)))


def _inputs(args, kwargs) -> list:
    return list(_tensors(list(args) + list(kwargs.values())))


def _fill_sentinel(t: Tensor) -> None:
    with _no_grad():     # integers wrap the sentinel to their range; bools become True
        t.fill_(float("nan") if t.is_floating_point() else -12345)


def _no_grad():
    from ..autograd.grad_mode import no_grad
    return no_grad()


def test_schema(ov, args, kwargs):
    a2, k2 = _clone(args), _clone(kwargs)
    bound = _bind(ov, a2, k2)
    before = [(a, t, _snapshot(t)) for a, v in bound for t in _tensors((v,))]
    with _no_grad():
        out = ov(*a2, **k2)
    written = set()
    for a, t, snap in before:
        now = _snapshot(t)
        if not np.array_equal(now, snap, equal_nan=True):
            written.add(a.name)
            if a.alias_info is None or not a.alias_info.is_write:
                raise OpCheckError(f"Argument {a.name} is not defined as mutable but was mutated: declare it "
                                   f"in mutates_args (or write Tensor(a!) {a.name} in the schema), or make the "
                                   f"kernel write to a new tensor instead")
    outs = _flat_out(out)
    in_storage = {}
    for a, t, _ in before:
        if t.numel():
            in_storage.setdefault(_storage_of(t), a)
    rets = ov._schema.returns
    for i, o in enumerate(outs):
        a = in_storage.get(_storage_of(o)) if o.numel() else None
        if a is None:
            continue
        ret = rets[i] if i < len(rets) else None
        declared = (a.alias_info is not None and ret is not None and ret.alias_info is not None
                    and a.alias_info.before_set & ret.alias_info.before_set)
        if not declared:
            raise OpCheckError(f"Argument {a.name} is not defined to alias output but was aliasing: return a "
                               f"new tensor (e.g. {a.name}.clone()) or declare the alias in the schema")
    seen = {}
    for i, o in enumerate(outs):
        if not o.numel():
            continue
        s = _storage_of(o)
        if s in seen and not (rets and len(rets) == 1 and str(rets[0].type).startswith("Tensor[]")
                              and rets[0].alias_info is not None):
            raise OpCheckError(f"Outputs {seen[s]} and {i} alias unexpectedly: return separate tensors")
        seen[s] = i
    # a declared write that never happens (PyTorch does not check this): try again
    # with the declared-mutable inputs filled with a sentinel, so that a write of
    # values equal to the old ones is not mistaken for no write
    declared = [a.name for a, _ in bound if a.alias_info is not None and a.alias_info.is_write]
    missing = [n for n in declared if n not in written]
    if missing:
        a3, k3 = _clone(args), _clone(kwargs)
        b3 = _bind(ov, a3, k3)
        snaps = {}
        for a, v in b3:
            if a.name in missing:
                for t in _tensors((v,)):
                    _fill_sentinel(t)
                snaps[a.name] = [_snapshot(t) for t in _tensors((v,))]
        with _no_grad():
            ov(*a3, **k3)
        for a, v in b3:
            if a.name in snaps:
                now = [_snapshot(t) for t in _tensors((v,))]
                if all(np.array_equal(x, y, equal_nan=True) for x, y in zip(now, snaps[a.name])):
                    raise OpCheckError(
                        f"Argument {a.name} is declared as mutated (Tensor(a!)) but the operator did not write "
                        f"to it on this sample: remove it from mutates_args, or check the kernel writes it")


def test_autograd_registration(ov, args, kwargs):
    inputs = list(_inputs(args, kwargs))
    if not any(t.requires_grad for t in inputs):
        return
    custom = custom_def_of(ov.name())
    if custom is not None:
        if custom._backward_fn is None and not custom._mutated and ov._schema.returns:
            raise OpCheckError(
                f"{ov.name()}: an input requires grad but no autograd formula was registered, so backward "
                f"through this operator raises. Register one with {custom._name}.register_autograd(backward, "
                f"setup_context=...)")
        return
    has = any(lib.tl_op_has_registration(ov._op, _key(k)) for k in
              ("Autograd", "AutogradCPU", "AutogradOther", "CompositeImplicitAutograd"))
    if has:
        return
    a2, k2 = _clone(args), _clone(kwargs)
    out = _flat_out(ov(*a2, **k2))
    if out and not any(o.requires_grad for o in out if o.is_floating_point()):
        raise OpCheckError(
            f"{ov.name()}: an input requires grad but the operator has no autograd kernel, so its outputs do "
            f"not require grad and gradients stop here silently. Register an Autograd kernel "
            f"(lib.impl(name, fn, 'Autograd')) or make it a custom_op with register_autograd")


def _to_meta(x):
    if isinstance(x, Tensor):
        from .. import empty_strided
        m = empty_strided(tuple(x.shape), tuple(x.stride()), dtype=x.dtype, device="meta")
        return m
    if isinstance(x, (list, tuple)):
        return type(x)(_to_meta(y) for y in x)
    return x


def test_faketensor(ov, args, kwargs):
    a2, k2 = _clone(args), _clone(kwargs)
    with _no_grad():
        real = _flat_out(ov(*a2, **k2))
        fake = _flat_out(ov(*_to_meta(args), **{k: _to_meta(v) for k, v in kwargs.items()}))
    if len(real) != len(fake):
        raise OpCheckError(f"When comparing the output of {ov} on meta (fake) and concrete Tensors, the fake kernel "
                           f"returned {len(fake)} tensors and the real kernel {len(real)}")
    for i, (r, f) in enumerate(zip(real, fake)):
        if tuple(r.shape) != tuple(f.shape):
            what = f"Shapes {_size(f)} and {_size(r)} are not equal!"
        elif r.dtype != f.dtype:
            what = f"Dtypes {f.dtype} and {r.dtype} are not equal!"
        elif r.numel() > 1 and _strides(r) != _strides(f):
            what = f"Strides {f.stride()} and {r.stride()} are not equal!"
        else:
            continue
        raise OpCheckError(f"When comparing the output of {ov} on FakeTensor and concrete Tensors, found "
                           f"mismatched tensor metadata (output {i}): {what} Fix the fake kernel "
                           f"(register_fake) to compute the real kernel's metadata")


def _size(t):
    return f"torchlet.Size({list(t.shape)})"


def _strides(t):
    return tuple(s for s, n in zip(t.stride(), t.shape) if n != 1)


def test_gradcheck(ov, args, kwargs, atol=None, rtol=None):
    custom = custom_def_of(ov.name())
    if custom is not None and custom._backward_fn is None:
        return
    idx = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.is_floating_point() and a.requires_grad]
    if not idx:
        return
    from ..autograd.gradcheck import gradcheck

    base = list(_clone(args))
    diff = []
    for i in idx:
        t = base[i].detach().to(_float64()).requires_grad_(True)
        base[i] = t
        diff.append(t)

    def f(*xs):
        call = list(base)
        for i, x in zip(idx, xs):
            call[i] = x
        out = ov(*call, **kwargs)
        return tuple(out) if isinstance(out, list) else out

    opts = {}
    if atol is not None:
        opts = {"atol": atol, "rtol": rtol}
    gradcheck(f, tuple(diff), **opts)


_UTILS = {
    "test_schema": test_schema,
    "test_autograd_registration": test_autograd_registration,
    "test_faketensor": test_faketensor,
    "test_aot_dispatch_dynamic": test_gradcheck,
    "test_gradcheck": test_gradcheck,
}


def opcheck(op, args, kwargs=None, *, test_utils=DEFAULT_TEST_UTILS, raise_exception: bool = True,
            atol=None, rtol=None):
    """Run the checks of ``test_utils`` ("ALL", or names from the table in this module)
    on ``op(*args, **kwargs)``; returns {util: "SUCCESS" | the exception}."""
    if (atol is None) != (rtol is None):
        raise ValueError("opcheck(op, ...): if you specify one of atol/rtol, you must specify both")
    kwargs = dict(kwargs or {})
    if isinstance(test_utils, str):
        test_utils = ALL_TEST_UTILS if test_utils == "ALL" else (test_utils,)
    for u in test_utils:
        if u not in _UTILS:
            raise ValueError(f"opcheck(op, ...): unknown test util {u!r}; expected one of {sorted(_UTILS)}")
    ov = _as_overload(op)
    if any(t.is_meta for t in _inputs(args, kwargs)):
        return {u: "SUCCESS" for u in test_utils}     # nothing to compare on meta inputs
    results = {}
    for u in test_utils:
        try:
            if _UTILS[u] is test_gradcheck:
                test_gradcheck(ov, args, kwargs, atol, rtol)
            else:
                _UTILS[u](ov, args, kwargs)
            results[u] = "SUCCESS"
        except Exception as e:  # noqa: BLE001 - reported per util
            if raise_exception:
                raise OpCheckError(f"opcheck(op, ...): {u} failed with {e} (scroll up for stack trace)") from e
            results[u] = e
    return results


def _float64():
    from .. import float64
    return float64
