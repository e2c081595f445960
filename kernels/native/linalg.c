/* Matrix products (docs/LINALG.md): mm, bmm, addmm, baddbmm (structured:
 * meta + impl), mv, dot, and the composites matmul, linear, outer / ger.
 *
 * Every product goes through one engine, gemm_into: C = beta*C + alpha*(A @ B)
 * over a batch, where A, B, C are views of the operands as (batched)
 * matrices ("roles": a 1-D vector is a 1xK row or a Kx1 column).
 *   - float32 / float64: the vendor BLAS (tl_blas.h). A transposed or stepped
 *     operand is passed with the transpose flag and its leading dimension, as
 *     PyTorch does; only a layout BLAS cannot express is copied. A column-major
 *     output is computed as C^T = B^T A^T in place.
 *   - float16 / bfloat16: through float32 (inputs converted, one rounding at
 *     the end), like PyTorch's CPU kernels that accumulate in float.
 *   - integers (and K == 0, and sizes beyond the 32-bit BLAS integer): the C
 *     loop of kernels/cpu/mm_kernel.c in int64 / float / double; integer
 *     results wrap like PyTorch's (wrapping arithmetic commutes with the
 *     final narrowing cast).
 *   - complex64 / complex128: the same C loop in complex128 (no complex BLAS
 *     binding yet), rounded once into C.
 * Like PyTorch's addmm, beta == 0 ignores C's contents (NaN included). */
#include <complex.h>
#include <string.h>

#include "tl_autograd.h"
#include "tl_blas.h"
#include "tl_error.h"
#include "tl_internal.h"
#include "tl_kernel.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/_unsafe_view.h"
#include "ops/add.h"
#include "ops/addmm.h"
#include "ops/baddbmm.h"
#include "ops/bmm.h"
#include "ops/contiguous.h"
#include "ops/copy.h"
#include "ops/dot.h"
#include "ops/expand.h"
#include "ops/ger.h"
#include "ops/linear.h"
#include "ops/matmul.h"
#include "ops/mm.h"
#include "ops/mul.h"
#include "ops/mv.h"
#include "ops/outer.h"
#include "ops/reshape.h"
#include "ops/squeeze.h"
#include "ops/t.h"
#include "ops/transpose.h"
#include "ops/unsqueeze.h"
#include "ops/view.h"
#include "tl_structured.h"
#include "tl_tensor.h"
#include "tl_ufunc.h"

/* ------------------------------------------------------------------ */
/* operands                                                            */

typedef enum { ROLE_ROW, ROLE_COL, ROLE_MAT, ROLE_BATCH, ROLE_ONE } mat_role;

typedef struct {
    char *p;                         /* first element */
    int64_t rows, cols, rs, cs, bs;  /* element strides: row, column, batch */
} mat;

/* t seen as a (batch of) rows x cols matrix; ROLE_ONE: a 0-dim result as 1x1 */
static mat mat_of(tl_tensor *t, mat_role role) {
    const int64_t *sz = tl_tensor_sizes(t), *st = tl_tensor_strides(t);
    mat m = {(char *)tl_tensor_data_ptr(t), 1, 1, 1, 1, 0};
    switch (role) {
    case ROLE_ROW: m.cols = sz[0], m.cs = st[0]; break;
    case ROLE_COL: m.rows = sz[0], m.rs = st[0]; break;
    case ROLE_MAT: m.rows = sz[0], m.cols = sz[1], m.rs = st[0], m.cs = st[1]; break;
    case ROLE_BATCH: m.rows = sz[1], m.cols = sz[2], m.bs = st[0], m.rs = st[1], m.cs = st[2]; break;
    case ROLE_ONE: break;
    }
    return m;
}

static int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }

/* Can BLAS read m as it is? Row-major (NoTrans, ld = row stride) or
 * column-major (Trans, ld = column stride); a stride of a size-1 dimension
 * does not matter, so it is chosen to fit. The ld must be a valid BLAS ld
 * (>= the contiguous extent, >= 1) and fit the 32-bit BLAS integer. */
static bool blas_layout(const mat *m, bool *trans, int64_t *ld) {
    const int64_t rs = m->rows == 1 ? imax(1, m->cols) : m->rs;
    if ((m->cols == 1 || m->cs == 1) && rs >= imax(1, m->cols) && rs <= TL_BLAS_INT_MAX) {
        *trans = false, *ld = rs;
        return true;
    }
    const int64_t cs = m->cols == 1 ? imax(1, m->rows) : m->cs;
    if ((m->rows == 1 || m->rs == 1) && cs >= imax(1, m->rows) && cs <= TL_BLAS_INT_MAX) {
        *trans = true, *ld = cs;
        return true;
    }
    return false;
}

static bool scalar_is_zero(tl_scalar s) {
    if (s.kind == TL_SCALAR_COMPLEX) return s.d == 0.0 && s.im == 0.0;
    return s.kind == TL_SCALAR_DOUBLE ? s.d == 0.0 : s.i == 0;
}
static double scalar_f64(tl_scalar s) {
    return s.kind == TL_SCALAR_DOUBLE || s.kind == TL_SCALAR_COMPLEX ? s.d : (double)s.i;
}
static double _Complex scalar_c128(tl_scalar s) {
    return s.kind == TL_SCALAR_COMPLEX ? CMPLX(s.d, s.im) : scalar_f64(s);
}
/* PyTorch converts alpha / beta to an integer result's type: truncation */
static int64_t scalar_i64(tl_scalar s) { return s.kind == TL_SCALAR_DOUBLE ? (int64_t)s.d : s.i; }

static bool is_blas_dtype(tl_dtype dt) {
    return dt == TL_FLOAT32 || dt == TL_FLOAT64 || dt == TL_COMPLEX64 || dt == TL_COMPLEX128;
}
static bool is_half(tl_dtype dt) { return dt == TL_FLOAT16 || dt == TL_BFLOAT16; }

/* ------------------------------------------------------------------ */
/* BLAS path (float32 / float64 / complex64 / complex128, K > 0)          */

