/* Device-side copy / cast and fill for CUDA tensors: the runtime's hooks
 * (tl_cuda_set_copy_kernel / tl_cuda_set_fill_kernel, tl_cuda.h) over the
 * generated CUDA-only program ufunc_copy (kernels/cuda/tl_cuda_copy.h:
 * the identity formula). A copy between dtypes runs its casting kernel (any
 * dtype pair, any strides, src broadcast with stride 0); a same-dtype
 * strided copy its strided kernel; a fill passes the value as a CPU-scalar
 * input. Installed when the library loads. */
#include <string.h>

#include "tl_cuda_guard.h"
#include "tl_cuda_loops.h"
#include "tl_error.h"
#include "tl_internal.h"

extern const tl_cuda_ufunc_op tl_ufunc_copy_cuda_op;   /* generated/cuda/ufunc_copy_cuda.c */

/* dims innermost first, byte strides; size-1 dims dropped by the coalescing */
static int tensor_view(tl_cuda_view *v, int op, const tl_tensor *t) {
    if (t->ndim > TL_CUDA_MAX_DIMS && op == 0)
        return tl_set_error(TL_ERR_RUNTIME, "CUDA copy: more than %d dims", TL_CUDA_MAX_DIMS);
    const int64_t isz = tl__itemsize(t->dtype);
    for (int64_t d = 0; d < t->ndim && d < TL_CUDA_MAX_DIMS; d++) {
        const int64_t k = t->ndim - 1 - d;
        if (op == 0) v->shape[d] = t->sizes[k];
        v->strides[op][d] = t->sizes[k] == 1 ? 0 : t->strides[k] * isz;
    }
    v->data[op] = tl__data(t);
    v->dtype[op] = t->dtype;
    v->cpu_scalar[op] = 0;
    return 0;
}

/* runs on dst's device (the runtime makes each device's context current) */
static int on_device_of(const tl_tensor *dst, tl_cuda_view *v) {
    tl_cuda_guard g;
    if (tl_cuda_guard_enter(&g, dst->storage->device_index) != 0) return -1;
    tl_cuda_view_coalesce(v);
    int rc = tl_cuda_ufunc_launch_view(&tl_ufunc_copy_cuda_op, dst->dtype, v, NULL);
    tl_cuda_guard_exit(&g);
    return rc;
}

/* dst and src on one device, src already broadcast to dst's shape */
static int copy_kernel(tl_tensor *dst, const tl_tensor *src) {
    if (dst->numel == 0) return 0;
    tl_cuda_view v;
    memset(&v, 0, sizeof v);
    v.nops = 2;
    v.ndim = (int)dst->ndim;
    if (tensor_view(&v, 0, dst) < 0 || tensor_view(&v, 1, src) < 0) return -1;
    return on_device_of(dst, &v);
}

static int fill_kernel(tl_tensor *dst, tl_scalar value) {
    if (dst->numel == 0) return 0;
    /* the value stored as dst's dtype (16 bytes: any dtype), read back by the launcher as a CPU scalar */
    union { uint64_t u; unsigned char bytes[16]; } bits = {0};
    if (tl_scalar_store(value, dst->dtype, &bits) != 0) return -1;
    tl_cuda_view v;
    memset(&v, 0, sizeof v);
    v.nops = 2;
    v.ndim = (int)dst->ndim;
    if (tensor_view(&v, 0, dst) < 0) return -1;
    v.data[1] = (char *)&bits;
    v.dtype[1] = dst->dtype;
    v.cpu_scalar[1] = 1;
    return on_device_of(dst, &v);
}

__attribute__((constructor)) static void install(void) {
    tl_cuda_set_copy_kernel(copy_kernel);
    tl_cuda_set_fill_kernel(fill_kernel);
}
