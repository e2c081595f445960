"""torchlet.linalg: PyTorch's torch.linalg functions that torchlet has
(vector_norm, matrix_norm, norm, svd, svdvals, vecdot, diagonal,
multi_dot, vander, cross).

As torch/linalg/__init__.py does with torch._C._linalg, each is the generated
binding of its `python_module: linalg` operator (yaml/native_functions.yaml,
codegen/emit/python.py), bound in torchlet._C._linalg: PyTorch's signatures,
overloads (matrix_norm / norm take a number or a string ord), out= (svd:
out=(U, S, Vh)) and argument errors come from the generator."""
from __future__ import annotations

from torchlet import _C

_linalg = _C._linalg

vector_norm = _linalg.linalg_vector_norm
matrix_norm = _linalg.linalg_matrix_norm
norm = _linalg.linalg_norm
svd = _linalg.linalg_svd
svdvals = _linalg.linalg_svdvals
vecdot = _linalg.linalg_vecdot
diagonal = _linalg.linalg_diagonal
multi_dot = _linalg.linalg_multi_dot
vander = _linalg.linalg_vander
cross = _linalg.linalg_cross

__all__ = ["cross", "diagonal", "matrix_norm", "multi_dot", "norm", "svd", "svdvals", "vander", "vecdot", "vector_norm"]
