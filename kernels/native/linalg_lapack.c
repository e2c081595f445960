/* Solvers and factorizations through LAPACK (the scipy-openblas32 wheel,
 * `scipy_`-prefixed symbols, 32-bit integers), real dtypes (float32, float64).
 *
 *  - linalg_inv_ex, _linalg_solve_ex, _linalg_det, _linalg_slogdet (CPU):
 *    ?getrf per matrix, then ?getrs (solve, inv: against the identity) or the
 *    product of U's diagonal (det, slogdet). LAPACK is column-major: a matrix
 *    is factored in a contiguous [..., n, n] buffer holding A^T row-major
 *    (A column-major), and LU is returned as that buffer's transposed view,
 *    PyTorch's Fortran-strided LU.
 *  - linalg_cholesky_ex (CPU): ?potrf the same way, the other triangle zeroed.
 *  - the composites of PyTorch (linalg_inv, inverse, linalg_solve(_ex),
 *    linalg_det, det, linalg_slogdet, slogdet, logdet, linalg_cholesky,
 *    cholesky) over those, with _linalg_check_errors' messages, raised as
 *    torchlet.linalg.LinAlgError (TL_ERR_LINALG).
 *
 * A batch of small matrices runs on the thread pool, one single-threaded
 * LAPACK call per matrix; large matrices one at a time, OpenBLAS threading
 * each call. info (int32, one per matrix) is LAPACK's.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linalg_lapack.h"
#include "missing_ops.h"
#include "tl_autograd.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/_linalg_det.h"
#include "ops/_linalg_eigh.h"
#include "ops/_linalg_slogdet.h"
#include "ops/_linalg_solve_ex.h"
#include "ops/cholesky.h"
#include "ops/cholesky_inverse.h"
#include "ops/cholesky_solve.h"
#include "ops/clone.h"
#include "ops/copy.h"
#include "ops/det.h"
#include "ops/empty_like.h"
#include "ops/eq.h"
#include "ops/expand.h"
#include "ops/eye.h"
#include "ops/flatten.h"
#include "ops/full_like.h"
#include "ops/inverse.h"
#include "ops/linalg_cholesky.h"
#include "ops/linalg_cholesky_ex.h"
#include "ops/linalg_det.h"
#include "ops/linalg_eigh.h"
#include "ops/linalg_eigvalsh.h"
#include "ops/linalg_inv.h"
#include "ops/linalg_inv_ex.h"
#include "ops/linalg_matrix_power.h"
#include "ops/linalg_slogdet.h"
#include "ops/linalg_solve.h"
#include "ops/linalg_solve_ex.h"
#include "ops/linalg_solve_triangular.h"
#include "ops/linalg_svd.h"
#include "ops/linalg_svdvals.h"
#include "ops/linalg_tensorinv.h"
#include "ops/linalg_tensorsolve.h"
#include "ops/logdet.h"
#include "ops/matmul.h"
#include "ops/movedim.h"
#include "ops/reshape.h"
#include "ops/slogdet.h"
#include "ops/squeeze.h"
#include "ops/svd.h"
#include "ops/transpose.h"
#include "ops/unsqueeze.h"
#include "ops/where.h"
#include "tl_structured.h"

#define LAPACK_INT_MAX 2147483647LL

extern void scipy_sgetrf_(const int *m, const int *n, float *a, const int *lda, int *ipiv, int *info);
extern void scipy_dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
extern void scipy_sgetrs_(const char *trans, const int *n, const int *nrhs, const float *a, const int *lda,
                          const int *ipiv, float *b, const int *ldb, int *info, size_t trans_len);
extern void scipy_dgetrs_(const char *trans, const int *n, const int *nrhs, const double *a, const int *lda,
                          const int *ipiv, double *b, const int *ldb, int *info, size_t trans_len);
extern void scipy_spotrf_(const char *uplo, const int *n, float *a, const int *lda, int *info, size_t uplo_len);
extern void scipy_dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info, size_t uplo_len);

/* ------------------------------------------------------------ checks */

/* PyTorch's checkIsMatrix / squareCheckInputs / checkFloatingOrComplex */
static int check_matrix(const tl_tensor *A, const char *f, const char *arg) {
    if (A->ndim < 2)
        return tl_set_error(TL_ERR_RUNTIME, "%s: The input tensor %s must have at least 2 dimensions.", f, arg);
    return 0;
}

static int check_square(const tl_tensor *A, const char *f, const char *arg) {
    if (check_matrix(A, f, arg)) return -1;
    const int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1];
    if (m != n)
        return tl_set_error(TL_ERR_RUNTIME, "%s: %s must be batches of square matrices, but they are %lld by %lld "
                                            "matrices", f, arg, (long long)m, (long long)n);
    if (n > LAPACK_INT_MAX) return tl_set_error(TL_ERR_RUNTIME, "%s: matrix too large for the 32-bit LAPACK", f);
    return 0;
}

static int check_float(const tl_tensor *A, const char *f, const char *kernel) {
    if (!tl__dtype_is_floating(A->dtype))
        return tl_set_error(TL_ERR_RUNTIME, "%s: Expected a floating point or complex tensor as input. Got %s", f,
                            tl_dtype_scalar_name(A->dtype));
    if (A->dtype != TL_FLOAT32 && A->dtype != TL_FLOAT64) /* PyTorch's CPU LAPACK kernels: float, double */
        return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", kernel,
                            tl_dtype_scalar_name(A->dtype));
    return 0;
}

/* PyTorch's _linalg_check_errors: the first matrix with info != 0 raises */
static int check_errors(const tl_tensor *info, const char *api, bool is_matrix) {
    const int32_t *p = (const int32_t *)tl__data(info);
    for (int64_t i = 0; i < info->numel; i++) {
        if (p[i] == 0) continue;
        char batch[64] = "";
        if (!is_matrix) snprintf(batch, sizeof batch, ": (Batch element %lld)", (long long)i);
        if (p[i] < 0)
            return tl_set_error(TL_ERR_RUNTIME, "%s%s: Argument %d has illegal value. Most certainly there is a bug "
                                                "in the implementation calling the backend library.", api, batch,
                                (int)-p[i]);
        if (strstr(api, "inv"))
            return tl_set_error(TL_ERR_LINALG, "%s%s: The diagonal element %d is zero, the inversion could not be "
                                               "completed because the input matrix is singular.", api, batch, (int)p[i]);
        if (strstr(api, "solve"))
            return tl_set_error(TL_ERR_LINALG, "%s%s: The solver failed because the input matrix is singular.", api,
                                batch);
        if (strstr(api, "cholesky"))
            return tl_set_error(TL_ERR_LINALG, "%s%s: The factorization could not be completed because the input is "
                                               "not positive-definite (the leading minor of order %d is not "
                                               "positive-definite).", api, batch, (int)p[i]);
        if (strstr(api, "lstsq"))
            return tl_set_error(TL_ERR_LINALG, "%s%s: The least squares solution could not be computed because the "
                                               "input matrix does not have full rank (error code: %d).", api, batch,
                                (int)p[i]);
        if (strstr(api, "lu_factor"))   /* PyTorch's TORCH_CHECK: a RuntimeError, not a LinAlgError */
            return tl_set_error(TL_ERR_RUNTIME, "%s%s: U[%d,%d] is zero and using it on lu_solve would result in a "
                                                "division by zero. If you still want to perform the factorization, "
                                                "consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, "
                                                "pivot)", api, batch, (int)p[i], (int)p[i]);
        if (strstr(api, "eig"))
            return tl_set_error(TL_ERR_LINALG, "%s%s: The algorithm failed to converge because the input matrix is "
                                               "ill-conditioned or has too many repeated eigenvalues (error code: "
                                               "%d).", api, batch, (int)p[i]);
        return tl_set_error(TL_ERR_LINALG, "%s%s: The algorithm failed (error code: %d).", api, batch, (int)p[i]);
    }
    return 0;
}