/* operand *t (role r) readable by BLAS: itself, or a contiguous copy kept in *own */
static int blas_operand(tl_tensor *t, mat_role r, tl_tensor **own, mat *m, bool *trans, int64_t *ld) {
    *m = mat_of(t, r);
    if (blas_layout(m, trans, ld) && m->bs <= TL_BLAS_INT_MAX) return 0;
    if (!(*own = tl_contiguous(t))) return -1;
    *m = mat_of(*own, r);
    blas_layout(m, trans, ld); /* contiguous: always row-major */
    return 0;
}

static int gemm_blas(tl_tensor *c, mat_role rc, tl_tensor *a, mat_role ra, tl_tensor *b, mat_role rb, int64_t nb,
                     tl_scalar beta, tl_scalar alpha) {
    const tl_dtype dt = tl_tensor_dtype(c);
    tl_tensor *ao = NULL, *bo = NULL, *co = NULL;
    int rc_ = -1;
    mat A, B, C;
    bool ta = false, tb = false, tc = false;   /* set by blas_operand / blas_layout (GCC cannot see it) */
    int64_t lda = 0, ldb = 0, ldc = 0;
    if (blas_operand(a, ra, &ao, &A, &ta, &lda) != 0 || blas_operand(b, rb, &bo, &B, &tb, &ldb) != 0) goto done;
    C = mat_of(c, rc);
    /* the output is written in place when BLAS can address it and it shares
     * no memory with an input; else through a dense temporary */
    if (!blas_layout(&C, &tc, &ldc) || C.bs > TL_BLAS_INT_MAX || (nb > 1 && C.bs == 0) ||
        tl_tensor_is_alias_of(c, a) || tl_tensor_is_alias_of(c, b)) {
        if (!(co = tl_empty(tl_tensor_ndim(c), tl_tensor_sizes(c), dt, TL_CPU))) goto done;
        if (!scalar_is_zero(beta) && tl__copy_impl(co, c) != 0) goto done;
        C = mat_of(co, rc);
        if (!blas_layout(&C, &tc, &ldc)) {
            tl_set_error(TL_ERR_RUNTIME, "gemm: unexpected output layout");
            goto done;
        }
    }
    const int64_t M = A.rows, K = A.cols, N = B.cols;
    if (!tc)
        tl_blas_gemm_complex(dt, ta, tb, M, N, K, scalar_c128(alpha), A.p, lda, A.bs, B.p, ldb, B.bs,
                             scalar_c128(beta), C.p, ldc, C.bs, nb);
    else /* column-major C: C^T = B^T @ A^T, row-major */
        tl_blas_gemm_complex(dt, !tb, !ta, N, M, K, scalar_c128(alpha), B.p, ldb, B.bs, A.p, lda, A.bs,
                             scalar_c128(beta), C.p, ldc, C.bs, nb);
    rc_ = co ? tl__copy_impl(c, co) : 0;
done:
    tl_tensor_release(ao);
    tl_tensor_release(bo);
    tl_tensor_release(co);
    return rc_;
}

/* ------------------------------------------------------------------ */
/* C loop path: integers, K == 0, sizes beyond the BLAS integer         */

TL_DEFINE_STUB(tl_mm_gemm_stub, tl_mm_gemm_table)

typedef struct {
    tl_mm_gemm_fn fn;
    int64_t N, K;
    const char *A, *B;
    char *C;
} mm_ctx;

static void mm_rows(int64_t b, int64_t e, void *ctx) {
    const mm_ctx *c = ctx;
    c->fn(b, e, c->N, c->K, c->A, c->B, c->C);
}

/* r = beta * o + alpha * r over n elements of the compute dtype ct (o NULL: beta is 0) */
static void axpby(tl_dtype ct, int64_t n, void *r_, const void *o_, tl_scalar beta, tl_scalar alpha) {
    if (ct == TL_COMPLEX128) {
        double _Complex *r = r_, a = scalar_c128(alpha), b = scalar_c128(beta);
        const double _Complex *o = o_;
        for (int64_t i = 0; i < n; i++) r[i] = (o ? b * o[i] : 0) + a * r[i];
    } else if (ct == TL_INT64) { /* unsigned: wrapping is defined */
        uint64_t *r = r_, a = (uint64_t)scalar_i64(alpha), b = (uint64_t)scalar_i64(beta);
        const uint64_t *o = o_;
        for (int64_t i = 0; i < n; i++) r[i] = (o ? b * o[i] : 0) + a * r[i];
    } else if (ct == TL_FLOAT64) {
        double *r = r_, a = scalar_f64(alpha), b = scalar_f64(beta);
        const double *o = o_;
        for (int64_t i = 0; i < n; i++) r[i] = (o ? b * o[i] : 0) + a * r[i];
    } else {
        float *r = r_, a = (float)scalar_f64(alpha), b = (float)scalar_f64(beta);
        const float *o = o_;
        for (int64_t i = 0; i < n; i++) r[i] = (o ? b * o[i] : 0) + a * r[i];
    }
}

