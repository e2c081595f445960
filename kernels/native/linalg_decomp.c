/* Decompositions through LAPACK (the scipy-openblas32 wheel, `scipy_`
 * prefixed symbols, 32-bit integers), real dtypes (float32, float64):
 *
 *  - LU: linalg_lu_factor_ex (?getrf, rectangular), linalg_lu, lu_unpack,
 *    linalg_lu_solve (?getrs), and the composites linalg_lu_factor,
 *    lu_solve, _lu_with_info;
 *  - QR: geqrf (?geqrf), linalg_householder_product (?orgqr), ormqr
 *    (?ormqr), linalg_qr (geqrf + orgqr), and the composites qr, orgqr;
 *  - triangular_solve (over linalg_solve_triangular), linalg_lstsq (?gels,
 *    ?gelsy, ?gelsd, ?gelss), linalg_pinv and the composites pinverse,
 *    matrix_rank, cond;
 *  - linalg_matrix_exp (scaling and squaring with the [13/13] Pade
 *    approximant, in double) and matrix_exp / matrix_exp_backward;
 *  - LDL: linalg_ldl_factor_ex (?sytrf), linalg_ldl_solve (?sytrs).
 *
 * As in linalg_lapack.c a matrix is handed to LAPACK as a contiguous
 * [..., n, m] buffer holding A^T row-major (A column-major); outputs are that
 * buffer's transposed view (PyTorch's Fortran-strided results). A batch of
 * small matrices runs on the thread pool, one single-threaded call per matrix.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linalg_lapack.h"
#include "shape_index.h"
#include "tl_autograd.h"
#include "tl_autograd_formulas.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/_lu_with_info.h"
#include "ops/abs.h"
#include "ops/amax.h"
#include "ops/clone.h"
#include "ops/diagonal.h"
#include "ops/div.h"
#include "ops/expand.h"
#include "ops/fill.h"
#include "ops/geqrf.h"
#include "ops/gt.h"
#include "ops/linalg_cond.h"
#include "ops/linalg_eigh.h"
#include "ops/linalg_eigvalsh.h"
#include "ops/linalg_householder_product.h"
#include "ops/linalg_inv_ex.h"
#include "ops/linalg_ldl_factor.h"
#include "ops/linalg_ldl_factor_ex.h"
#include "ops/linalg_ldl_solve.h"
#include "ops/linalg_lstsq.h"
#include "ops/linalg_lu.h"
#include "ops/linalg_lu_factor.h"
#include "ops/linalg_lu_factor_ex.h"
#include "ops/linalg_lu_solve.h"
#include "ops/linalg_matrix_exp.h"
#include "ops/linalg_matrix_norm.h"
#include "ops/linalg_matrix_rank.h"
#include "ops/linalg_pinv.h"
#include "ops/linalg_qr.h"
#include "ops/linalg_solve_triangular.h"
#include "ops/linalg_svdvals.h"
#include "ops/lu_solve.h"
#include "ops/lu_unpack.h"
#include "ops/masked_fill.h"
#include "ops/matmul.h"
#include "ops/matrix_exp.h"
#include "ops/matrix_exp_backward.h"
#include "ops/max.h"
#include "ops/mul.h"
#include "ops/narrow.h"
#include "ops/orgqr.h"
#include "ops/ormqr.h"
#include "ops/pinverse.h"
#include "ops/pow.h"
#include "ops/qr.h"
#include "ops/reciprocal.h"
#include "ops/scalar_tensor.h"
#include "ops/squeeze.h"
#include "ops/sum.h"
#include "ops/svd.h"
#include "ops/to.h"
#include "ops/transpose.h"
#include "ops/triangular_solve.h"
#include "ops/tril.h"
#include "ops/triu.h"
#include "ops/unsqueeze.h"
#include "ops/where.h"
#include "ops/zeros_like.h"

typedef int lint;   /* LAPACK's integer (LP64) */

extern void scipy_sgetrf_(const lint *m, const lint *n, float *a, const lint *lda, lint *ipiv, lint *info);
extern void scipy_dgetrf_(const lint *m, const lint *n, double *a, const lint *lda, lint *ipiv, lint *info);
extern void scipy_sgeqrf_(const lint *m, const lint *n, float *a, const lint *lda, float *tau, float *work,
                          const lint *lwork, lint *info);
extern void scipy_dgeqrf_(const lint *m, const lint *n, double *a, const lint *lda, double *tau, double *work,
                          const lint *lwork, lint *info);
extern void scipy_sorgqr_(const lint *m, const lint *n, const lint *k, float *a, const lint *lda, const float *tau,
                          float *work, const lint *lwork, lint *info);
extern void scipy_dorgqr_(const lint *m, const lint *n, const lint *k, double *a, const lint *lda, const double *tau,
                          double *work, const lint *lwork, lint *info);
extern void scipy_sormqr_(const char *side, const char *trans, const lint *m, const lint *n, const lint *k,
                          const float *a, const lint *lda, const float *tau, float *c, const lint *ldc, float *work,
                          const lint *lwork, lint *info, size_t side_len, size_t trans_len);
extern void scipy_dormqr_(const char *side, const char *trans, const lint *m, const lint *n, const lint *k,
                          const double *a, const lint *lda, const double *tau, double *c, const lint *ldc,
                          double *work, const lint *lwork, lint *info, size_t side_len, size_t trans_len);
extern void scipy_sgels_(const char *trans, const lint *m, const lint *n, const lint *nrhs, float *a, const lint *lda,
                         float *b, const lint *ldb, float *work, const lint *lwork, lint *info, size_t trans_len);
extern void scipy_dgels_(const char *trans, const lint *m, const lint *n, const lint *nrhs, double *a,
                         const lint *lda, double *b, const lint *ldb, double *work, const lint *lwork, lint *info,
                         size_t trans_len);
extern void scipy_sgelsy_(const lint *m, const lint *n, const lint *nrhs, float *a, const lint *lda, float *b,
                          const lint *ldb, lint *jpvt, const float *rcond, lint *rank, float *work, const lint *lwork,
                          lint *info);
extern void scipy_dgelsy_(const lint *m, const lint *n, const lint *nrhs, double *a, const lint *lda, double *b,
                          const lint *ldb, lint *jpvt, const double *rcond, lint *rank, double *work,
                          const lint *lwork, lint *info);
extern void scipy_sgelsd_(const lint *m, const lint *n, const lint *nrhs, float *a, const lint *lda, float *b,
                          const lint *ldb, float *s, const float *rcond, lint *rank, float *work, const lint *lwork,
                          lint *iwork, lint *info);
extern void scipy_dgelsd_(const lint *m, const lint *n, const lint *nrhs, double *a, const lint *lda, double *b,
                          const lint *ldb, double *s, const double *rcond, lint *rank, double *work,
                          const lint *lwork, lint *iwork, lint *info);
extern void scipy_sgelss_(const lint *m, const lint *n, const lint *nrhs, float *a, const lint *lda, float *b,
                          const lint *ldb, float *s, const float *rcond, lint *rank, float *work, const lint *lwork,
                          lint *info);
extern void scipy_dgelss_(const lint *m, const lint *n, const lint *nrhs, double *a, const lint *lda, double *b,
                          const lint *ldb, double *s, const double *rcond, lint *rank, double *work,
                          const lint *lwork, lint *info);
extern void scipy_ssytrf_(const char *uplo, const lint *n, float *a, const lint *lda, lint *ipiv, float *work,
                          const lint *lwork, lint *info, size_t uplo_len);
extern void scipy_dsytrf_(const char *uplo, const lint *n, double *a, const lint *lda, lint *ipiv, double *work,
                          const lint *lwork, lint *info, size_t uplo_len);
extern void scipy_ssytrs_(const char *uplo, const lint *n, const lint *nrhs, const float *a, const lint *lda,
                          const lint *ipiv, float *b, const lint *ldb, lint *info, size_t uplo_len);
extern void scipy_dsytrs_(const char *uplo, const lint *n, const lint *nrhs, const double *a, const lint *lda,
                          const lint *ipiv, double *b, const lint *ldb, lint *info, size_t uplo_len);
extern void scipy_dgesv_(const lint *n, const lint *nrhs, double *a, const lint *lda, lint *ipiv, double *b,
                         const lint *ldb, lint *info);
extern void scipy_cblas_dgemm(int order, int transa, int transb, int m, int n, int k, double alpha, const double *a,
                              int lda, const double *b, int ldb, double beta, double *c, int ldc);

/* ------------------------------------------------------------ small helpers */