/* ------------------------------------------------------------ batched LAPACK */

static int64_t batch_of(const tl_tensor *t, int64_t nmat_dims) {
    int64_t b = 1;
    for (int64_t d = 0; d < t->ndim - nmat_dims; d++) b *= t->sizes[d];
    return b;
}

/* split a batch over the pool when each call is small (the BLAS inside runs
 * single-threaded in a region); one matrix at a time otherwise */
static int64_t batch_grain(int64_t n) {
    const int64_t work = n * n * n;
    return work >= ((int64_t)1 << 21) ? INT64_MAX : 1 + (((int64_t)1 << 16) / (work + 1));
}

/* a contiguous copy of A^T (the column-major A for LAPACK), [..., n, m] */
static tl_tensor *colmajor_copy(tl_tensor *A) {
    tl_tensor *t = tl_ops_transpose_int(A, -2, -1);
    if (!t) return NULL;
    tl_tensor *c = tl_clone(t);
    tl_tensor_release(t);
    if (c && !tl_tensor_is_contiguous(c)) {
        tl_tensor *d = tl_contiguous(c);
        tl_tensor_release(c);
        c = d;
    }
    return c;
}

typedef struct {
    tl_tensor *lu, *piv, *info;
    int n;
} getrf_ctx;

static void getrf_range(int64_t b0, int64_t b1, void *vctx) {
    getrf_ctx *c = (getrf_ctx *)vctx;
    const int n = c->n, lda = n > 1 ? n : 1;
    const size_t isz = (size_t)tl__itemsize(c->lu->dtype);
    for (int64_t b = b0; b < b1; b++) {
        char *a = tl__data(c->lu) + (size_t)b * (size_t)n * (size_t)n * isz;
        int *ipiv = (int *)tl__data(c->piv) + b * n, *info = (int *)tl__data(c->info) + b;
        if (c->lu->dtype == TL_FLOAT64) scipy_dgetrf_(&n, &n, (double *)a, &lda, ipiv, info);
        else scipy_sgetrf_(&n, &n, (float *)a, &lda, ipiv, info);
    }
}

/* LU of square A [..., n, n]: *lu the factored column-major buffer
 * (contiguous, holds LU^T row-major), *piv int32 [..., n] (1-based),
 * *info int32 [...] */
static int lu_factor(tl_tensor *A, tl_tensor **lu, tl_tensor **piv, tl_tensor **info) {
    const int64_t nd = A->ndim, n = A->sizes[nd - 1];
    *lu = colmajor_copy(A);
    *piv = tl_empty(nd - 1, A->sizes, TL_INT32, TL_CPU);
    *info = tl_zeros(nd - 2, A->sizes, TL_INT32, TL_CPU);
    if (!*lu || !*piv || !*info) {
        tl_tensor_release(*lu), tl_tensor_release(*piv), tl_tensor_release(*info);
        return -1;
    }
    getrf_ctx c = {*lu, *piv, *info, (int)n};
    if (n > 0) tl_parallel_for(batch_of(A, 2), batch_grain(n), getrf_range, &c);
    return 0;
}

typedef struct {
    const tl_tensor *lu, *piv;
    tl_tensor *rhs;
    int n, k;
    char trans;
    int64_t nb;                 /* batch dims of rhs */
    const int64_t *bsizes;      /* rhs batch sizes */
    int64_t lu_strides[TL_MAX_DIMS]; /* lu's batch index strides over rhs's batch dims (0: broadcast) */
} getrs_ctx;

static void getrs_range(int64_t b0, int64_t b1, void *vctx) {
    getrs_ctx *c = (getrs_ctx *)vctx;
    const int n = c->n, k = c->k, ld = n > 1 ? n : 1;
    const size_t isz = (size_t)tl__itemsize(c->rhs->dtype);
    for (int64_t b = b0; b < b1; b++) {
        int64_t li = 0, r = b;
        for (int64_t d = c->nb - 1; d >= 0; d--) {
            li += (r % c->bsizes[d]) * c->lu_strides[d];
            r /= c->bsizes[d];
        }
        const char *a = tl__data(c->lu) + (size_t)li * (size_t)n * (size_t)n * isz;
        const int *ipiv = (const int *)tl__data(c->piv) + li * n;
        char *x = tl__data(c->rhs) + (size_t)b * (size_t)n * (size_t)k * isz;
        int info = 0;
        if (c->rhs->dtype == TL_FLOAT64)
            scipy_dgetrs_(&c->trans, &n, &k, (const double *)a, &ld, ipiv, (double *)x, &ld, &info, 1);
        else
            scipy_sgetrs_(&c->trans, &n, &k, (const float *)a, &ld, ipiv, (float *)x, &ld, &info, 1);
    }
}

/* rhs (contiguous [B..., k, n]: k column-major n-vectors per matrix) <-
 * op(A)^-1 rhs in place, A given by lu_factor's lu / piv whose batch dims
 * broadcast to rhs's; trans 'N' solves A x = b, 'T' A^T x = b */
static void lu_solve_inplace(const tl_tensor *lu, const tl_tensor *piv, tl_tensor *rhs, char trans) {
    const int64_t n = lu->sizes[lu->ndim - 1], k = rhs->sizes[rhs->ndim - 2];
    getrs_ctx c = {.lu = lu, .piv = piv, .rhs = rhs, .n = (int)n, .k = (int)k, .trans = trans,
                   .nb = rhs->ndim - 2, .bsizes = rhs->sizes};
    const int64_t lnb = lu->ndim - 2;
    int64_t s = 1;
    for (int64_t d = c.nb - 1; d >= 0; d--) {
        const int64_t ld = d - (c.nb - lnb);
        const int64_t sz = ld >= 0 ? lu->sizes[ld] : 1;
        c.lu_strides[d] = sz == 1 ? 0 : s;
        s *= sz;
    }
    if (n > 0 && k > 0) tl_parallel_for(batch_of(rhs, 2), batch_grain(n), getrs_range, &c);
}