static int gemm_loop(tl_tensor *c, tl_tensor *a, tl_tensor *b, int64_t nb, int64_t M, int64_t N, int64_t K,
                     tl_scalar beta, tl_scalar alpha) {
    const tl_dtype dt = tl_tensor_dtype(c);
    /* complex: a complex128 loop (no complex BLAS binding yet) */
    const tl_dtype ct = dt == TL_FLOAT64 ? TL_FLOAT64 : tl_dtype_is_complex(dt) ? TL_COMPLEX128
                        : tl_dtype_is_floating(dt) ? TL_FLOAT32 : TL_INT64;
    const int64_t isz = tl_dtype_itemsize(ct);
    tl_tensor *a1 = NULL, *b1 = NULL, *ac = NULL, *bc = NULL, *r = NULL, *o1 = NULL, *oc = NULL;
    int rc = -1;
    if (!(a1 = tl_to_dtype(a, ct, 0)) || !(b1 = tl_to_dtype(b, ct, 0)) || !(ac = tl_contiguous(a1)) ||
        !(bc = tl_contiguous(b1)) || !(r = tl_empty(tl_tensor_ndim(c), tl_tensor_sizes(c), ct, TL_CPU)))
        goto done;
    mm_ctx mc = {(*(const tl_mm_gemm_table_t *)tl_mm_gemm_stub.current)[ct], N, K, NULL, NULL, NULL};
    /* rows across threads when there is enough work (M*N*K multiply-adds) */
    int64_t grain = (1 << 20) / imax(1, N * K);
    for (int64_t i = 0; i < nb; i++) {
        mc.A = (const char *)tl_tensor_data_ptr(ac) + i * M * K * isz;
        mc.B = (const char *)tl_tensor_data_ptr(bc) + i * K * N * isz;
        mc.C = (char *)tl_tensor_data_ptr(r) + i * M * N * isz;
        tl_parallel_for(M, imax(1, grain), mm_rows, &mc);
    }
    const bool use_o = !scalar_is_zero(beta);
    if (use_o && (!(o1 = tl_to_dtype(c, ct, 0)) || !(oc = tl_contiguous(o1)))) goto done;
    if (use_o || scalar_f64(alpha) != 1.0 || alpha.kind == TL_SCALAR_COMPLEX)
        axpby(ct, nb * M * N, tl_tensor_data_ptr(r), use_o ? tl_tensor_data_ptr(oc) : NULL, beta, alpha);
    rc = tl__copy_impl(c, r);
done:
    tl_tensor_release(a1);
    tl_tensor_release(b1);
    tl_tensor_release(ac);
    tl_tensor_release(bc);
    tl_tensor_release(r);
    tl_tensor_release(o1);
    tl_tensor_release(oc);
    return rc;
}

/* ------------------------------------------------------------------ */
/* the engine                                                          */

/* c = beta * c + alpha * (a @ b) for nb matrices (roles say how each operand
 * is a matrix); c, a, b have one dtype (the meta functions checked) */
static int gemm_into(tl_tensor *c, mat_role rc, tl_tensor *a, mat_role ra, tl_tensor *b, mat_role rb, int64_t nb,
                     tl_scalar beta, tl_scalar alpha) {
    const mat A = mat_of(a, ra), B = mat_of(b, rb);
    const int64_t M = A.rows, K = A.cols, N = B.cols;
    if (nb * M * N == 0) return 0;
    const tl_dtype dt = tl_tensor_dtype(c);
    const bool fits = M <= TL_BLAS_INT_MAX && N <= TL_BLAS_INT_MAX && K <= TL_BLAS_INT_MAX &&
                      M * K <= TL_BLAS_INT_MAX && K * N <= TL_BLAS_INT_MAX && M * N <= TL_BLAS_INT_MAX;
    if (K == 0 || !fits || !(is_blas_dtype(dt) || is_half(dt))) return gemm_loop(c, a, b, nb, M, N, K, beta, alpha);
    if (is_blas_dtype(dt)) return gemm_blas(c, rc, a, ra, b, rb, nb, beta, alpha);
    /* float16 / bfloat16: float32 operands and result, rounded once into c */
    tl_tensor *a32 = NULL, *b32 = NULL, *c32 = NULL;
    int r = -1;
    if ((a32 = tl_to_dtype(a, TL_FLOAT32, 0)) && (b32 = tl_to_dtype(b, TL_FLOAT32, 0)) &&
        (c32 = tl_empty(tl_tensor_ndim(c), tl_tensor_sizes(c), TL_FLOAT32, TL_CPU)) &&
        (scalar_is_zero(beta) || tl__copy_impl(c32, c) == 0) &&
        gemm_blas(c32, rc, a32, ra, b32, rb, nb, beta, alpha) == 0)
        r = tl__copy_impl(c, c32);
    tl_tensor_release(a32);
    tl_tensor_release(b32);
    tl_tensor_release(c32);
    return r;
}

static int not_for_bool(tl_tensor *t, const char *name) {
    if (tl_tensor_dtype(t) != TL_BOOL) return 0;
    return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for 'Bool'", name);
}

static const char *device_name(tl_tensor *t) { return tl_tensor_device(t) == TL_META ? "meta" : "cpu"; }

static int same_device(tl_tensor *a, tl_tensor *b) {
    if (tl_tensor_device(a) == tl_tensor_device(b)) return 0;
    return tl_set_error(TL_ERR_RUNTIME,
                        "Expected all tensors to be on the same device, but found at least two devices, %s and %s!",
                        device_name(a), device_name(b));
}

/* ------------------------------------------------------------------ */
/* mm, addmm                                                           */

int tl_meta_mm(tl_structured *s, tl_tensor *self, tl_tensor *mat2) {
    if (tl_tensor_ndim(self) != 2) return tl_set_error(TL_ERR_RUNTIME, "self must be a matrix");
    if (tl_tensor_ndim(mat2) != 2) return tl_set_error(TL_ERR_RUNTIME, "mat2 must be a matrix");
    const int64_t *a = tl_tensor_sizes(self), *b = tl_tensor_sizes(mat2);
    if (a[1] != b[0])
        return tl_set_error(TL_ERR_RUNTIME, "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and %lldx%lld)",
                            (long long)a[0], (long long)a[1], (long long)b[0], (long long)b[1]);
    const tl_dtype da = tl_tensor_dtype(self), db = tl_tensor_dtype(mat2);
    if (da != db)
        return tl_set_error(TL_ERR_RUNTIME, "expected m1 and m2 to have the same dtype, but got: %s != %s",
                            tl_dtype_caffe2_name(da), tl_dtype_caffe2_name(db));
    if (same_device(self, mat2) != 0) return -1;
    const int64_t shape[2] = {a[0], b[1]};
    return tl_structured_set_output(s, 0, 2, shape, NULL, da);
}

int tl_impl_mm_out_cpu(tl_structured *s, tl_tensor *self, tl_tensor *mat2, tl_tensor *out) {
    (void)s;
    if (not_for_bool(self, "addmm_impl_cpu_") != 0) return -1;
    return gemm_into(out, ROLE_MAT, self, ROLE_MAT, mat2, ROLE_MAT, 1, tl_scalar_from_int(0), tl_scalar_from_int(1));
}

