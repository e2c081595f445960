"""The Python-level reductions of PyTorch (torch/functional.py, torch/_tensor.py):
torchlet.norm / Tensor.norm over linalg_vector_norm, as torch.norm does for
vector norms (p a number, None or 'fro' over at most two dims) and over
linalg_matrix_norm for the other string orders ('nuc'; 'fro' over more dims is
matrix_norm's error, as in torch)."""
from __future__ import annotations

import builtins

from ._function_mode import GO as _GO, handle as _tf, watch as _tf_watch

_TF = 0  # active torch-function modes: torchlet.norm / Tensor.norm are reported as themselves
_tf_watch(globals())


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """torch.norm: the vector norm of `input` (all elements, or over `dim`)."""
    if _TF and (r_ := _tf(norm, locals())) is not _GO:
        return r_
    import torchlet
    _dim = [dim] if isinstance(dim, builtins.int) else dim
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, builtins.int) or len(dim) <= 2):
            p = 2
        else:  # 'nuc', or matrix_norm raising torch's error for what it does not take
            _dim = list(range(input.ndim)) if _dim is None else _dim
            kw = {"dtype": dtype} if out is None else {"dtype": dtype, "out": out}
            return torchlet.linalg.matrix_norm(input, p, _dim, keepdim, **kw)
    _p = 2.0 if p is None else p
    kw = {"dtype": dtype}
    if out is not None:
        kw["out"] = out
    return torchlet.linalg.vector_norm(input, _p, _dim, keepdim, **kw)


def _tensor_norm(self, p="fro", dim=None, keepdim=False, dtype=None):
    """Tensor.norm (torch._tensor.Tensor.norm): torchlet.norm(self, ...)."""
    if _TF and (r_ := _tf(_tensor_norm, locals())) is not _GO:
        return r_
    return norm(self, p, dim, keepdim, dtype=dtype)


def install(tensor_cls) -> None:
    _tensor_norm.__name__ = "norm"
    tensor_cls.norm = _tensor_norm