static lint ld_of(int64_t n) { return n > 1 ? (lint)n : 1; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static size_t isz_of(const tl_tensor *t) { return (size_t)tl__itemsize(t->dtype); }

/* LAPACK's workspace answer (a float or double in work[0]) as a size */
static lint work_size(bool f64, double wd, float wf) {
    const double w = f64 ? wd : (double)wf;
    return w > 1 ? (lint)w : 1;
}

static tl_tensor *empty0(tl_dtype dtype) {
    const int64_t zero = 0;
    return tl_empty(1, &zero, dtype, TL_CPU);
}

/* t's shape with the last `drop` dims replaced by `tail` */
static tl_tensor *alloc_shape(const tl_tensor *t, int64_t drop, const int64_t *tail, int64_t ntail, tl_dtype dtype,
                              bool zero) {
    int64_t sizes[TL_MAX_DIMS + 2];
    const int64_t nb = t->ndim - drop;
    memcpy(sizes, t->sizes, sizeof(int64_t) * (size_t)nb);
    for (int64_t i = 0; i < ntail; i++) sizes[nb + i] = tail[i];
    return zero ? tl_zeros(nb + ntail, sizes, dtype, TL_CPU) : tl_empty(nb + ntail, sizes, dtype, TL_CPU);
}

static tl_tensor *contig_owned(tl_tensor *t) {
    if (!t || tl_tensor_is_contiguous(t)) return t;
    tl_tensor *c = tl_contiguous(t);
    tl_tensor_release(t);
    return c;
}

/* t expanded to the batch shape `batch` (nb dims) + its own last two dims */
static tl_tensor *expand_batch(tl_tensor *t, const int64_t *batch, int64_t nb) {
    int64_t shape[TL_MAX_DIMS + 2];
    memcpy(shape, batch, sizeof(int64_t) * (size_t)nb);
    shape[nb] = t->sizes[t->ndim - 2], shape[nb + 1] = t->sizes[t->ndim - 1];
    return tl_ops_expand(t, shape, nb + 2, false);
}

static int need_dims(const tl_tensor *A, const char *f) {
    if (A->ndim >= 2) return 0;
    char buf[128];
    return tl_set_error(TL_ERR_RUNTIME, "%s: Expected tensor with 2 or more dimensions. Got size: %s instead", f,
                        si_shape_str(buf, sizeof buf, A->ndim, A->sizes));
}

/* the non-_ex composites: the _ex call's result (rc), then raise on info;
 * the factors are dropped on an error */
static int checked_factor(int rc, tl_tensor *info, const char *api, bool is_matrix, tl_tensor **f0, tl_tensor **f1) {
    if (rc) return -1;
    rc = tl_lapack_check_errors(info, api, is_matrix);
    tl_tensor_release(info);
    if (rc) {
        tl_tensor_release(*f0), tl_tensor_release(*f1);
        *f0 = *f1 = NULL;
    }
    return rc;
}

/* ------------------------------------------------------------ LU */

typedef struct {
    tl_tensor *a, *piv, *info;
    lint m, n;
} getrf_ctx;

static void getrf_range(int64_t b0, int64_t b1, void *vctx) {
    getrf_ctx *c = (getrf_ctx *)vctx;
    const lint m = c->m, n = c->n, k = m < n ? m : n, lda = ld_of(m);
    const size_t isz = isz_of(c->a);
    for (int64_t b = b0; b < b1; b++) {
        char *a = tl__data(c->a) + (size_t)b * (size_t)m * (size_t)n * isz;
        lint *ipiv = (lint *)tl__data(c->piv) + b * k, *info = (lint *)tl__data(c->info) + b;
        if (c->a->dtype == TL_FLOAT64) scipy_dgetrf_(&m, &n, (double *)a, &lda, ipiv, info);
        else scipy_sgetrf_(&m, &n, (float *)a, &lda, ipiv, info);
    }
}

int tl_native_linalg_lu_factor_ex(tl_keyset ks, tl_tensor *A, bool pivot, bool check_errs, tl_tensor **ret0,
                                  tl_tensor **ret1, tl_tensor **ret2) {
    (void)ks;
    if (need_dims(A, "torch.lu_factor")) return -1;
    if (A->dtype != TL_FLOAT32 && A->dtype != TL_FLOAT64)   /* PyTorch has no dtype check: its kernel's error */
        return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"lu_cpu\" not implemented for '%s'",
                            tl_dtype_scalar_name(A->dtype));
    if (!pivot) return tl_set_error(TL_ERR_RUNTIME, "linalg.lu_factor: LU without pivoting is not implemented on the CPU");
    const int64_t nd = A->ndim, m = A->sizes[nd - 2], n = A->sizes[nd - 1], k = min64(m, n);
    if (max64(m, n) > 2147483647LL) return tl_set_error(TL_ERR_RUNTIME, "linalg.lu_factor: matrix too large for the 32-bit LAPACK");
    tl_tensor *lu = tl_lapack_colmajor_copy(A);
    tl_tensor *piv = alloc_shape(A, 2, &k, 1, TL_INT32, false);
    tl_tensor *info = alloc_shape(A, 2, NULL, 0, TL_INT32, true);
    if (lu && piv && info && k > 0) {
        getrf_ctx c = {lu, piv, info, (lint)m, (lint)n};
        tl_parallel_for(tl_lapack_batch_of(A), tl_lapack_batch_grain(max64(m, n)), getrf_range, &c);
    }
    lu = tl_lapack_mT_owned(lu);
    if (!lu || !piv || !info || (check_errs && tl_lapack_check_errors(info, "torch.linalg.lu_factor_ex", nd == 2))) {
        tl_tensor_release(lu), tl_tensor_release(piv), tl_tensor_release(info);
        return -1;
    }
    *ret0 = lu, *ret1 = piv, *ret2 = info;
    return 0;
}

int tl_native_linalg_lu_factor(tl_keyset ks, tl_tensor *A, bool pivot, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    tl_tensor *info = NULL;
    const int rc = tl_ops_linalg_lu_factor_ex(A, pivot, false, ret0, ret1, &info);
    return checked_factor(rc, info, "torch.linalg.lu_factor", A->ndim == 2, ret0, ret1);
}

/* P [..., m, m] (float64) from LAPACK's row interchanges: row i was swapped
 * with row piv[i] - 1 in turn, A = P L U */
static tl_tensor *permutation_from_pivots(const tl_tensor *LU, tl_tensor *pivots) {
    const int64_t m = LU->sizes[LU->ndim - 2], k = min64(m, LU->sizes[LU->ndim - 1]);
    const int64_t nb = tl_lapack_batch_of(LU);
    if (pivots->ndim < 1 || pivots->numel != nb * k || pivots->sizes[pivots->ndim - 1] != k) {
        char buf[128];
        tl_set_error(TL_ERR_RUNTIME, "torch.lu_unpack: Expected LU_pivots of shape [..., %lld] matching LU, but got %s",
                     (long long)k, si_shape_str(buf, sizeof buf, pivots->ndim, pivots->sizes));
        return NULL;
    }
    tl_tensor *pc = tl_contiguous(pivots);
    const int64_t tail[2] = {m, m};
    tl_tensor *P = pc ? alloc_shape(LU, 2, tail, 2, TL_FLOAT64, true) : NULL;
    int64_t *perm = (int64_t *)malloc(sizeof(int64_t) * (size_t)(m > 0 ? m : 1));
    int rc = (!P || !perm) ? -1 : 0;
    for (int64_t b = 0; rc == 0 && b < nb; b++) {
        const int32_t *pv = (const int32_t *)tl__data(pc) + b * k;
        for (int64_t i = 0; i < m; i++) perm[i] = i;
        for (int64_t i = 0; i < k && rc == 0; i++) {
            const int64_t p = (int64_t)pv[i] - 1;
            if (p < 0 || p >= m) {
                rc = tl_set_error(TL_ERR_RUNTIME, "pivots passed to lu_unpack must be between 1 and LU.size(-2) "
                                                  "inclusive. Did you use the LU factorization output from "
                                                  "torch.linalg.lu_factor?");
                break;
            }
            const int64_t t = perm[i];
            perm[i] = perm[p], perm[p] = t;
        }
        double *pd = (double *)tl__data(P) + b * m * m;
        for (int64_t j = 0; rc == 0 && j < m; j++) pd[perm[j] * m + j] = 1.0;
    }
    free(perm);
    tl_tensor_release(pc);
    if (rc) {
        tl_tensor_release(P);
        return NULL;
    }
    return P;
}

int tl_native_lu_unpack(tl_keyset ks, tl_tensor *LU, tl_tensor *pivots, bool unpack_data, bool unpack_pivots,
                        tl_tensor **ret0, tl_tensor **ret1, tl_tensor **ret2) {
    (void)ks;
    if (need_dims(LU, "torch.lu_unpack")) return -1;
    if (unpack_pivots && pivots->dtype != TL_INT32)
        return tl_set_error(TL_ERR_RUNTIME, "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of "
                                            "torch.int32 dtype.\nNote: this function is intended to be used with the "
                                            "output produced by torch.linalg.lu_factor");
    const int64_t m = LU->sizes[LU->ndim - 2], n = LU->sizes[LU->ndim - 1], k = min64(m, n);
    tl_tensor *P = NULL, *L = NULL, *U = NULL;
    if (unpack_pivots) {
        tl_tensor *Pd = permutation_from_pivots(LU, pivots);
        P = Pd && LU->dtype != TL_FLOAT64 ? tl_ops_to_dtype(Pd, LU->dtype, false, false, -1) : (Pd ? (tl_tensor_retain(Pd), Pd) : NULL);
        tl_tensor_release(Pd);
        if (!P) return -1;
    } else {
        P = empty0(LU->dtype);
    }
    if (unpack_data) {
        tl_tensor *Ln = tl_ops_narrow(LU, -1, 0, k), *Un = tl_ops_narrow(LU, -2, 0, k);
        L = Ln ? tl_ops_tril(Ln, -1) : NULL;
        U = Un ? tl_ops_triu(Un, 0) : NULL;
        tl_tensor_release(Ln), tl_tensor_release(Un);
        tl_tensor *d = L ? tl_ops_diagonal(L, 0, -2, -1) : NULL;   /* unit diagonal */
        tl_tensor *f = d ? tl_ops_fill__Scalar(d, tl_scalar_from_double(1.0)) : NULL;
        if (!f) {
            tl_tensor_release(L);
            L = NULL;
        }
        tl_tensor_release(d);
    } else {
        L = empty0(LU->dtype), U = empty0(LU->dtype);
    }
    if (!P || !L || !U) {
        tl_tensor_release(P), tl_tensor_release(L), tl_tensor_release(U);
        return -1;
    }
    *ret0 = P, *ret1 = L, *ret2 = U;
    return 0;
}

int tl_native_linalg_lu(tl_keyset ks, tl_tensor *A, bool pivot, tl_tensor **ret0, tl_tensor **ret1,
                        tl_tensor **ret2) {
    (void)ks;
    if (need_dims(A, "linalg.lu")) return -1;
    tl_tensor *lu = NULL, *piv = NULL, *info = NULL;
    if (tl_ops_linalg_lu_factor_ex(A, pivot, false, &lu, &piv, &info)) return -1;
    const int rc = tl_ops_lu_unpack(lu, piv, true, pivot, ret0, ret1, ret2);
    tl_tensor_release(lu), tl_tensor_release(piv), tl_tensor_release(info);
    return rc;
}

/* pivots must index rows 1..n: getrs / sytrs read them as row numbers */
static int check_pivots(tl_tensor *pc, int64_t n, bool ldl, const char *f) {
    const int32_t *p = (const int32_t *)tl__data(pc);
    for (int64_t i = 0; i < pc->numel; i++) {
        const int64_t v = ldl && p[i] < 0 ? -(int64_t)p[i] : (int64_t)p[i];
        if (v < 1 || v > n)
            return tl_set_error(TL_ERR_RUNTIME, "%s: pivots must be between 1 and %lld (got %d); did you pass the "
                                                "pivots of the matching factorization?", f, (long long)n, (int)p[i]);
    }
    return 0;
}

