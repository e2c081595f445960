/* linalg.eig / linalg.eigvals (aten/src/ATen/native/BatchLinearAlgebra.cpp)
 * through LAPACK ?geev of the scipy-openblas32 wheel, one call per matrix.
 *
 * Real inputs (float32 / float64) go to s/dgeev, which returns the
 * eigenvalues as wr + i wi and real eigenvector columns; a complex conjugate
 * pair (wi != 0, the one with positive imaginary part first) shares two
 * columns, v_j = VR_j + i VR_j+1 and v_j+1 = VR_j - i VR_j+1, expanded here as
 * PyTorch's linalg_eig_make_complex_eigenvectors. Complex inputs go to
 * c/zgeev. The results are complex (float32 -> complex64, float64 ->
 * complex128), eigenvectors of unit 2-norm with their largest component real
 * (LAPACK's normalisation, which PyTorch returns as it is), Fortran-strided as
 * PyTorch's. linalg_eig refuses non-finite input; eigvals does not, as PyTorch. */
#include <complex.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "linalg_lapack.h"
#include "tl_autograd.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/_linalg_eigvals.h"
#include "ops/linalg_eig.h"
#include "ops/linalg_eigvals.h"
#include "ops/transpose.h"
#include "tl_structured.h"

extern void scipy_sgeev_(const char *jobvl, const char *jobvr, const int *n, float *a, const int *lda, float *wr,
                         float *wi, float *vl, const int *ldvl, float *vr, const int *ldvr, float *work,
                         const int *lwork, int *info, size_t jobvl_len, size_t jobvr_len);
extern void scipy_dgeev_(const char *jobvl, const char *jobvr, const int *n, double *a, const int *lda, double *wr,
                         double *wi, double *vl, const int *ldvl, double *vr, const int *ldvr, double *work,
                         const int *lwork, int *info, size_t jobvl_len, size_t jobvr_len);
extern void scipy_cgeev_(const char *jobvl, const char *jobvr, const int *n, float _Complex *a, const int *lda,
                         float _Complex *w, float _Complex *vl, const int *ldvl, float _Complex *vr, const int *ldvr,
                         float _Complex *work, const int *lwork, float *rwork, int *info, size_t jobvl_len,
                         size_t jobvr_len);
extern void scipy_zgeev_(const char *jobvl, const char *jobvr, const int *n, double _Complex *a, const int *lda,
                         double _Complex *w, double _Complex *vl, const int *ldvl, double _Complex *vr,
                         const int *ldvr, double _Complex *work, const int *lwork, double *rwork, int *info,
                         size_t jobvl_len, size_t jobvr_len);

/* ------------------------------------------------------------ one ?geev call */

typedef struct {
    tl_tensor *a, *w, *v, *info;   /* a: column-major input copy; v: NULL without eigenvectors */
    int n;
    int failed;                    /* out of memory in some range */
} geev_ctx;

/* ?geev on a (n x n, column-major, overwritten); w receives n eigenvalues
 * (wr/wi for real types), vr n x n eigenvectors when jobvr == 'V'. lwork -1:
 * the workspace query, its size in *work. */
static void geev_call(tl_dtype dt, char jobvr, int n, void *a, void *wr, void *wi, void *vr, void *work, int lwork,
                      void *rwork, int *info) {
    const char jobvl = 'N';
    const int lda = n > 1 ? n : 1, one = 1, ldvr = jobvr == 'V' ? lda : 1;
    switch (dt) {
    case TL_FLOAT32:
        scipy_sgeev_(&jobvl, &jobvr, &n, a, &lda, wr, wi, NULL, &one, vr, &ldvr, work, &lwork, info, 1, 1);
        break;
    case TL_FLOAT64:
        scipy_dgeev_(&jobvl, &jobvr, &n, a, &lda, wr, wi, NULL, &one, vr, &ldvr, work, &lwork, info, 1, 1);
        break;
    case TL_COMPLEX64:
        scipy_cgeev_(&jobvl, &jobvr, &n, a, &lda, wr, NULL, &one, vr, &ldvr, work, &lwork, rwork, info, 1, 1);
        break;
    default:
        scipy_zgeev_(&jobvl, &jobvr, &n, a, &lda, wr, NULL, &one, vr, &ldvr, work, &lwork, rwork, info, 1, 1);
        break;
    }
}

