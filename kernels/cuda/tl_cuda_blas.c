/* mm, bmm, addmm, baddbmm on CUDA through cuBLAS (the structured impls of
 * the yaml's CUDA: *_out_cuda; meta functions: kernels/native/linalg.c).
 * matmul and linear are composite and reach these.
 *
 * Row-major to cuBLAS's column-major as PyTorch's at::cuda::blas: a
 * row-major C = A B is the column-major C^T = B^T A^T, so cuBLAS gets
 * (B, A) with m = n_cols(C), n = n_rows(C). An operand whose rows are
 * contiguous (stride 1 along columns) is passed as is ('N', ld = row
 * stride); a transposed one (stride 1 along rows) with 'T' (ld = column
 * stride); anything else is copied contiguous first. The output must have
 * contiguous rows, else the product goes to a contiguous temporary that is
 * copied back. Batches keep their own stride (0 for a broadcast operand). */
#include <string.h>

#include "tl_cuda.h"
#include "tl_cuda_blas.h"
#include "tl_cuda_guard.h"
#include "tl_error.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/addmm.h"
#include "ops/baddbmm.h"
#include "ops/bmm.h"
#include "ops/mm.h"
#include "tl_internal.h"
#include "tl_structured.h"

/* one matrix operand: data, cuBLAS transpose flag in the swapped problem, ld, batch stride */
typedef struct operand {
    tl_tensor *t;        /* the tensor used (a contiguous copy or a new ref to the input) */
    int trans;
    int64_t ld, batch_stride;
} operand;

/* rows x cols of t's last two dims with element strides sr, sc */
static int as_operand(const tl_tensor *t, operand *o) {
    const int64_t nd = t->ndim, r = t->sizes[nd - 2], c = t->sizes[nd - 1];
    const int64_t sr = t->strides[nd - 2], sc = t->strides[nd - 1];
    const int64_t rmax = r > 1 ? r : 1, cmax = c > 1 ? c : 1;
    o->batch_stride = nd == 3 ? t->strides[0] : 0;
    if ((c == 1 || sc == 1) && (r == 1 || sr >= cmax)) {          /* contiguous rows: B^T in column-major */
        o->trans = 0;
        o->ld = r == 1 ? cmax : sr;
    } else if ((r == 1 || sr == 1) && (c == 1 || sc >= rmax)) {   /* contiguous columns */
        o->trans = 1;
        o->ld = c == 1 ? rmax : sc;
    } else {
        o->t = tl_contiguous(t);
        if (!o->t) return -1;
        o->trans = 0;
        o->ld = cmax;
        o->batch_stride = nd == 3 ? r * c : 0;
        return 0;
    }
    tl_tensor_retain((tl_tensor *)t);
    o->t = (tl_tensor *)t;
    return 0;
}

/* out[b] = alpha * a[b] @ b[b] + beta * out[b] (beta 0: out not read); 2-d or 3-d */
static int gemm(tl_tensor *out, const tl_tensor *a, const tl_tensor *b, double alpha, double beta, int keep_out) {
    const int64_t nd = out->ndim, m = out->sizes[nd - 2], n = out->sizes[nd - 1], k = a->sizes[nd - 1];
    const int64_t batch = nd == 3 ? out->sizes[0] : 1;
    if (out->numel == 0) return 0;
    /* the output with contiguous rows (its own memory, or a contiguous temporary) */
    const int64_t so_r = out->strides[nd - 2], so_c = out->strides[nd - 1];
    const int64_t ld_out = m == 1 ? (n > 1 ? n : 1) : so_r;
    const int rows_ok = (n == 1 || so_c == 1) && (m == 1 || so_r >= (n > 1 ? n : 1)) &&
                        (batch == 1 || out->strides[0] >= (m - 1) * ld_out + n);   /* batches apart */
    tl_tensor *c = out;
    if (!rows_ok) {
        c = tl_empty(nd, out->sizes, out->dtype, TL_CUDA);
        if (!c) return -1;
        if (keep_out && beta != 0 && tl_copy_(c, out) != 0) {
            tl_tensor_release(c);
            return -1;
        }
    }
    operand oa = {0}, ob = {0};
    int rc = -1;
    if (as_operand(a, &oa) == 0 && as_operand(b, &ob) == 0) {
        const int64_t cr = c->strides[nd - 2];
        tl_cuda_gemm_args g = {
            .transa = ob.trans, .transb = oa.trans, .m = n, .n = m, .k = k, .alpha = alpha, .beta = beta,
            .a = tl__data(ob.t), .lda = ob.ld, .stride_a = ob.batch_stride,
            .b = tl__data(oa.t), .ldb = oa.ld, .stride_b = oa.batch_stride,
            .c = tl__data(c), .ldc = m == 1 ? (n > 1 ? n : 1) : cr, .stride_c = nd == 3 ? c->strides[0] : 0,
            .batch = batch, .dtype = out->dtype,
        };
        rc = tl_cuda_gemm(c->storage->device_index, &g);
    }
    if (oa.t) tl_tensor_release(oa.t);
    if (ob.t) tl_tensor_release(ob.t);
    if (c != out) {
        if (rc == 0) rc = tl_copy_(out, c);
        tl_tensor_release(c);
    }
    return rc;
}