tl_tensor *tl_native_linalg_lu_solve(tl_keyset ks, tl_tensor *LU, tl_tensor *pivots, tl_tensor *B, bool left,
                                     bool adjoint) {
    (void)ks;
    const char *f = "linalg.lu_solve";
    if (tl_lapack_check_float(LU, "torch.linalg.lu_solve", "linalg_lu_solve_out")) return NULL;
    if (LU->dtype != B->dtype) {
        tl_set_error(TL_ERR_RUNTIME, "%s: Expected LU and B to have the same dtype, but found LU of type %s and B of "
                                     "type %s instead", f, tl_dtype_scalar_name(LU->dtype), tl_dtype_scalar_name(B->dtype));
        return NULL;
    }
    if (pivots->dtype != TL_INT32) {
        tl_set_error(TL_ERR_RUNTIME, "%s: pivots should be a Tensor of scalar type torch.int32", f);
        return NULL;
    }
    if (tl_lapack_check_square(LU, "torch.linalg.lu_solve", "A") || tl_lapack_check_matrix(LU, f, "A") ||
        tl_lapack_check_matrix(B, f, "B"))
        return NULL;
    const int64_t n = LU->sizes[LU->ndim - 1];
    if (left ? B->sizes[B->ndim - 2] != n : B->sizes[B->ndim - 1] != n) {
        tl_set_error(TL_ERR_RUNTIME, "%s: Incompatible shapes of A and B for the equation %s (%lldx%lld and %lldx%lld)",
                     f, left ? "AX = B" : "XA = B", (long long)n, (long long)n, (long long)B->sizes[B->ndim - 2],
                     (long long)B->sizes[B->ndim - 1]);
        return NULL;
    }
    if (pivots->ndim < 1 || pivots->sizes[pivots->ndim - 1] != n) {
        tl_set_error(TL_ERR_RUNTIME, "%s: Number of pivots per batch should be same as the dimension of the matrix", f);
        return NULL;
    }
    bool same = pivots->ndim == LU->ndim - 1;
    for (int64_t d = 0; same && d < pivots->ndim; d++) same = pivots->sizes[d] == LU->sizes[d];
    if (!same) {
        char buf[128];
        tl_set_error(TL_ERR_RUNTIME, "%s: Expected LU.shape[:-1] and pivots.shape to be the same, but got pivots with "
                                     "shape %s instead", f, si_shape_str(buf, sizeof buf, pivots->ndim, pivots->sizes));
        return NULL;
    }
    int64_t batch[TL_MAX_DIMS + 2], nb = 0;
    if (tl_lapack_broadcast_batch(B, LU, batch, &nb)) return NULL;
    tl_tensor *pc = tl_contiguous(pivots);
    if (!pc || check_pivots(pc, n, false, f)) {
        tl_tensor_release(pc);
        return NULL;
    }
    tl_tensor *Be = expand_batch(B, batch, nb);
    /* right-hand sides as column-major vectors: B^T (left), B (right: op(A)^T X^T = B^T) */
    tl_tensor *X = Be ? (left ? tl_lapack_colmajor_copy(Be) : contig_owned(tl_clone(Be))) : NULL;
    tl_tensor_release(Be);
    tl_tensor *lu = X ? tl_lapack_colmajor_copy(LU) : NULL;
    if (lu) tl_lapack_lu_solve_inplace(lu, pc, X, left ? (adjoint ? 'T' : 'N') : (adjoint ? 'N' : 'T'));
    tl_tensor_release(pc);
    if (!lu) {
        tl_tensor_release(X);
        return NULL;
    }
    tl_tensor_release(lu);
    return left ? tl_lapack_mT_owned(X) : X;
}

tl_tensor *tl_native_lu_solve(tl_keyset ks, tl_tensor *self, tl_tensor *LU_data, tl_tensor *LU_pivots) {
    (void)ks;
    TL_WARN_ONCE("torch.lu_solve is deprecated in favor of torch.linalg.lu_solve and will be removed in a future "
                 "PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\nX = "
                 "torch.lu_solve(B, LU, pivots)\nshould be replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)");
    return tl_ops_linalg_lu_solve(LU_data, LU_pivots, self, true, false);
}

int tl_native__lu_with_info(tl_keyset ks, tl_tensor *self, bool pivot, bool check_errs, tl_tensor **ret0,
                            tl_tensor **ret1, tl_tensor **ret2) {
    (void)ks, (void)check_errs;
    TL_WARN_ONCE("torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will be "
                 "removed in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\nshould be replaced "
                 "with\nLU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, pivots, info = torch.lu(A, "
                 "compute_pivots, get_infos=True)\nshould be replaced with\nLU, pivots, info = "
                 "torch.linalg.lu_factor_ex(A, compute_pivots)");
    return tl_ops_linalg_lu_factor_ex(self, pivot, false, ret0, ret1, ret2);
}

/* ------------------------------------------------------------ QR */

typedef struct {
    tl_tensor *a, *tau;
    lint m, n, k;      /* geqrf: m x n; orgqr: m x n from k reflectors */
    bool orgqr;
    int failed;
} qr_ctx;

static void qr_range(int64_t b0, int64_t b1, void *vctx) {
    qr_ctx *c = (qr_ctx *)vctx;
    const bool f64 = c->a->dtype == TL_FLOAT64;
    const size_t isz = isz_of(c->a);
    const lint m = c->m, n = c->n, k = c->k, lda = ld_of(m), query = -1;
    lint info = 0;
    double wd = 0;
    float wf = 0;
    char *a0 = tl__data(c->a);
    if (c->orgqr) {
        if (f64) scipy_dorgqr_(&m, &n, &k, (double *)a0, &lda, NULL, &wd, &query, &info);
        else scipy_sorgqr_(&m, &n, &k, (float *)a0, &lda, NULL, &wf, &query, &info);
    } else {
        if (f64) scipy_dgeqrf_(&m, &n, (double *)a0, &lda, NULL, &wd, &query, &info);
        else scipy_sgeqrf_(&m, &n, (float *)a0, &lda, NULL, &wf, &query, &info);
    }
    const lint lwork = work_size(f64, wd, wf);
    void *work = malloc((size_t)lwork * isz);
    if (!work) {
        c->failed = 1;
        return;
    }
    for (int64_t b = b0; b < b1; b++) {
        char *a = a0 + (size_t)b * (size_t)m * (size_t)n * isz;
        char *tau = tl__data(c->tau) + (size_t)b * (size_t)c->tau->sizes[c->tau->ndim - 1] * isz;
        if (c->orgqr) {
            if (f64) scipy_dorgqr_(&m, &n, &k, (double *)a, &lda, (double *)tau, (double *)work, &lwork, &info);
            else scipy_sorgqr_(&m, &n, &k, (float *)a, &lda, (float *)tau, (float *)work, &lwork, &info);
        } else {
            if (f64) scipy_dgeqrf_(&m, &n, (double *)a, &lda, (double *)tau, (double *)work, &lwork, &info);
            else scipy_sgeqrf_(&m, &n, (float *)a, &lda, (float *)tau, (float *)work, &lwork, &info);
        }
    }
    free(work);
}

/* one batched geqrf / orgqr over a column-major buffer [..., n, m] */
static int run_qr(tl_tensor *buf, tl_tensor *tau, int64_t m, int64_t n, int64_t k, bool orgqr) {
    if (m == 0 || n == 0 || tl_lapack_batch_of(buf) == 0) return 0;
    if (max64(m, n) > 2147483647LL) return tl_set_error(TL_ERR_RUNTIME, "QR: matrix too large for the 32-bit LAPACK");
    qr_ctx c = {buf, tau, (lint)m, (lint)n, (lint)k, orgqr, 0};
    tl_parallel_for(tl_lapack_batch_of(buf), tl_lapack_batch_grain(max64(m, n)), qr_range, &c);
    return c.failed ? tl_set_error(TL_ERR_MEMORY, "QR: out of memory for the LAPACK workspace") : 0;
}

/* geqrf of A: *buf the column-major factored A [..., n, m], *tau [..., k] */
static int geqrf_core(tl_tensor *A, tl_tensor **buf, tl_tensor **tau) {
    const int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = min64(m, n);
    *buf = tl_lapack_colmajor_copy(A);
    *tau = alloc_shape(A, 2, &k, 1, A->dtype, true);
    if (!*buf || !*tau || run_qr(*buf, *tau, m, n, k, false)) {
        tl_tensor_release(*buf), tl_tensor_release(*tau);
        return -1;
    }
    return 0;
}

int tl_native_geqrf(tl_keyset ks, tl_tensor *self, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    if (self->ndim < 2) return tl_set_error(TL_ERR_RUNTIME, "torch.geqrf: input must have at least 2 dimensions.");
    if (tl_lapack_check_float(self, "torch.geqrf", "geqrf_cpu")) return -1;
    tl_tensor *buf, *tau;
    if (geqrf_core(self, &buf, &tau)) return -1;
    *ret0 = tl_lapack_mT_owned(buf), *ret1 = tau;
    if (!*ret0) {
        tl_tensor_release(tau);
        return -1;
    }
    return 0;
}

int tl_native_linalg_qr(tl_keyset ks, tl_tensor *A, const char *mode, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    const bool complete = strcmp(mode, "complete") == 0, r_only = strcmp(mode, "r") == 0;
    if (!complete && !r_only && strcmp(mode, "reduced") != 0)
        return tl_set_error(TL_ERR_RUNTIME, "qr received unrecognized mode '%s' but expected one of 'reduced' "
                                            "(default), 'r', or 'complete'", mode);
    if (tl_lapack_check_matrix(A, "linalg.qr", "A") || tl_lapack_check_float(A, "linalg.qr", "linalg_qr_out"))
        return -1;
    const int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = min64(m, n);
    tl_tensor *buf, *tau;
    if (geqrf_core(A, &buf, &tau)) return -1;
    tl_tensor *view = tl_ops_transpose_int(buf, -2, -1);
    tl_tensor *top = view ? tl_ops_narrow(view, -2, 0, complete ? m : k) : NULL;
    tl_tensor *R = top ? tl_ops_triu(top, 0) : NULL;
    tl_tensor_release(view), tl_tensor_release(top);
    tl_tensor *Q = NULL;
    if (R && r_only) {
        Q = empty0(A->dtype);
    } else if (R) {   /* Q's columns: the first min(n, qc) reflector columns, then orgqr */
        const int64_t qc = complete ? m : k, tail[2] = {qc, m};
        Q = alloc_shape(A, 2, tail, 2, A->dtype, true);
        const int64_t nb = tl_lapack_batch_of(A), cols = min64(n, qc);
        const size_t isz = isz_of(A);
        for (int64_t b = 0; Q && b < nb; b++)
            memcpy(tl__data(Q) + (size_t)(b * qc * m) * isz, tl__data(buf) + (size_t)(b * n * m) * isz,
                   (size_t)(cols * m) * isz);
        if (Q && run_qr(Q, tau, m, qc, k, true)) {
            tl_tensor_release(Q);
            Q = NULL;
        }
        Q = tl_lapack_mT_owned(Q);
    }
    tl_tensor_release(buf), tl_tensor_release(tau);
    if (!Q || !R) {
        tl_tensor_release(Q), tl_tensor_release(R);
        return -1;
    }
    *ret0 = Q, *ret1 = R;
    return 0;
}

int tl_native_qr(tl_keyset ks, tl_tensor *self, bool some, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    return tl_ops_linalg_qr(self, some ? "reduced" : "complete", ret0, ret1);
}

/* the batch dims of t (without its last `drop`) equal input's (without its last two) */
static bool same_batch(const tl_tensor *t, int64_t drop, const tl_tensor *input) {
    if (t->ndim - drop != input->ndim - 2) return false;
    for (int64_t d = 0; d < input->ndim - 2; d++)
        if (t->sizes[d] != input->sizes[d]) return false;
    return true;
}