/* the transposed view of a buffer (PyTorch's Fortran-strided outputs) */
static tl_tensor *mT_owned(tl_tensor *t) {
    if (!t) return NULL;
    tl_tensor *v = tl_ops_transpose_int(t, -2, -1);
    tl_tensor_release(t);
    return v;
}

/* ------------------------------------------------------------ inv, solve */

int tl_native_linalg_inv_ex(tl_keyset ks, tl_tensor *A, bool check_errs, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    if (check_square(A, "linalg.inv", "A") || check_float(A, "linalg.inv", "linalg_lu_factor_ex_out")) return -1;
    tl_tensor *lu, *piv, *info;
    if (lu_factor(A, &lu, &piv, &info)) return -1;
    const int64_t nd = A->ndim, n = A->sizes[nd - 1];
    tl_tensor *X = tl_zeros(nd, A->sizes, A->dtype, TL_CPU);   /* the identity per matrix */
    if (X) {
        const size_t isz = (size_t)tl__itemsize(A->dtype);
        const int64_t nb = batch_of(A, 2);
        for (int64_t b = 0; b < nb; b++)
            for (int64_t i = 0; i < n; i++) {
                char *p = tl__data(X) + (size_t)((b * n + i) * n + i) * isz;
                if (A->dtype == TL_FLOAT64) *(double *)p = 1.0; else *(float *)p = 1.0f;
            }
        lu_solve_inplace(lu, piv, X, 'N');   /* X holds A^-1 column-major: its transpose view is A^-1 */
    }
    tl_tensor_release(lu);
    tl_tensor_release(piv);
    X = mT_owned(X);
    if (!X || (check_errs && check_errors(info, "linalg.inv_ex", nd == 2))) {
        tl_tensor_release(X);
        tl_tensor_release(info);
        return -1;
    }
    *ret0 = X, *ret1 = info;
    return 0;
}

/* PyTorch's linalg_solve_is_vector_rhs: B is a (batch of) vector(s) */
static bool solve_is_vector_rhs(const tl_tensor *A, const tl_tensor *B) {
    if (B->ndim == 1) return true;
    if (A->ndim - 1 != B->ndim) return false;
    for (int64_t d = 0; d < B->ndim; d++)
        if (B->sizes[d] != A->sizes[d]) return false;
    return true;
}

