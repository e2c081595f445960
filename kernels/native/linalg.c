/* mm: structured meta (PyTorch's checks and messages) and a cache-blocked C
 * impl (a vendor BLAS replaces it in a later issue). Inputs are converted to a
 * contiguous compute dtype (float32 for float16/bfloat16/float32, float64,
 * int64 for integers, wrapping like PyTorch's integer matmul), multiplied by
 * the per-ISA blocked kernel of kernels/cpu/mm_kernel.c (rows split across
 * threads), and copied into out. */
#include <string.h>

#include "tl_error.h"
#include "tl_ops.h"
#include "tl_structured.h"
#include "tl_internal.h"
#include "tl_kernel.h"
#include "tl_tensor.h"
#include "tl_ufunc.h"

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
    if (tl_tensor_device(self) != tl_tensor_device(mat2))
        return tl_set_error(TL_ERR_RUNTIME, "Expected all tensors to be on the same device, but found at least two "
                                            "devices, %s and %s!",
                            tl_tensor_device(self) == TL_META ? "meta" : "cpu",
                            tl_tensor_device(mat2) == TL_META ? "meta" : "cpu");
    const int64_t shape[2] = {a[0], b[1]};
    return tl_structured_set_output(s, 0, 2, shape, NULL, da);
}

TL_DEFINE_STUB(tl_mm_gemm_stub, tl_mm_gemm_table)

typedef struct {
    tl_mm_gemm_fn fn;
    int64_t N, K;
    const void *A, *B;
    void *C;
} mm_ctx;

static void mm_rows(int64_t b, int64_t e, void *ctx) {
    const mm_ctx *c = ctx;
    c->fn(b, e, c->N, c->K, c->A, c->B, c->C);
}

int tl_impl_mm_out_cpu(tl_structured *s, tl_tensor *self, tl_tensor *mat2, tl_tensor *out) {
    (void)s;
    const tl_dtype dt = tl_tensor_dtype(self);
    if (dt == TL_BOOL)
        return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"addmm_impl_cpu_\" not implemented for 'Bool'");
    const int64_t M = tl_tensor_size(self, 0), K = tl_tensor_size(self, 1), N = tl_tensor_size(mat2, 1);
    if (M * N == 0) return 0;
    const tl_dtype ct = dt == TL_FLOAT64 ? TL_FLOAT64 : tl_dtype_is_floating(dt) ? TL_FLOAT32 : TL_INT64;
    tl_tensor *a = NULL, *b = NULL, *ac = NULL, *bc = NULL, *c = NULL;
    int rc = -1;
    const int64_t cs[2] = {M, N};
    if (!(a = tl_to_dtype(self, ct, 0)) || !(b = tl_to_dtype(mat2, ct, 0)) || !(ac = tl_contiguous(a)) ||
        !(bc = tl_contiguous(b)) || !(c = tl_empty(2, cs, ct, TL_CPU)))
        goto done;
    if (K == 0) {
        rc = tl_zero_(out);
        goto done;
    }
    {
        mm_ctx mc = {(*(const tl_mm_gemm_table_t *)tl_mm_gemm_stub.current)[ct], N, K, tl_tensor_data_ptr(ac),
                     tl_tensor_data_ptr(bc), tl_tensor_data_ptr(c)};
        /* rows across threads when there is enough work (M*N*K multiply-adds) */
        const int64_t work = N * K > 0 ? N * K : 1;
        int64_t grain = (1 << 20) / work;
        if (grain < 1) grain = 1;
        tl_parallel_for(M, grain, mm_rows, &mc);
    }
    rc = tl_copy_(out, c);
done:
    tl_tensor_release(a);
    tl_tensor_release(b);
    tl_tensor_release(ac);
    tl_tensor_release(bc);
    tl_tensor_release(c);
    return rc;
}
