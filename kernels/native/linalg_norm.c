/* Singular values and matrix norms.
 *
 *  - _linalg_svd (CPU): LAPACK ?gesdd from the scipy-openblas32 wheel (its
 *    symbols carry the `scipy_` prefix), one call per matrix of the batch on a
 *    column-major copy. A row-major m x n matrix is the column-major n x m
 *    matrix A^T = V S U^T, so gesdd's "U" (n x k) read row-major is Vh and its
 *    "VT" (k x m) read row-major is U: no transposes. float32 / float64
 *    (PyTorch: also complex, which torchlet has not).
 *  - linalg_svd, linalg_svdvals (CompositeImplicitAutograd over _linalg_svd,
 *    as PyTorch; svdvals computes U and Vh only when A requires grad).
 *  - linalg_matrix_norm (Scalar and str ord), linalg_norm (vector or matrix
 *    norm as torch decides): PyTorch's composites (LinearAlgebra.cpp) over
 *    linalg_vector_norm, amax/amin and svdvals, so autograd follows.
 *  - .out overloads (linalg_svdvals.out, _linalg_svd.U, linalg_svd.U, the
 *    norms'): the functional result copied into out.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "missing_ops.h"
#include "shape_index.h"
#include "tl_autograd.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/_linalg_svd.h"
#include "ops/amax.h"
#include "ops/amin.h"
#include "ops/linalg_matrix_norm.h"
#include "ops/linalg_norm.h"
#include "ops/linalg_svd.h"
#include "ops/linalg_svdvals.h"
#include "ops/linalg_vector_norm.h"
#include "ops/permute.h"
#include "ops/sum.h"
#include "ops/to.h"
#include "ops/unsqueeze.h"
#include "ops/zeros.h"
#include "tl_structured.h"

#define TL_LAPACK_INT_MAX 2147483647LL   /* the wheel's LAPACK takes 32-bit integers */

/* LAPACK (Fortran ABI; the trailing length of the `jobz` string argument) */
extern void scipy_sgesdd_(const char *jobz, const int *m, const int *n, float *a, const int *lda, float *s, float *u,
                          const int *ldu, float *vt, const int *ldvt, float *work, const int *lwork, int *iwork,
                          int *info, size_t jobz_len);
extern void scipy_dgesdd_(const char *jobz, const int *m, const int *n, double *a, const int *lda, double *s,
                          double *u, const int *ldu, double *vt, const int *ldvt, double *work, const int *lwork,
                          int *iwork, int *info, size_t jobz_len);

/* one gesdd on a (column-major n x m, destroyed); returns LAPACK's info or -1000 (no memory) */
static int gesdd_one(tl_dtype dt, char jobz, int m, int n, void *a, void *s, void *u, int ldu, void *vt, int ldvt) {
    const int k = m < n ? m : n;
    int info = 0, lwork = -1, lda = m > 1 ? m : 1;
    int *iwork = (int *)malloc(sizeof(int) * (size_t)(8 * (k > 0 ? k : 1)));
    if (!iwork) return -1000;
    double wq = 0;
    float wqf = 0;
    if (dt == TL_FLOAT64)
        scipy_dgesdd_(&jobz, &m, &n, (double *)a, &lda, (double *)s, (double *)u, &ldu, (double *)vt, &ldvt, &wq,
                      &lwork, iwork, &info, 1);
    else
        scipy_sgesdd_(&jobz, &m, &n, (float *)a, &lda, (float *)s, (float *)u, &ldu, (float *)vt, &ldvt, &wqf,
                      &lwork, iwork, &info, 1);
    lwork = dt == TL_FLOAT64 ? (int)wq : (int)wqf;
    if (lwork < 1) lwork = 1;
    void *work = info == 0 ? malloc((size_t)lwork * (dt == TL_FLOAT64 ? sizeof(double) : sizeof(float))) : NULL;
    if (info == 0 && !work) info = -1000;
    if (info == 0) {
        if (dt == TL_FLOAT64)
            scipy_dgesdd_(&jobz, &m, &n, (double *)a, &lda, (double *)s, (double *)u, &ldu, (double *)vt, &ldvt,
                          (double *)work, &lwork, iwork, &info, 1);
        else
            scipy_sgesdd_(&jobz, &m, &n, (float *)a, &lda, (float *)s, (float *)u, &ldu, (float *)vt, &ldvt,
                          (float *)work, &lwork, iwork, &info, 1);
    }
    free(work);
    free(iwork);
    return info;
}

