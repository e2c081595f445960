/* adaptive_avg_pool3d (CompositeImplicitAutograd, PyTorch's: a 1 x 1 x 1
 * output is the mean over the last three dims), _adaptive_avg_pool3d and
 * _adaptive_avg_pool3d_backward (CPU). Windows as PyTorch's (start
 * floor(o * in / out), end ceil((o + 1) * in / out)); an output is the
 * window sum divided by kT, kH, kW in turn, the backward adds grad / kT / kH
 * / kW into every window element (PyTorch's order). Inputs are made
 * contiguous in the compute dtype; the N * C planes go to threads. */
#include <string.h>

#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/_adaptive_avg_pool3d.h"
#include "ops/_adaptive_avg_pool3d_backward.h"
#include "ops/adaptive_avg_pool3d.h"
#include "ops/mean.h"
#include "tl_tensor.h"
#include "nn_common.h"

static int64_t start_index(int64_t a, int64_t b, int64_t c) { return (a * c) / b; }
static int64_t end_index(int64_t a, int64_t b, int64_t c) { return ((a + 1) * c + b - 1) / b; }

typedef struct {
    const char *src;
    char *dst;
    int64_t it, ih, iw, ot, oh, ow;
    int f64, bwd;
} ap3_ctx;

#define AP3(T)                                                                                                        \
    static void plane_##T(const ap3_ctx *c, const T *x, T *y) {                                                      \
        if (c->bwd) memset(y, 0, (size_t)(c->it * c->ih * c->iw) * sizeof(T));                                       \
        for (int64_t ot = 0; ot < c->ot; ot++) {                                                                      \
            const int64_t t0 = start_index(ot, c->ot, c->it), t1 = end_index(ot, c->ot, c->it);                       \
            for (int64_t oh = 0; oh < c->oh; oh++) {                                                                  \
                const int64_t h0 = start_index(oh, c->oh, c->ih), h1 = end_index(oh, c->oh, c->ih);                   \
                for (int64_t ow = 0; ow < c->ow; ow++) {                                                              \
                    const int64_t w0 = start_index(ow, c->ow, c->iw), w1 = end_index(ow, c->ow, c->iw);               \
                    const int64_t o = (ot * c->oh + oh) * c->ow + ow;                                                 \
                    if (c->bwd) {                                                                                     \
                        const T g = x[o] / (T)(t1 - t0) / (T)(h1 - h0) / (T)(w1 - w0);                                \
                        for (int64_t t = t0; t < t1; t++)                                                             \
                            for (int64_t h = h0; h < h1; h++)                                                         \
                                for (int64_t w = w0; w < w1; w++) y[(t * c->ih + h) * c->iw + w] += g;                \
                        continue;                                                                                     \
                    }                                                                                                 \
                    T sum = 0;                                                                                        \
                    for (int64_t t = t0; t < t1; t++)                                                                 \
                        for (int64_t h = h0; h < h1; h++)                                                             \
                            for (int64_t w = w0; w < w1; w++) sum += x[(t * c->ih + h) * c->iw + w];                  \
                    y[o] = sum / (T)(t1 - t0) / (T)(h1 - h0) / (T)(w1 - w0);                                          \
                }                                                                                                     \
            }                                                                                                         \
        }                                                                                                             \
    }
AP3(float)
AP3(double)

static void run_planes(int64_t b, int64_t e, void *ctx) {
    const ap3_ctx *c = ctx;
    const int64_t in = c->it * c->ih * c->iw, out = c->ot * c->oh * c->ow;
    const int64_t sp = c->bwd ? out : in, dp = c->bwd ? in : out, isz = c->f64 ? 8 : 4;
    for (int64_t p = b; p < e; p++) {
        const char *s = c->src + p * sp * isz;
        char *d = c->dst + p * dp * isz;
        if (c->f64) plane_double(c, (const double *)s, (double *)d);
        else plane_float(c, (const float *)s, (float *)d);
    }
}

/* PyTorch's adaptive_avg_pool3d_out_cpu_template checks */
static int check_input(const tl_tensor *t, const char *name) {
    const int64_t nd = tl_tensor_ndim(t);
    char b[192];
    for (int64_t i = 1; i < nd; i++)
        if (tl_tensor_sizes(t)[i] <= 0) {
            fmt_shape(b, sizeof b, tl_tensor_sizes(t), nd);
            return tl_set_error(TL_ERR_RUNTIME, "%s(): Expected input to have non-zero size for non-batch dimensions, "
                                "but input has sizes %s with dimension %lld being empty", name, b, (long long)i);
        }
    if (nd != 4 && nd != 5) {
        fmt_shape(b, sizeof b, tl_tensor_sizes(t), nd);
        return tl_set_error(TL_ERR_RUNTIME, "%s(): Expected 4D or 5D tensor, but got %s", name, b);
    }
    if (!tl_dtype_is_floating(tl_tensor_dtype(t)))
        return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"%s_cpu\" not implemented for '%s'", name,
                            tl_dtype_scalar_name(tl_tensor_dtype(t)));
    return 0;
}