/* batch dims of a and b broadcast (PyTorch's _linalg_broadcast_batch_dims_helper) */
static int broadcast_batch(const tl_tensor *a, const tl_tensor *b, int64_t *out, int64_t *out_nb) {
    const int64_t na = a->ndim - 2, nbb = b->ndim - 2, nb = na > nbb ? na : nbb;
    for (int64_t i = 0; i < nb; i++) {
        const int64_t ia = i - (nb - na), ib = i - (nb - nbb);
        const int64_t x = ia >= 0 ? a->sizes[ia] : 1, y = ib >= 0 ? b->sizes[ib] : 1;
        if (x != y && x != 1 && y != 1)
            return tl_set_error(TL_ERR_RUNTIME, "The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                                                "non-singleton dimension %lld", (long long)y, (long long)x, (long long)i);
        out[i] = x == 1 ? y : x;
    }
    *out_nb = nb;
    return 0;
}

int tl_native__linalg_solve_ex(tl_keyset ks, tl_tensor *A, tl_tensor *B, bool left, bool check_errs,
                               tl_tensor **ret0, tl_tensor **ret1, tl_tensor **ret2, tl_tensor **ret3) {
    (void)ks;
    const char *f = "linalg.solve";
    if (check_float(A, f, "linalg_lu_factor_ex_out")) return -1;
    if (A->dtype != B->dtype)
        return tl_set_error(TL_ERR_RUNTIME, "%s: Expected A and B to have the same dtype, but found A of type %s and B "
                                            "of type %s instead", f, tl_dtype_scalar_name(A->dtype),
                            tl_dtype_scalar_name(B->dtype));
    if (check_square(A, f, "A")) return -1;
    const bool vec = solve_is_vector_rhs(A, B);
    tl_tensor *Bm = vec ? tl_ops_unsqueeze(B, -1) : (tl_tensor_retain(B), B);
    if (!Bm) return -1;
    int rc = check_matrix(Bm, f, "B");
    const int64_t n = A->sizes[A->ndim - 1];
    if (rc == 0 && (left ? Bm->sizes[Bm->ndim - 2] != n : Bm->sizes[Bm->ndim - 1] != n))
        rc = tl_set_error(TL_ERR_RUNTIME, "%s: Incompatible shapes of A and B for the equation %s (%lldx%lld and "
                                          "%lldx%lld)", f, left ? "AX = B" : "XA = B", (long long)n, (long long)n,
                          (long long)Bm->sizes[Bm->ndim - 2], (long long)Bm->sizes[Bm->ndim - 1]);
    int64_t shape[TL_MAX_DIMS + 2], nb = 0;
    if (rc == 0) rc = broadcast_batch(Bm, A, shape, &nb);
    if (rc == 0 && !left && vec)
        rc = tl_set_error(TL_ERR_RUNTIME, "%s: Vector broadcasting of the left hand side is not supported for "
                                          "left=False. In this case linalg.solve is equivalent to B / A.squeeze(-1)", f);
    if (rc) {
        tl_tensor_release(Bm);
        return -1;
    }
    shape[nb] = Bm->sizes[Bm->ndim - 2], shape[nb + 1] = Bm->sizes[Bm->ndim - 1];
    tl_tensor *Be = tl_ops_expand(Bm, shape, nb + 2, false);
    tl_tensor_release(Bm);
    if (!Be) return -1;
    /* the right-hand sides as column-major vectors: B^T (left), B (right: A^T X^T = B^T) */
    tl_tensor *X = left ? colmajor_copy(Be) : tl_clone(Be);
    tl_tensor_release(Be);
    if (X && !tl_tensor_is_contiguous(X)) {
        tl_tensor *c = tl_contiguous(X);
        tl_tensor_release(X);
        X = c;
    }
    tl_tensor *lu = NULL, *piv = NULL, *info = NULL;
    if (!X || lu_factor(A, &lu, &piv, &info)) {
        tl_tensor_release(X);
        return -1;
    }
    lu_solve_inplace(lu, piv, X, left ? 'N' : 'T');
    if (left) X = mT_owned(X);
    if (X && vec) {
        tl_tensor *s = tl_ops_squeeze_dim(X, -1);
        tl_tensor_release(X);
        X = s;
    }
    lu = mT_owned(lu);
    if (!X || !lu || (check_errs && check_errors(info, "linalg.solve_ex", A->ndim == 2))) {
        tl_tensor_release(X), tl_tensor_release(lu), tl_tensor_release(piv), tl_tensor_release(info);
        return -1;
    }
    *ret0 = X, *ret1 = lu, *ret2 = piv, *ret3 = info;
    return 0;
}

int tl_native_linalg_solve_ex(tl_keyset ks, tl_tensor *A, tl_tensor *B, bool left, bool check_errs, tl_tensor **ret0,
                              tl_tensor **ret1) {
    (void)ks;
    tl_tensor *lu = NULL, *piv = NULL;
    if (tl_ops__linalg_solve_ex(A, B, left, check_errs, ret0, &lu, &piv, ret1)) return -1;
    tl_tensor_release(lu);
    tl_tensor_release(piv);
    return 0;
}

tl_tensor *tl_native_linalg_solve(tl_keyset ks, tl_tensor *A, tl_tensor *B, bool left) {
    (void)ks;
    tl_tensor *X = NULL, *lu = NULL, *piv = NULL, *info = NULL;
    if (tl_ops__linalg_solve_ex(A, B, left, false, &X, &lu, &piv, &info)) return NULL;
    tl_tensor_release(lu);
    tl_tensor_release(piv);
    int rc = check_errors(info, "torch.linalg.solve", A->ndim == 2);
    tl_tensor_release(info);
    if (rc) {
        tl_tensor_release(X);
        return NULL;
    }
    return X;
}

tl_tensor *tl_native_linalg_inv(tl_keyset ks, tl_tensor *A) {
    (void)ks;
    tl_tensor *X = NULL, *info = NULL;
    if (tl_ops_linalg_inv_ex(A, false, &X, &info)) return NULL;
    int rc = check_errors(info, "linalg.inv", A->ndim == 2);
    tl_tensor_release(info);
    if (rc) {
        tl_tensor_release(X);
        return NULL;
    }
    return X;
}

tl_tensor *tl_native_inverse(tl_keyset ks, tl_tensor *self) {
    return tl_native_linalg_inv(ks, self);
}

/* ------------------------------------------------------------ det, slogdet */

/* from lu_factor's buffer, per matrix: det = perm sign * prod(diag U)
 * (mode 0, into r0), or sign and log|det| (mode 1, into r0 and r1) */
static void det_from_lu(const tl_tensor *lu, const tl_tensor *piv, tl_tensor *r0, tl_tensor *r1, int mode) {
    const int64_t n = lu->sizes[lu->ndim - 1], nb = batch_of(lu, 2);
    const bool f64 = lu->dtype == TL_FLOAT64;
    for (int64_t b = 0; b < nb; b++) {
        double prod = 1.0, logabs = 0.0, sign = 1.0;
        const int *ipiv = (const int *)tl__data(piv) + b * n;
        for (int64_t i = 0; i < n; i++) {
            const int64_t o = (b * n + i) * n + i;
            const double u = f64 ? ((const double *)tl__data(lu))[o] : (double)((const float *)tl__data(lu))[o];
            if (ipiv[i] != i + 1) sign = -sign;
            if (u < 0) sign = -sign;
            prod *= u;
            logabs += log(fabs(u));
        }
        const double det = sign * fabs(prod);
        if (prod == 0) sign = 0;
        if (mode == 0) {
            if (f64) ((double *)tl__data(r0))[b] = det;
            else ((float *)tl__data(r0))[b] = (float)det;
        } else if (f64) {
            ((double *)tl__data(r0))[b] = sign, ((double *)tl__data(r1))[b] = logabs;
        } else {
            ((float *)tl__data(r0))[b] = (float)sign, ((float *)tl__data(r1))[b] = (float)logabs;
        }
    }
}

/* _linalg_det / _linalg_slogdet: the LU factorization and its diagonal */
static int det_common(tl_tensor *A, const char *f, int mode, tl_tensor **r0, tl_tensor **r1, tl_tensor **lu_out,
                      tl_tensor **piv_out) {
    if (check_square(A, f, "A") || check_float(A, f, "linalg_lu_factor_ex_out")) return -1;
    tl_tensor *lu, *piv, *info;
    if (lu_factor(A, &lu, &piv, &info)) return -1;
    tl_tensor_release(info);
    *r0 = tl_empty(A->ndim - 2, A->sizes, A->dtype, TL_CPU);
    *r1 = mode ? tl_empty(A->ndim - 2, A->sizes, A->dtype, TL_CPU) : NULL;
    if (*r0 && (!mode || *r1)) det_from_lu(lu, piv, *r0, *r1, mode);
    lu = mT_owned(lu);
    if (!lu || !*r0 || (mode && !*r1)) {
        tl_tensor_release(lu), tl_tensor_release(piv), tl_tensor_release(*r0), tl_tensor_release(*r1);
        return -1;
    }
    *lu_out = lu, *piv_out = piv;
    return 0;
}

int tl_native__linalg_det(tl_keyset ks, tl_tensor *A, tl_tensor **ret0, tl_tensor **ret1, tl_tensor **ret2) {
    (void)ks;
    tl_tensor *unused = NULL;
    return det_common(A, "linalg.det", 0, ret0, &unused, ret1, ret2);
}

int tl_native__linalg_slogdet(tl_keyset ks, tl_tensor *A, tl_tensor **ret0, tl_tensor **ret1, tl_tensor **ret2,
                              tl_tensor **ret3) {
    (void)ks;
    return det_common(A, "linalg.slogdet", 1, ret0, ret1, ret2, ret3);
}

tl_tensor *tl_native_linalg_det(tl_keyset ks, tl_tensor *A) {
    (void)ks;
    tl_tensor *d = NULL, *lu = NULL, *piv = NULL;
    if (tl_ops__linalg_det(A, &d, &lu, &piv)) return NULL;
    tl_tensor_release(lu);
    tl_tensor_release(piv);
    return d;
}

tl_tensor *tl_native_det(tl_keyset ks, tl_tensor *self) { return tl_native_linalg_det(ks, self); }

int tl_native_linalg_slogdet(tl_keyset ks, tl_tensor *A, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    tl_tensor *lu = NULL, *piv = NULL;
    if (tl_ops__linalg_slogdet(A, ret0, ret1, &lu, &piv)) return -1;
    tl_tensor_release(lu);
    tl_tensor_release(piv);
    return 0;
}

int tl_native_slogdet(tl_keyset ks, tl_tensor *self, tl_tensor **ret0, tl_tensor **ret1) {
    return tl_native_linalg_slogdet(ks, self, ret0, ret1);
}

/* PyTorch's logdet: log|det| where det >= 0, NaN where it is negative */
tl_tensor *tl_native_logdet(tl_keyset ks, tl_tensor *A) {
    (void)ks;
    if (check_square(A, "logdet", "A") || check_float(A, "logdet", "linalg_lu_factor_ex_out")) return NULL;
    tl_tensor *sign = NULL, *logabs = NULL;
    if (tl_ops_linalg_slogdet(A, &sign, &logabs)) return NULL;
    tl_tensor *neg = tl_ops_eq_Scalar(sign, tl_scalar_from_double(-1.0));
    tl_tensor *nan = neg ? tl_ops_full_like(logabs, tl_scalar_from_double(NAN), TL_DTYPE_UNDEFINED, -1, -1, false,
                                            false, -1) : NULL;
    tl_tensor *r = nan ? tl_ops_where_self(neg, nan, logabs) : NULL;
    tl_tensor_release(sign), tl_tensor_release(logabs), tl_tensor_release(neg), tl_tensor_release(nan);
    return r;
}

/* ------------------------------------------------------------ cholesky */

typedef struct {
    tl_tensor *a, *info;
    int n;
    char uplo;
} potrf_ctx;

static void potrf_range(int64_t b0, int64_t b1, void *vctx) {
    potrf_ctx *c = (potrf_ctx *)vctx;
    const int n = c->n, lda = n > 1 ? n : 1;
    const char uplo = c->uplo;
    const size_t isz = (size_t)tl__itemsize(c->a->dtype);
    for (int64_t b = b0; b < b1; b++) {
        char *a = tl__data(c->a) + (size_t)b * (size_t)n * (size_t)n * isz;
        int *info = (int *)tl__data(c->info) + b;
        if (c->a->dtype == TL_FLOAT64) scipy_dpotrf_(&uplo, &n, (double *)a, &lda, info, 1);
        else scipy_spotrf_(&uplo, &n, (float *)a, &lda, info, 1);
        /* zero the triangle potrf leaves untouched (column-major: upper = row-major lower) */
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++) {
                if (uplo == 'L' ? i >= j : i <= j) continue;   /* element (i, j) column-major at j*n+i */
                memset(a + ((size_t)j * (size_t)n + (size_t)i) * isz, 0, isz);
            }
    }
}