int tl_native__linalg_svd_cpu(tl_keyset ks, tl_tensor *A, bool full_matrices, bool compute_uv, const char *driver,
                              tl_tensor **ret0, tl_tensor **ret1, tl_tensor **ret2) {
    (void)ks;
    if (A->ndim < 2)
        return tl_set_error(TL_ERR_RUNTIME, "linalg.svd: The input tensor A must have at least 2 dimensions.");
    if (A->dtype != TL_FLOAT32 && A->dtype != TL_FLOAT64)
        return tl_set_error(TL_ERR_RUNTIME, "linalg.svd: Expected a floating point or complex tensor as input. Got %s",
                            tl_dtype_scalar_name(A->dtype));
    if (driver)
        return tl_set_error(TL_ERR_RUNTIME, "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA "
                                            "inputs with cuSOLVER backend.");
    const int64_t nd = A->ndim, m = A->sizes[nd - 2], n = A->sizes[nd - 1], k = m < n ? m : n;
    if (m > TL_LAPACK_INT_MAX || n > TL_LAPACK_INT_MAX)
        return tl_set_error(TL_ERR_RUNTIME, "linalg.svd: matrix too large for the 32-bit LAPACK");
    int64_t batch = 1;
    for (int64_t d = 0; d < nd - 2; d++) batch *= A->sizes[d];
    const int64_t ur = m, uc = full_matrices ? m : k, vr = full_matrices ? n : k, vc = n;
    int64_t shape[TL_MAX_DIMS];
    memcpy(shape, A->sizes, sizeof(int64_t) * (size_t)(nd - 2));
    tl_tensor *U = NULL, *S = NULL, *Vh = NULL, *a = NULL;
    shape[nd - 2] = k;
    S = tl_empty(nd - 1, shape, A->dtype, TL_CPU);
    if (compute_uv) {
        shape[nd - 2] = ur, shape[nd - 1] = uc;
        U = tl_empty(nd, shape, A->dtype, TL_CPU);
        shape[nd - 2] = vr, shape[nd - 1] = vc;
        Vh = tl_empty(nd, shape, A->dtype, TL_CPU);
    } else {  /* PyTorch: empty U and Vh */
        const int64_t zero = 0;
        U = tl_empty(1, &zero, A->dtype, TL_CPU);
        Vh = tl_empty(1, &zero, A->dtype, TL_CPU);
    }
    a = tl_clone(A);   /* row-major copy = the column-major transpose gesdd destroys */
    int rc = (!S || !U || !Vh || !a) ? -1 : 0;
    if (rc == 0 && a && !tl_tensor_is_contiguous(a)) {
        tl_tensor *c = tl_contiguous(a);
        tl_tensor_release(a);
        a = c;
        if (!a) rc = -1;
    }
    const size_t isz = (size_t)tl__itemsize(A->dtype);
    for (int64_t b = 0; rc == 0 && b < batch && k > 0; b++) {
        char *ab = tl__data(a) + (size_t)(b * m * n) * isz;
        char *sb = tl__data(S) + (size_t)(b * k) * isz;
        char *ub = compute_uv ? tl__data(U) + (size_t)(b * ur * uc) * isz : NULL;
        char *vb = compute_uv ? tl__data(Vh) + (size_t)(b * vr * vc) * isz : NULL;
        /* column-major n x m: gesdd's U (n x vr) is Vh, its VT (uc x m) is U */
        int info = gesdd_one(A->dtype, compute_uv ? (full_matrices ? 'A' : 'S') : 'N', (int)n, (int)m, ab, sb, vb,
                             (int)(n > 1 ? n : 1), ub, (int)(uc > 1 ? uc : 1));
        if (info == -1000) rc = tl_set_error(TL_ERR_MEMORY, "linalg.svd: out of memory");
        else if (info > 0)
            rc = tl_set_error(TL_ERR_RUNTIME, "linalg.svd: The algorithm failed to converge because the input matrix "
                                              "is ill-conditioned or has too many repeated singular values (error "
                                              "code: %d).", info - 1);
        else if (info < 0) rc = tl_set_error(TL_ERR_RUNTIME, "linalg.svd: LAPACK argument %d was invalid", -info);
    }
    if (rc == 0 && compute_uv && k == 0) {   /* empty matrices: full_matrices U/Vh are identities */
        if (U->numel && tl_zero_(U)) rc = -1;
        if (rc == 0 && Vh->numel && tl_zero_(Vh)) rc = -1;
        for (int64_t b = 0; rc == 0 && full_matrices && b < batch; b++) {
            for (int64_t i = 0; i < ur; i++) {
                char *p = tl__data(U) + (size_t)(b * ur * uc + i * uc + i) * isz;
                if (A->dtype == TL_FLOAT64) *(double *)p = 1.0; else *(float *)p = 1.0f;
            }
            for (int64_t i = 0; i < vr; i++) {
                char *p = tl__data(Vh) + (size_t)(b * vr * vc + i * vc + i) * isz;
                if (A->dtype == TL_FLOAT64) *(double *)p = 1.0; else *(float *)p = 1.0f;
            }
        }
    }
    tl_tensor_release(a);
    if (rc) {
        tl_tensor_release(U);
        tl_tensor_release(S);
        tl_tensor_release(Vh);
        return -1;
    }
    *ret0 = U, *ret1 = S, *ret2 = Vh;
    return 0;
}