/* src -> a new tensor of shape `shape` in src's dtype */
static tl_tensor *run(tl_tensor *src, tl_tensor *like, const int64_t *shape, int64_t nd, const int64_t *in5,
                      const int64_t *out3, int bwd) {
    const tl_dtype dt = tl_tensor_dtype(like), ct = compute_dtype(dt);
    ap3_ctx c = {NULL, NULL, in5[0], in5[1], in5[2], out3[0], out3[1], out3[2], ct == TL_FLOAT64, bwd};
    int64_t planes = 1;
    for (int64_t i = 0; i < nd - 3; i++) planes *= shape[i];
    tl_tensor *x = contig_as(src, ct);
    tl_tensor *y = x ? tl_empty(nd, shape, ct, TL_CPU) : NULL;
    if (y && planes > 0) {
        c.src = tl_tensor_data_ptr(x);
        c.dst = tl_tensor_data_ptr(y);
        const int64_t work = in5[0] * in5[1] * in5[2] + out3[0] * out3[1] * out3[2];
        tl_parallel_for(planes, 32768 / work > 0 ? 32768 / work : 1, run_planes, &c);
    }
    tl_tensor_release(x);
    if (!y || ct == dt) return y;
    tl_tensor *r = tl_to_dtype(y, dt, 0);
    tl_tensor_release(y);
    return r;
}

tl_tensor *tl_native_adaptive_avg_pool3d_cpu(tl_keyset ks, tl_tensor *self, const int64_t *output_size,
                                             int64_t output_size_len) {
    (void)ks;
    if (output_size_len != 3) return tl_set_error(TL_ERR_RUNTIME, "adaptive_avg_pool3d: output_size must be 3"), NULL;
    if (check_input(self, "adaptive_avg_pool3d")) return NULL;
    const int64_t nd = tl_tensor_ndim(self);
    int64_t shape[5];
    memcpy(shape, tl_tensor_sizes(self), (size_t)nd * sizeof(int64_t));
    memcpy(shape + nd - 3, output_size, 3 * sizeof(int64_t));
    return run(self, self, shape, nd, tl_tensor_sizes(self) + nd - 3, output_size, 0);
}

tl_tensor *tl_native_adaptive_avg_pool3d_backward_cpu(tl_keyset ks, tl_tensor *grad_output, tl_tensor *self) {
    (void)ks;
    if (check_input(self, "adaptive_avg_pool3d_backward")) return NULL;
    const int64_t nd = tl_tensor_ndim(self);
    if (tl_tensor_ndim(grad_output) != nd)
        return tl_set_error(TL_ERR_RUNTIME, "adaptive_avg_pool3d_backward(): grad_output must have %lld dimensions",
                            (long long)nd), NULL;
    for (int64_t i = 0; i < nd - 3; i++)
        if (tl_tensor_sizes(grad_output)[i] != tl_tensor_sizes(self)[i])
            return tl_set_error(TL_ERR_RUNTIME, "adaptive_avg_pool3d_backward(): grad_output and input batch / "
                                "channel sizes differ"), NULL;
    return run(grad_output, self, tl_tensor_sizes(self), nd, tl_tensor_sizes(self) + nd - 3,
               tl_tensor_sizes(grad_output) + nd - 3, 1);
}

tl_tensor *tl_native_adaptive_avg_pool3d_symint(tl_keyset ks, tl_tensor *self, const int64_t *output_size,
                                                int64_t output_size_len) {
    (void)ks;
    if (output_size_len != 3) return tl_set_error(TL_ERR_RUNTIME, "adaptive_avg_pool3d: output_size must be 3"), NULL;
    if (output_size[0] < 0 || output_size[1] < 0 || output_size[2] < 0)
        return tl_set_error(TL_ERR_RUNTIME, "adaptive_avg_pool3d: elements of output_size must be greater than or "
                            "equal to 0 but received {%lld, %lld, %lld}", (long long)output_size[0],
                            (long long)output_size[1], (long long)output_size[2]), NULL;
    if (output_size[0] == 1 && output_size[1] == 1 && output_size[2] == 1) {
        const int64_t dims[3] = {-1, -2, -3};
        return tl_ops_mean_dim(self, dims, 3, true, TL_DTYPE_UNDEFINED);
    }
    return tl_ops__adaptive_avg_pool3d(self, output_size, 3);
}

/* the derivative of _adaptive_avg_pool3d_backward for grad_output:
 * `_adaptive_avg_pool3d(grad, grad_output's last three sizes)` */
tl_tensor *tl_ag_adaptive_avg_pool3d_double_backward(tl_tensor *grad, tl_tensor *grad_output) {
    const int64_t nd = tl_tensor_ndim(grad_output), *s = tl_tensor_sizes(grad_output);
    const int64_t os[3] = {s[nd - 3], s[nd - 2], s[nd - 1]};
    return tl_ops__adaptive_avg_pool3d(grad, os, 3);
}