/* potrf per matrix of A: *L (F-strided, the other triangle zero), *info */
static int cholesky_core(tl_tensor *A, bool upper, const char *f, const char *kernel, tl_tensor **L_out,
                         tl_tensor **info_out) {
    if (check_square(A, f, "A") || check_float(A, f, kernel)) return -1;
    const int64_t nd = A->ndim, n = A->sizes[nd - 1];
    tl_tensor *L = colmajor_copy(A), *info = tl_zeros(nd - 2, A->sizes, TL_INT32, TL_CPU);
    if (L && info) {
        potrf_ctx c = {L, info, (int)n, upper ? 'U' : 'L'};
        if (n > 0) tl_parallel_for(batch_of(A, 2), batch_grain(n), potrf_range, &c);
    }
    L = mT_owned(L);
    if (!L || !info) {
        tl_tensor_release(L), tl_tensor_release(info);
        return -1;
    }
    *L_out = L, *info_out = info;
    return 0;
}

int tl_native_linalg_cholesky_ex(tl_keyset ks, tl_tensor *A, bool upper, bool check_errs, tl_tensor **ret0,
                                 tl_tensor **ret1) {
    (void)ks;
    tl_tensor *L, *info;
    if (cholesky_core(A, upper, "linalg.cholesky", "linalg_cholesky_ex_out", &L, &info)) return -1;
    if (check_errs && check_errors(info, "linalg.cholesky_ex", A->ndim == 2)) {
        tl_tensor_release(L), tl_tensor_release(info);
        return -1;
    }
    *ret0 = L, *ret1 = info;
    return 0;
}

tl_tensor *tl_native_linalg_cholesky(tl_keyset ks, tl_tensor *A, bool upper) {
    (void)ks;
    tl_tensor *L = NULL, *info = NULL;
    if (tl_ops_linalg_cholesky_ex(A, upper, false, &L, &info)) return NULL;
    int rc = check_errors(info, "linalg.cholesky", A->ndim == 2);
    tl_tensor_release(info);
    if (rc) {
        tl_tensor_release(L);
        return NULL;
    }
    return L;
}

/* torch.cholesky (deprecated in PyTorch, with its warning): the same factor,
 * errors named "cholesky" */
tl_tensor *tl_native_cholesky(tl_keyset ks, tl_tensor *self, bool upper) {
    (void)ks;
    TL_WARN_ONCE("torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future "
                 "PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\nL = torch.linalg.cholesky(A)\n"
                 "and\nU = torch.cholesky(A, upper=True)\nshould be replaced with\nU = torch.linalg.cholesky(A).mH\n"
                 "This transform will produce equivalent results for all valid (symmetric positive definite) inputs.");
    if (self->numel == 0) return tl_ops_empty_like(self, TL_DTYPE_UNDEFINED, -1, -1, false, false, TL_CONTIGUOUS_FORMAT);
    tl_tensor *L, *info;
    if (cholesky_core(self, upper, "cholesky", "cholesky_cpu", &L, &info)) return NULL;
    int rc = check_errors(info, "cholesky", self->ndim == 2);
    tl_tensor_release(info);
    if (rc) {
        tl_tensor_release(L);
        return NULL;
    }
    return L;
}

/* ------------------------------------------------------------ composites */

/* PyTorch's linalg_matrix_power: identity (through a clone of A, so autograd
 * sees A), A, inv(A), then repeated squaring of A or inv(A) */
tl_tensor *tl_native_linalg_matrix_power(tl_keyset ks, tl_tensor *self, int64_t n) {
    (void)ks;
    if (check_square(self, "linalg.matrix_power", "A")) return NULL;
    if (n == 0) {
        tl_tensor *out = tl_ops_clone(self, TL_CONTIGUOUS_FORMAT);
        tl_tensor *eye = out ? tl_ops_eye(self->sizes[self->ndim - 2], self->dtype, -1, -1, false, false) : NULL;
        tl_tensor *r = eye ? tl_ops_copy_(out, eye, false) : NULL;
        tl_tensor_release(eye);
        if (!r) {
            tl_tensor_release(out);
            return NULL;
        }
        return r == out ? r : (tl_tensor_release(out), r);
    }
    if (n == 1) return tl_ops_clone(self, TL_CONTIGUOUS_FORMAT);
    if (n == -1) return tl_ops_linalg_inv(self);
    tl_tensor *a = n < 0 ? tl_ops_linalg_inv(self) : (tl_tensor_retain(self), self);
    if (!a) return NULL;
    uint64_t k = n < 0 ? (uint64_t)0 - (uint64_t)n : (uint64_t)n;
    tl_tensor *z = NULL, *result = NULL;
    if (k == 2 || k == 3) {
        result = tl_ops_matmul(a, a);
        if (result && k == 3) {
            tl_tensor *r3 = tl_ops_matmul(result, a);
            tl_tensor_release(result);
            result = r3;
        }
        tl_tensor_release(a);
        return result;
    }
    bool ok = true;
    while (k > 0 && ok) {   /* bits of k from the lowest: z = a^(2^i) */
        const bool bit = k & 1;
        k >>= 1;
        tl_tensor *nz = z ? tl_ops_matmul(z, z) : (tl_tensor_retain(a), a);
        tl_tensor_release(z);
        z = nz;
        ok = z != NULL;
        if (ok && bit) {
            tl_tensor *nr = result ? tl_ops_matmul(result, z) : (tl_tensor_retain(z), z);
            tl_tensor_release(result);
            result = nr;
            ok = result != NULL;
        }
    }
    tl_tensor_release(a);
    tl_tensor_release(z);
    if (!ok) {
        tl_tensor_release(result);
        return NULL;
    }
    return result;
}

