/* myops::fused_rms_norm and its backward: y = x / sqrt(mean(x^2) + eps) * weight
 * over the last dimension, one pass per row, accumulated in double.
 *
 * The names and signatures are the generator's (generated/include/tl_ops.h):
 * the structured group fused_rms_norm.out gets tl_meta_myops_fused_rms_norm
 * (shapes and dtype; the Meta kernel runs only this) and the impl of its CPU
 * kernel tl_impl_myops_fused_rms_norm_out; fused_rms_norm_backward is a plain
 * kernel, tl_native_myops_fused_rms_norm_backward. */
#include <math.h>
#include <stdlib.h>

#include "tl_error.h"
#include "tl_ops.h"
#include "tl_tensor.h"

static int check_args(const char *op, tl_tensor *input, tl_tensor *weight) {
    int64_t nd = tl_tensor_ndim(input);
    tl_dtype dt = tl_tensor_dtype(input);
    if (nd < 1) return tl_set_error(TL_ERR_RUNTIME, "%s: expected input with at least 1 dimension, got 0", op);
    if (dt != TL_FLOAT32 && dt != TL_FLOAT64)
        return tl_set_error(TL_ERR_RUNTIME, "\"%s\" not implemented for '%s'", op, tl_dtype_scalar_name(dt));
    int64_t n = tl_tensor_sizes(input)[nd - 1];
    if (tl_tensor_ndim(weight) != 1 || tl_tensor_sizes(weight)[0] != n)
        return tl_set_error(TL_ERR_RUNTIME, "%s: expected weight of shape [%lld] (the last dimension of input), got %s",
                            op, (long long)n, tl_tensor_debug_string(weight));
    if (tl_tensor_dtype(weight) != dt)
        return tl_set_error(TL_ERR_RUNTIME, "%s: expected weight of dtype %s, got %s", op, tl_dtype_name(dt),
                            tl_dtype_name(tl_tensor_dtype(weight)));
    return 0;
}

int tl_meta_myops_fused_rms_norm(tl_structured *s, tl_tensor *input, tl_tensor *weight, double eps) {
    if (check_args("fused_rms_norm", input, weight) != 0) return -1;
    if (!(eps >= 0)) return tl_set_error(TL_ERR_VALUE, "fused_rms_norm: eps must be >= 0, got %g", eps);
    return tl_structured_set_output(s, 0, tl_tensor_ndim(input), tl_tensor_sizes(input), NULL, tl_tensor_dtype(input));
}

#define RMS_FORWARD(T)                                                        \
    static void rms_forward_##T(const T *x, const T *w, T *y, int64_t rows, int64_t n, double eps) { \
        for (int64_t r = 0; r < rows; r++, x += n, y += n) {                  \
            double ss = 0;                                                    \
            for (int64_t j = 0; j < n; j++) ss += (double)x[j] * x[j];        \
            double rstd = 1.0 / sqrt(ss / (double)n + eps);                   \
            for (int64_t j = 0; j < n; j++) y[j] = (T)(x[j] * rstd * w[j]);   \
        }                                                                     \
    }
RMS_FORWARD(float)
RMS_FORWARD(double)

int tl_impl_myops_fused_rms_norm_out(tl_structured *s, tl_tensor *input, tl_tensor *weight, double eps,
                                     tl_tensor *out) {
    (void)s;
    int rc = -1;
    tl_tensor *x = tl_contiguous(input), *w = tl_contiguous(weight), *y = NULL;
    if (!x || !w) goto done;
    int64_t nd = tl_tensor_ndim(x), n = tl_tensor_sizes(x)[nd - 1], numel = tl_tensor_numel(x);
    /* an out= tensor with other strides gets the result through a copy */
    if (tl_tensor_is_contiguous(out)) {
        tl_tensor_retain(out);
        y = out;
    } else if (!(y = tl_empty(nd, tl_tensor_sizes(x), tl_tensor_dtype(x), TL_CPU))) {
        goto done;
    }
    if (numel > 0 && n > 0) {
        if (tl_tensor_dtype(x) == TL_FLOAT32)
            rms_forward_float(tl_tensor_data_ptr(x), tl_tensor_data_ptr(w), tl_tensor_data_ptr(y), numel / n, n, eps);
        else
            rms_forward_double(tl_tensor_data_ptr(x), tl_tensor_data_ptr(w), tl_tensor_data_ptr(y), numel / n, n, eps);
    }
    if (y != out) {
        tl_tensor *r = tl_ops_copy_(out, y, false);
        if (!r) goto done;
        tl_tensor_release(r);
    }
    rc = 0;
done:
    tl_tensor_release(x);
    tl_tensor_release(w);
    tl_tensor_release(y);
    return rc;
}

