"""The Python-level reductions of PyTorch (torch/functional.py, torch/_tensor.py):
torchlet.norm / Tensor.norm over linalg_vector_norm, as torch.norm does for
vector norms (p a number, None or 'fro' over at most two dims) and over
linalg_matrix_norm for the other string orders ('nuc'; 'fro' over more dims is
matrix_norm's error, as in torch)."""
from __future__ import annotations

import builtins


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """torch.norm: the vector norm of `input` (all elements, or over `dim`)."""
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
    return norm(self, p, dim, keepdim, dtype=dtype)


def install(tensor_cls) -> None:
    tensor_cls.norm = _tensor_norm