/* PyTorch's linalg_tensorinv: self as a (prod(shape[ind:]))^2 matrix, inverted */
tl_tensor *tl_native_linalg_tensorinv(tl_keyset ks, tl_tensor *self, int64_t ind) {
    (void)ks;
    if (ind <= 0) {
        tl_set_error(TL_ERR_RUNTIME, "Expected a strictly positive integer for 'ind', but got %lld", (long long)ind);
        return NULL;
    }
    if (ind > self->ndim) ind = self->ndim;   /* ArrayRef::slice past the end: the whole shape */
    int64_t shape[TL_MAX_DIMS], k = 0, p = 1;
    for (int64_t d = ind; d < self->ndim; d++) shape[k++] = self->sizes[d], p *= self->sizes[d];
    for (int64_t d = 0; d < ind; d++) shape[k++] = self->sizes[d];
    const int64_t sq[2] = {p, p};
    tl_tensor *m = tl_ops_reshape(self, sq, 2);
    if (!m) return NULL;
    tl_tensor *x = NULL, *info = NULL;
    int rc = tl_ops_linalg_inv_ex(m, false, &x, &info);
    tl_tensor_release(m);
    if (rc) return NULL;
    rc = check_errors(info, "inv", true);
    tl_tensor_release(info);
    tl_tensor *r = rc ? NULL : tl_ops_reshape(x, shape, k);
    tl_tensor_release(x);
    return r;
}

/* PyTorch's linalg_tensorsolve: dims moved last, self as a matrix, solved
 * against other flattened, reshaped to self.shape[other.ndim:] */
tl_tensor *tl_native_linalg_tensorsolve(tl_keyset ks, tl_tensor *self, tl_tensor *other, const int64_t *dims,
                                        int64_t dims_len) {
    (void)ks;
    const int64_t nd = self->ndim;
    tl_tensor *s = NULL;
    if (dims) {
        int64_t dest[TL_MAX_DIMS];
        for (int64_t i = 0; i < dims_len && i < TL_MAX_DIMS; i++) dest[i] = nd - dims_len + i;
        s = tl_ops_movedim_intlist(self, dims, dims_len, dest, dims_len);
    } else {
        s = self, tl_tensor_retain(self);
    }
    if (!s) return NULL;
    int64_t shape[TL_MAX_DIMS], k = 0, rp = 1, op = 1;
    for (int64_t d = other->ndim; d < nd; d++) shape[k++] = s->sizes[d], rp *= s->sizes[d];
    for (int64_t d = 0; d < other->ndim; d++) op *= other->sizes[d];
    if (rp != op) {
        tl_tensor_release(s);
        tl_set_error(TL_ERR_RUNTIME, "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                                     "prod(self.shape[:other.ndim]), but got %lld != %lld", (long long)rp, (long long)op);
        return NULL;
    }
    const int64_t sq[2] = {rp, op};
    tl_tensor *m = tl_ops_reshape(s, sq, 2);
    tl_tensor_release(s);
    tl_tensor *b = m ? tl_ops_flatten_using_ints(other, 0, -1) : NULL;
    tl_tensor *x = b ? tl_ops_linalg_solve(m, b, true) : NULL;
    tl_tensor_release(m), tl_tensor_release(b);
    tl_tensor *r = x ? tl_ops_reshape(x, shape, k) : NULL;
    tl_tensor_release(x);
    return r;
}

/* ------------------------------------------------------------ eigh */

extern void scipy_ssyevd_(const char *jobz, const char *uplo, const int *n, float *a, const int *lda, float *w,
                          float *work, const int *lwork, int *iwork, const int *liwork, int *info, size_t jobz_len,
                          size_t uplo_len);
extern void scipy_dsyevd_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda, double *w,
                          double *work, const int *lwork, int *iwork, const int *liwork, int *info, size_t jobz_len,
                          size_t uplo_len);

typedef struct {
    tl_tensor *a, *w, *info;
    int n;
    char jobz, uplo;
    int failed;   /* out of memory in some call */
} syevd_ctx;

static void syevd_range(int64_t b0, int64_t b1, void *vctx) {
    syevd_ctx *c = (syevd_ctx *)vctx;
    const int n = c->n, lda = n > 1 ? n : 1;
    const bool f64 = c->a->dtype == TL_FLOAT64;
    const size_t isz = f64 ? sizeof(double) : sizeof(float);
    int lwork = -1, liwork = -1, iq = 0, info = 0;
    double wq = 0;
    float wqf = 0;
    if (f64) scipy_dsyevd_(&c->jobz, &c->uplo, &n, NULL, &lda, NULL, &wq, &lwork, &iq, &liwork, &info, 1, 1);
    else scipy_ssyevd_(&c->jobz, &c->uplo, &n, NULL, &lda, NULL, &wqf, &lwork, &iq, &liwork, &info, 1, 1);
    lwork = f64 ? (int)wq : (int)wqf;
    lwork = lwork > 1 ? lwork : 1, liwork = iq > 1 ? iq : 1;
    void *work = malloc((size_t)lwork * isz);
    int *iwork = (int *)malloc((size_t)liwork * sizeof(int));
    for (int64_t b = b0; work && iwork && b < b1; b++) {
        char *a = tl__data(c->a) + (size_t)b * (size_t)n * (size_t)n * isz;
        char *w = tl__data(c->w) + (size_t)b * (size_t)n * isz;
        int *ib = (int *)tl__data(c->info) + b;
        if (f64)
            scipy_dsyevd_(&c->jobz, &c->uplo, &n, (double *)a, &lda, (double *)w, (double *)work, &lwork, iwork,
                          &liwork, ib, 1, 1);
        else
            scipy_ssyevd_(&c->jobz, &c->uplo, &n, (float *)a, &lda, (float *)w, (float *)work, &lwork, iwork,
                          &liwork, ib, 1, 1);
    }
    if (!work || !iwork) c->failed = 1;
    free(work);
    free(iwork);
}

/* _linalg_eigh: ?syevd per matrix. The column-major copy of A is A itself
 * column-major, so UPLO names the triangle of A read, as PyTorch's; the
 * eigenvectors come back column-major (the buffer's transposed view) */