int tl_native_linalg_svd(tl_keyset ks, tl_tensor *A, bool full_matrices, const char *driver, tl_tensor **ret0,
                         tl_tensor **ret1, tl_tensor **ret2) {
    (void)ks;
    return tl_ops__linalg_svd(A, full_matrices, true, driver, ret0, ret1, ret2);
}

/* _linalg_svd.U (PyTorch: the structured out= of _linalg_svd): the functional
 * results copied into U, S, Vh (each dtype-checked and resized as a structured
 * out=; without compute_uv, U and Vh become empty as the functional's) */
int tl_native__linalg_svd_out(tl_keyset ks, tl_tensor *A, bool full_matrices, bool compute_uv, const char *driver,
                              tl_tensor *U, tl_tensor *S, tl_tensor *Vh, tl_tensor **ret0, tl_tensor **ret1,
                              tl_tensor **ret2) {
    (void)ks;
    tl_tensor *r[3] = {NULL, NULL, NULL}, *outs[3] = {U, S, Vh}, *got[3] = {NULL, NULL, NULL};
    if (tl_ops__linalg_svd(A, full_matrices, compute_uv, driver, &r[0], &r[1], &r[2])) return -1;
    int i = 0;
    for (; i < 3; i++) {
        got[i] = tl_missing_copy_to_out(r[i], outs[i]); /* releases r[i] */
        if (!got[i]) break;
    }
    if (i < 3) {
        for (int j = 0; j < 3; j++) tl_tensor_release(got[j]);
        for (int j = i + 1; j < 3; j++) tl_tensor_release(r[j]);
        return -1;
    }
    *ret0 = got[0];
    *ret1 = got[1];
    *ret2 = got[2];
    return 0;
}

/* linalg_svd.U (CompositeImplicitAutograd): _linalg_svd.U with compute_uv */
int tl_native_linalg_svd_U(tl_keyset ks, tl_tensor *A, bool full_matrices, const char *driver, tl_tensor *U,
                           tl_tensor *S, tl_tensor *Vh, tl_tensor **ret0, tl_tensor **ret1, tl_tensor **ret2) {
    (void)ks;
    return tl_ops__linalg_svd_U(A, full_matrices, true, driver, U, S, Vh, ret0, ret1, ret2);
}

tl_tensor *tl_native_linalg_svdvals(tl_keyset ks, tl_tensor *A, const char *driver) {
    (void)ks;
    tl_tensor *U = NULL, *S = NULL, *Vh = NULL;
    /* U and Vh only when the backward needs them (PyTorch's _may_require_fw_or_bw_grad) */
    if (tl_ops__linalg_svd(A, false, tl_autograd_requires_grad(A) != 0, driver, &U, &S, &Vh)) return NULL;
    tl_tensor_release(U);
    tl_tensor_release(Vh);
    return S;
}

