/* layer_norm on CUDA: native_layer_norm (yaml: CUDA: layer_norm_cuda) and
 * the fused native_layer_norm_backward (reached from
 * tl_nn_layer_norm_backward, kernels/native/nn_ops.c, for a CUDA input).
 * As PyTorch's layer_norm_kernel.cu: the input is made contiguous and read
 * as M rows of N elements, mean and rstd are stored in the accumulator type
 * (float for half / bfloat16, as PyTorch's CUDA kernel; the CPU's are of the
 * input's dtype), grad_weight / grad_bias are column sums. The kernels are
 * in generated/cuda/reduce.cu (kernels/cuda/tl_cuda_reduce.cuh). */
#include <string.h>

#include "tl_cuda_reduce.h"
#include "tl_error.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/native_layer_norm.h"
#include "tl_internal.h"
#include "../native/nn_common.h"

enum { WB_THREADS = 256, MAX_GRID = 65536 };

int tl_cuda_same_device(tl_tensor *const *ts, int n) {
    for (int i = 1; i < n; i++) {
        if (!ts[i] || tl__device_of(ts[i]) == tl__device_of(ts[0])) continue;
        const char *a = tl__tensor_device_str(ts[0]), *b = tl__tensor_device_str(ts[i]);
        return tl_set_error(TL_ERR_RUNTIME, "Expected all tensors to be on the same device, but found at least two "
                            "devices, %s and %s!", a, b);
    }
    return 0;
}

/* the kernels index rows with 32-bit counts and offsets within a row */
static int check_sizes(int64_t M, int64_t N, tl_dtype dt) {
    if (M > INT32_MAX || N > INT32_MAX || N * tl__itemsize(dt) > INT32_MAX)
        return tl_set_error(TL_ERR_RUNTIME, "layer_norm on CUDA: more than 2^31 rows or row bytes are not supported");
    return 0;
}

static uint64_t ptr_of(const tl_tensor *t) { return t ? (uint64_t)(uintptr_t)tl__data(t) : 0; }

/* the struct of a launch over M rows of N elements of x */
static void ln_params(tl_cuda_reduce_params *p, const tl_tensor *x, int64_t M, int64_t N) {
    memset(p, 0, sizeof *p);
    p->in = ptr_of(x);
    p->nout = (uint32_t)M;
    p->nred = (uint32_t)N;
    p->factor = 1.0 / (double)N;   /* N = 0: inf, so mean and rstd are NaN as on the CPU */
}

/* mean / rstd shape: input's leading dims, then 1 per normalized dim */
static void stat_shape(const tl_tensor *input, int64_t ns_len, int64_t *shape) {
    const int64_t nd = tl_tensor_ndim(input);
    for (int64_t i = 0; i < nd; i++) shape[i] = i < nd - ns_len ? tl_tensor_sizes(input)[i] : 1;
}

static int layer_norm_fwd(tl_tensor *input, int64_t ns_len, tl_tensor *weight, tl_tensor *bias, double eps,
                          int64_t M, int64_t N, tl_tensor **ret) {
    const tl_dtype dt = tl_tensor_dtype(input), at = compute_dtype(dt);
    const tl_device_type dev = tl__device_of(input);
    const int64_t nd = tl_tensor_ndim(input);
    int64_t sshape[TL_MAX_DIMS];
    stat_shape(input, ns_len, sshape);
    tl_tensor *x = tl_contiguous(input), *w = weight ? tl_contiguous(weight) : NULL;
    tl_tensor *b = bias ? tl_contiguous(bias) : NULL;
    tl_tensor *out[3] = {NULL, NULL, NULL};
    int rc = -1;
    if (!x || (weight && !w) || (bias && !b) || !(out[0] = tl_empty(nd, tl_tensor_sizes(input), dt, dev)) ||
        !(out[1] = tl_empty(nd, sshape, at, dev)) || !(out[2] = tl_empty(nd, sshape, at, dev)))
        goto done;
    rc = 0;
    if (M > 0) {
        tl_cuda_reduce_params p;
        ln_params(&p, x, M, N);
        p.out = ptr_of(out[0]);
        p.weight = ptr_of(w);
        p.bias = ptr_of(b);
        p.mean = ptr_of(out[1]);
        p.rstd = ptr_of(out[2]);
        p.eps = eps;
        rc = tl_cuda_launch_rows(tl_cuda_layer_norm_table[TL_CUDA_LAYER_NORM_FWD][dt], &p);
    }
done:
    tl_tensor_release(x);
    tl_tensor_release(w);
    tl_tensor_release(b);
    for (int i = 0; i < 3; i++) {
        if (rc == 0) ret[i] = out[i];
        else tl_tensor_release(out[i]);
    }
    return rc < 0 ? -1 : 0;
}

int tl_native_layer_norm_cuda(tl_keyset ks, tl_tensor *input, const int64_t *normalized_shape,
                              int64_t normalized_shape_len, tl_tensor *weight, tl_tensor *bias, double eps,
                              tl_tensor **ret0, tl_tensor **ret1, tl_tensor **ret2) {
    (void)ks;
    int64_t M, N;
    tl_tensor *ts[3] = {input, weight, bias};
    if (tl_cuda_same_device(ts, 3) ||
        tl_nn_check_layer_norm(input, normalized_shape, normalized_shape_len, weight, bias, &M, &N) ||
        check_sizes(M, N, tl_tensor_dtype(input)))
        return -1;
    tl_tensor *ret[3];
    int prev;
    if (tl_cuda_enter_device(input, &prev)) return -1;
    if (tl_cuda_leave_device(prev, layer_norm_fwd(input, normalized_shape_len, weight, bias, eps, M, N, ret)))
        return -1;
    *ret0 = ret[0];
    *ret1 = ret[1];
    *ret2 = ret[2];
    return 0;
}