/* d input = rstd * g*w - x * rstd^3 * mean(g*w*x);  d weight = sum over rows of g * x * rstd */
#define RMS_BACKWARD(T)                                                                         \
    static void rms_backward_##T(const T *g, const T *x, const T *w, T *gi, double *gw, int64_t rows, \
                                 int64_t n, double eps) {                                       \
        for (int64_t r = 0; r < rows; r++, g += n, x += n, gi += n) {                           \
            double ss = 0, dot = 0;                                                             \
            for (int64_t j = 0; j < n; j++) {                                                   \
                ss += (double)x[j] * x[j];                                                      \
                dot += (double)g[j] * w[j] * x[j];                                              \
            }                                                                                   \
            double rstd = 1.0 / sqrt(ss / (double)n + eps);                                     \
            double c = rstd * rstd * rstd * dot / (double)n;                                    \
            for (int64_t j = 0; j < n; j++) {                                                   \
                gi[j] = (T)(rstd * g[j] * w[j] - c * x[j]);                                     \
                gw[j] += (double)g[j] * x[j] * rstd;                                            \
            }                                                                                   \
        }                                                                                       \
    }
RMS_BACKWARD(float)
RMS_BACKWARD(double)

int tl_native_myops_fused_rms_norm_backward(tl_keyset ks, tl_tensor *grad_out, tl_tensor *input, tl_tensor *weight,
                                            double eps, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    if (check_args("fused_rms_norm_backward", input, weight) != 0) return -1;
    int64_t nd = tl_tensor_ndim(input);
    const int64_t *sizes = tl_tensor_sizes(input);
    if (tl_tensor_ndim(grad_out) != nd || tl_tensor_dtype(grad_out) != tl_tensor_dtype(input))
        return tl_set_error(TL_ERR_RUNTIME, "fused_rms_norm_backward: grad_out %s does not match input %s",
                            tl_tensor_debug_string(grad_out), tl_tensor_debug_string(input));
    for (int64_t d = 0; d < nd; d++)
        if (tl_tensor_sizes(grad_out)[d] != sizes[d])
            return tl_set_error(TL_ERR_RUNTIME, "fused_rms_norm_backward: grad_out %s does not match input %s",
                                tl_tensor_debug_string(grad_out), tl_tensor_debug_string(input));
    int rc = -1;
    tl_dtype dt = tl_tensor_dtype(input);
    int64_t n = sizes[nd - 1], numel = tl_tensor_numel(input);
    double *acc = NULL;
    tl_tensor *g = tl_contiguous(grad_out), *x = tl_contiguous(input), *w = tl_contiguous(weight);
    tl_tensor *gi = tl_empty(nd, sizes, dt, TL_CPU), *gw = tl_empty(1, &n, dt, TL_CPU);
    if (!g || !x || !w || !gi || !gw) goto done;
    if (!(acc = calloc((size_t)(n > 0 ? n : 1), sizeof *acc))) {
        tl_set_error(TL_ERR_MEMORY, "fused_rms_norm_backward: out of memory");
        goto done;
    }
    if (numel > 0 && n > 0) {
        if (dt == TL_FLOAT32)
            rms_backward_float(tl_tensor_data_ptr(g), tl_tensor_data_ptr(x), tl_tensor_data_ptr(w),
                               tl_tensor_data_ptr(gi), acc, numel / n, n, eps);
        else
            rms_backward_double(tl_tensor_data_ptr(g), tl_tensor_data_ptr(x), tl_tensor_data_ptr(w),
                                tl_tensor_data_ptr(gi), acc, numel / n, n, eps);
    }
    for (int64_t j = 0; j < n; j++) {
        if (dt == TL_FLOAT32) ((float *)tl_tensor_data_ptr(gw))[j] = (float)acc[j];
        else ((double *)tl_tensor_data_ptr(gw))[j] = acc[j];
    }
    *ret0 = gi;
    *ret1 = gw;
    gi = gw = NULL;
    rc = 0;
done:
    free(acc);
    tl_tensor_release(g);
    tl_tensor_release(x);
    tl_tensor_release(w);
    tl_tensor_release(gi);
    tl_tensor_release(gw);
    return rc;
}