/* PyTorch's linalg_eig_make_complex_eigenvectors for one matrix: wr/wi the
 * eigenvalues, vr the real columns (column j at vr + j n), out complex
 * column-major; also the complex eigenvalues into w */
#define MAKE_COMPLEX(R, C)                                                                           \
    static void make_complex_##R(int n, const R *wr, const R *wi, const R *vr, C *w, C *out) {       \
        for (int j = 0; j < n; j++) w[j] = wr[j] + wi[j] * (C)I;                                     \
        if (!out) return;                                                                            \
        for (int j = 0; j < n; j++) {                                                                \
            const R *c = vr + (size_t)j * n;                                                         \
            C *o = out + (size_t)j * n;                                                              \
            if (wi[j] == 0 || j + 1 == n) {                                                          \
                for (int i = 0; i < n; i++) o[i] = c[i];                                             \
                continue;                                                                            \
            }                                                                                        \
            const R *c1 = c + n;                                                                     \
            for (int i = 0; i < n; i++) o[i] = c[i] + c1[i] * (C)I, o[n + i] = c[i] - c1[i] * (C)I;  \
            j++;                                                                                     \
        }                                                                                            \
    }
MAKE_COMPLEX(float, float _Complex)
MAKE_COMPLEX(double, double _Complex)

static void geev_range(int64_t b0, int64_t b1, void *vctx) {
    geev_ctx *c = (geev_ctx *)vctx;
    const tl_dtype dt = c->a->dtype;
    const int n = c->n;
    const bool cplx = tl__dtype_is_complex(dt), f32 = dt == TL_FLOAT32 || dt == TL_COMPLEX64;
    const char jobvr = c->v ? 'V' : 'N';
    const size_t rsz = f32 ? sizeof(float) : sizeof(double), asz = (size_t)tl__itemsize(dt);
    const size_t nn = (size_t)n * (size_t)n, csz = (size_t)tl__itemsize(c->w->dtype);
    int info = 0;
    union { float f[4]; double d[2]; } q = {.d = {0, 0}};   /* the workspace query's answer: one element of dt */
    double rq[2] = {0, 0};   /* ?trevc3's query writes rwork(1) */
    geev_call(dt, jobvr, n, NULL, NULL, NULL, NULL, &q, -1, rq, &info);
    const int lq = (int)(f32 ? q.f[0] : q.d[0]), lwork = lq > 1 ? lq : 1;
    /* real types: wr, wi and the real eigenvector columns; complex: rwork (2n) */
    const size_t extra = cplx ? 2 * (size_t)n * rsz : (2 * (size_t)n + (c->v ? nn : 0)) * rsz;
    char *work = (char *)malloc((size_t)lwork * asz + extra);
    if (!work) {
        c->failed = 1;
        return;
    }
    char *ex = work + (size_t)lwork * asz;
    for (int64_t b = b0; b < b1; b++) {
        char *a = tl__data(c->a) + (size_t)b * nn * asz, *w = tl__data(c->w) + (size_t)b * (size_t)n * csz;
        char *v = c->v ? tl__data(c->v) + (size_t)b * nn * csz : NULL;
        int *ib = (int *)tl__data(c->info) + b;
        if (cplx) {
            geev_call(dt, jobvr, n, a, w, NULL, v, work, lwork, ex, ib);
            continue;
        }
        char *wr = ex, *wi = ex + (size_t)n * rsz, *vr = c->v ? ex + 2 * (size_t)n * rsz : NULL;
        geev_call(dt, jobvr, n, a, wr, wi, vr, work, lwork, NULL, ib);
        if (f32) make_complex_float(n, (float *)wr, (float *)wi, (float *)vr, (float _Complex *)w, (float _Complex *)v);
        else make_complex_double(n, (double *)wr, (double *)wi, (double *)vr, (double _Complex *)w,
                                 (double _Complex *)v);
    }
    free(work);
}

/* ------------------------------------------------------------ checks */