tl_tensor *tl_native_linalg_svdvals_out(tl_keyset ks, tl_tensor *A, const char *driver, tl_tensor *out) {
    /* CompositeImplicit: PyTorch's decomposition meets _linalg_svd.U's out= check */
    tl_tensor *ins[2] = {A, out};
    if (tl_autograd_check_out("_linalg_svd", ins, 2)) return NULL;
    return tl_missing_copy_to_out(tl_native_linalg_svdvals(ks, A, driver), out);
}

/* ------------------------------------------------------------ matrix norms */

/* PyTorch's _linalg_matrix_norm_checks: A a float matrix, dim two different
 * dims (wrapped in place), dtype floating */
static int matrix_norm_checks(const tl_tensor *A, const int64_t *dim, int64_t dim_len, tl_dtype dtype,
                              bool low_precision, int64_t wrapped[2]) {
    if (A->ndim < 2)
        return tl_set_error(TL_ERR_RUNTIME, "linalg.matrix_norm: The input tensor A must have at least 2 dimensions.");
    if (!tl__dtype_is_floating(A->dtype))
        return tl_set_error(TL_ERR_RUNTIME, "linalg.matrix_norm: Expected a floating point or complex tensor as input. "
                                            "Got %s", tl_dtype_scalar_name(A->dtype));
    if (!low_precision && (A->dtype == TL_FLOAT16 || A->dtype == TL_BFLOAT16))
        return tl_set_error(TL_ERR_RUNTIME, "linalg.matrix_norm: Low precision dtypes not supported. Got %s",
                            tl_dtype_scalar_name(A->dtype));
    if (dim_len != 2) {  /* printed as PyTorch prints a std::vector: "0 1 1" */
        char b[256];
        size_t o = 0;
        b[0] = '\0';
        for (int64_t i = 0; i < dim_len && o + 24 < sizeof b; i++)
            o += (size_t)snprintf(b + o, sizeof b - o, i ? " %lld" : "%lld", (long long)dim[i]);
        return tl_set_error(TL_ERR_RUNTIME, "linalg.matrix_norm: dim must be a 2-tuple. Got %s", b);
    }
    for (int i = 0; i < 2; i++)
        if ((wrapped[i] = tl__wrap_dim(dim[i], A->ndim, 0)) < 0) return -1;
    if (wrapped[0] == wrapped[1])
        return tl_set_error(TL_ERR_RUNTIME, "linalg.matrix_norm: dims must be different. Got (%lld, %lld)",
                            (long long)wrapped[0], (long long)wrapped[1]);
    if (dtype != TL_DTYPE_UNDEFINED && !tl__dtype_is_floating(dtype))
        return tl_set_error(TL_ERR_RUNTIME, "linalg.matrix_norm: dtype should be floating point or complex, but got %s",
                            tl_dtype_scalar_name(dtype));
    return 0;
}

/* f(svdvals(A with dims d0, d1 moved last)) reduced over the last dim, kept
 * in place with keepdim: mode 0 sum (nuc), 1 amax (2), 2 amin (-2) */