int tl_meta_addmm(tl_structured *s, tl_tensor *self, tl_tensor *mat1, tl_tensor *mat2, tl_scalar beta,
                  tl_scalar alpha) {
    (void)beta, (void)alpha;
    const tl_dtype ds = tl_tensor_dtype(self), d1 = tl_tensor_dtype(mat1), d2 = tl_tensor_dtype(mat2);
    if (ds != d2)
        return tl_set_error(TL_ERR_RUNTIME, "self and mat2 must have the same dtype, but got %s and %s",
                            tl_dtype_scalar_name(ds), tl_dtype_scalar_name(d2));
    if (d1 != d2)
        return tl_set_error(TL_ERR_RUNTIME, "mat1 and mat2 must have the same dtype, but got %s and %s",
                            tl_dtype_scalar_name(d1), tl_dtype_scalar_name(d2));
    if (tl_tensor_ndim(mat1) != 2)
        return tl_set_error(TL_ERR_RUNTIME, "mat1 must be a matrix, got %lld-D tensor", (long long)tl_tensor_ndim(mat1));
    if (tl_tensor_ndim(mat2) != 2)
        return tl_set_error(TL_ERR_RUNTIME, "mat2 must be a matrix, got %lld-D tensor", (long long)tl_tensor_ndim(mat2));
    const int64_t *a = tl_tensor_sizes(mat1), *b = tl_tensor_sizes(mat2);
    if (a[1] != b[0])
        return tl_set_error(TL_ERR_RUNTIME, "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and %lldx%lld)",
                            (long long)a[0], (long long)a[1], (long long)b[0], (long long)b[1]);
    if (same_device(self, mat1) != 0 || same_device(mat1, mat2) != 0) return -1;
    const int64_t shape[2] = {a[0], b[1]};
    return tl_structured_set_output(s, 0, 2, shape, NULL, d1);
}

/* out = beta * expand(self) + alpha * product (PyTorch's addmm_impl_cpu_):
 * self is copied into out first unless it is out (addmm_) or beta is 0 */
static int add_product(tl_tensor *out, tl_tensor *self, mat_role rc, tl_tensor *m1, mat_role r1, tl_tensor *m2,
                       mat_role r2, int64_t nb, tl_scalar beta, tl_scalar alpha) {
    tl_tensor *e = tl_expand(self, tl_tensor_ndim(out), tl_tensor_sizes(out));
    if (!e) return -1;
    int r = 0;
    if (!scalar_is_zero(beta) && out != self && tl_tensor_numel(out) > 0) r = tl__copy_impl(out, e);
    tl_tensor_release(e);
    return r == 0 ? gemm_into(out, rc, m1, r1, m2, r2, nb, beta, alpha) : -1;
}

int tl_impl_addmm_out_cpu(tl_structured *s, tl_tensor *self, tl_tensor *mat1, tl_tensor *mat2, tl_scalar beta,
                          tl_scalar alpha, tl_tensor *out) {
    (void)s;
    if (not_for_bool(self, "addmm_impl_cpu_") != 0) return -1;
    return add_product(out, self, ROLE_MAT, mat1, ROLE_MAT, mat2, ROLE_MAT, 1, beta, alpha);
}

/* ------------------------------------------------------------------ */
/* bmm, baddbmm                                                        */

static int check_batches(tl_tensor *batch1, tl_tensor *batch2, int64_t shape[3]) {
    if (tl_tensor_ndim(batch1) != 3) return tl_set_error(TL_ERR_RUNTIME, "batch1 must be a 3D tensor");
    if (tl_tensor_ndim(batch2) != 3) return tl_set_error(TL_ERR_RUNTIME, "batch2 must be a 3D tensor");
    const int64_t *a = tl_tensor_sizes(batch1), *b = tl_tensor_sizes(batch2);
    if (b[0] != a[0] || b[1] != a[2])
        return tl_set_error(TL_ERR_RUNTIME,
                            "Expected size for first two dimensions of batch2 tensor to be: [%lld, %lld] but got: "
                            "[%lld, %lld].",
                            (long long)a[0], (long long)a[2], (long long)b[0], (long long)b[1]);
    const tl_dtype d1 = tl_tensor_dtype(batch1), d2 = tl_tensor_dtype(batch2);
    if (d1 != d2)
        return tl_set_error(TL_ERR_RUNTIME, "expected scalar type %s but found %s", tl_dtype_scalar_name(d1),
                            tl_dtype_scalar_name(d2));
    if (same_device(batch1, batch2) != 0) return -1;
    shape[0] = a[0], shape[1] = a[1], shape[2] = b[2];
    return 0;
}

int tl_meta_bmm(tl_structured *s, tl_tensor *self, tl_tensor *mat2) {
    int64_t shape[3];
    if (check_batches(self, mat2, shape) != 0) return -1;
    return tl_structured_set_output(s, 0, 3, shape, NULL, tl_tensor_dtype(self));
}

int tl_impl_bmm_out_cpu(tl_structured *s, tl_tensor *self, tl_tensor *mat2, tl_tensor *out) {
    (void)s;
    if (not_for_bool(self, "bmm") != 0) return -1;
    return gemm_into(out, ROLE_BATCH, self, ROLE_BATCH, mat2, ROLE_BATCH, tl_tensor_size(self, 0),
                     tl_scalar_from_int(0), tl_scalar_from_int(1));
}

int tl_meta_baddbmm(tl_structured *s, tl_tensor *self, tl_tensor *batch1, tl_tensor *batch2, tl_scalar beta,
                    tl_scalar alpha) {
    (void)beta, (void)alpha;
    const tl_dtype ds = tl_tensor_dtype(self), d1 = tl_tensor_dtype(batch1);
    if (ds != d1)
        return tl_set_error(TL_ERR_RUNTIME, "Input dtypes must be the same, got: input %s, batch1: %s, batch2: %s",
                            tl_dtype_caffe2_name(ds), tl_dtype_caffe2_name(d1),
                            tl_dtype_caffe2_name(tl_tensor_dtype(batch2)));
    int64_t shape[3];
    if (check_batches(batch1, batch2, shape) != 0 || same_device(self, batch1) != 0) return -1;
    return tl_structured_set_output(s, 0, 3, shape, NULL, d1);
}