/* PyTorch's toComplexType: integral and bool inputs have none */
static int complex_type(const tl_tensor *A, tl_dtype *out) {
    if (!tl__dtype_is_floating(A->dtype) && !tl__dtype_is_complex(A->dtype))
        return tl_set_error(TL_ERR_RUNTIME, "Unknown Complex ScalarType for %s", tl_dtype_scalar_name(A->dtype));
    *out = tl__dtype_is_complex(A->dtype) ? A->dtype : tl_dtype_to_complex(A->dtype);
    return 0;
}

/* AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES of linalg_eig_out_info */
static int check_kernel_dtype(const tl_tensor *A) {
    const tl_dtype dt = A->dtype;
    if (dt == TL_FLOAT32 || dt == TL_FLOAT64 || dt == TL_COMPLEX64 || dt == TL_COMPLEX128) return 0;
    return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"linalg_eig_out_cpu\" not implemented for '%s'",
                        tl_dtype_scalar_name(dt));
}

/* the real values of a contiguous float / complex buffer are all finite */
static bool all_finite(const tl_tensor *t) {
    const int64_t m = t->numel * (tl__dtype_is_complex(t->dtype) ? 2 : 1);
    const bool f32 = t->dtype == TL_FLOAT32 || t->dtype == TL_COMPLEX64;
    const char *p = tl__data(t);
    for (int64_t i = 0; i < m; i++)
        if (!isfinite(f32 ? (double)((const float *)p)[i] : ((const double *)p)[i])) return false;
    return true;
}

/* ------------------------------------------------------------ the kernels */

/* eigenvalues [..., n] (and eigenvectors [..., n, n], Fortran-strided) of A;
 * api names the operator in LAPACK errors */
static int eig_compute(tl_tensor *A, bool compute_v, const char *api, tl_tensor **values, tl_tensor **vectors) {
    tl_dtype cdt;
    if (complex_type(A, &cdt)) return -1;
    const int64_t nd = A->ndim;
    const tl_device_type dev = tl_tensor_device(A) == TL_META ? TL_META : TL_CPU;
    tl_tensor *w = tl_empty(nd - 1, A->sizes, cdt, dev), *V = NULL;
    if (compute_v) {   /* V^T row-major: V column-major */
        V = tl_empty(nd, A->sizes, cdt, dev);
        V = V ? tl_lapack_mT_owned(V) : NULL;
    }
    if (!w || (compute_v && !V)) goto fail;
    if (dev == TL_CPU && A->numel > 0) {
        tl_tensor *a = tl_lapack_colmajor_copy(A), *info = tl_zeros(nd - 2, A->sizes, TL_INT32, TL_CPU);
        tl_tensor *vb = V ? tl_ops_transpose_int(V, -2, -1) : NULL;   /* the contiguous buffer of V */
        geev_ctx c = {a, w, vb, info, (int)A->sizes[nd - 1], 0};
        int rc = !a || !info || (V && !vb) ? -1 : 0;
        if (rc == 0) tl_parallel_for(tl_lapack_batch_of(A), tl_lapack_batch_grain(c.n), geev_range, &c);
        if (rc == 0 && c.failed) rc = tl_set_error(TL_ERR_MEMORY, "%s: out of memory", api);
        if (rc == 0) rc = tl_lapack_check_errors(info, api, nd == 2);
        tl_tensor_release(a), tl_tensor_release(info), tl_tensor_release(vb);
        if (rc) goto fail;
    }
    *values = w;
    if (vectors) *vectors = V;
    else tl_tensor_release(V);
    return 0;
fail:
    tl_tensor_release(w), tl_tensor_release(V);
    return -1;
}

/* PyTorch's linalg_eig_out checks, in its order */
static int eig_checks(tl_tensor *A) {
    tl_dtype cdt;
    if (complex_type(A, &cdt)) return -1;
    if (tl_tensor_device(A) != TL_META && A->numel > 0 &&
        (tl__dtype_is_floating(A->dtype) || tl__dtype_is_complex(A->dtype))) {
        tl_tensor *c = tl_contiguous(A);
        if (!c) return -1;
        /* half types: finite exactly when their float32 values are */
        tl_tensor *f = tl_to_dtype(c, tl__itemsize(c->dtype) == 2 ? TL_FLOAT32 : c->dtype, 0);
        const bool ok = f && all_finite(f);
        tl_tensor_release(c), tl_tensor_release(f);
        if (!f) return -1;
        if (!ok) return tl_set_error(TL_ERR_RUNTIME, "torch.linalg.eig: input tensor should not contain infs or NaNs.");
    }
    return tl_lapack_check_square(A, "linalg.eig", "A") || check_kernel_dtype(A) ? -1 : 0;
}

