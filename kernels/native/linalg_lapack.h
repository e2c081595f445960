/* Helpers of the LAPACK solvers (linalg_lapack.c) that the decompositions
 * (linalg_decomp.c) share: PyTorch's input checks and _linalg_check_errors
 * texts, the column-major buffers, the batched getrs. */
#ifndef TL_LINALG_LAPACK_H
#define TL_LINALG_LAPACK_H

#include <stdbool.h>
#include <stdint.h>

#include "tl_tensor.h"

/* checkIsMatrix / squareCheckInputs / checkFloatingOrComplex + the CPU kernels' dtypes */
int tl_lapack_check_matrix(const tl_tensor *A, const char *f, const char *arg);
int tl_lapack_check_square(const tl_tensor *A, const char *f, const char *arg);
int tl_lapack_check_float(const tl_tensor *A, const char *f, const char *kernel);
/* _linalg_check_errors: raises for the first matrix with info != 0 */
int tl_lapack_check_errors(const tl_tensor *info, const char *api, bool is_matrix);
/* the number of matrices of t; the thread-pool grain for n x n work */
int64_t tl_lapack_batch_of(const tl_tensor *t);
int64_t tl_lapack_batch_grain(int64_t n);
/* a contiguous copy of A^T: A column-major, [..., n, m] */
tl_tensor *tl_lapack_colmajor_copy(tl_tensor *A);
/* the transposed view of t, t released (PyTorch's Fortran-strided outputs) */
tl_tensor *tl_lapack_mT_owned(tl_tensor *t);
/* the broadcast batch shape of a and b (PyTorch's message on a mismatch) */
int tl_lapack_broadcast_batch(const tl_tensor *a, const tl_tensor *b, int64_t *out, int64_t *out_nb);
/* rhs (contiguous [B..., k, n]) <- op(A)^-1 rhs, A given by its column-major
 * LU buffer and int32 pivots, their batch broadcast to rhs's; trans 'N' / 'T' */
void tl_lapack_lu_solve_inplace(const tl_tensor *lu, const tl_tensor *piv, tl_tensor *rhs, char trans);

#endif