int tl_impl_baddbmm_out_cpu(tl_structured *s, tl_tensor *self, tl_tensor *batch1, tl_tensor *batch2, tl_scalar beta,
                            tl_scalar alpha, tl_tensor *out) {
    (void)s;
    if (not_for_bool(self, "baddbmm") != 0) return -1;
    return add_product(out, self, ROLE_BATCH, batch1, ROLE_BATCH, batch2, ROLE_BATCH, tl_tensor_size(batch1, 0), beta,
                       alpha);
}

/* ------------------------------------------------------------------ */
/* mv, dot (CompositeExplicitAutograd / CPU kernels over the engine)    */

/* PyTorch's addmv checks, result being mv's output (dtype rd) */
static int check_mv(tl_tensor *self, tl_tensor *vec, tl_dtype rd) {
    if (tl_tensor_ndim(self) != 2 || tl_tensor_ndim(vec) != 1)
        return tl_set_error(TL_ERR_RUNTIME, "vector + matrix @ vector expected, got 1, %lld, %lld",
                            (long long)tl_tensor_ndim(self), (long long)tl_tensor_ndim(vec));
    const int64_t *m = tl_tensor_sizes(self), n = tl_tensor_size(vec, 0);
    if (m[1] != n)
        return tl_set_error(TL_ERR_RUNTIME, "size mismatch, got input (%lld), mat (%lldx%lld), vec (%lld)",
                            (long long)m[0], (long long)m[0], (long long)m[1], (long long)n);
    const tl_dtype ds = tl_tensor_dtype(self), dv = tl_tensor_dtype(vec);
    if (rd != ds || ds != dv)
        return tl_set_error(TL_ERR_RUNTIME, "addmv input tensors must have the same dtype, but got %s, %s, and %s",
                            tl_dtype_scalar_name(rd), tl_dtype_scalar_name(ds), tl_dtype_scalar_name(dv));
    return same_device(self, vec);
}

static int mv_into(tl_tensor *out, tl_tensor *self, tl_tensor *vec) {
    if (tl_tensor_device(out) == TL_META) return 0;
    if (not_for_bool(self, "addmv_impl_cpu") != 0) return -1;
    return gemm_into(out, ROLE_COL, self, ROLE_MAT, vec, ROLE_COL, 1, tl_scalar_from_int(0), tl_scalar_from_int(1));
}

tl_tensor *tl_native_mv(tl_keyset ks, tl_tensor *self, tl_tensor *vec) {
    (void)ks;
    if (check_mv(self, vec, tl_tensor_dtype(vec)) != 0) return NULL;
    const int64_t m = tl_tensor_size(self, 0);
    tl_tensor *out = tl_empty(1, &m, tl_tensor_dtype(vec), tl__device_of(self));
    if (out && mv_into(out, self, vec) != 0) {
        tl_tensor_release(out);
        return NULL;
    }
    return out;
}

tl_tensor *tl_native_mv_out(tl_keyset ks, tl_tensor *self, tl_tensor *vec, tl_tensor *out) {
    (void)ks;
    if (check_mv(self, vec, tl_tensor_dtype(out)) != 0) return NULL;
    const int64_t m = tl_tensor_size(self, 0);
    if (tl_structured_resize_out(out, 1, &m, TL_DTYPE_UNDEFINED) != 0 || mv_into(out, self, vec) != 0) return NULL;
    tl_tensor_bump_version(out);
    tl_tensor_retain(out);
    return out;
}

tl_tensor *tl_native_dot(tl_keyset ks, tl_tensor *self, tl_tensor *tensor) {
    (void)ks;
    if (tl_tensor_ndim(self) != 1 || tl_tensor_ndim(tensor) != 1) {
        tl_set_error(TL_ERR_RUNTIME, "1D tensors expected, but got %lldD and %lldD tensors",
                     (long long)tl_tensor_ndim(self), (long long)tl_tensor_ndim(tensor));
        return NULL;
    }
    const tl_dtype d1 = tl_tensor_dtype(self), d2 = tl_tensor_dtype(tensor);
    if (d1 != d2) {
        tl_set_error(TL_ERR_RUNTIME, "dot : expected both vectors to have same dtype, but found %s and %s",
                     tl_dtype_scalar_name(d1), tl_dtype_scalar_name(d2));
        return NULL;
    }
    const int64_t n1 = tl_tensor_size(self, 0), n2 = tl_tensor_size(tensor, 0);
    if (n1 != n2) {
        tl_set_error(TL_ERR_RUNTIME,
                     "inconsistent tensor size, expected tensor [%lld] and src [%lld] to have the same number of "
                     "elements, but got %lld and %lld elements respectively",
                     (long long)n1, (long long)n2, (long long)n1, (long long)n2);
        return NULL;
    }
    if (same_device(self, tensor) != 0 || not_for_bool(self, "dot") != 0) return NULL;
    tl_tensor *out = tl_zeros(0, NULL, d1, TL_CPU); /* zeros: the sum of no products */
    if (out && gemm_into(out, ROLE_ONE, self, ROLE_ROW, tensor, ROLE_COL, 1, tl_scalar_from_int(0),
                         tl_scalar_from_int(1)) != 0) {
        tl_tensor_release(out);
        return NULL;
    }
    return out;
}