int tl_native__linalg_eigh(tl_keyset ks, tl_tensor *A, const char *UPLO, bool compute_v, tl_tensor **ret0,
                           tl_tensor **ret1) {
    (void)ks;
    if (check_square(A, "linalg.eigh", "A") || check_float(A, "linalg.eigh", "linalg_eigh_cpu")) return -1;
    if (strlen(UPLO) != 1 || (UPLO[0] != 'U' && UPLO[0] != 'L'))
        return tl_set_error(TL_ERR_RUNTIME, "Expected UPLO argument to be 'L' or 'U', but got %s", UPLO);
    const int64_t nd = A->ndim, n = A->sizes[nd - 1];
    tl_tensor *V = colmajor_copy(A), *info = tl_zeros(nd - 2, A->sizes, TL_INT32, TL_CPU);
    tl_tensor *w = tl_empty(nd - 1, A->sizes, A->dtype, TL_CPU);
    syevd_ctx c = {V, w, info, (int)n, compute_v ? 'V' : 'N', UPLO[0], 0};
    if (V && w && info && n > 0) tl_parallel_for(batch_of(A, 2), batch_grain(n), syevd_range, &c);
    int rc = (!V || !w || !info) ? -1 : c.failed ? tl_set_error(TL_ERR_MEMORY, "linalg.eigh: out of memory") : 0;
    if (rc == 0) rc = check_errors(info, "linalg.eigh", nd == 2);
    tl_tensor_release(info);
    if (rc == 0 && !compute_v) {   /* PyTorch: an empty eigenvectors tensor */
        const int64_t zero = 0;
        tl_tensor_release(V);
        V = tl_empty(1, &zero, A->dtype, TL_CPU);
    } else if (rc == 0) {
        V = mT_owned(V);
    }
    if (rc || !V) {
        tl_tensor_release(V), tl_tensor_release(w);
        return -1;
    }
    *ret0 = w, *ret1 = V;
    return 0;
}

int tl_native_linalg_eigh(tl_keyset ks, tl_tensor *A, const char *UPLO, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    return tl_ops__linalg_eigh(A, UPLO, true, ret0, ret1);
}

/* eigenvectors only when the backward needs them (PyTorch's _may_require_fw_or_bw_grad) */
tl_tensor *tl_native_linalg_eigvalsh(tl_keyset ks, tl_tensor *A, const char *UPLO) {
    (void)ks;
    tl_tensor *w = NULL, *V = NULL;
    if (tl_ops__linalg_eigh(A, UPLO, tl_autograd_requires_grad(A) != 0, &w, &V)) return NULL;
    tl_tensor_release(V);
    return w;
}

/* ------------------------------------------------------------ solve_triangular */

/* CBLAS (its enums as ints: RowMajor 101, NoTrans 111, Upper 121 / Lower 122,
 * NonUnit 131 / Unit 132, Left 141 / Right 142) */
extern void scipy_cblas_strsm(int order, int side, int uplo, int transa, int diag, int m, int n, float alpha,
                              const float *a, int lda, float *b, int ldb);
extern void scipy_cblas_dtrsm(int order, int side, int uplo, int transa, int diag, int m, int n, double alpha,
                              const double *a, int lda, double *b, int ldb);

typedef struct {
    const tl_tensor *a;
    tl_tensor *x;
    int n, k, side, uplo, diag;
} trsm_ctx;

static void trsm_range(int64_t b0, int64_t b1, void *vctx) {
    trsm_ctx *c = (trsm_ctx *)vctx;
    const bool f64 = c->x->dtype == TL_FLOAT64;
    const size_t isz = f64 ? sizeof(double) : sizeof(float);
    const int left = c->side == 141, m = left ? c->n : c->k, nn = left ? c->k : c->n;
    const int lda = c->n > 1 ? c->n : 1, ldb = nn > 1 ? nn : 1;
    for (int64_t b = b0; b < b1; b++) {
        const char *a = tl__data(c->a) + (size_t)b * (size_t)c->n * (size_t)c->n * isz;
        char *x = tl__data(c->x) + (size_t)b * (size_t)c->n * (size_t)c->k * isz;
        if (f64)
            scipy_cblas_dtrsm(101, c->side, c->uplo, 111, c->diag, m, nn, 1.0, (const double *)a, lda, (double *)x,
                              ldb);
        else
            scipy_cblas_strsm(101, c->side, c->uplo, 111, c->diag, m, nn, 1.0f, (const float *)a, lda, (float *)x,
                              ldb);
    }
}

/* linalg_solve_triangular: BLAS ?trsm row-major per matrix of the broadcast
 * batch (no singularity check, as PyTorch's: a zero diagonal gives inf / NaN) */
tl_tensor *tl_native_linalg_solve_triangular(tl_keyset ks, tl_tensor *self, tl_tensor *B, bool upper, bool left,
                                             bool unitriangular) {
    (void)ks;
    const char *f = "linalg.solve_triangular";
    if (check_float(self, f, "linalg_solve_triangular") || check_square(self, f, "A") || check_matrix(B, f, "B"))
        return NULL;
    if (self->dtype != B->dtype) {
        tl_set_error(TL_ERR_RUNTIME, "%s: Expected A and B to have the same dtype, but found A of type %s and B of "
                                     "type %s instead", f, tl_dtype_scalar_name(self->dtype),
                     tl_dtype_scalar_name(B->dtype));
        return NULL;
    }
    const int64_t n = self->sizes[self->ndim - 1];
    if (left ? B->sizes[B->ndim - 2] != n : B->sizes[B->ndim - 1] != n) {
        tl_set_error(TL_ERR_RUNTIME, "%s: Incompatible shapes of A and B for the equation %s (%lldx%lld and %lldx%lld)",
                     f, left ? "AX = B" : "XA = B", (long long)n, (long long)n, (long long)B->sizes[B->ndim - 2],
                     (long long)B->sizes[B->ndim - 1]);
        return NULL;
    }
    int64_t shape[TL_MAX_DIMS + 2], nb = 0;
    if (broadcast_batch(B, self, shape, &nb)) return NULL;
    shape[nb] = n, shape[nb + 1] = n;
    tl_tensor *Ae = tl_ops_expand(self, shape, nb + 2, false);
    tl_tensor *Ac = Ae ? tl_contiguous(Ae) : NULL;
    tl_tensor_release(Ae);
    shape[nb] = B->sizes[B->ndim - 2], shape[nb + 1] = B->sizes[B->ndim - 1];
    tl_tensor *Be = Ac ? tl_ops_expand(B, shape, nb + 2, false) : NULL;
    tl_tensor *X = Be ? tl_clone(Be) : NULL;
    tl_tensor_release(Be);
    if (X && !tl_tensor_is_contiguous(X)) {
        tl_tensor *c = tl_contiguous(X);
        tl_tensor_release(X);
        X = c;
    }
    if (X) {
        trsm_ctx c = {Ac, X, (int)n, (int)(left ? shape[nb + 1] : shape[nb]), left ? 141 : 142, upper ? 121 : 122,
                      unitriangular ? 132 : 131};
        if (n > 0 && c.k > 0) tl_parallel_for(batch_of(X, 2), batch_grain(n), trsm_range, &c);
    }
    tl_tensor_release(Ac);
    return X;
}