static int check_dtype(const tl_tensor *t, const char *name) {
    const tl_dtype dt = t->dtype;
    if (dt == TL_FLOAT32 || dt == TL_FLOAT64 || dt == TL_FLOAT16 || dt == TL_BFLOAT16) return 0;
    return tl_set_error(TL_ERR_RUNTIME, "\"%s\" not implemented for '%s'", name, tl_dtype_scalar_name(dt));
}

static double scalar_value(tl_scalar s) { return s.kind == TL_SCALAR_DOUBLE ? s.d : (double)s.i; }

/* runs on out's device (the runtime makes each device's context current) */
static int on_device(tl_tensor *out, tl_tensor *self, const tl_tensor *a, const tl_tensor *b, tl_scalar beta,
                     tl_scalar alpha) {
    tl_cuda_guard g;
    if (tl_cuda_guard_enter(&g, out->storage->device_index) != 0) return -1;
    const double be = self ? scalar_value(beta) : 0.0;
    int rc = 0;
    /* beta * self first (not read when beta is 0, as PyTorch: NaN in self does not propagate) */
    if (self && be != 0 && self != out && out->numel > 0) {
        tl_tensor *e = tl_expand(self, out->ndim, out->sizes);
        rc = e ? tl_copy_(out, e) : -1;
        if (e) tl_tensor_release(e);
    }
    if (rc == 0) rc = gemm(out, a, b, scalar_value(alpha), be, self != NULL);
    tl_cuda_guard_exit(&g);
    return rc;
}

int tl_impl_mm_out_cuda(tl_structured *s, tl_tensor *self, tl_tensor *mat2, tl_tensor *out) {
    (void)s;
    if (check_dtype(self, "addmm_cuda") != 0) return -1;
    return on_device(out, NULL, self, mat2, tl_scalar_from_int(0), tl_scalar_from_int(1));
}

int tl_impl_bmm_out_cuda(tl_structured *s, tl_tensor *self, tl_tensor *mat2, tl_tensor *out) {
    (void)s;
    if (check_dtype(self, "bmm_cuda") != 0) return -1;
    return on_device(out, NULL, self, mat2, tl_scalar_from_int(0), tl_scalar_from_int(1));
}

int tl_impl_addmm_out_cuda(tl_structured *s, tl_tensor *self, tl_tensor *mat1, tl_tensor *mat2, tl_scalar beta,
                           tl_scalar alpha, tl_tensor *out) {
    (void)s;
    if (check_dtype(mat1, "addmm_cuda") != 0) return -1;
    return on_device(out, self, mat1, mat2, beta, alpha);
}

int tl_impl_baddbmm_out_cuda(tl_structured *s, tl_tensor *self, tl_tensor *batch1, tl_tensor *batch2,
                             tl_scalar beta, tl_scalar alpha, tl_tensor *out) {
    (void)s;
    if (check_dtype(batch1, "baddbmm_cuda") != 0) return -1;
    return on_device(out, self, batch1, batch2, beta, alpha);
}