tl_tensor *tl_native_dot_out(tl_keyset ks, tl_tensor *self, tl_tensor *tensor, tl_tensor *out) {
    (void)ks;
    if (tl_structured_resize_out(out, 0, NULL, TL_DTYPE_UNDEFINED) != 0) return NULL;
    if (tl_tensor_dtype(out) != tl_tensor_dtype(self)) {
        tl_set_error(TL_ERR_RUNTIME, "result dtype %s does not match input dtype %s",
                     tl_dtype_scalar_name(tl_tensor_dtype(out)), tl_dtype_scalar_name(tl_tensor_dtype(self)));
        return NULL;
    }
    tl_tensor *r = tl_ops_dot(self, tensor);
    const int rc = r ? tl_copy_(out, r) : -1;
    tl_tensor_release(r);
    if (rc != 0) return NULL;
    tl_tensor_retain(out);
    return out;
}

/* ------------------------------------------------------------------ */
/* matmul (CompositeImplicitAutograd: PyTorch's _matmul_impl, built from
 * entry points so that autograd records the parts it calls)            */

static tl_tensor *mT(tl_tensor *t) { return tl_ops_transpose_int(t, -2, -1); }

static int64_t prod(const int64_t *v, int64_t n) {
    int64_t p = 1;
    for (int64_t i = 0; i < n; i++) p *= v[i];
    return p;
}

/* Fold the batch of the larger operand into mm / mv rows (no bmm) when that
 * needs no copy (PyTorch's should_fold) */
static bool should_fold(tl_tensor *t1, tl_tensor *t2, bool has_out) {
    const int64_t d1 = tl_tensor_ndim(t1), d2 = tl_tensor_ndim(t2);
    const bool t1_larger = d1 >= d2;
    const int64_t dim_big = t1_larger ? d1 : d2, dim_small = t1_larger ? d2 : d1;
    if (!(dim_big >= 3 && dim_small <= 2)) return false;
    /* the small operand requires grad: fold, so that its gradient is one mm */
    if (tl_autograd_requires_grad(t1_larger ? t2 : t1) && !has_out) return true;
    if (d1 == 2) return false; /* folding would transpose the result back with a copy */
    tl_tensor *big = t1_larger ? t1 : t2;
    if (tl_tensor_numel(big) == 0) return true;
    /* big (as t2.mT() when t2 is the larger) views as [-1, last] without a copy */
    int64_t sz[TL_MAX_DIMS], st[TL_MAX_DIMS];
    memcpy(sz, tl_tensor_sizes(big), (size_t)dim_big * sizeof(int64_t));
    memcpy(st, tl_tensor_strides(big), (size_t)dim_big * sizeof(int64_t));
    if (!t1_larger) {
        int64_t t = sz[dim_big - 1]; sz[dim_big - 1] = sz[dim_big - 2]; sz[dim_big - 2] = t;
        t = st[dim_big - 1]; st[dim_big - 1] = st[dim_big - 2]; st[dim_big - 2] = t;
    }
    for (int64_t i = 0; i < dim_big - 2; i++)
        if (st[i] != st[i + 1] * sz[i + 1]) return false;
    return true;
}

/* out = the result into an out= tensor through a reshaped view of it (copied
 * back when the reshape had to copy) */
static int into_out(tl_tensor *out, tl_tensor *reshaped) {
    if (reshaped == out || tl_tensor_is_alias_of(reshaped, out)) return 0;
    int64_t n = tl_tensor_ndim(out);
    tl_tensor *v = tl_ops_view(reshaped, tl_tensor_sizes(out), n);
    tl_tensor *r = v ? tl_ops_copy_(out, v, false) : NULL;
    tl_tensor_release(v);
    tl_tensor_release(r);
    return r ? 0 : -1;
}

static tl_tensor *matmul_folded(tl_tensor *tensor1, tl_tensor *tensor2, tl_tensor *out) {
    const int64_t d1 = tl_tensor_ndim(tensor1), d2 = tl_tensor_ndim(tensor2);
    const bool transpose = d2 > d1;
    tl_tensor *t1 = NULL, *t2 = NULL, *t1f = NULL, *prod_ = NULL, *res = NULL, *ro = NULL;
    /* t1: the larger operand (transposed when it is tensor2), t2 the other */
    if (transpose) {
        if (!(t1 = mT(tensor2))) goto done;
        if (d1 == 2) {
            if (!(t2 = tl_ops_t(tensor1))) goto done;
        } else {
            tl_tensor_retain(t2 = tensor1);
        }
    } else {
        tl_tensor_retain(t1 = tensor1);
        tl_tensor_retain(t2 = tensor2);
    }
    const int64_t n1 = tl_tensor_ndim(t1);
    int64_t shape[TL_MAX_DIMS + 1];
    memcpy(shape, tl_tensor_sizes(t1), (size_t)(n1 - 1) * sizeof(int64_t));
    int64_t nshape = n1 - 1;
    const int64_t folded = prod(shape, nshape), last = tl_tensor_size(t1, -1);
    const bool t2_matrix = tl_tensor_ndim(t2) == 2;
    if (t2_matrix) shape[nshape++] = tl_tensor_size(t2, 1);
    const int64_t fshape[2] = {folded, last};
    if (!(t1f = tl_ops_reshape(t1, fshape, 2))) goto done;
    if (!out) {
        if (!(prod_ = t2_matrix ? tl_ops_mm(t1f, t2) : tl_ops_mv(t1f, t2))) goto done;
        if (!(res = tl_ops__unsafe_view(prod_, shape, nshape))) goto done; /* PyTorch's _unsafe_view */
        if (transpose && t2_matrix) {
            tl_tensor *m = mT(res);
            tl_tensor_release(res);
            res = m ? tl_ops_contiguous(m, TL_CONTIGUOUS_FORMAT) : NULL;
            tl_tensor_release(m);
        }
        goto done;
    }
    /* out=: PyTorch never gets here with transpose && t2_matrix */
    const int64_t oshape[2] = {folded, t2_matrix ? tl_tensor_size(t2, 1) : 1};
    if (tl_structured_resize_out(out, nshape, shape, TL_DTYPE_UNDEFINED) != 0 || !(ro = tl_ops_reshape(out, oshape, t2_matrix ? 2 : 1))) goto done;
    tl_tensor *r = t2_matrix ? tl_ops_mm_out(t1f, t2, ro) : tl_ops_mv_out(t1f, t2, ro);
    tl_tensor_release(r);
    if (r && into_out(out, ro) == 0) tl_tensor_retain(res = out);
done:
    tl_tensor_release(t1);
    tl_tensor_release(t2);
    tl_tensor_release(t1f);
    tl_tensor_release(prod_);
    tl_tensor_release(ro);
    return res;
}

