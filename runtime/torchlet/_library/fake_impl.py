"""Fake kernels (``register_fake``) and their context (``get_ctx``).

A fake kernel computes only the metadata of an operator's outputs (shape,
dtype, strides, device) from its inputs' metadata, with torchlet operators and
no data reads. It is the operator's kernel at the Meta key, so it serves meta
tensors (and fake tensors, which run on Meta).
"""
from __future__ import annotations

import threading

from .. import _ops

_fakes: dict[str, tuple] = {}        # qualname -> (fn, where) of register_fake on a non-custom operator
_tls = threading.local()


class DynamicOutputShapeException(RuntimeError):
    """An operator's output shape depends on input data (nonzero, a fake kernel's
    ``new_dynamic_size()``) and there is no shape environment to name it."""

    def __init__(self, func):
        super().__init__(str(func))
        self.func = func


class FakeImplCtx:
    """What ``get_ctx()`` returns inside a fake kernel."""

    def __init__(self, op):
        self._op = op

    def new_dynamic_size(self, *, min=0, max=None):  # noqa: A002 - PyTorch's names
        """A size the inputs' metadata cannot tell: without a shape environment
        (symbolic shapes are not part of torchlet) this raises, as PyTorch does."""
        raise DynamicOutputShapeException(self._op)

    create_unbacked_symint = new_dynamic_size


def get_ctx() -> FakeImplCtx:
    """The context of the fake kernel running on this thread."""
    ctx = getattr(_tls, "ctx", None)
    if ctx is None:
        raise RuntimeError("get_ctx() may only be called inside a fake kernel (one given to register_fake)")
    return ctx


def run_fake(op, fn, args, kwargs):
    """Call a fake kernel with its context set."""
    prev = getattr(_tls, "ctx", None)
    _tls.ctx = FakeImplCtx(op)
    try:
        return fn(*args, **kwargs)
    finally:
        _tls.ctx = prev


def register_fake(op, func=None, /, *, lib=None, allow_override: bool = True, _stacklevel: int = 1):
    """Register ``func`` as the fake kernel of ``op`` (a "ns::name" string, an
    OpOverload or a CustomOpDef); usable as a decorator."""
    from ..library import _opname_of, _fragment, _split_qualname, _where
    from .custom_ops import CustomOpDef, custom_def_of

    if isinstance(op, CustomOpDef):
        return op.register_fake(func) if func is not None else op.register_fake

    qn = _opname_of(op)

    def register(f):
        try:
            ov = _ops.lookup(qn)
        except AttributeError:
            raise RuntimeError(f"operator {qn} does not exist") from None
        custom = custom_def_of(qn)
        if custom is not None:
            custom.register_fake(f)
            return f
        prev = _fakes.get(qn)
        if prev is not None and not allow_override:
            raise RuntimeError(f"register_fake(...): the operator {qn} already has a fake impl registered at "
                               f"{prev[1]}.")
        ns, name = _split_qualname(qn)
        lb = lib if lib is not None else _fragment(ns)

        def meta_kernel(*args, **kwargs):
            return run_fake(ov, f, args, kwargs)

        meta_kernel.__name__ = getattr(f, "__name__", "fake")
        lb.impl(name, meta_kernel, "Meta")
        _fakes[qn] = (f, _where())
        return f

    return register(func) if func is not None else register
