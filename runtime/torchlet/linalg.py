"""torchlet.linalg: PyTorch's torch.linalg functions that torchlet has
(the operators are declared without `python_module: linalg`, which the
generator does not bind yet, so they are also torchlet.linalg_<name>)."""
from __future__ import annotations


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """torch.linalg.vector_norm."""
    import torchlet
    if out is None:
        return torchlet.linalg_vector_norm(x, ord, dim, keepdim, dtype=dtype)
    return torchlet.linalg_vector_norm(x, ord, dim, keepdim, dtype=dtype, out=out)