tl_tensor *tl_native_linalg_householder_product(tl_keyset ks, tl_tensor *input, tl_tensor *tau) {
    (void)ks;
    const char *f = "torch.linalg.householder_product";
    char buf[128];
    if (input->ndim < 2) {
        tl_set_error(TL_ERR_RUNTIME, "%s: input must have at least 2 dimensions.", f);
        return NULL;
    }
    const int64_t m = input->sizes[input->ndim - 2], n = input->sizes[input->ndim - 1];
    if (m < n) {
        tl_set_error(TL_ERR_RUNTIME, "%s: input.shape[-2] must be greater than or equal to input.shape[-1]", f);
        return NULL;
    }
    if (tau->ndim < 1 || n < tau->sizes[tau->ndim - 1]) {
        tl_set_error(TL_ERR_RUNTIME, "%s: input.shape[-1] must be greater than or equal to tau.shape[-1]", f);
        return NULL;
    }
    if (input->ndim - tau->ndim != 1) {
        tl_set_error(TL_ERR_RUNTIME, "%s: Expected tau to have one dimension less than input, but got tau.ndim equal "
                                     "to %lld and input.ndim is equal to %lld", f, (long long)tau->ndim,
                     (long long)input->ndim);
        return NULL;
    }
    if (!same_batch(tau, 1, input)) {
        tl_set_error(TL_ERR_RUNTIME, "%s: Expected batch dimensions of tau to be equal to input.shape[:-2], but got %s",
                     f, si_shape_str(buf, sizeof buf, tau->ndim - 1, tau->sizes));
        return NULL;
    }
    if (tau->dtype != input->dtype) {
        tl_set_error(TL_ERR_RUNTIME, "%s: tau dtype %s does not match input dtype %s", f,
                     tl_dtype_scalar_name(tau->dtype), tl_dtype_scalar_name(input->dtype));
        return NULL;
    }
    if (tl_lapack_check_float(input, f, "linalg_householder_product_cpu")) return NULL;
    tl_tensor *Q = tl_lapack_colmajor_copy(input), *tc = tl_contiguous(tau);
    if (!Q || !tc || run_qr(Q, tc, m, n, tau->sizes[tau->ndim - 1], true)) {
        tl_tensor_release(Q), tl_tensor_release(tc);
        return NULL;
    }
    tl_tensor_release(tc);
    return tl_lapack_mT_owned(Q);
}

tl_tensor *tl_native_orgqr(tl_keyset ks, tl_tensor *self, tl_tensor *input2) {
    (void)ks;
    return tl_ops_linalg_householder_product(self, input2);
}

typedef struct {
    const tl_tensor *a, *tau;
    tl_tensor *c;
    lint m, n, k, lda;
    char side, trans;
    int failed;
} ormqr_ctx;

static void ormqr_range(int64_t b0, int64_t b1, void *vctx) {
    ormqr_ctx *c = (ormqr_ctx *)vctx;
    const bool f64 = c->c->dtype == TL_FLOAT64;
    const size_t isz = isz_of(c->c);
    const lint m = c->m, n = c->n, k = c->k, lda = c->lda, ldc = ld_of(m), query = -1;
    const int64_t acols = c->a->sizes[c->a->ndim - 2];
    lint info = 0;
    double wd = 0;
    float wf = 0;
    if (f64)
        scipy_dormqr_(&c->side, &c->trans, &m, &n, &k, NULL, &lda, NULL, NULL, &ldc, &wd, &query, &info, 1, 1);
    else
        scipy_sormqr_(&c->side, &c->trans, &m, &n, &k, NULL, &lda, NULL, NULL, &ldc, &wf, &query, &info, 1, 1);
    const lint lwork = work_size(f64, wd, wf);
    void *work = malloc((size_t)lwork * isz);
    if (!work) {
        c->failed = 1;
        return;
    }
    for (int64_t b = b0; b < b1; b++) {
        const char *a = tl__data(c->a) + (size_t)b * (size_t)acols * (size_t)lda * isz;
        const char *tau = tl__data(c->tau) + (size_t)b * (size_t)k * isz;
        char *x = tl__data(c->c) + (size_t)b * (size_t)m * (size_t)n * isz;
        if (f64)
            scipy_dormqr_(&c->side, &c->trans, &m, &n, &k, (const double *)a, &lda, (const double *)tau, (double *)x,
                          &ldc, (double *)work, &lwork, &info, 1, 1);
        else
            scipy_sormqr_(&c->side, &c->trans, &m, &n, &k, (const float *)a, &lda, (const float *)tau, (float *)x,
                          &ldc, (float *)work, &lwork, &info, 1, 1);
    }
    free(work);
}

tl_tensor *tl_native_ormqr(tl_keyset ks, tl_tensor *self, tl_tensor *input2, tl_tensor *input3, bool left,
                           bool transpose) {
    (void)ks;
    const char *f = "torch.ormqr";
    tl_tensor *input = self, *tau = input2, *other = input3;
    char buf[128];
    int rc = 0;
    const int64_t lsc = left ? -2 : -1;
    if (input->ndim < 2) rc = tl_set_error(TL_ERR_RUNTIME, "%s: input must have at least 2 dimensions.", f);
    else if (other->ndim < 2) rc = tl_set_error(TL_ERR_RUNTIME, "%s: other must have at least 2 dimensions.", f);
    else if (other->sizes[other->ndim + lsc] != input->sizes[input->ndim - 2])
        rc = tl_set_error(TL_ERR_RUNTIME, "%s: other.shape[%lld] must be equal to input.shape[-2]", f, (long long)lsc);
    else if (tau->ndim < 1 || tau->sizes[tau->ndim - 1] != min64(other->sizes[other->ndim + lsc],
                                                                   input->sizes[input->ndim - 1]))
        rc = tl_set_error(TL_ERR_RUNTIME, "%s: tau.shape[-1] must be equal to min(other.shape[%lld], "
                                          "input.shape[-1])", f, (long long)lsc);
    else if (input->ndim - tau->ndim != 1)
        rc = tl_set_error(TL_ERR_RUNTIME, "%s: Expected tau to have one dimension less than input, but got tau.ndim "
                                          "equal to %lld and input.ndim is equal to %lld", f, (long long)tau->ndim,
                          (long long)input->ndim);
    else if (input->ndim != other->ndim)
        rc = tl_set_error(TL_ERR_RUNTIME, "%s: Expected other to have the same number of dimensions as input, but got "
                                          "other.ndim equal to %lld and input.ndim is equal to %lld", f,
                          (long long)other->ndim, (long long)input->ndim);
    else if (!same_batch(tau, 1, input))
        rc = tl_set_error(TL_ERR_RUNTIME, "%s: Expected batch dimensions of tau to be equal to input.shape[:-2], but "
                                          "got %s", f, si_shape_str(buf, sizeof buf, tau->ndim - 1, tau->sizes));
    else if (!same_batch(other, 2, input))
        rc = tl_set_error(TL_ERR_RUNTIME, "%s: Expected batch dimensions of other to be equal to input.shape[:-2], "
                                          "but got %s", f, si_shape_str(buf, sizeof buf, other->ndim - 2, other->sizes));
    else if (input->dtype != tau->dtype)
        rc = tl_set_error(TL_ERR_RUNTIME, "%s: Expected input and tau to have the same dtype, but input has dtype%s "
                                          "and tau has dtype %s", f, tl_dtype_scalar_name(input->dtype),
                          tl_dtype_scalar_name(tau->dtype));
    else if (input->dtype != other->dtype)
        rc = tl_set_error(TL_ERR_RUNTIME, "%s: Expected input and other to have the same dtype, but input has dtype%s "
                                          "and other has dtype %s", f, tl_dtype_scalar_name(input->dtype),
                          tl_dtype_scalar_name(other->dtype));
    if (rc || tl_lapack_check_float(input, f, "ormqr_cpu")) return NULL;
    const int64_t m = other->sizes[other->ndim - 2], n = other->sizes[other->ndim - 1];
    const int64_t k = tau->sizes[tau->ndim - 1], mq = input->sizes[input->ndim - 2];
    tl_tensor *a = tl_lapack_colmajor_copy(input), *tc = tl_contiguous(tau);
    tl_tensor *C = a && tc ? tl_lapack_colmajor_copy(other) : NULL;
    if (C && m > 0 && n > 0 && k > 0 && tl_lapack_batch_of(C) > 0) {
        ormqr_ctx c = {a, tc, C, (lint)m, (lint)n, (lint)k, ld_of(mq), left ? 'L' : 'R', transpose ? 'T' : 'N', 0};
        tl_parallel_for(tl_lapack_batch_of(C), tl_lapack_batch_grain(max64(m, n)), ormqr_range, &c);
        if (c.failed) {
            tl_set_error(TL_ERR_MEMORY, "%s: out of memory for the LAPACK workspace", f);
            tl_tensor_release(C);
            C = NULL;
        }
    }
    tl_tensor_release(a), tl_tensor_release(tc);
    return tl_lapack_mT_owned(C);
}

/* ------------------------------------------------------------ triangular_solve */

int tl_native_triangular_solve(tl_keyset ks, tl_tensor *self, tl_tensor *A, bool upper, bool transpose,
                               bool unitriangular, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    if (self->ndim < 2)
        return tl_set_error(TL_ERR_RUNTIME, "torch.triangular_solve: Expected b to have at least 2 dimensions, but it "
                                            "has %lld dimensions instead", (long long)self->ndim);
    if (A->ndim < 2)
        return tl_set_error(TL_ERR_RUNTIME, "torch.triangular_solve: Expected A to have at least 2 dimensions, but it "
                                            "has %lld dimensions instead", (long long)A->ndim);
    if (self->dtype != A->dtype)
        return tl_set_error(TL_ERR_RUNTIME, "Expected b and A to have the same dtype, but found b of type %s and A of "
                                            "type %s instead.", tl_dtype_scalar_name(self->dtype),
                            tl_dtype_scalar_name(A->dtype));
    const int64_t n = A->sizes[A->ndim - 1];
    if (A->sizes[A->ndim - 2] != n)
        return tl_set_error(TL_ERR_RUNTIME, "A must be batches of square matrices, but they are %lld by %lld matrices",
                            (long long)A->sizes[A->ndim - 2], (long long)n);
    if (self->sizes[self->ndim - 2] != n)
        return tl_set_error(TL_ERR_RUNTIME, "Incompatible matrix sizes for triangular_solve: each A matrix is %lld by "
                                            "%lld but each b matrix is %lld by %lld", (long long)n, (long long)n,
                            (long long)self->sizes[self->ndim - 2], (long long)self->sizes[self->ndim - 1]);
    if (tl_lapack_check_float(A, "triangular_solve", "triangular_solve_cpu")) return -1;
    int64_t batch[TL_MAX_DIMS + 2], nb = 0;
    if (tl_lapack_broadcast_batch(self, A, batch, &nb)) return -1;
    tl_tensor *Ae = expand_batch(A, batch, nb);
    tl_tensor *M = Ae ? tl_ops_clone(Ae, TL_CONTIGUOUS_FORMAT) : NULL;
    tl_tensor_release(Ae);
    tl_tensor *op = M && transpose ? tl_ops_transpose_int(M, -2, -1) : (M ? (tl_tensor_retain(M), M) : NULL);
    tl_tensor *X = op ? tl_ops_linalg_solve_triangular(op, self, transpose ? !upper : upper, true, unitriangular) : NULL;
    tl_tensor_release(op);
    if (!X) {
        tl_tensor_release(M);
        return -1;
    }
    *ret0 = X, *ret1 = M;
    return 0;
}

/* ------------------------------------------------------------ lstsq */

typedef struct {
    tl_tensor *a, *b, *rank, *sv;
    lint m, n, nrhs, ldb;
    double rcond;
    char driver;   /* 'l' gels, 'y' gelsy, 'd' gelsd, 's' gelss */
    tl_tensor *info;
    int failed;
} lstsq_ctx;

