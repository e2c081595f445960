"""PyTorch's hand-written Python bindings of operators of docs/OPS_MISSING.md
(torch/csrc/autograd/python_torch_functions_manual.cpp,
python_variable_methods.cpp): ``nonzero(as_tuple=...)``; and ``cat([])``, whose
empty list reaches no kernel through the dispatcher (PyTorch runs its structured
kernel from the Undefined slot, whose meta function raises the ValueError)."""
from __future__ import annotations

from ._function_mode import GO as _GO, handle as _tf, watch as _tf_watch

_TF = 0  # active torch-function modes: these wrappers are reported as themselves
_tf_watch(globals())


def _wrap_nonzero(gen_nonzero):
    import torchlet

    def nonzero(input, *, out=None, as_tuple=False):
        """torch.nonzero: coordinates of the nonzero elements, as an [n, ndim] long
        tensor, or with as_tuple=True one 1-D long tensor per dimension."""
        if _TF and (r_ := _tf(nonzero, locals())) is not _GO:
            return r_
        if as_tuple:
            if out is not None:
                raise RuntimeError("nonzero does not support the out kwarg when as_tuple is True")
            return torchlet.where(input)
        return gen_nonzero(input) if out is None else gen_nonzero(input, out=out)

    nonzero.__doc__ = "(Tensor input, *, Tensor out = None, bool as_tuple = False)"
    nonzero.__wrapped__ = gen_nonzero
    return nonzero


def _wrap_cat(gen_cat):
    def cat(*args, **kwargs):
        if _TF and (r_ := _tf(cat, locals())) is not _GO:
            return r_
        tensors = args[0] if args else kwargs.get("tensors")
        if isinstance(tensors, (list, tuple)) and not tensors and kwargs.get("out") is None:
            raise ValueError("torch.cat(): expected a non-empty list of Tensors")
        return gen_cat(*args, **kwargs)

    cat.__doc__ = gen_cat.__doc__
    cat.__wrapped__ = gen_cat
    return cat


def install(tensor_cls, namespace: dict) -> None:
    namespace["cat"] = _wrap_cat(namespace["cat"])
    nonzero = _wrap_nonzero(namespace["nonzero"])
    namespace["nonzero"] = nonzero
    gen_method = tensor_cls.nonzero

    def _tensor_nonzero(self, *, as_tuple=False):
        if _TF and (r_ := _tf(_tensor_nonzero, locals())) is not _GO:
            return r_
        if as_tuple:
            return nonzero(self, as_tuple=True)
        return gen_method(self)

    _tensor_nonzero.__name__ = "nonzero"
    tensor_cls.nonzero = _tensor_nonzero