/* grad_input (one block per row) and grad_weight / grad_bias (a thread per
 * column) from contiguous g, x and the statistics in the accumulator type */
static int layer_norm_bwd(tl_tensor *grad_out, tl_tensor *input, int64_t ns_len, int64_t M, int64_t N,
                          tl_tensor *mean, tl_tensor *rstd, tl_tensor *weight, tl_tensor *bias, const bool *mask,
                          tl_tensor **ret) {
    const tl_dtype dt = tl_tensor_dtype(input), at = compute_dtype(dt);
    const tl_device_type dev = tl__device_of(input);
    const int64_t *wshape = tl_tensor_sizes(input) + tl_tensor_ndim(input) - ns_len;
    const int want[3] = {mask[0], mask[1] && weight, mask[2] && bias};
    tl_tensor *g = tl_contiguous(grad_out), *x = tl_contiguous(input), *w = weight ? tl_contiguous(weight) : NULL;
    tl_tensor *mc = tl_to_dtype(mean, at, 0), *rcast = tl_to_dtype(rstd, at, 0);
    tl_tensor *m = mc ? tl_contiguous(mc) : NULL, *r = rcast ? tl_contiguous(rcast) : NULL;
    tl_tensor_release(mc);
    tl_tensor_release(rcast);
    tl_tensor *out[3] = {NULL, NULL, NULL};
    int rc = -1;
    if (!g || !x || (weight && !w) || !m || !r) goto done;
    if (tl_tensor_numel(m) != M || tl_tensor_numel(r) != M) {
        tl_set_error(TL_ERR_RUNTIME, "mean and rstd must have one element per normalized row (%lld)", (long long)M);
        goto done;
    }
    for (int i = 0; i < 3; i++)
        if (want[i] && !(out[i] = i == 0 ? tl_empty(tl_tensor_ndim(input), tl_tensor_sizes(input), dt, dev)
                                         : tl_empty(ns_len, wshape, dt, dev)))
            goto done;
    tl_cuda_reduce_params p;
    ln_params(&p, x, M, N);
    p.in2 = ptr_of(g);
    p.mean = ptr_of(m);
    p.rstd = ptr_of(r);
    rc = 0;
    if (out[0] && M > 0) {
        p.out = ptr_of(out[0]);
        p.weight = ptr_of(w);
        rc = tl_cuda_launch_rows(tl_cuda_layer_norm_table[TL_CUDA_LAYER_NORM_BWD][dt], &p);
    }
    if (rc == 0 && (out[1] || out[2]) && N > 0) {   /* M = 0: zero sums, written by the kernel */
        p.out = 0;
        p.weight = ptr_of(out[1]);
        p.bias = ptr_of(out[2]);
        const int64_t blocks = (N + WB_THREADS - 1) / WB_THREADS;
        const unsigned grid[3] = {(unsigned)(blocks < MAX_GRID ? blocks : MAX_GRID), 1, 1}, block[3] = {WB_THREADS, 1, 1};
        void *args[1] = {&p};
        rc = tl_cuda_launch(tl_cuda_layer_norm_table[TL_CUDA_LAYER_NORM_BWD_WB][dt], grid, block, 0, args);
    }
done:
    tl_tensor_release(g);
    tl_tensor_release(x);
    tl_tensor_release(w);
    tl_tensor_release(m);
    tl_tensor_release(r);
    for (int i = 0; i < 3; i++) {
        if (rc == 0) ret[i] = out[i];
        else tl_tensor_release(out[i]);
    }
    return rc < 0 ? -1 : 0;
}

int tl_cuda_layer_norm_backward(tl_tensor *grad_out, tl_tensor *input, int64_t ns_len, int64_t M, int64_t N,
                                tl_tensor *mean, tl_tensor *rstd, tl_tensor *weight, tl_tensor *bias,
                                const bool *output_mask, tl_tensor **grad_input, tl_tensor **grad_weight,
                                tl_tensor **grad_bias) {
    tl_tensor *ts[6] = {input, grad_out, mean, rstd, weight, bias};
    if (tl_cuda_same_device(ts, 6) || check_sizes(M, N, tl_tensor_dtype(input))) return -1;
    if (tl_tensor_dtype(grad_out) != tl_tensor_dtype(input))
        return tl_set_error(TL_ERR_RUNTIME, "expected scalar type %s but found %s",
                            tl_dtype_scalar_name(tl_tensor_dtype(input)), tl_dtype_scalar_name(tl_tensor_dtype(grad_out)));
    tl_tensor *ret[3];
    int prev;
    if (tl_cuda_enter_device(input, &prev)) return -1;
    if (tl_cuda_leave_device(prev, layer_norm_bwd(grad_out, input, ns_len, M, N, mean, rstd, weight, bias,
                                                  output_mask, ret)))
        return -1;
    *grad_input = ret[0];
    *grad_weight = ret[1];
    *grad_bias = ret[2];
    return 0;
}