/* batch dims broadcast, both operands expanded and flattened to one batch: bmm */
static tl_tensor *matmul_batched(tl_tensor *tensor1, tl_tensor *tensor2, tl_tensor *out) {
    const int64_t d1 = tl_tensor_ndim(tensor1), d2 = tl_tensor_ndim(tensor2);
    const int64_t *s1 = tl_tensor_sizes(tensor1), *s2 = tl_tensor_sizes(tensor2);
    const int64_t n = d1 > 1 ? s1[d1 - 2] : 1, m1 = s1[d1 - 1];
    const int64_t m2 = d2 > 1 ? s2[d2 - 2] : s2[0], p = d2 > 1 ? s2[d2 - 1] : 1;
    const int64_t nb1 = d1 > 1 ? d1 - 2 : 0, nb2 = d2 > 1 ? d2 - 2 : 0;
    /* broadcast batch shape (PyTorch's infer_size) */
    const int64_t nbat = nb1 > nb2 ? nb1 : nb2;
    int64_t shape[TL_MAX_DIMS + 2];
    for (int64_t i = 0; i < nbat; i++) {
        const int64_t o1 = i - (nbat - nb1), o2 = i - (nbat - nb2);
        const int64_t a = o1 >= 0 ? s1[o1] : 1, b = o2 >= 0 ? s2[o2] : 1;
        if (a != b && a != 1 && b != 1) {
            tl_set_error(TL_ERR_RUNTIME,
                         "The size of tensor a (%lld) must match the size of tensor b (%lld) at non-singleton "
                         "dimension %lld",
                         (long long)a, (long long)b, (long long)i);
            return NULL;
        }
        shape[i] = a == 1 ? b : a;
    }
    const int64_t bp = prod(shape, nbat);
    tl_tensor *e1 = NULL, *e2 = NULL, *r1 = NULL, *r2 = NULL, *v2 = NULL, *bm = NULL, *sq = NULL, *res = NULL,
              *ro = NULL;
    int64_t es[TL_MAX_DIMS + 2];
    memcpy(es, shape, (size_t)nbat * sizeof(int64_t));
    es[nbat] = n, es[nbat + 1] = m1;
    const int64_t f1[3] = {bp, n, m1};
    if (!(e1 = tl_ops_expand(tensor1, es, nbat + 2, false)) || !(r1 = tl_ops_reshape(e1, f1, 3))) goto done;
    const bool vector_rhs = d2 == 1;
    es[nbat] = m2, es[nbat + 1] = p;
    if (!(e2 = tl_ops_expand(tensor2, es, nbat + (vector_rhs ? 1 : 2), false))) goto done;
    if (vector_rhs) {
        const int64_t f2[2] = {bp, m2};
        if (!(v2 = tl_ops_reshape(e2, f2, 2)) || !(r2 = tl_ops_unsqueeze(v2, 2))) goto done;
    } else {
        const int64_t f2[3] = {bp, m2, p};
        if (!(r2 = tl_ops_reshape(e2, f2, 3))) goto done;
    }
    int64_t nout = nbat;
    if (d1 > 1) shape[nout++] = n;
    if (d2 > 1) shape[nout++] = p;
    if (!out) {
        if (!(bm = tl_ops_bmm(r1, r2))) goto done;
        if (vector_rhs && !(sq = tl_ops_squeeze_dim(bm, -1))) goto done;
        res = tl_ops__unsafe_view(vector_rhs ? sq : bm, shape, nout); /* PyTorch's _unsafe_view */
        goto done;
    }
    const int64_t os[3] = {bp, n, p};
    if (tl_structured_resize_out(out, nout, shape, TL_DTYPE_UNDEFINED) != 0 || !(ro = tl_ops_reshape(out, os, 3))) goto done;
    if (!(bm = tl_ops_bmm_out(r1, r2, ro))) goto done;
    if (into_out(out, ro) == 0) tl_tensor_retain(res = out);
done:
    tl_tensor_release(e1);
    tl_tensor_release(e2);
    tl_tensor_release(r1);
    tl_tensor_release(r2);
    tl_tensor_release(v2);
    tl_tensor_release(bm);
    tl_tensor_release(sq);
    tl_tensor_release(ro);
    return res;
}

static tl_tensor *matmul_impl(tl_tensor *t1, tl_tensor *t2, tl_tensor *out) {
    const int64_t d1 = tl_tensor_ndim(t1), d2 = tl_tensor_ndim(t2);
    if (d1 == 0 || d2 == 0) {
        tl_set_error(TL_ERR_RUNTIME, "both arguments to matmul need to be at least 1D, but they are %lldD and %lldD",
                     (long long)d1, (long long)d2);
        return NULL;
    }
    if (d1 == 1 && d2 == 1) return out ? tl_ops_dot_out(t1, t2, out) : tl_ops_dot(t1, t2);
    if (d1 == 2 && d2 == 1) return out ? tl_ops_mv_out(t1, t2, out) : tl_ops_mv(t1, t2);
    if (d1 == 2 && d2 == 2) return out ? tl_ops_mm_out(t1, t2, out) : tl_ops_mm(t1, t2);
    if (d1 == 1 && d2 == 2) { /* [k] @ [k, n]: a one-row mm */
        tl_tensor *u = tl_ops_unsqueeze(t1, 0), *r = NULL, *ou = NULL;
        if (u && !out) {
            tl_tensor *m = tl_ops_mm(u, t2);
            r = m ? tl_ops_squeeze_dim(m, 0) : NULL;
            tl_tensor_release(m);
        } else if (u) {
            const int64_t nn = tl_tensor_size(t2, 1);
            if (tl_structured_resize_out(out, 1, &nn, TL_DTYPE_UNDEFINED) == 0 && (ou = tl_ops_unsqueeze(out, 0))) {
                tl_tensor *m = tl_ops_mm_out(u, t2, ou);
                if (m) tl_tensor_retain(r = out);
                tl_tensor_release(m);
            }
        }
        tl_tensor_release(u);
        tl_tensor_release(ou);
        return r;
    }
    if (should_fold(t1, t2, out != NULL)) return matmul_folded(t1, t2, out);
    return matmul_batched(t1, t2, out);
}

