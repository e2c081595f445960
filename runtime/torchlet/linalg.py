"""torchlet.linalg: PyTorch's torch.linalg functions that torchlet has
(vector_norm, matrix_norm, norm, svdvals, svd)
(the operators are declared without `python_module: linalg`, which the
generator does not bind yet, so they are also torchlet.linalg_<name>)."""
from __future__ import annotations


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """torch.linalg.vector_norm."""
    import torchlet
    if out is None:
        return torchlet.linalg_vector_norm(x, ord, dim, keepdim, dtype=dtype)
    return torchlet.linalg_vector_norm(x, ord, dim, keepdim, dtype=dtype, out=out)


def _kw(dtype, out):
    return {"dtype": dtype} if out is None else {"dtype": dtype, "out": out}


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """torch.linalg.matrix_norm: 'fro', 'nuc', inf, -inf, 1, -1, 2, -2 over two dims."""
    import torchlet
    return torchlet.linalg_matrix_norm(A, ord, dim, keepdim, **_kw(dtype, out))


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """torch.linalg.norm: a matrix norm when ord is given over two dims, else a vector norm."""
    import torchlet
    return torchlet.linalg_norm(A, ord, dim, keepdim, **_kw(dtype, out))


def svdvals(A, *, driver=None, out=None):
    """torch.linalg.svdvals: the singular values, descending (LAPACK gesdd)."""
    import torchlet
    if out is None:
        return torchlet.linalg_svdvals(A, driver=driver)
    return torchlet.linalg_svdvals(A, driver=driver, out=out)


def svd(A, full_matrices=True, *, driver=None):
    """torch.linalg.svd: (U, S, Vh) with A = U diag(S) Vh (gradients of S only)."""
    import torchlet
    return torchlet.linalg_svd(A, full_matrices, driver=driver)