static tl_tensor *svdvals_reduce(tl_tensor *A, const int64_t d[2], bool keepdim, tl_dtype dtype, int mode) {
    const int64_t nd = A->ndim;
    int64_t perm[TL_MAX_DIMS], inv[TL_MAX_DIMS], j = 0;
    for (int64_t i = 0; i < nd; i++)
        if (i != d[0] && i != d[1]) perm[j++] = i;
    perm[j++] = d[0];
    perm[j++] = d[1];
    for (int64_t i = 0; i < nd; i++) inv[perm[i]] = i;
    tl_tensor *a = dtype != TL_DTYPE_UNDEFINED ? tl_ops_to_dtype(A, dtype, false, false, -1) : (tl_tensor_retain(A), A);
    if (!a) return NULL;
    tl_tensor *p = tl_ops_permute(a, perm, nd);
    tl_tensor_release(a);
    if (!p) return NULL;
    tl_tensor *s = tl_ops_linalg_svdvals(p, NULL);
    tl_tensor_release(p);
    if (!s) return NULL;
    const int64_t last = -1;
    if (s->ndim && s->sizes[s->ndim - 1] == 0) mode = 0;  /* no singular values: 0, as PyTorch */
    tl_tensor *r = mode == 0 ? tl_ops_sum_dim_IntList(s, &last, 1, keepdim, TL_DTYPE_UNDEFINED)
                 : mode == 1 ? tl_ops_amax(s, &last, 1, keepdim) : tl_ops_amin(s, &last, 1, keepdim);
    tl_tensor_release(s);
    if (!r || !keepdim) return r;
    tl_tensor *u = tl_ops_unsqueeze(r, -1);  /* [..., 1, 1] -> back to the dims' places */
    tl_tensor_release(r);
    if (!u) return NULL;
    tl_tensor *q = tl_ops_permute(u, inv, nd);
    tl_tensor_release(u);
    return q;
}

tl_tensor *tl_native_linalg_matrix_norm(tl_keyset ks, tl_tensor *A, tl_scalar ord, const int64_t *dim, int64_t dim_len,
                                        bool keepdim, tl_dtype dtype) {
    (void)ks;
    const double o = ord.kind == TL_SCALAR_DOUBLE ? ord.d : (double)ord.i, ao = fabs(o);
    if (!(ao == 2.0 || ao == 1.0 || isinf(ao))) {
        tl_set_error(TL_ERR_RUNTIME, "linalg.matrix_norm: Order %g not supported.", o);
        return NULL;
    }
    int64_t d[2];
    if (matrix_norm_checks(A, dim, dim_len, dtype, ao != 2.0, d)) return NULL;
    if (ao == 2.0) return svdvals_reduce(A, d, keepdim, dtype, o > 0 ? 1 : 2);
    /* 1 / -1: max / min column sum of |A|; inf / -inf: the same over rows */
    if (isinf(ao)) {
        int64_t t = d[0];
        d[0] = d[1], d[1] = t;
    }
    if (!keepdim && d[0] < d[1]) d[1]--;
    tl_tensor *v = tl_ops_linalg_vector_norm(A, tl_scalar_from_double(1.0), &d[0], 1, keepdim, dtype);
    if (!v) return NULL;
    if (o > 0 && v->sizes[d[1]] == 0) {
        /* the max of no column sums: PyTorch gives zeros, outside the graph */
        int64_t shape[TL_MAX_DIMS], n = 0;
        for (int64_t i = 0; i < v->ndim; i++)
            if (i != d[1] || keepdim) shape[n++] = i == d[1] ? 1 : v->sizes[i];
        tl_tensor *z = tl_ops_zeros(shape, n, v->dtype, -1, (int)tl__device_of(v), false, false);
        tl_tensor_release(v);
        return z;
    }
    tl_tensor *r = o > 0 ? tl_ops_amax(v, &d[1], 1, keepdim) : tl_ops_amin(v, &d[1], 1, keepdim);
    tl_tensor_release(v);
    return r;
}

tl_tensor *tl_native_linalg_matrix_norm_str_ord(tl_keyset ks, tl_tensor *A, const char *ord, const int64_t *dim,
                                                int64_t dim_len, bool keepdim, tl_dtype dtype) {
    (void)ks;
    const bool fro = strcmp(ord, "fro") == 0, nuc = strcmp(ord, "nuc") == 0;
    if (!fro && !nuc) {
        tl_set_error(TL_ERR_RUNTIME, "linalg.matrix_norm: Order %s not supported.", ord);
        return NULL;
    }
    int64_t d[2];
    if (matrix_norm_checks(A, dim, dim_len, dtype, !nuc, d)) return NULL;
    if (fro) return tl_ops_linalg_vector_norm(A, tl_scalar_from_int(2), dim, dim_len, keepdim, dtype);
    return svdvals_reduce(A, d, keepdim, dtype, 0);
}