tl_tensor *tl_native_matmul(tl_keyset ks, tl_tensor *self, tl_tensor *other) {
    (void)ks;
    return matmul_impl(self, other, NULL);
}

tl_tensor *tl_native_matmul_out(tl_keyset ks, tl_tensor *self, tl_tensor *other, tl_tensor *out) {
    (void)ks;
    tl_tensor *ins[3] = {self, other, out};  /* checked as matmul, not the mm/dot it becomes (PyTorch) */
    if (tl_autograd_check_out("matmul", ins, 3)) return NULL;
    return matmul_impl(self, other, out);
}

/* ------------------------------------------------------------------ */
/* linear (CompositeImplicitAutograd, PyTorch's decomposition)         */

tl_tensor *tl_native_linear(tl_keyset ks, tl_tensor *input, tl_tensor *weight, tl_tensor *bias) {
    (void)ks;
    const int64_t di = tl_tensor_ndim(input), dw = tl_tensor_ndim(weight);
    if (di == 0 || dw == 0) {
        tl_set_error(TL_ERR_RUNTIME, "both arguments to linear need to be at least 1D, but they are %lldD and %lldD",
                     (long long)di, (long long)dw);
        return NULL;
    }
    /* PyTorch's order of calls (a dispatch mode sees them): the input's view
     * first, then weight.t() */
    tl_tensor *wt = NULL, *res = NULL, *x2 = NULL, *mm = NULL;
    const tl_scalar one = tl_scalar_from_int(1);
    if (bias && di == 2) { /* the fused addmm (nn.Linear on a batch of rows) */
        if ((wt = tl_ops_t(weight))) res = tl_ops_addmm(bias, input, wt, one, one);
    } else if (bias && tl_tensor_is_contiguous(input) && (di == 3 || tl_tensor_ndim(bias) == 1)) {
        /* contiguous [..., in]: addmm on [prod(...), in], viewed back */
        const int64_t *s = tl_tensor_sizes(input);
        const int64_t f[2] = {prod(s, di - 1), s[di - 1]};
        if ((x2 = tl_ops_reshape(input, f, 2)) && (wt = tl_ops_t(weight)) &&
            (mm = tl_ops_addmm(bias, x2, wt, one, one))) {
            int64_t shape[TL_MAX_DIMS];
            memcpy(shape, s, (size_t)(di - 1) * sizeof(int64_t));
            shape[di - 1] = tl_tensor_size(mm, 1);
            res = tl_ops_view(mm, shape, di);
        }
    } else if ((wt = tl_ops_t(weight)) && (mm = tl_ops_matmul(input, wt))) {
        if (bias)
            res = tl_ops_add_Tensor(mm, bias, one);
        else
            tl_tensor_retain(res = mm);
    }
    tl_tensor_release(wt);
    tl_tensor_release(x2);
    tl_tensor_release(mm);
    return res;
}

tl_tensor *tl_native_linear_out(tl_keyset ks, tl_tensor *input, tl_tensor *weight, tl_tensor *bias,
                                tl_tensor *out) {
    (void)ks;
    tl_tensor *wt = tl_ops_t(weight), *r = NULL;
    if (!wt) return NULL;
    const tl_scalar one = tl_scalar_from_int(1);
    if (bias && tl_tensor_ndim(input) == 2) {
        r = tl_ops_addmm_out(bias, input, wt, one, one, out);
    } else if ((r = tl_ops_matmul_out(input, wt, out)) && bias) {
        tl_tensor *a = tl_ops_add__Tensor(out, bias, one);
        tl_tensor_release(a);
        if (!a) {
            tl_tensor_release(r);
            r = NULL;
        }
    }
    tl_tensor_release(wt);
    return r;
}

/* ------------------------------------------------------------------ */
/* outer / ger (CompositeImplicitAutograd: a column times a row)       */

static tl_tensor *outer_impl(tl_tensor *self, tl_tensor *vec2, tl_tensor *out) {
    if (tl_tensor_ndim(self) != 1 || tl_tensor_ndim(vec2) != 1) {
        const bool s = tl_tensor_ndim(self) != 1;
        tl_set_error(TL_ERR_RUNTIME, "outer: Expected 1-D argument %s, but got %lld-D", s ? "self" : "vec2",
                     (long long)tl_tensor_ndim(s ? self : vec2));
        return NULL;
    }
    const int64_t shape[2] = {tl_tensor_size(self, 0), 1};
    tl_tensor *col = tl_ops_reshape(self, shape, 2);
    if (!col) return NULL;
    tl_tensor *r = out ? tl_ops_mul_out(col, vec2, out) : tl_ops_mul_Tensor(col, vec2);
    tl_tensor_release(col);
    return r;
}

tl_tensor *tl_native_outer(tl_keyset ks, tl_tensor *self, tl_tensor *vec2) {
    (void)ks;
    return outer_impl(self, vec2, NULL);
}

tl_tensor *tl_native_outer_out(tl_keyset ks, tl_tensor *self, tl_tensor *vec2, tl_tensor *out) {
    (void)ks;
    return outer_impl(self, vec2, out);
}

tl_tensor *tl_native_ger(tl_keyset ks, tl_tensor *self, tl_tensor *vec2) {
    (void)ks;
    return tl_ops_outer(self, vec2);
}

tl_tensor *tl_native_ger_out(tl_keyset ks, tl_tensor *self, tl_tensor *vec2, tl_tensor *out) {
    (void)ks;
    return tl_ops_outer_out(self, vec2, out);
}
