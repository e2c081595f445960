"""Python views of backward nodes (``tensor.grad_fn``): ``torchlet.autograd.graph.Node``.

A Node wraps one C ``tl_node *`` and owns a reference to it. The same C node
always comes back as the same Python object while one is alive (a weak cache
keyed by address), so ``y.grad_fn is y.grad_fn`` and comparisons of
``next_functions`` entries behave as in PyTorch.
"""
from __future__ import annotations

import weakref

from .._C import ffi, lib

__all__ = ["Node"]

_cache: "weakref.WeakValueDictionary[int, Node]" = weakref.WeakValueDictionary()
_addr = lambda p: int(ffi.cast("uintptr_t", p))  # noqa: E731
_node_release = lib.tl_node_release


class Node:
    """A node of the autograd graph (AddBackward0, AccumulateGrad, ...)."""

    __slots__ = ("_n", "__weakref__")

    def __init__(self, *args, **kwargs):
        raise TypeError("cannot create torchlet.autograd.graph.Node instances directly")

    def __del__(self, _release=_node_release):
        try:
            n = self._n
        except AttributeError:
            return
        _release(n)

    def name(self) -> str:
        return ffi.string(lib.tl_node_name(self._n)).decode()

    @property
    def next_functions(self):
        n = self._n
        out = []
        for i in range(lib.tl_node_num_next(n)):
            e = lib.tl_node_next_edge(n, i)
            if e.node == ffi.NULL:
                out.append((None, 0))
            else:
                lib.tl_node_retain(e.node)
                out.append((_node(e.node), e.input_nr))
        return tuple(out)

    @property
    def variable(self):
        """AccumulateGrad only: the leaf tensor it accumulates into."""
        h = lib.tl_node_variable(self._n)
        if h == ffi.NULL:
            raise AttributeError(f"'{self.name()}' object has no attribute 'variable'")
        from .._tensor import _wrap
        return _wrap(h)

    @property
    def _sequence_nr(self) -> int:
        return lib.tl_node_sequence_nr(self._n)

    def _num_inputs(self) -> int:
        return lib.tl_node_num_inputs(self._n)

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    def __getattr__(self, name):
        # a custom Function's node shows its ctx (saved_tensors, needs_input_grad,
        # the attributes forward set), as PyTorch's grad_fn is that ctx
        if name != "_n":
            from .function import _ctx_of_node
            ctx = _ctx_of_node(self._n)
            if ctx is not None:
                return getattr(ctx, name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")


_classes: dict = {}


def _class_for(name: str):
    """One Node subclass per node name, so type(y.grad_fn).__name__ is 'MulBackward0'."""
    cls = _classes.get(name)
    if cls is None:
        cls = _classes[name] = type(name, (Node,), {"__slots__": (), "__module__": "torchlet.autograd.graph"})
    return cls


def _node(p):
    """Python object for a C node; adopts the new reference `p` (or returns None for NULL)."""
    if p == ffi.NULL:
        return None
    key = _addr(p)
    obj = _cache.get(key)
    if obj is not None:
        _node_release(p)  # the cached object already owns one
        return obj
    # PyTorch: name() "torch::autograd::AccumulateGrad", class AccumulateGrad
    obj = object.__new__(_class_for(ffi.string(lib.tl_node_name(p)).decode().rsplit("::", 1)[-1]))
    obj._n = p
    _cache[key] = obj
    return obj
