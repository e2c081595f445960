/* Helpers the NN operator files share (nn_ops.c, pool_ops.c, ...): the compute
 * dtype rule, contiguous copies in it, the destination of an out= kernel,
 * PyTorch's "[2, 3]" size formatting for messages, and pooling_output_shape. */
#ifndef TL_NN_COMMON_H
#define TL_NN_COMMON_H

#include <stdio.h>
#include <string.h>

#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "tl_tensor.h"

/* float16 / bfloat16 / float32 compute in float32, float64 in float64 */
static inline tl_dtype compute_dtype(tl_dtype dt) { return dt == TL_FLOAT64 ? TL_FLOAT64 : TL_FLOAT32; }

/* x converted to dtype ct and made contiguous (a new reference) */
static inline tl_tensor *contig_as(tl_tensor *x, tl_dtype ct) {
    tl_tensor *a = tl_to_dtype(x, ct, 0);
    if (!a) return NULL;
    tl_tensor *c = tl_contiguous(a);
    tl_tensor_release(a);
    return c;
}

/* the tensor a kernel writes: `out` itself when it is contiguous, of dtype
 * ct and not overlapping any of the inputs; else a temporary (copied back by
 * finish_dst) */
static inline tl_tensor *begin_dst(tl_tensor *out, tl_dtype ct, tl_tensor *const *ins, int nin) {
    int direct = tl_tensor_is_contiguous(out) && tl_tensor_dtype(out) == ct;
    for (int i = 0; i < nin && direct; i++)
        if (ins[i] && tl_tensor_is_alias_of(out, ins[i])) direct = 0;
    if (direct) {
        tl_tensor_retain(out);
        return out;
    }
    return tl_empty(tl_tensor_ndim(out), tl_tensor_sizes(out), ct, TL_CPU);
}

static inline int finish_dst(tl_tensor *out, tl_tensor *dst, int rc) {
    if (rc == 0 && dst != out) rc = tl_copy_(out, dst);
    tl_tensor_release(dst);
    return rc;
}

/* PyTorch's IntArrayRef printing: "[2, 3]" */
static inline void fmt_shape(char *buf, size_t n, const int64_t *s, int64_t nd) {
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int64_t i = 0; i < nd && k < n; i++) k += (size_t)snprintf(buf + k, n - k, i ? ", %lld" : "%lld", (long long)s[i]);
    if (k < n) snprintf(buf + k, n - k, "]");
}

/* PyTorch's pooling_output_shape (with its pad checks): the output size of
 * a pooling dim (pool_ops.c, pool3d.c) */
static inline int pooling_output_shape(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil_mode,
                                       int64_t *out) {
    if (stride == 0) return tl_set_error(TL_ERR_RUNTIME, "stride should not be zero");
    if (pad < 0) return tl_set_error(TL_ERR_RUNTIME, "pad must be non-negative, but got pad: %lld", (long long)pad);
    if (pad > ((k - 1) * dil + 1) / 2)
        return tl_set_error(TL_ERR_RUNTIME, "pad should be at most half of effective kernel size, but got pad=%lld, "
                                            "kernel_size=%lld and dilation=%lld", (long long)pad, (long long)k,
                            (long long)dil);
    const int64_t num = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
    /* div_rtn: division rounding toward negative infinity */
    int64_t q = num / stride;
    if ((num % stride != 0) && ((num < 0) != (stride < 0))) q--;
    int64_t o = q + 1;
    if (ceil_mode && (o - 1) * stride >= in + pad) o--;
    *out = o;
    return 0;
}

/* softmax's / log_softmax's backward kernels (CPU and CUDA) read the
 * gradient, the forward's output and grad_input in one dtype */
static inline int softmax_bwd_check_dtypes(const tl_tensor *grad, const tl_tensor *output, const tl_tensor *gi) {
    const tl_dtype gdt = tl_tensor_dtype(grad), odt = tl_tensor_dtype(output), idt = tl_tensor_dtype(gi);
    if (odt != gdt || idt != gdt)
        return tl_set_error(TL_ERR_RUNTIME, "expected scalar type %s but found %s", tl_dtype_scalar_name(gdt),
                            tl_dtype_scalar_name(odt != gdt ? odt : idt));
    return 0;
}

/* layer_norm's input checks (PyTorch's _check_layer_norm_inputs, with the
 * CPU's dtype rule); *M rows of *N elements (kernels/native/nn_ops.c) */
int tl_nn_check_layer_norm(tl_tensor *input, const int64_t *ns, int64_t ns_len, tl_tensor *weight, tl_tensor *bias,
                           int64_t *M, int64_t *N);

/* nll_loss's checks in PyTorch's order (shapes, target dtype, weight,
 * dtypes); *B rows of *C classes (kernels/native/nn_ops.c, shared with the
 * CUDA kernel) */
int tl_nn_nll_check(tl_tensor *self, tl_tensor *target, tl_tensor *weight, int64_t reduction, int64_t *B,
                    int64_t *C);

/* native_layer_norm_backward of a CUDA input, checked by
 * tl_nn_layer_norm_backward (kernels/cuda/tl_cuda_norm.c); ns_len
 * normalized dims, M rows of N elements */
int tl_cuda_layer_norm_backward(tl_tensor *grad_out, tl_tensor *input, int64_t ns_len, int64_t M, int64_t N,
                                tl_tensor *mean, tl_tensor *rstd, tl_tensor *weight, tl_tensor *bias,
                                const bool *output_mask, tl_tensor **grad_input, tl_tensor **grad_weight,
                                tl_tensor **grad_bias);

#endif