tl_tensor *tl_native_linalg_matrix_norm_out(tl_keyset ks, tl_tensor *A, tl_scalar ord, const int64_t *dim,
                                            int64_t dim_len, bool keepdim, tl_dtype dtype, tl_tensor *out) {
    if (tl_autograd_check_inplace(out)) return NULL; /* PyTorch: out written in place (copy_) */
    return tl_missing_copy_to_out(tl_native_linalg_matrix_norm(ks, A, ord, dim, dim_len, keepdim, dtype), out);
}

tl_tensor *tl_native_linalg_matrix_norm_str_ord_out(tl_keyset ks, tl_tensor *A, const char *ord, const int64_t *dim,
                                                    int64_t dim_len, bool keepdim, tl_dtype dtype, tl_tensor *out) {
    if (tl_autograd_check_inplace(out)) return NULL; /* PyTorch: out written in place (copy_) */
    return tl_missing_copy_to_out(tl_native_linalg_matrix_norm_str_ord(ks, A, ord, dim, dim_len, keepdim, dtype), out);
}

/* linalg_norm: a matrix norm when ord is given and the reduction is over two
 * dims (dim of length 2, or a 2-D input without dim), else a vector norm */
static int norm_dim_checks(const tl_tensor *X, const int64_t *dim, int64_t dim_len, bool ord_given) {
    char b[256];
    if (dim && dim_len != 1 && dim_len != 2)
        return tl_set_error(TL_ERR_RUNTIME, "linalg.norm: If dim is specified, it must be of length 1 or 2. Got %s",
                            si_shape_str(b, sizeof b, dim_len, dim));
    if (!dim && ord_given && X->ndim != 1 && X->ndim != 2)
        return tl_set_error(TL_ERR_RUNTIME, "linalg.norm: If dim is not specified but ord is, the input must be 1D or "
                                            "2D. Got %lldD.", (long long)X->ndim);
    return 0;
}

tl_tensor *tl_native_linalg_norm(tl_keyset ks, tl_tensor *X, const tl_scalar *ord, const int64_t *dim, int64_t dim_len,
                                 bool keepdim, tl_dtype dtype) {
    (void)ks;
    if (norm_dim_checks(X, dim, dim_len, ord != NULL)) return NULL;
    if (ord && ((dim && dim_len == 2) || (!dim && X->ndim == 2))) {
        const int64_t d01[2] = {0, 1};
        return tl_ops_linalg_matrix_norm(X, *ord, dim ? dim : d01, 2, keepdim, dtype);
    }
    return tl_ops_linalg_vector_norm(X, ord ? *ord : tl_scalar_from_double(2.0), dim, dim ? dim_len : 0, keepdim,
                                     dtype);
}

tl_tensor *tl_native_linalg_norm_ord_str(tl_keyset ks, tl_tensor *X, const char *ord, const int64_t *dim,
                                         int64_t dim_len, bool keepdim, tl_dtype dtype) {
    (void)ks;
    if (norm_dim_checks(X, dim, dim_len, true)) return NULL;
    const int64_t d01[2] = {0, 1};
    return tl_ops_linalg_matrix_norm_str_ord(X, ord, dim ? dim : d01, dim ? dim_len : 2, keepdim, dtype);
}

tl_tensor *tl_native_linalg_norm_out(tl_keyset ks, tl_tensor *X, const tl_scalar *ord, const int64_t *dim,
                                     int64_t dim_len, bool keepdim, tl_dtype dtype, tl_tensor *out) {
    if (tl_autograd_check_inplace(out)) return NULL; /* PyTorch: out written in place (copy_) */
    return tl_missing_copy_to_out(tl_native_linalg_norm(ks, X, ord, dim, dim_len, keepdim, dtype), out);
}

tl_tensor *tl_native_linalg_norm_ord_str_out(tl_keyset ks, tl_tensor *X, const char *ord, const int64_t *dim,
                                             int64_t dim_len, bool keepdim, tl_dtype dtype, tl_tensor *out) {
    if (tl_autograd_check_inplace(out)) return NULL; /* PyTorch: out written in place (copy_) */
    return tl_missing_copy_to_out(tl_native_linalg_norm_ord_str(ks, X, ord, dim, dim_len, keepdim, dtype), out);
}