/* one driver call; work == NULL asks for the workspace (into *wq, *iq) */
static void lstsq_call(lstsq_ctx *c, char *a, char *b, char *s, lint *jpvt, lint *rank, void *work, lint lwork,
                       lint *iwork, lint *info, double *wq, lint *iq) {
    const bool f64 = c->a->dtype == TL_FLOAT64;
    const lint m = c->m, n = c->n, nrhs = c->nrhs, lda = ld_of(m), ldb = c->ldb, query = -1;
    const float rf = (float)c->rcond;
    float wf = 0;
    void *w = work ? work : (f64 ? (void *)wq : (void *)&wf);
    const lint *lw = work ? &lwork : &query;
    lint *iw = work ? iwork : iq;
    switch (c->driver) {
    case 'l':
        if (f64) scipy_dgels_("N", &m, &n, &nrhs, (double *)a, &lda, (double *)b, &ldb, (double *)w, lw, info, 1);
        else scipy_sgels_("N", &m, &n, &nrhs, (float *)a, &lda, (float *)b, &ldb, (float *)w, lw, info, 1);
        break;
    case 'y':
        if (f64)
            scipy_dgelsy_(&m, &n, &nrhs, (double *)a, &lda, (double *)b, &ldb, jpvt, &c->rcond, rank, (double *)w, lw,
                          info);
        else
            scipy_sgelsy_(&m, &n, &nrhs, (float *)a, &lda, (float *)b, &ldb, jpvt, &rf, rank, (float *)w, lw, info);
        break;
    case 'd':
        if (f64)
            scipy_dgelsd_(&m, &n, &nrhs, (double *)a, &lda, (double *)b, &ldb, (double *)s, &c->rcond, rank,
                          (double *)w, lw, iw, info);
        else
            scipy_sgelsd_(&m, &n, &nrhs, (float *)a, &lda, (float *)b, &ldb, (float *)s, &rf, rank, (float *)w, lw, iw,
                          info);
        break;
    default:
        if (f64)
            scipy_dgelss_(&m, &n, &nrhs, (double *)a, &lda, (double *)b, &ldb, (double *)s, &c->rcond, rank,
                          (double *)w, lw, info);
        else
            scipy_sgelss_(&m, &n, &nrhs, (float *)a, &lda, (float *)b, &ldb, (float *)s, &rf, rank, (float *)w, lw,
                          info);
    }
    if (!work && !f64) *wq = (double)wf;
}

static void lstsq_range(int64_t b0, int64_t b1, void *vctx) {
    lstsq_ctx *c = (lstsq_ctx *)vctx;
    const size_t isz = isz_of(c->a);
    const int64_t m = c->m, n = c->n, k = min64(m, n);
    double wq = 0;
    lint iq = 1, info = 0, rank = 0;
    const int64_t mn = max64(m, n);
    float sdummy[1];
    lstsq_call(c, tl__data(c->a), tl__data(c->b), (char *)sdummy, NULL, &rank, NULL, 0, NULL, &info, &wq, &iq);
    const lint lwork = wq > 1 ? (lint)wq : 1, liwork = iq > 1 ? iq : 1;
    void *work = malloc((size_t)lwork * isz);
    lint *iwork = (lint *)malloc(sizeof(lint) * (size_t)liwork);
    lint *jpvt = (lint *)malloc(sizeof(lint) * (size_t)(n > 0 ? n : 1));
    char *s = (char *)malloc(isz * (size_t)(k > 0 ? k : 1));
    if (!work || !iwork || !jpvt || !s) {
        c->failed = 1;
        b1 = b0;
    }
    for (int64_t b = b0; b < b1; b++) {
        char *a = tl__data(c->a) + (size_t)(b * m * n) * isz;
        char *x = tl__data(c->b) + (size_t)(b * c->nrhs * c->ldb) * isz;
        memset(jpvt, 0, sizeof(lint) * (size_t)(n > 0 ? n : 1));
        rank = 0;
        lstsq_call(c, a, x, s, jpvt, &rank, work, lwork, iwork, (lint *)tl__data(c->info) + b, NULL, NULL);
        if (c->rank) ((int64_t *)tl__data(c->rank))[b] = rank;
        if (c->sv) memcpy(tl__data(c->sv) + (size_t)(b * k) * isz, s, (size_t)k * isz);
    }
    (void)mn;
    free(work), free(iwork), free(jpvt), free(s);
}

int tl_native_linalg_lstsq(tl_keyset ks, tl_tensor *self, tl_tensor *b, double rcond, bool rcond_has,
                           const char *driver, tl_tensor **ret0, tl_tensor **ret1, tl_tensor **ret2,
                           tl_tensor **ret3) {
    (void)ks;
    const char *f = "torch.linalg.lstsq";
    if (self->ndim < 2) return tl_set_error(TL_ERR_RUNTIME, "%s: input must have at least 2 dimensions.", f);
    if (b->ndim < 1) return tl_set_error(TL_ERR_RUNTIME, "%s: other must have at least 1 dimension.", f);
    if (tl_lapack_check_float(self, f, "linalg_lstsq_cpu")) return -1;
    if (self->dtype != b->dtype)
        return tl_set_error(TL_ERR_RUNTIME, "%s: Expected input and other to have the same dtype, but got input's "
                                            "dtype %s and other's dtype %s", f, tl_dtype_scalar_name(self->dtype),
                            tl_dtype_scalar_name(b->dtype));
    const int64_t dim_diff = self->ndim - b->ndim;
    if (dim_diff < 0 || dim_diff > 1)
        return tl_set_error(TL_ERR_RUNTIME, "%s: input.dim() must be greater or equal to other.dim() and (input.dim() "
                                            "- other.dim()) <= 1", f);
    const int64_t m = self->sizes[self->ndim - 2], n = self->sizes[self->ndim - 1];
    if ((dim_diff ? b->sizes[b->ndim - 1] : b->sizes[b->ndim - 2]) != m)
        return tl_set_error(TL_ERR_RUNTIME, dim_diff ? "%s: input.size(-2) should match other.size(-1)"
                                                     : "%s: input.size(-2) should match other.size(-2)", f);
    char drv = 'y';
    if (driver) {
        if (!strcmp(driver, "gels")) drv = 'l';
        else if (!strcmp(driver, "gelsy")) drv = 'y';
        else if (!strcmp(driver, "gelsd")) drv = 'd';
        else if (!strcmp(driver, "gelss")) drv = 's';
        else
            return tl_set_error(TL_ERR_RUNTIME, "%s: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)",
                                f);
    }
    if (!rcond_has) rcond = (self->dtype == TL_FLOAT64 ? 2.220446049250313e-16 : 1.1920928955078125e-07) *
                            (double)max64(m, n);
    tl_tensor *B2 = dim_diff ? tl_ops_unsqueeze(b, -1) : (tl_tensor_retain(b), b);
    if (!B2) return -1;
    int64_t batch[TL_MAX_DIMS + 2], nb = 0;
    if (tl_lapack_broadcast_batch(self, B2, batch, &nb)) {
        tl_tensor_release(B2);
        return -1;
    }
    const int64_t nrhs = B2->sizes[B2->ndim - 1], mx = max64(m, n), k = min64(m, n);
    tl_tensor *Ae = expand_batch(self, batch, nb), *Be = expand_batch(B2, batch, nb);
    tl_tensor_release(B2);
    tl_tensor *a = Ae ? tl_lapack_colmajor_copy(Ae) : NULL;
    /* B column-major with max(m, n) rows: the solution's n rows come back on top */
    const int64_t tail[2] = {nrhs, mx};
    tl_tensor *X = Be ? alloc_shape(Be, 2, tail, 2, self->dtype, true) : NULL;
    tl_tensor *Bt = Be ? tl_lapack_colmajor_copy(Be) : NULL;
    tl_tensor_release(Ae), tl_tensor_release(Be);
    const int64_t nmat = X ? tl_lapack_batch_of(X) : 0;
    const size_t isz = isz_of(self);
    for (int64_t i = 0; X && Bt && i < nmat * nrhs; i++)
        memcpy(tl__data(X) + (size_t)(i * mx) * isz, tl__data(Bt) + (size_t)(i * m) * isz, (size_t)m * isz);
    tl_tensor_release(Bt);
    tl_tensor *info = X ? tl_zeros(nb, batch, TL_INT32, TL_CPU) : NULL;
    tl_tensor *rank = NULL, *sv = NULL;
    const int64_t ktail[1] = {k};
    if (drv != 'l') rank = tl_zeros(nb, batch, TL_INT64, TL_CPU);
    if (drv == 'd' || drv == 's') {
        int64_t sz[TL_MAX_DIMS + 1];
        memcpy(sz, batch, sizeof(int64_t) * (size_t)nb);
        sz[nb] = ktail[0];
        sv = tl_zeros(nb + 1, sz, self->dtype, TL_CPU);
    }
    int rc = (!a || !X || !info || (drv != 'l' && !rank) || ((drv == 'd' || drv == 's') && !sv)) ? -1 : 0;
    if (rc == 0 && m > 0 && n > 0 && nrhs > 0 && nmat > 0) {
        lstsq_ctx c = {a, X, rank, sv, (lint)m, (lint)n, (lint)nrhs, ld_of(mx), rcond, drv, info, 0};
        tl_parallel_for(nmat, tl_lapack_batch_grain(mx), lstsq_range, &c);
        if (c.failed) rc = tl_set_error(TL_ERR_MEMORY, "%s: out of memory for the LAPACK workspace", f);
    }
    if (rc == 0) rc = tl_lapack_check_errors(info, f, self->ndim == 2);
    tl_tensor_release(a), tl_tensor_release(info);
    /* solution: the top n rows; residuals: the squared rest when m > n (not for gelsy) */
    tl_tensor *XT = rc == 0 ? tl_ops_transpose_int(X, -2, -1) : NULL;   /* [..., mx, nrhs] */
    tl_tensor *sol = XT ? tl_ops_narrow(XT, -2, 0, n) : NULL;
    tl_tensor *res = NULL;
    if (sol && m > n && drv != 'y') {
        tl_tensor *rest = tl_ops_narrow(XT, -2, n, m - n);
        tl_tensor *sq = rest ? tl_ops_pow_Tensor_Scalar(rest, tl_scalar_from_int(2)) : NULL;
        const int64_t d = -2;
        res = sq ? tl_ops_sum_dim_IntList(sq, &d, 1, false, TL_DTYPE_UNDEFINED) : NULL;
        tl_tensor_release(rest), tl_tensor_release(sq);
    } else if (sol) {
        res = empty0(self->dtype);
    }
    tl_tensor_release(XT), tl_tensor_release(X);
    if (sol) {   /* its own F-strided storage, as PyTorch's */
        tl_tensor *t = tl_ops_transpose_int(sol, -2, -1);
        tl_tensor *c = t ? tl_ops_clone(t, TL_CONTIGUOUS_FORMAT) : NULL;
        tl_tensor_release(t), tl_tensor_release(sol);
        sol = tl_lapack_mT_owned(c);
    }
    if (sol && dim_diff) {
        tl_tensor *s = tl_ops_squeeze_dim(sol, -1);
        tl_tensor_release(sol);
        sol = s;
    }
    if (res && dim_diff && res->ndim > 0 && res->numel > 0) {
        tl_tensor *s = tl_ops_squeeze_dim(res, -1);
        tl_tensor_release(res);
        res = s;
    }
    if (!rank) rank = rc == 0 ? empty0(TL_INT64) : NULL;
    if (!sv) sv = rc == 0 ? empty0(self->dtype) : NULL;
    if (!sol || !res || !rank || !sv) {
        tl_tensor_release(sol), tl_tensor_release(res), tl_tensor_release(rank), tl_tensor_release(sv);
        return -1;
    }
    *ret0 = sol, *ret1 = res, *ret2 = rank, *ret3 = sv;
    return 0;
}