int tl_native_linalg_eig(tl_keyset ks, tl_tensor *self, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    if (eig_checks(self)) return -1;
    return eig_compute(self, true, "torch.linalg.eig", ret0, ret1);
}

tl_tensor *tl_native__linalg_eigvals(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    tl_dtype cdt;
    if (complex_type(self, &cdt) || tl_lapack_check_square(self, "linalg.eigvals", "A") || check_kernel_dtype(self))
        return NULL;
    tl_tensor *w = NULL;
    return eig_compute(self, false, "torch.linalg.eigvals", &w, NULL) ? NULL : w;
}

/* eigenvectors only when the backward needs them (PyTorch's _may_require_fw_or_bw_grad) */
tl_tensor *tl_native_linalg_eigvals(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    if (!tl_autograd_requires_grad(self)) return tl_ops__linalg_eigvals(self);
    tl_tensor *w = NULL, *V = NULL;
    if (tl_ops_linalg_eig(self, &w, &V)) return NULL;
    tl_tensor_release(V);
    return w;
}

/* PyTorch's checkLinalgCompatibleDtype: the result type must cast safely to out's */
static int check_out_dtype(const char *api, const tl_tensor *out, tl_dtype result, const char *name) {
    if (tl_can_cast(result, out->dtype)) return 0;
    return tl_set_error(TL_ERR_RUNTIME, "%s: Expected %s to be safely castable from %s dtype, but got %s with dtype %s",
                        api, name, tl_dtype_scalar_name(result), name, tl_dtype_scalar_name(out->dtype));
}

/* resize_output + copy of a computed result into out (its version bumped) */
static int copy_out(tl_tensor *out, tl_tensor *r) {
    if (tl_structured_resize_out(out, r->ndim, r->sizes, TL_DTYPE_UNDEFINED) || tl_copy_(out, r)) return -1;
    tl_tensor_bump_version(out);
    return 0;
}

int tl_native_linalg_eig_out(tl_keyset ks, tl_tensor *self, tl_tensor *eigenvalues, tl_tensor *eigenvectors,
                             tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    tl_dtype cdt;
    if (complex_type(self, &cdt) || eig_checks(self) ||
        check_out_dtype("torch.linalg.eig", eigenvalues, cdt, "eigenvalues") ||
        check_out_dtype("torch.linalg.eig", eigenvectors, cdt, "eigenvectors"))
        return -1;
    tl_tensor *w = NULL, *V = NULL;
    if (eig_compute(self, true, "torch.linalg.eig", &w, &V)) return -1;
    const int rc = copy_out(eigenvalues, w) || copy_out(eigenvectors, V) ? -1 : 0;
    tl_tensor_release(w), tl_tensor_release(V);
    if (rc) return -1;
    tl_tensor_retain(eigenvalues), tl_tensor_retain(eigenvectors);
    *ret0 = eigenvalues, *ret1 = eigenvectors;
    return 0;
}

tl_tensor *tl_native_linalg_eigvals_out(tl_keyset ks, tl_tensor *self, tl_tensor *out) {
    (void)ks;
    tl_dtype cdt;
    if (complex_type(self, &cdt) || tl_lapack_check_square(self, "linalg.eigvals", "A") ||
        check_out_dtype("torch.linalg.eigvals", out, cdt, "eigenvalues") || check_kernel_dtype(self))
        return NULL;
    tl_tensor *w = NULL;
    if (eig_compute(self, false, "torch.linalg.eigvals", &w, NULL)) return NULL;
    const int rc = copy_out(out, w);
    tl_tensor_release(w);
    if (rc) return NULL;
    tl_tensor_retain(out);
    return out;
}
