"""torchlet.linalg: PyTorch's torch.linalg functions that torchlet has
(vector_norm, matrix_norm, norm, svd, svdvals, vecdot, diagonal,
multi_dot, vander, cross, inv / inv_ex, solve / solve_ex, det, slogdet,
cholesky / cholesky_ex, matrix_power, tensorinv, tensorsolve, eig, eigvals, eigh, eigvalsh,
solve_triangular, lu_factor / lu_factor_ex, lu, lu_solve, qr,
householder_product, lstsq, pinv, matrix_rank, cond, matrix_exp, ldl_factor /
ldl_factor_ex, ldl_solve) and LinAlgError.

As torch/linalg/__init__.py does with torch._C._linalg, each is the generated
binding of its `python_module: linalg` operator (yaml/native_functions.yaml,
codegen/emit/python.py), bound in torchlet._C._linalg: PyTorch's signatures,
overloads (matrix_norm / norm take a number or a string ord), out= (svd:
out=(U, S, Vh)) and argument errors come from the generator."""
from __future__ import annotations

from torchlet import _C
from torchlet._errors import _LinAlgError as LinAlgError

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
inv = _linalg.linalg_inv
inv_ex = _linalg.linalg_inv_ex
solve = _linalg.linalg_solve
solve_ex = _linalg.linalg_solve_ex
det = _linalg.linalg_det
slogdet = _linalg.linalg_slogdet
cholesky = _linalg.linalg_cholesky
cholesky_ex = _linalg.linalg_cholesky_ex
matrix_power = _linalg.linalg_matrix_power
tensorinv = _linalg.linalg_tensorinv
tensorsolve = _linalg.linalg_tensorsolve
eigh = _linalg.linalg_eigh
eigvalsh = _linalg.linalg_eigvalsh
eig = _linalg.linalg_eig
eigvals = _linalg.linalg_eigvals
solve_triangular = _linalg.linalg_solve_triangular
lu_factor = _linalg.linalg_lu_factor
lu_factor_ex = _linalg.linalg_lu_factor_ex
lu = _linalg.linalg_lu
lu_solve = _linalg.linalg_lu_solve
qr = _linalg.linalg_qr
householder_product = _linalg.linalg_householder_product
lstsq = _linalg.linalg_lstsq
pinv = _linalg.linalg_pinv
matrix_rank = _linalg.linalg_matrix_rank
cond = _linalg.linalg_cond
matrix_exp = _linalg.linalg_matrix_exp
ldl_factor = _linalg.linalg_ldl_factor
ldl_factor_ex = _linalg.linalg_ldl_factor_ex
ldl_solve = _linalg.linalg_ldl_solve

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "householder_product", "inv", "inv_ex", "ldl_factor", "ldl_factor_ex", "ldl_solve", "lstsq", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "matrix_exp", "matrix_power", "matrix_rank", "multi_dot", "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular", "tensorinv", "tensorsolve", "vander", "vecdot"]