/* ------------------------------------------------------------ pinv, matrix_rank, cond */

/* PyTorch's get_atol_rtol: float64 0-dim tolerances; rtol defaults to
 * eps * max(m, n), or 0 where atol > 0 */
static int atol_rtol(tl_tensor *input, tl_tensor *atol, tl_tensor *rtol, tl_tensor **a_out, tl_tensor **r_out) {
    const double eps = input->dtype == TL_FLOAT64 ? 2.220446049250313e-16 : 1.1920928955078125e-07;
    const int64_t m = input->sizes[input->ndim - 2], n = input->sizes[input->ndim - 1];
    tl_tensor *a = atol ? (tl_tensor_retain(atol), atol) : tl_ops_scalar_tensor(tl_scalar_from_double(0.0), TL_FLOAT64, -1, -1, false, false);
    tl_tensor *r = NULL;
    if (rtol) {
        r = rtol, tl_tensor_retain(rtol);
    } else {
        tl_tensor *def = tl_ops_scalar_tensor(tl_scalar_from_double(eps * (double)max64(m, n)), TL_FLOAT64, -1, -1, false, false);
        if (def && atol) {
            tl_tensor *pos = tl_ops_gt_Scalar(atol, tl_scalar_from_double(0.0));
            tl_tensor *z = pos ? tl_ops_zeros_like(def, TL_DTYPE_UNDEFINED, -1, -1, false, false, -1) : NULL;
            r = z ? tl_ops_where_self(pos, z, def) : NULL;
            tl_tensor_release(pos), tl_tensor_release(z), tl_tensor_release(def);
        } else {
            r = def;
        }
    }
    if (!a || !r) {
        tl_tensor_release(a), tl_tensor_release(r);
        return -1;
    }
    *a_out = a, *r_out = r;
    return 0;
}

/* max(atol[..., None], rtol[..., None] * max_val) */
static tl_tensor *tolerance(tl_tensor *atol, tl_tensor *rtol, tl_tensor *max_val) {
    tl_tensor *au = tl_ops_unsqueeze(atol, -1), *ru = tl_ops_unsqueeze(rtol, -1);
    tl_tensor *rm = ru ? tl_ops_mul_Tensor(ru, max_val) : NULL;
    tl_tensor *tol = au && rm ? tl_ops_max_other(au, rm) : NULL;
    tl_tensor_release(au), tl_tensor_release(ru), tl_tensor_release(rm);
    return tol;
}

/* PyTorch's linalg_pinv: V diag(1/S where S > tol) U^T (SVD), or
 * U diag(1/L where |L| > tol) U^T (eigh, hermitian) */
tl_tensor *tl_native_linalg_pinv_atol_rtol_tensor(tl_keyset ks, tl_tensor *self, tl_tensor *atol, tl_tensor *rtol,
                                                 bool hermitian) {
    (void)ks;
    if ((self->dtype != TL_FLOAT32 && self->dtype != TL_FLOAT64) || self->ndim < 2) {
        char buf[128];
        tl_set_error(TL_ERR_RUNTIME, "linalg.pinv(%s{%s}): expected a tensor with 2 or more dimensions of float, "
                                     "double, cfloat or cdouble types", tl_dtype_scalar_name(self->dtype),
                     si_shape_str(buf, sizeof buf, self->ndim, self->sizes));
        return NULL;
    }
    tl_tensor *a = NULL, *r = NULL;
    if (atol_rtol(self, atol, rtol, &a, &r)) return NULL;
    tl_tensor *U = NULL, *S = NULL, *V = NULL, *inv = NULL, *res = NULL;
    int rc = 0;
    if (!hermitian || self->numel == 0) rc = tl_ops_svd(self, true, true, &U, &S, &V);
    else rc = tl_ops_linalg_eigh(self, "L", &S, &U);
    if (rc == 0 && self->numel == 0) {
        inv = tl_ops_reciprocal(S);
    } else if (rc == 0) {
        tl_tensor *Sa = hermitian ? tl_ops_abs(S) : (tl_tensor_retain(S), S);
        const int64_t last = -1;
        tl_tensor *mx = !Sa ? NULL : hermitian ? tl_ops_amax(Sa, &last, 1, true) : tl_ops_narrow(Sa, -1, 0, 1);
        tl_tensor *tol = mx ? tolerance(a, r, mx) : NULL;
        tl_tensor *keep = tol ? tl_ops_gt_Tensor(Sa, tol) : NULL;
        tl_tensor *rec = keep ? tl_ops_reciprocal(S) : NULL;
        tl_tensor *w = rec ? tl_ops_where_ScalarOther(keep, rec, tl_scalar_from_double(0.0)) : NULL;
        inv = w && w->dtype != self->dtype ? tl_ops_to_dtype(w, self->dtype, false, false, -1) : (w ? (tl_tensor_retain(w), w) : NULL);
        tl_tensor_release(Sa), tl_tensor_release(mx), tl_tensor_release(tol), tl_tensor_release(keep);
        tl_tensor_release(rec), tl_tensor_release(w);
    }
    if (inv) {   /* (V or U) * inv[..., None, :] @ U^T */
        tl_tensor *row = tl_ops_unsqueeze(inv, -2);
        tl_tensor *left = row ? tl_ops_mul_Tensor(hermitian && self->numel ? U : V, row) : NULL;
        tl_tensor *Ut = left ? tl_ops_transpose_int(U, -2, -1) : NULL;
        res = Ut ? tl_ops_matmul(left, Ut) : NULL;
        tl_tensor_release(row), tl_tensor_release(left), tl_tensor_release(Ut);
    }
    tl_tensor_release(U), tl_tensor_release(S), tl_tensor_release(V), tl_tensor_release(inv);
    tl_tensor_release(a), tl_tensor_release(r);
    return res;
}

static tl_tensor *scalar_f64(double v) {
    return tl_ops_scalar_tensor(tl_scalar_from_double(v), TL_FLOAT64, -1, -1, false, false);
}

/* the float overloads' tolerances (get_atol_rtol with optional doubles) */
static int float_tols(tl_tensor *self, double atol, bool atol_has, double rtol, bool rtol_has, tl_tensor **a,
                      tl_tensor **r) {
    if (self->ndim < 2) return tl_lapack_check_matrix(self, "linalg.pinv", "A");
    const double eps = self->dtype == TL_FLOAT64 ? 2.220446049250313e-16 : 1.1920928955078125e-07;
    const int64_t m = self->sizes[self->ndim - 2], n = self->sizes[self->ndim - 1];
    const double av = atol_has ? atol : 0.0;
    const double rv = rtol_has ? rtol : (atol_has && atol > 0) ? 0.0 : eps * (double)max64(m, n);
    *a = scalar_f64(av), *r = scalar_f64(rv);
    if (!*a || !*r) {
        tl_tensor_release(*a), tl_tensor_release(*r);
        return -1;
    }
    return 0;
}

tl_tensor *tl_native_linalg_pinv(tl_keyset ks, tl_tensor *self, double atol, bool atol_has,
                                                 double rtol, bool rtol_has, bool hermitian) {
    (void)ks;
    tl_tensor *a, *r;
    if (self->ndim >= 2 ? float_tols(self, atol, atol_has, rtol, rtol_has, &a, &r) : (a = r = NULL, 0)) return NULL;
    tl_tensor *res = tl_ops_linalg_pinv_atol_rtol_tensor(self, a, r, hermitian);
    tl_tensor_release(a), tl_tensor_release(r);
    return res;
}

tl_tensor *tl_native_linalg_pinv__linalg_pinv_rcond_tensor(tl_keyset ks, tl_tensor *self, tl_tensor *rcond, bool hermitian) {
    (void)ks;
    tl_tensor *z = tl_ops_zeros_like(rcond, TL_DTYPE_UNDEFINED, -1, -1, false, false, -1);
    tl_tensor *res = z ? tl_ops_linalg_pinv_atol_rtol_tensor(self, z, rcond, hermitian) : NULL;
    tl_tensor_release(z);
    return res;
}

tl_tensor *tl_native_linalg_pinv__linalg_pinv(tl_keyset ks, tl_tensor *self, double rcond, bool hermitian) {
    (void)ks;
    tl_tensor *r = scalar_f64(rcond);
    tl_tensor *res = r ? tl_ops_linalg_pinv_rcond_tensor(self, r, hermitian) : NULL;
    tl_tensor_release(r);
    return res;
}

tl_tensor *tl_native_pinverse(tl_keyset ks, tl_tensor *self, double rcond) {
    (void)ks;
    return tl_ops_linalg_pinv(self, rcond, false);
}

/* PyTorch's matrix_rank_impl: the count of singular values (|eigenvalues|)
 * above max(atol, rtol * largest) */
tl_tensor *tl_native_linalg_matrix_rank(tl_keyset ks, tl_tensor *input, tl_tensor *atol,
                                                         tl_tensor *rtol, bool hermitian) {
    (void)ks;
    if (tl_lapack_check_matrix(input, "torch.linalg.matrix_rank", "input")) return NULL;
    tl_tensor *a = NULL, *r = NULL;
    if (atol_rtol(input, atol, rtol, &a, &r)) return NULL;
    tl_tensor *res = NULL;
    if (input->numel == 0) {
        res = alloc_shape(input, 2, NULL, 0, TL_INT64, true);
    } else {
        tl_tensor *S0 = hermitian ? tl_ops_linalg_eigvalsh(input, "L") : tl_ops_linalg_svdvals(input, NULL);
        tl_tensor *S = S0 && hermitian ? tl_ops_abs(S0) : (S0 ? (tl_tensor_retain(S0), S0) : NULL);
        const int64_t last = -1;
        tl_tensor *mx = !S ? NULL : hermitian ? tl_ops_amax(S, &last, 1, true) : tl_ops_narrow(S, -1, 0, 1);
        tl_tensor *tol = mx ? tolerance(a, r, mx) : NULL;
        tl_tensor *gt = tol ? tl_ops_gt_Tensor(S, tol) : NULL;
        res = gt ? tl_ops_sum_dim_IntList(gt, &last, 1, false, TL_DTYPE_UNDEFINED) : NULL;
        tl_tensor_release(S0), tl_tensor_release(S), tl_tensor_release(mx), tl_tensor_release(tol);
        tl_tensor_release(gt);
    }
    tl_tensor_release(a), tl_tensor_release(r);
    return res;
}

tl_tensor *tl_native_linalg_matrix_rank__linalg_matrix_rank_atol_rtol_float(tl_keyset ks, tl_tensor *self, double atol, bool atol_has,
                                                        double rtol, bool rtol_has, bool hermitian) {
    (void)ks;
    if (tl_lapack_check_matrix(self, "torch.linalg.matrix_rank", "input")) return NULL;
    tl_tensor *a, *r;
    if (float_tols(self, atol, atol_has, rtol, rtol_has, &a, &r)) return NULL;
    tl_tensor *res = tl_ops_linalg_matrix_rank_atol_rtol_tensor(self, a, r, hermitian);
    tl_tensor_release(a), tl_tensor_release(r);
    return res;
}