/* ------------------------------------------------------------ svd */

/* torch.svd (PyTorch's composite): linalg_svd with full_matrices = !some and
 * V = Vh^T; without compute_uv, svdvals and zero U (m x m) / V (n x n) */
int tl_native_svd(tl_keyset ks, tl_tensor *self, bool some, bool compute_uv, tl_tensor **ret0, tl_tensor **ret1,
                  tl_tensor **ret2) {
    (void)ks;
    if (self->ndim < 2)
        return tl_set_error(TL_ERR_RUNTIME, "linalg.svd: input should have at least 2 dimensions, but has %lld "
                                            "dimensions instead", (long long)self->ndim);
    tl_tensor *U = NULL, *S = NULL, *Vh = NULL;
    if (compute_uv) {
        if (tl_ops_linalg_svd(self, !some, NULL, &U, &S, &Vh)) return -1;
    } else {
        const int64_t nd = self->ndim, m = self->sizes[nd - 2], n = self->sizes[nd - 1];
        int64_t sizes[TL_MAX_DIMS];
        memcpy(sizes, self->sizes, sizeof(int64_t) * (size_t)nd);
        S = tl_ops_linalg_svdvals(self, NULL);
        sizes[nd - 1] = m;
        U = S ? tl_zeros(nd, sizes, self->dtype, TL_CPU) : NULL;
        sizes[nd - 2] = n, sizes[nd - 1] = n;
        Vh = U ? tl_zeros(nd, sizes, self->dtype, TL_CPU) : NULL;
    }
    tl_tensor *V = Vh ? tl_ops_transpose_int(Vh, -2, -1) : NULL;
    tl_tensor_release(Vh);
    if (!V) {
        tl_tensor_release(U), tl_tensor_release(S);
        return -1;
    }
    *ret0 = U, *ret1 = S, *ret2 = V;
    return 0;
}

/* ------------------------------------------------------------ cholesky_solve, cholesky_inverse */

/* cholesky_solve (CompositeExplicitAutograd as PyTorch's): A = L L^T (U^T U
 * when upper) given by its factor input2; X = A^-1 B by two triangular solves */
tl_tensor *tl_native_cholesky_solve(tl_keyset ks, tl_tensor *self, tl_tensor *input2, bool upper) {
    (void)ks;
    if (self->ndim < 2) {
        tl_set_error(TL_ERR_RUNTIME, "b should have at least 2 dimensions, but has %lld dimensions instead",
                     (long long)self->ndim);
        return NULL;
    }
    if (input2->ndim < 2) {
        tl_set_error(TL_ERR_RUNTIME, "u should have at least 2 dimensions, but has %lld dimensions instead",
                     (long long)input2->ndim);
        return NULL;
    }
    if (self->dtype != input2->dtype) {
        tl_set_error(TL_ERR_RUNTIME, "Expected b and A to have the same dtype, but found b of type %s and A of type %s "
                                     "instead.", tl_dtype_scalar_name(self->dtype), tl_dtype_scalar_name(input2->dtype));
        return NULL;
    }
    const int64_t m = input2->sizes[input2->ndim - 2], n = input2->sizes[input2->ndim - 1];
    if (m != n) {
        tl_set_error(TL_ERR_RUNTIME, "A must be batches of square matrices, but they are %lld by %lld matrices",
                     (long long)m, (long long)n);
        return NULL;
    }
    if (self->sizes[self->ndim - 2] != n) {
        tl_set_error(TL_ERR_RUNTIME, "Incompatible matrix sizes for cholesky_solve: each A matrix is %lld by %lld but "
                                     "each b matrix is %lld by %lld", (long long)n, (long long)n,
                     (long long)self->sizes[self->ndim - 2], (long long)self->sizes[self->ndim - 1]);
        return NULL;
    }
    /* lower: L (L^T X) = B; upper: U^T (U X) = B */
    tl_tensor *t = tl_ops_transpose_int(input2, -2, -1);
    if (!t) return NULL;
    tl_tensor *first = upper ? t : input2, *second = upper ? input2 : t;
    tl_tensor *Y = tl_ops_linalg_solve_triangular(first, self, false, true, false);
    tl_tensor *X = Y ? tl_ops_linalg_solve_triangular(second, Y, true, true, false) : NULL;
    tl_tensor_release(Y);
    tl_tensor_release(t);
    return X;
}

/* cholesky_inverse: (L L^T)^-1 (upper: (U^T U)^-1), cholesky_solve of the identity */
tl_tensor *tl_native_cholesky_inverse(tl_keyset ks, tl_tensor *self, bool upper) {
    (void)ks;
    if (check_square(self, "cholesky_inverse", "A") || check_float(self, "cholesky_inverse", "cholesky_inverse_out_cpu"))
        return NULL;
    const int64_t n = self->sizes[self->ndim - 1];
    tl_tensor *I = tl_ops_eye(n, self->dtype, -1, -1, false, false);
    int64_t sizes[TL_MAX_DIMS];
    memcpy(sizes, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
    tl_tensor *E = I ? tl_ops_expand(I, sizes, self->ndim, false) : NULL;
    tl_tensor_release(I);
    tl_tensor *X = E ? tl_native_cholesky_solve(ks, E, self, upper) : NULL;
    tl_tensor_release(E);
    return X;
}

/* ------------------------------------------------------------ shared with linalg_decomp.c (linalg_lapack.h) */

int tl_lapack_check_matrix(const tl_tensor *A, const char *f, const char *arg) { return check_matrix(A, f, arg); }
int tl_lapack_check_square(const tl_tensor *A, const char *f, const char *arg) { return check_square(A, f, arg); }
int tl_lapack_check_float(const tl_tensor *A, const char *f, const char *kernel) { return check_float(A, f, kernel); }
int tl_lapack_check_errors(const tl_tensor *info, const char *api, bool is_matrix) {
    return check_errors(info, api, is_matrix);
}
int64_t tl_lapack_batch_of(const tl_tensor *t) { return batch_of(t, 2); }
int64_t tl_lapack_batch_grain(int64_t n) { return batch_grain(n); }
tl_tensor *tl_lapack_colmajor_copy(tl_tensor *A) { return colmajor_copy(A); }
tl_tensor *tl_lapack_mT_owned(tl_tensor *t) { return mT_owned(t); }
int tl_lapack_broadcast_batch(const tl_tensor *a, const tl_tensor *b, int64_t *out, int64_t *out_nb) {
    return broadcast_batch(a, b, out, out_nb);
}
void tl_lapack_lu_solve_inplace(const tl_tensor *lu, const tl_tensor *piv, tl_tensor *rhs, char trans) {
    lu_solve_inplace(lu, piv, rhs, trans);
}