tl_tensor *tl_native_linalg_matrix_rank__linalg_matrix_rank(tl_keyset ks, tl_tensor *self, double tol, bool hermitian) {
    (void)ks;
    return tl_ops_linalg_matrix_rank_atol_rtol_float(self, tol, true, 0.0, true, hermitian);
}

tl_tensor *tl_native_linalg_matrix_rank__linalg_matrix_rank_tol_tensor(tl_keyset ks, tl_tensor *input, tl_tensor *tol, bool hermitian) {
    (void)ks;
    tl_tensor *z = tl_ops_zeros_like(tol, TL_DTYPE_UNDEFINED, -1, -1, false, false, -1);
    tl_tensor *res = z ? tl_ops_linalg_matrix_rank_atol_rtol_tensor(input, tol, z, hermitian) : NULL;
    tl_tensor_release(z);
    return res;
}

/* cond of an empty matrix: zeros of the batch shape (NumPy leaves it undefined) */
static tl_tensor *cond_empty(tl_tensor *self) { return alloc_shape(self, 2, NULL, 0, self->dtype, true); }

/* PyTorch's _linalg_cond_helper: norm(A) * norm(A^-1), inf for singular matrices */
static tl_tensor *cond_helper(tl_tensor *self, const tl_scalar *ord, const char *sord) {
    tl_tensor *inv = NULL, *info = NULL;
    if (tl_ops_linalg_inv_ex(self, false, &inv, &info)) return NULL;
    tl_tensor *i1 = tl_ops_unsqueeze(info, -1);
    tl_tensor *i2 = i1 ? tl_ops_unsqueeze(i1, -1) : NULL;
    tl_tensor *bad = i2 ? tl_ops_gt_Scalar(i2, tl_scalar_from_int(0)) : NULL;
    tl_tensor *invf = bad ? tl_ops_masked_fill_Scalar(inv, bad, tl_scalar_from_double(INFINITY)) : NULL;
    const int64_t dims[2] = {-2, -1};
    tl_tensor *na = NULL, *nb = NULL;
    if (invf) {
        na = sord ? tl_ops_linalg_matrix_norm_str_ord(self, sord, dims, 2, false, TL_DTYPE_UNDEFINED)
                  : tl_ops_linalg_matrix_norm(self, *ord, dims, 2, false, TL_DTYPE_UNDEFINED);
        nb = !na ? NULL : sord ? tl_ops_linalg_matrix_norm_str_ord(invf, sord, dims, 2, false, TL_DTYPE_UNDEFINED)
                              : tl_ops_linalg_matrix_norm(invf, *ord, dims, 2, false, TL_DTYPE_UNDEFINED);
    }
    tl_tensor *res = na && nb ? tl_ops_mul_Tensor(na, nb) : NULL;
    tl_tensor_release(inv), tl_tensor_release(info), tl_tensor_release(i1), tl_tensor_release(i2);
    tl_tensor_release(bad), tl_tensor_release(invf), tl_tensor_release(na), tl_tensor_release(nb);
    return res;
}

tl_tensor *tl_native_linalg_cond(tl_keyset ks, tl_tensor *self, const tl_scalar *p) {
    (void)ks;
    if (self->ndim < 2) {
        tl_set_error(TL_ERR_RUNTIME, "linalg.cond: The input tensor must have at least 2 dimensions.");
        return NULL;
    }
    const tl_scalar ord = p ? *p : tl_scalar_from_int(2);
    const double o = ord.kind == TL_SCALAR_DOUBLE ? ord.d : (double)ord.i;
    if (fabs(o) != 2.0 && fabs(o) != 1.0 && !isinf(o)) {
        tl_set_error(TL_ERR_RUNTIME, "linalg.cond got an invalid norm type: %g", o);
        return NULL;
    }
    if (self->numel == 0) return cond_empty(self);
    if (fabs(o) == 2.0) {   /* ratio of the extreme singular values */
        tl_tensor *S = tl_ops_linalg_svdvals(self, NULL);
        tl_tensor *smax = S ? tl_ops_narrow(S, -1, 0, 1) : NULL;
        tl_tensor *smin = smax ? tl_ops_narrow(S, -1, S->sizes[S->ndim - 1] - 1, 1) : NULL;
        tl_tensor *q = smin ? (o < 0 ? tl_ops_div_Tensor(smin, smax) : tl_ops_div_Tensor(smax, smin)) : NULL;
        tl_tensor *res = q ? tl_ops_squeeze_dim(q, -1) : NULL;
        tl_tensor_release(S), tl_tensor_release(smax), tl_tensor_release(smin), tl_tensor_release(q);
        return res;
    }
    char name[64];
    if (ord.kind == TL_SCALAR_DOUBLE) snprintf(name, sizeof name, "linalg.cond(ord=%f)", o);   /* std::to_string */
    else snprintf(name, sizeof name, "linalg.cond(ord=%lld)", (long long)ord.i);
    if (tl_lapack_check_square(self, name, "A")) return NULL;
    return cond_helper(self, &ord, NULL);
}

tl_tensor *tl_native_linalg_cond__linalg_cond_p_str(tl_keyset ks, tl_tensor *self, const char *p) {
    (void)ks;
    char name[64];
    snprintf(name, sizeof name, "linalg.cond(ord=%s)", p);
    if (tl_lapack_check_square(self, name, "A")) return NULL;
    if (strcmp(p, "fro") != 0 && strcmp(p, "nuc") != 0) {
        tl_set_error(TL_ERR_RUNTIME, "linalg.cond got an invalid norm type: %s", p);
        return NULL;
    }
    if (self->numel == 0) return cond_empty(self);
    if (strcmp(p, "nuc") == 0) {   /* sum(S) * sum(1 / S): matrix_norm('nuc') raises on infinities */
        const int64_t last = -1;
        tl_tensor *S = tl_ops_linalg_svdvals(self, NULL);
        tl_tensor *rs = S ? tl_ops_reciprocal(S) : NULL;
        tl_tensor *a = rs ? tl_ops_sum_dim_IntList(S, &last, 1, false, TL_DTYPE_UNDEFINED) : NULL;
        tl_tensor *b = a ? tl_ops_sum_dim_IntList(rs, &last, 1, false, TL_DTYPE_UNDEFINED) : NULL;
        tl_tensor *res = b ? tl_ops_mul_Tensor(a, b) : NULL;
        tl_tensor_release(S), tl_tensor_release(rs), tl_tensor_release(a), tl_tensor_release(b);
        return res;
    }
    return cond_helper(self, NULL, p);
}

/* ------------------------------------------------------------ matrix_exp */

typedef struct {
    tl_tensor *a, *out;   /* contiguous [..., n, n] */
    int64_t n;
    int failed;
} expm_ctx;

static void gemm(int64_t n, const double *a, const double *b, double *c) {
    scipy_cblas_dgemm(101, 111, 111, (int)n, (int)n, (int)n, 1.0, a, (int)n, b, (int)n, 0.0, c, (int)n);
}

/* exp(A) of one n x n row-major matrix (Higham's scaling and squaring with
 * the [13/13] Pade approximant): w holds 7 n^2 doubles, ipiv n */
static void expm_one(int64_t n, double *A, double *w, lint *ipiv) {
    static const double b[14] = {64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
                                 129060195264000.0,   10559470521600.0,    670442572800.0,     33522128640.0,
                                 1323241920.0,        40840800.0,          960960.0,           16380.0,
                                 182.0,               1.0};
    const int64_t nn = n * n;
    double norm = 0;   /* the 1-norm: the largest column sum */
    for (int64_t j = 0; j < n; j++) {
        double s = 0;
        for (int64_t i = 0; i < n; i++) s += fabs(A[i * n + j]);
        norm = s > norm || isnan(s) ? s : norm;
    }
    int s = 0;
    if (norm > 5.371920351148152) s = (int)ceil(log2(norm / 5.371920351148152));
    if (s > 0) {
        const double sc = ldexp(1.0, -s);
        for (int64_t i = 0; i < nn; i++) A[i] *= sc;
    }
    double *A2 = w, *A4 = w + nn, *A6 = w + 2 * nn, *U = w + 3 * nn, *V = w + 4 * nn, *T = w + 5 * nn,
           *X = w + 6 * nn;
    gemm(n, A, A, A2);
    gemm(n, A2, A2, A4);
    gemm(n, A4, A2, A6);
    for (int64_t i = 0; i < nn; i++) {
        T[i] = b[13] * A6[i] + b[11] * A4[i] + b[9] * A2[i];
        X[i] = b[12] * A6[i] + b[10] * A4[i] + b[8] * A2[i];
    }
    gemm(n, A6, T, U);   /* U = A (A6 (b13 A6 + b11 A4 + b9 A2) + b7 A6 + b5 A4 + b3 A2 + b1 I) */
    gemm(n, A6, X, V);   /* V = A6 (b12 A6 + b10 A4 + b8 A2) + b6 A6 + b4 A4 + b2 A2 + b0 I */
    for (int64_t i = 0; i < nn; i++) {
        T[i] = U[i] + b[7] * A6[i] + b[5] * A4[i] + b[3] * A2[i];
        V[i] += b[6] * A6[i] + b[4] * A4[i] + b[2] * A2[i];
    }
    for (int64_t i = 0; i < n; i++) T[i * n + i] += b[1], V[i * n + i] += b[0];
    gemm(n, A, T, U);
    for (int64_t i = 0; i < nn; i++) {   /* (V - U) R = V + U; polynomials in A commute, so row-major is fine */
        const double u = U[i], v = V[i];
        A2[i] = v - u, X[i] = v + u;
    }
    const lint ln = (lint)n;
    lint info = 0;
    scipy_dgesv_(&ln, &ln, A2, &ln, ipiv, X, &ln, &info);
    if (info != 0)
        for (int64_t i = 0; i < nn; i++) X[i] = NAN;
    for (int k = 0; k < s; k++) {
        gemm(n, X, X, T);
        memcpy(X, T, sizeof(double) * (size_t)nn);
    }
    memcpy(A, X, sizeof(double) * (size_t)nn);
}

static void expm_range(int64_t b0, int64_t b1, void *vctx) {
    expm_ctx *c = (expm_ctx *)vctx;
    const int64_t n = c->n, nn = n * n;
    const bool f64 = c->a->dtype == TL_FLOAT64;
    double *w = (double *)malloc(sizeof(double) * (size_t)(8 * nn));
    lint *ipiv = (lint *)malloc(sizeof(lint) * (size_t)n);
    if (!w || !ipiv) {
        c->failed = 1;
        b1 = b0;
    }
    for (int64_t b = b0; b < b1; b++) {
        double *A = w + 7 * nn;
        for (int64_t i = 0; i < nn; i++)
            A[i] = f64 ? ((const double *)tl__data(c->a))[b * nn + i] : (double)((const float *)tl__data(c->a))[b * nn + i];
        expm_one(n, A, w, ipiv);
        for (int64_t i = 0; i < nn; i++) {
            if (f64) ((double *)tl__data(c->out))[b * nn + i] = A[i];
            else ((float *)tl__data(c->out))[b * nn + i] = (float)A[i];
        }
    }
    free(w), free(ipiv);
}

tl_tensor *tl_native_linalg_matrix_exp(tl_keyset ks, tl_tensor *self) {
    if (tl_lapack_check_square(self, "linalg.matrix_exp", "A")) return NULL;
    if (self->dtype == TL_FLOAT16 || self->dtype == TL_BFLOAT16) {   /* PyTorch's CPU kernel takes them: via float */
        tl_tensor *f = tl_ops_to_dtype(self, TL_FLOAT32, false, false, -1);
        tl_tensor *e = f ? tl_native_linalg_matrix_exp(ks, f) : NULL;
        tl_tensor *r = e ? tl_ops_to_dtype(e, self->dtype, false, false, -1) : NULL;
        tl_tensor_release(f), tl_tensor_release(e);
        return r;
    }
    if (tl_lapack_check_float(self, "linalg.matrix_exp", "linalg_matrix_exp")) return NULL;
    const int64_t n = self->sizes[self->ndim - 1];
    tl_tensor *a = tl_contiguous(self);
    tl_tensor *out = a ? tl_empty(self->ndim, self->sizes, self->dtype, TL_CPU) : NULL;
    if (out && self->numel > 0) {
        expm_ctx c = {a, out, n, 0};
        tl_parallel_for(tl_lapack_batch_of(self), tl_lapack_batch_grain(2 * n), expm_range, &c);
        if (c.failed) {
            tl_set_error(TL_ERR_MEMORY, "linalg.matrix_exp: out of memory");
            tl_tensor_release(out);
            out = NULL;
        }
    }
    tl_tensor_release(a);
    return out;
}

tl_tensor *tl_native_matrix_exp(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    return tl_ops_linalg_matrix_exp(self);
}

/* PyTorch's backward_analytic_function_of_a_matrix for exp: the upper right
 * block of exp([[A^T, G], [0, A^T]]) */
tl_tensor *tl_native_matrix_exp_backward(tl_keyset ks, tl_tensor *self, tl_tensor *grad) {
    (void)ks;
    return tl_ag_linalg_matrix_exp_differential(self, grad, true);
}

/* ------------------------------------------------------------ LDL */

typedef struct {
    tl_tensor *a, *piv, *info;
    lint n;
    int failed;
} sytrf_ctx;

static void sytrf_range(int64_t b0, int64_t b1, void *vctx) {
    sytrf_ctx *c = (sytrf_ctx *)vctx;
    const bool f64 = c->a->dtype == TL_FLOAT64;
    const size_t isz = isz_of(c->a);
    const lint n = c->n, lda = ld_of(n), query = -1;
    lint info = 0, iq = 0;
    double wd = 0;
    float wf = 0;
    if (f64) scipy_dsytrf_("L", &n, (double *)tl__data(c->a), &lda, &iq, &wd, &query, &info, 1);
    else scipy_ssytrf_("L", &n, (float *)tl__data(c->a), &lda, &iq, &wf, &query, &info, 1);
    const lint lwork = work_size(f64, wd, wf);
    void *work = malloc((size_t)lwork * isz);
    if (!work) {
        c->failed = 1;
        return;
    }
    for (int64_t b = b0; b < b1; b++) {
        char *a = tl__data(c->a) + (size_t)(b * n * n) * isz;
        lint *ipiv = (lint *)tl__data(c->piv) + b * n, *ib = (lint *)tl__data(c->info) + b;
        if (f64) scipy_dsytrf_("L", &n, (double *)a, &lda, ipiv, (double *)work, &lwork, ib, 1);
        else scipy_ssytrf_("L", &n, (float *)a, &lda, ipiv, (float *)work, &lwork, ib, 1);
    }
    free(work);
}

/* PyTorch's LDL: the lower triangle factored (sytrf 'L'), the upper zero */
int tl_native_linalg_ldl_factor_ex(tl_keyset ks, tl_tensor *self, bool hermitian, bool check_errs, tl_tensor **ret0,
                                   tl_tensor **ret1, tl_tensor **ret2) {
    (void)ks, (void)hermitian;   /* real: symmetric and Hermitian agree */
    if (tl_lapack_check_square(self, "torch.linalg.ldl_factor_ex", "A") ||
        tl_lapack_check_float(self, "torch.linalg.ldl_factor_ex", "ldl_factor_cpu"))
        return -1;
    const int64_t n = self->sizes[self->ndim - 1];
    tl_tensor *low = tl_ops_tril(self, 0);
    tl_tensor *LD = low ? tl_lapack_colmajor_copy(low) : NULL;
    tl_tensor_release(low);
    tl_tensor *piv = LD ? alloc_shape(self, 1, NULL, 0, TL_INT32, true) : NULL;
    tl_tensor *info = piv ? alloc_shape(self, 2, NULL, 0, TL_INT32, true) : NULL;
    int rc = info ? 0 : -1;
    if (rc == 0 && n > 0 && self->numel > 0) {
        sytrf_ctx c = {LD, piv, info, (lint)n, 0};
        tl_parallel_for(tl_lapack_batch_of(self), tl_lapack_batch_grain(n), sytrf_range, &c);
        if (c.failed) rc = tl_set_error(TL_ERR_MEMORY, "torch.linalg.ldl_factor_ex: out of memory");
    }
    if (rc == 0 && check_errs) rc = tl_lapack_check_errors(info, "torch.linalg.ldl_factor_ex", self->ndim == 2);
    LD = tl_lapack_mT_owned(LD);
    if (rc || !LD) {
        tl_tensor_release(LD), tl_tensor_release(piv), tl_tensor_release(info);
        return -1;
    }
    *ret0 = LD, *ret1 = piv, *ret2 = info;
    return 0;
}

int tl_native_linalg_ldl_factor(tl_keyset ks, tl_tensor *self, bool hermitian, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    tl_tensor *info = NULL;
    const int rc = tl_ops_linalg_ldl_factor_ex(self, hermitian, false, ret0, ret1, &info);
    return checked_factor(rc, info, "torch.linalg.ldl_factor", self->ndim == 2, ret0, ret1);
}

typedef struct {
    tl_tensor *ld, *piv, *x;
    lint n, k;
} sytrs_ctx;

static void sytrs_range(int64_t b0, int64_t b1, void *vctx) {
    sytrs_ctx *c = (sytrs_ctx *)vctx;
    const size_t isz = isz_of(c->x);
    const lint n = c->n, k = c->k, ld = ld_of(n);
    lint info = 0;
    for (int64_t b = b0; b < b1; b++) {
        const char *a = tl__data(c->ld) + (size_t)(b * n * n) * isz;
        const lint *ipiv = (const lint *)tl__data(c->piv) + b * n;
        char *x = tl__data(c->x) + (size_t)(b * n * k) * isz;
        if (c->x->dtype == TL_FLOAT64)
            scipy_dsytrs_("L", &n, &k, (const double *)a, &ld, ipiv, (double *)x, &ld, &info, 1);
        else
            scipy_ssytrs_("L", &n, &k, (const float *)a, &ld, ipiv, (float *)x, &ld, &info, 1);
    }
}

tl_tensor *tl_native_linalg_ldl_solve(tl_keyset ks, tl_tensor *LD, tl_tensor *pivots, tl_tensor *B, bool hermitian) {
    (void)ks, (void)hermitian;
    const char *f = "torch.linalg.ldl_solve";
    if (tl_lapack_check_square(LD, f, "A") || tl_lapack_check_float(LD, f, "ldl_solve_cpu")) return NULL;
    if (B->ndim < 2) {   /* PyTorch's linearSolveCheckInputs reads B.size(-2) first */
        tl_set_error(TL_ERR_INDEX, "Dimension out of range (expected to be in range of [%lld, %lld], but got -2)",
                     (long long)-(B->ndim ? B->ndim : 1), (long long)(B->ndim ? B->ndim - 1 : 0));
        return NULL;
    }
    const int64_t n = LD->sizes[LD->ndim - 1];
    if (B->dtype != LD->dtype) {
        tl_set_error(TL_ERR_RUNTIME, "Expected b and A to have the same dtype, but found b of type %s and A of type %s "
                                     "instead.", tl_dtype_scalar_name(B->dtype), tl_dtype_scalar_name(LD->dtype));
        return NULL;
    }
    if (B->sizes[B->ndim - 2] != n) {
        tl_set_error(TL_ERR_RUNTIME, "Incompatible matrix sizes for %s: each A matrix is %lld by %lld but each b matrix "
                                     "is %lld by %lld", f, (long long)n, (long long)n, (long long)B->sizes[B->ndim - 2],
                     (long long)B->sizes[B->ndim - 1]);
        return NULL;
    }
    bool same = pivots->ndim == LD->ndim - 1;
    for (int64_t d = 0; same && d < pivots->ndim; d++) same = pivots->sizes[d] == LD->sizes[d];
    if (!same) {
        char buf[128];
        tl_set_error(TL_ERR_RUNTIME, "%s: Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots with "
                                     "shape %s instead", f, si_shape_str(buf, sizeof buf, pivots->ndim, pivots->sizes));
        return NULL;
    }
    if (!tl_dtype_is_integral(pivots->dtype, 0)) {
        tl_set_error(TL_ERR_RUNTIME, "%s: Expected pivots to be integers. Got %s", f,
                     tl_dtype_scalar_name(pivots->dtype));
        return NULL;
    }
    int64_t batch[TL_MAX_DIMS + 2], nb = 0;
    if (tl_lapack_broadcast_batch(B, LD, batch, &nb)) return NULL;
    tl_tensor *LDe = expand_batch(LD, batch, nb);
    tl_tensor *a = LDe ? tl_lapack_colmajor_copy(LDe) : NULL;
    tl_tensor_release(LDe);
    int64_t psz[TL_MAX_DIMS + 1];
    memcpy(psz, batch, sizeof(int64_t) * (size_t)nb);
    psz[nb] = n;
    tl_tensor *pe = a ? tl_ops_expand(pivots, psz, nb + 1, false) : NULL;
    tl_tensor *p32 = pe ? tl_ops_to_dtype(pe, TL_INT32, false, false, -1) : NULL;
    tl_tensor *pc = p32 ? tl_contiguous(p32) : NULL;
    tl_tensor_release(pe), tl_tensor_release(p32);
    tl_tensor *Be = pc && check_pivots(pc, n, true, f) == 0 ? expand_batch(B, batch, nb) : NULL;
    tl_tensor *X = Be ? tl_lapack_colmajor_copy(Be) : NULL;
    tl_tensor_release(Be);
    if (X && n > 0 && X->numel > 0) {
        sytrs_ctx c = {a, pc, X, (lint)n, (lint)X->sizes[X->ndim - 2]};
        tl_parallel_for(tl_lapack_batch_of(X), tl_lapack_batch_grain(n), sytrs_range, &c);
    }
    tl_tensor_release(a), tl_tensor_release(pc);
    return tl_lapack_mT_owned(X);
}
