/* Convolution operators (yaml block "convolution"; docs/NN.md "Convolution").
 *
 * convolution / convolution_backward (CompositeExplicitAutograd, as
 * PyTorch): PyTorch's parameter and shape checks (its messages), the output
 * shape, then on CPU the products of conv_gemm.h; meta tensors get shapes
 * only. float16 / bfloat16 compute in float32, the integer dtypes in int64
 * on conv_int.h's exact loops (where PyTorch's slow kernels take them). The
 * CompositeImplicitAutograd
 * front ends (conv1d/2d/3d, their padding='same'/'valid' overloads,
 * conv_transpose1d/2d/3d, _convolution_mode) batch an unbatched input and
 * call convolution, as PyTorch's Convolution.cpp. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "conv_gemm.h"
#include "conv_int.h"
#include "shape_index.h"
#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/_convolution_mode.h"
#include "ops/cat.h"
#include "ops/conv1d.h"
#include "ops/conv2d.h"
#include "ops/conv3d.h"
#include "ops/conv_transpose1d.h"
#include "ops/conv_transpose2d.h"
#include "ops/conv_transpose3d.h"
#include "ops/convolution.h"
#include "ops/convolution_backward.h"
#include "ops/new_zeros.h"
#include "ops/squeeze.h"
#include "ops/unsqueeze.h"
#include "tl_tensor.h"

/* the expanded parameters of one convolution */
typedef struct {
    int nd; /* spatial dims */
    int64_t stride[TL_CONV_MAXD], padding[TL_CONV_MAXD], dilation[TL_CONV_MAXD], output_padding[TL_CONV_MAXD];
    bool transposed;
    int64_t groups;
} conv_params;

/* PyTorch's expand_param_if_needed: one value for every dim, or one per dim */
static int expand_param(const int64_t *v, int64_t n, const char *name, int nd, int64_t *out) {
    if (n == 1) {
        for (int i = 0; i < nd; i++) out[i] = v[0];
        return 0;
    }
    if (n != nd) {
        char buf[160];
        return tl_set_error(TL_ERR_RUNTIME, "expected %s to be a single integer value or a list of %d values to "
                            "match the convolution dimensions, but got %s=%s", name, nd, name,
                            si_shape_str(buf, sizeof buf, n, v));
    }
    memcpy(out, v, (size_t)nd * sizeof(int64_t));
    return 0;
}

static int make_params(const tl_tensor *weight, const int64_t *stride, int64_t stride_len, const int64_t *padding,
                       int64_t padding_len, const int64_t *dilation, int64_t dilation_len, bool transposed,
                       const int64_t *output_padding, int64_t output_padding_len, int64_t groups, conv_params *p) {
    const int64_t k = tl_tensor_ndim(weight);
    if (k - 2 <= 0) return tl_set_error(TL_ERR_RUNTIME, "weight should have at least three dimensions");
    if (k - 2 > TL_CONV_MAXD) return tl_set_error(TL_ERR_RUNTIME, "unsupported ConvNd parameters");
    if (groups <= 0) return tl_set_error(TL_ERR_RUNTIME, "non-positive groups is not supported");
    p->nd = (int)(k - 2);
    p->transposed = transposed;
    p->groups = groups;
    if (expand_param(stride, stride_len, "stride", p->nd, p->stride) ||
        expand_param(padding, padding_len, "padding", p->nd, p->padding) ||
        expand_param(dilation, dilation_len, "dilation", p->nd, p->dilation) ||
        expand_param(output_padding, output_padding_len, "output_padding", p->nd, p->output_padding))
        return -1;
    return 0;
}

/* " x "-joined values */
static const char *x_joined(char *buf, size_t n, int nd, const int64_t *v) {
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; i < nd && k < n; i++) k += (size_t)snprintf(buf + k, n - k, i ? " x %lld" : "%lld", (long long)v[i]);
    return buf;
}

/* PyTorch's check_shape_forward (its order and messages) */
static int check_shape_forward(const tl_tensor *input, const tl_tensor *weight, const tl_tensor *bias,
                               const conv_params *p) {
    for (int i = 0; i < p->nd; i++)
        if (p->padding[i] < 0) return tl_set_error(TL_ERR_RUNTIME, "negative padding is not supported");
    for (int i = 0; i < p->nd; i++)
        if (p->output_padding[i] < 0) return tl_set_error(TL_ERR_RUNTIME, "negative output_padding is not supported");
    for (int i = 0; i < p->nd; i++)
        if (p->stride[i] <= 0) return tl_set_error(TL_ERR_RUNTIME, "non-positive stride is not supported");
    for (int i = 0; i < p->nd; i++)
        if (p->dilation[i] <= 0) return tl_set_error(TL_ERR_RUNTIME, "non-positive dilation is not supported");
    const int64_t k = tl_tensor_ndim(input), wd = tl_tensor_ndim(weight);
    const int64_t *ws = tl_tensor_sizes(weight), *is = tl_tensor_sizes(input);
    char wb[160], ib[160], bb[64];
    si_shape_str(wb, sizeof wb, wd, ws);
    si_shape_str(ib, sizeof ib, k, is);
    if (wd != k)
        return tl_set_error(TL_ERR_RUNTIME, "Expected %lld-dimensional input for %lld-dimensional weight %s, but got "
                            "%lld-dimensional input of size %s instead", (long long)wd, (long long)wd, wb,
                            (long long)k, ib);
    const long long g = (long long)p->groups;
    if (ws[0] < p->groups)
        return tl_set_error(TL_ERR_RUNTIME, "Given groups=%lld, expected weight to be at least %lld at dimension 0, "
                            "but got weight of size %s instead", g, g, wb);
    if (ws[0] % p->groups)
        return tl_set_error(TL_ERR_RUNTIME, "Given groups=%lld, expected weight to be divisible by %lld at dimension "
                            "0, but got weight of size [%s] instead", g, g, wb);
    if (bias) si_shape_str(bb, sizeof bb, tl_tensor_ndim(bias), tl_tensor_sizes(bias));
    if (!p->transposed) {
        if (is[1] != ws[1] * p->groups)
            return tl_set_error(TL_ERR_RUNTIME, "Given groups=%lld, weight of size %s, expected input%s to have %lld "
                                "channels, but got %lld channels instead", g, wb, ib, (long long)(ws[1] * p->groups),
                                (long long)is[1]);
        if (bias && !(tl_tensor_ndim(bias) == 1 && tl_tensor_size(bias, 0) == ws[0]))
            return tl_set_error(TL_ERR_RUNTIME, "Given weight of size %s, expected bias to be 1-dimensional with %lld "
                                "elements, but got bias of size %s instead", wb, (long long)ws[0], bb);
        int64_t padded[TL_CONV_MAXD], kern[TL_CONV_MAXD];
        bool fits = true;
        for (int i = 0; i < p->nd; i++) {
            padded[i] = is[i + 2] + 2 * p->padding[i];
            kern[i] = p->dilation[i] * (ws[i + 2] - 1) + 1;
            fits = fits && padded[i] >= kern[i];
        }
        if (!fits) {
            char a[96], b[96];
            return tl_set_error(TL_ERR_RUNTIME, "Calculated padded input size per channel: (%s). Kernel size: (%s). "
                                "Kernel size can't be greater than actual input size",
                                x_joined(a, sizeof a, p->nd, padded), x_joined(b, sizeof b, p->nd, kern));
        }
    } else {
        if (is[1] != ws[0])
            return tl_set_error(TL_ERR_RUNTIME, "Given transposed=1, weight of size %s, expected input%s to have %lld "
                                "channels, but got %lld channels instead", wb, ib, (long long)ws[0], (long long)is[1]);
        if (bias && !(tl_tensor_ndim(bias) == 1 && tl_tensor_size(bias, 0) == ws[1] * p->groups))
            return tl_set_error(TL_ERR_RUNTIME, "Given transposed=1, weight of size %s, expected bias to be "
                                "1-dimensional with %lld elements, but got bias of size %s instead", wb,
                                (long long)(ws[1] * p->groups), bb);
    }
    return 0;
}

/* "torch.FloatTensor" (PyTorch's legacy type string) */
static const char *legacy_type(char *buf, size_t n, tl_dtype dt) {
    snprintf(buf, n, "torch.%sTensor", tl_dtype_scalar_name(dt));
    return buf;
}

/* PyTorch's dtype checks: its oneDNN path (float32 / float16 / bfloat16
 * input) names the legacy types, the slow path (others) the scalar types.
 * Integer dtypes go on to check_int_forward / check_int_backward. */
static int check_dtypes(const tl_tensor *input, const tl_tensor *weight, const tl_tensor *bias) {
    const tl_dtype it = tl_tensor_dtype(input), wt = tl_tensor_dtype(weight);
    const bool onednn = it == TL_FLOAT32 || it == TL_FLOAT16 || it == TL_BFLOAT16;
    char a[48], b[48];
    if (wt != it) {
        if (onednn)
            return tl_set_error(TL_ERR_RUNTIME, "Input type (%s) and weight type (%s) should be the same or input "
                                "should be a MKLDNN tensor and weight is a dense tensor",
                                legacy_type(a, sizeof a, it), legacy_type(b, sizeof b, wt));
        return tl_set_error(TL_ERR_RUNTIME, "expected scalar type %s but found %s", tl_dtype_scalar_name(it),
                            tl_dtype_scalar_name(wt));
    }
    if (bias && tl_tensor_dtype(bias) != it) {
        if (onednn)
            return tl_set_error(TL_ERR_RUNTIME, "Input type (%s) and bias type (%s) should be the same or input "
                                "should be a MKLDNN tensor and bias is a dense tensor",
                                legacy_type(a, sizeof a, it), legacy_type(b, sizeof b, tl_tensor_dtype(bias)));
        return tl_set_error(TL_ERR_RUNTIME, "expected scalar type %s but found %s", tl_dtype_scalar_name(it),
                            tl_dtype_scalar_name(tl_tensor_dtype(bias)));
    }
    return 0;
}

static bool is_dilated(const conv_params *p) {
    for (int i = 0; i < p->nd; i++)
        if (p->dilation[i] != 1) return true;
    return false;
}

static int int_not_implemented(const char *kernel, int d, tl_dtype dt) {
    char name[64];
    snprintf(name, sizeof name, kernel, d);
    return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", name, tl_dtype_scalar_name(dt));
}

/* PyTorch's CPU slow kernels for integer inputs: int64 in every one; the
 * other integer dtypes only in slow_conv2d / slow_conv3d (neither dilated
 * nor transposed; 1-d runs as 2-d); bool in none. The error names the
 * kernel PyTorch picks. */
static int check_int_forward(tl_dtype dt, const conv_params *p) {
    if (tl_dtype_is_floating(dt) || dt == TL_INT64) return 0;
    const int d = p->nd == 3 ? 3 : 2;
    if (p->transposed) return int_not_implemented("slow_conv_transpose%dd_out_cpu", d, dt);
    if (is_dilated(p)) return int_not_implemented("slow_conv_dilated<>", d, dt);
    if (dt == TL_BOOL) return int_not_implemented(d == 3 ? "compute_columns3d" : "slow_conv2d_cpu", d, dt);
    return 0;
}

/* The backward kernels' integer support: the dilated (not transposed) one
 * computes int64 only; the others compute no gradient of input or weight,
 * but sum grad_bias (except slow_conv_transpose3d's, with its weight). */
static int check_int_backward(tl_dtype dt, const conv_params *p, const bool *mask) {
    if (tl_dtype_is_floating(dt)) return 0;
    const int d = p->nd == 3 ? 3 : 2;
    if (!p->transposed && is_dilated(p))
        return dt == TL_INT64 ? 0 : int_not_implemented("slow_conv_dilated<>", d, dt);
    if (p->transposed) {
        if (mask[0]) return int_not_implemented("slow_conv_transpose%dd_backward_out_cpu", d, dt);
        if (mask[1] || (mask[2] && d == 3))
            return int_not_implemented("slow_conv_transpose%dd_acc_grad_parameters_cpu", d, dt);
        return 0;
    }
    if (mask[0]) return int_not_implemented("slow_conv%dd_cpu_grad_input", d, dt);
    if (mask[1]) {
        if (dt == TL_BOOL) return int_not_implemented(d == 3 ? "compute_columns3d" : "slow_conv2d_cpu", d, dt);
        return int_not_implemented("slow_conv%dd_cpu_grad_weight", d, dt);
    }
    return 0;
}

static int check_devices(const tl_tensor *input, const tl_tensor *weight, const tl_tensor *bias) {
    const tl_device_type d = tl_tensor_device(input);
    if (tl_tensor_device(weight) != d || (bias && tl_tensor_device(bias) != d))
        return tl_set_error(TL_ERR_RUNTIME, "Expected all tensors to be on the same device, but found at least two "
                            "devices");
    if (d != TL_CPU && d != TL_META)
        return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "convolution: only CPU and meta tensors are supported");
    return 0;
}

/* "what_height: v what_width: v ..." as PyTorch's slow kernels print their
 * parameters: 2-d wording for 1-d and 2-d (1-d runs as 2-d with a unit
 * height: value unit[w]), 3-d wording for 3-d */
static const char *per_dim_values(char *buf, size_t n, int nd, int nw, const char *const *what,
                                  const int64_t *const *vals, const int64_t *unit) {
    static const char *const names[3] = {"depth", "height", "width"};
    const int first = nd == 3 ? 0 : 1, lead = 3 - nd;
    size_t k = 0;
    buf[0] = 0;
    for (int w = 0; w < nw; w++)
        for (int i = first; i < 3 && k < n; i++) {
            const int64_t v = i < lead ? unit[w] : vals[w][i - lead];
            k += (size_t)snprintf(buf + k, n - k, "%s%s_%s: %lld", k ? " " : "", what[w], names[i], (long long)v);
        }
    return buf;
}

/* PyTorch's slow kernels' check of the window (a weight with a zero spatial
 * size; slow_conv3d's wording for 3-d) */
static int check_kernel_size(const tl_tensor *weight, const conv_params *p) {
    const int64_t *ks = tl_tensor_sizes(weight) + 2;
    for (int i = 0; i < p->nd; i++)
        if (ks[i] <= 0) {
            if (p->nd == 3)
                return tl_set_error(TL_ERR_RUNTIME, "kernel size should be greater than zero, but got: %lld x %lld x "
                                    "%lld (TxHxW)", (long long)ks[0], (long long)ks[1], (long long)ks[2]);
            const char *what[1] = {"kernel"};
            const int64_t *vals[1] = {ks};
            const int64_t unit[1] = {1};
            char buf[160];
            return tl_set_error(TL_ERR_RUNTIME, "kernel size should be greater than zero, but got %s",
                                per_dim_values(buf, sizeof buf, p->nd, 1, what, vals, unit));
        }
    return 0;
}

/* The output's sizes. Transposed: PyTorch's slow_conv_transpose checks
 * (output_padding against stride / dilation, output not empty). */
static int output_sizes(const tl_tensor *input, const tl_tensor *weight, const conv_params *p, int64_t *out) {
    const int64_t *is = tl_tensor_sizes(input), *ws = tl_tensor_sizes(weight);
    out[0] = is[0];
    out[1] = p->transposed ? ws[1] * p->groups : ws[0];
    bool small = false;
    for (int i = 0; i < p->nd; i++) {
        const int64_t ext = p->dilation[i] * (ws[i + 2] - 1);
        if (p->transposed) {
            out[i + 2] = (is[i + 2] - 1) * p->stride[i] - 2 * p->padding[i] + ext + p->output_padding[i] + 1;
            small = small || out[i + 2] < 1;
        } else {
            out[i + 2] = (is[i + 2] + 2 * p->padding[i] - ext - 1) / p->stride[i] + 1;
        }
    }
    if (!p->transposed) return 0;
    bool op_ok = true;
    for (int i = 0; i < p->nd; i++)
        op_ok = op_ok && (p->output_padding[i] < p->stride[i] || p->output_padding[i] < p->dilation[i]);
    if (!op_ok) {
        const char *what[3] = {"output_padding", "stride", "dilation"};
        const int64_t *vals[3] = {p->output_padding, p->stride, p->dilation};
        const int64_t unit[3] = {0, 1, 1};
        char buf[512];
        return tl_set_error(TL_ERR_RUNTIME, "output padding must be smaller than either stride or dilation, but got %s",
                            per_dim_values(buf, sizeof buf, p->nd, 3, what, vals, unit));
    }
    if (small) {
        char a[96], b[96];
        return tl_set_error(TL_ERR_RUNTIME, "Given input size per channel: (%s). Calculated output size per channel: "
                            "(%s). Output size is too small", x_joined(a, sizeof a, p->nd, is + 2),
                            x_joined(b, sizeof b, p->nd, out + 2));
    }
    return 0;
}

/* the compute dtype: float16 / bfloat16 in float32, integers (and bool) in
 * int64 with wrapping sums (conv_int.h) */
static tl_dtype compute_dtype(tl_dtype dt) {
    if (!tl_dtype_is_floating(dt)) return TL_INT64;
    return dt == TL_FLOAT64 ? TL_FLOAT64 : TL_FLOAT32;
}

/* the three products, on the integer kernels for int64 operands */
static int prod_cols(const tl_conv_geom *g, const void *X, const void *W, const void *bias, void *Y) {
    if (g->dt == TL_INT64) return tl_conv_int_cols_from_image(g, X, W, bias, Y);
    return tl_conv_cols_from_image(g, X, W, bias, Y);
}

static int prod_image(const tl_conv_geom *g, const void *Y, const void *W, const void *bias, void *X) {
    if (g->dt == TL_INT64) return tl_conv_int_image_from_cols(g, Y, W, bias, X);
    return tl_conv_image_from_cols(g, Y, W, bias, X);
}

static int prod_weight(const tl_conv_geom *g, const void *X, const void *Y, void *dW) {
    if (g->dt == TL_INT64) return tl_conv_int_weight_grad(g, X, Y, dW);
    return tl_conv_weight_grad(g, X, Y, dW);
}

/* a contiguous copy (or reference) of t in dtype ct; NULL t gives NULL */
static int kernel_input(const tl_tensor *t, tl_dtype ct, tl_tensor **out) {
    *out = NULL;
    if (!t) return 0;
    tl_tensor *c = tl_to_dtype(t, ct, 0);
    if (!c) return -1;
    *out = tl_contiguous(c);
    tl_tensor_release(c);
    return *out ? 0 : -1;
}

/* geometry of the image / column sides: image = input (convolution) or
 * output (transposed), columns the other */
static void geometry(const conv_params *p, const tl_tensor *weight, const int64_t *in_sz, const int64_t *out_sz,
                     tl_dtype ct, tl_conv_geom *g) {
    const int64_t *img = p->transposed ? out_sz : in_sz, *cols = p->transposed ? in_sz : out_sz;
    g->N = in_sz[0];
    g->G = p->groups;
    g->Ci = img[1];
    g->Cc = cols[1];
    g->dt = ct;
    g->transposed = p->transposed;
    tl_conv_geom_spatial(g, p->nd, img + 2, cols + 2, tl_tensor_sizes(weight) + 2, p->stride, p->padding,
                         p->dilation);
}

/* a result in dtype dt from the compute-dtype tensor r (consumed) */
static tl_tensor *to_result(tl_tensor *r, tl_dtype dt) {
    if (!r || tl_tensor_dtype(r) == dt) return r;
    tl_tensor *o = tl_to_dtype(r, dt, 0);
    tl_tensor_release(r);
    return o;
}

static void release3(tl_tensor *a, tl_tensor *b, tl_tensor *c) {
    tl_tensor_release(a);
    tl_tensor_release(b);
    tl_tensor_release(c);
}

tl_tensor *tl_native_convolution(tl_keyset ks, tl_tensor *input, tl_tensor *weight, tl_tensor *bias,
                                 const int64_t *stride, int64_t stride_len, const int64_t *padding, int64_t padding_len,
                                 const int64_t *dilation, int64_t dilation_len, bool transposed,
                                 const int64_t *output_padding, int64_t output_padding_len, int64_t groups) {
    (void)ks;
    conv_params p;
    if (make_params(weight, stride, stride_len, padding, padding_len, dilation, dilation_len, transposed,
                    output_padding, output_padding_len, groups, &p) ||
        check_shape_forward(input, weight, bias, &p) || check_devices(input, weight, bias) ||
        check_dtypes(input, weight, bias) || check_kernel_size(weight, &p) ||
        check_int_forward(tl_tensor_dtype(input), &p))
        return NULL;
    int64_t osz[TL_CONV_MAXD + 2];
    if (output_sizes(input, weight, &p, osz)) return NULL;
    const tl_dtype dt = tl_tensor_dtype(input), ct = compute_dtype(dt);
    const int64_t nd = p.nd + 2;
    if (tl_tensor_device(input) == TL_META) return tl_empty(nd, osz, dt, TL_META);
    tl_tensor *x = NULL, *w = NULL, *b = NULL, *out = NULL;
    if (kernel_input(input, ct, &x) || kernel_input(weight, ct, &w) || kernel_input(bias, ct, &b) ||
        !(out = tl_empty(nd, osz, ct, TL_CPU)))
        goto fail;
    if (tl_tensor_numel(out) > 0) {
        tl_conv_geom g;
        geometry(&p, weight, tl_tensor_sizes(input), osz, ct, &g);
        const void *bp = b ? tl_tensor_data_ptr(b) : NULL;
        const int rc = transposed ? prod_image(&g, tl_tensor_data_ptr(x), tl_tensor_data_ptr(w), bp,
                                               tl_tensor_data_ptr(out))
                                  : prod_cols(&g, tl_tensor_data_ptr(x), tl_tensor_data_ptr(w), bp,
                                              tl_tensor_data_ptr(out));
        if (rc) goto fail;
    }
    release3(x, w, b);
    return to_result(out, dt);
fail:
    release3(x, w, b);
    tl_tensor_release(out);
    return NULL;
}

/* grad_bias: the sum of grad_output over every dim but 1, accumulated in
 * double (int64 operands: a wrapping integer sum) */
static tl_tensor *bias_grad(const tl_tensor *go, tl_dtype ct) {
    const int64_t N = tl_tensor_size(go, 0), C = tl_tensor_size(go, 1), NC = N * C;
    const int64_t L = NC > 0 ? tl_tensor_numel(go) / NC : 0;
    tl_tensor *r = tl_empty(1, &C, ct, TL_CPU);
    if (!r) return NULL;
    const bool f64 = ct == TL_FLOAT64;
    const void *src = tl_tensor_data_ptr(go);
    void *dst = tl_tensor_data_ptr(r);
    if (ct == TL_INT64) {
        for (int64_t c = 0; c < C; c++) {
            uint64_t acc = 0;
            for (int64_t n = 0; n < N; n++)
                for (int64_t i = 0; i < L; i++) acc += ((const uint64_t *)src)[(n * C + c) * L + i];
            ((uint64_t *)dst)[c] = acc;
        }
        return r;
    }
    for (int64_t c = 0; c < C; c++) {
        double acc = 0;
        for (int64_t n = 0; n < N; n++) {
            const int64_t off = (n * C + c) * L;
            if (f64) {
                const double *q = (const double *)src + off;
                for (int64_t i = 0; i < L; i++) acc += q[i];
            } else {
                const float *q = (const float *)src + off;
                double a = 0;
#pragma omp simd reduction(+ : a)
                for (int64_t i = 0; i < L; i++) a += q[i];
                acc += a;
            }
        }
        if (f64)
            ((double *)dst)[c] = acc;
        else
            ((float *)dst)[c] = (float)acc;
    }
    return r;
}

static bool same_sizes(const tl_tensor *t, const int64_t *sz, int64_t nd) {
    if (tl_tensor_ndim(t) != nd) return false;
    for (int64_t i = 0; i < nd; i++)
        if (tl_tensor_size(t, i) != sz[i]) return false;
    return true;
}

int tl_native_convolution_backward(tl_keyset ks, tl_tensor *grad_output, tl_tensor *input, tl_tensor *weight,
                                   const int64_t *bias_sizes, int64_t bias_sizes_len, const int64_t *stride,
                                   int64_t stride_len, const int64_t *padding, int64_t padding_len,
                                   const int64_t *dilation, int64_t dilation_len, bool transposed,
                                   const int64_t *output_padding, int64_t output_padding_len, int64_t groups,
                                   const bool *output_mask, int64_t output_mask_len, tl_tensor **ret0,
                                   tl_tensor **ret1, tl_tensor **ret2) {
    (void)ks;
    *ret0 = *ret1 = *ret2 = NULL;
    if (output_mask_len != 3)
        return tl_set_error(TL_ERR_RUNTIME, "convolution_backward(): output_mask must have 3 elements, got %lld",
                            (long long)output_mask_len);
    conv_params p;
    if (make_params(weight, stride, stride_len, padding, padding_len, dilation, dilation_len, transposed,
                    output_padding, output_padding_len, groups, &p) ||
        check_shape_forward(input, weight, NULL, &p) || check_devices(input, weight, grad_output) ||
        check_dtypes(input, weight, grad_output) || check_kernel_size(weight, &p) ||
        check_int_backward(tl_tensor_dtype(input), &p, output_mask))
        return -1;
    if (output_mask[2] && bias_sizes && (bias_sizes_len != 1 || bias_sizes[0] != tl_tensor_size(grad_output, 1)))
        return tl_set_error(TL_ERR_RUNTIME, "convolution_backward: bias_sizes must be [%lld]",
                            (long long)tl_tensor_size(grad_output, 1));
    int64_t osz[TL_CONV_MAXD + 2];
    if (output_sizes(input, weight, &p, osz)) return -1;
    const int64_t nd = p.nd + 2;
    if (!same_sizes(grad_output, osz, nd)) {
        char a[160], b[160];
        return tl_set_error(TL_ERR_RUNTIME, "Expected grad_output to have size %s (the convolution's output), but "
                            "got %s", si_shape_str(a, sizeof a, nd, osz),
                            si_shape_str(b, sizeof b, tl_tensor_ndim(grad_output), tl_tensor_sizes(grad_output)));
    }
    const tl_dtype dt = tl_tensor_dtype(input), ct = compute_dtype(dt);
    if (tl_tensor_device(input) == TL_META) {
        const int64_t C = osz[1];
        *ret0 = output_mask[0] ? tl_empty(nd, tl_tensor_sizes(input), dt, TL_META) : NULL;
        *ret1 = output_mask[1] ? tl_empty(nd, tl_tensor_sizes(weight), dt, TL_META) : NULL;
        *ret2 = output_mask[2] ? tl_empty(1, &C, dt, TL_META) : NULL;
        if ((output_mask[0] && !*ret0) || (output_mask[1] && !*ret1) || (output_mask[2] && !*ret2)) goto fail_out;
        return 0;
    }
    tl_tensor *x = NULL, *w = NULL, *go = NULL, *gi = NULL, *gw = NULL, *gb = NULL;
    if (kernel_input(grad_output, ct, &go) || kernel_input(input, ct, &x) || kernel_input(weight, ct, &w)) goto fail;
    tl_conv_geom g;
    geometry(&p, weight, tl_tensor_sizes(input), osz, ct, &g);
    const void *xp = tl_tensor_data_ptr(x), *wp = tl_tensor_data_ptr(w), *gop = tl_tensor_data_ptr(go);
    if (output_mask[0]) {
        if (!(gi = tl_empty(nd, tl_tensor_sizes(input), ct, TL_CPU))) goto fail;
        if (tl_tensor_numel(gi) > 0) {
            /* the adjoint of the forward product: columns -> image for a convolution, image -> columns transposed */
            if (tl_tensor_numel(go) == 0 || tl_tensor_numel(w) == 0) {
                memset(tl_tensor_data_ptr(gi), 0, (size_t)(tl_tensor_numel(gi) * tl_dtype_itemsize(ct)));
            } else if (transposed ? prod_cols(&g, gop, wp, NULL, tl_tensor_data_ptr(gi))
                                  : prod_image(&g, gop, wp, NULL, tl_tensor_data_ptr(gi))) {
                goto fail;
            }
        }
    }
    if (output_mask[1]) {
        if (!(gw = tl_empty(nd, tl_tensor_sizes(weight), ct, TL_CPU))) goto fail;
        if (tl_tensor_numel(gw) > 0) {
            if (tl_tensor_numel(go) == 0 || tl_tensor_numel(x) == 0) {
                memset(tl_tensor_data_ptr(gw), 0, (size_t)(tl_tensor_numel(gw) * tl_dtype_itemsize(ct)));
            } else if (transposed ? prod_weight(&g, gop, xp, tl_tensor_data_ptr(gw))
                                  : prod_weight(&g, xp, gop, tl_tensor_data_ptr(gw))) {
                goto fail;
            }
        }
    }
    if (output_mask[2] && !(gb = bias_grad(go, ct))) goto fail;
    release3(x, w, go);
    *ret0 = to_result(gi, dt);
    *ret1 = to_result(gw, dt);
    *ret2 = to_result(gb, dt);
    if ((gi && !*ret0) || (gw && !*ret1) || (gb && !*ret2)) goto fail_out;
    return 0;
fail:
    release3(x, w, go);
    release3(gi, gw, gb);
    return -1;
fail_out:
    release3(*ret0, *ret1, *ret2);
    *ret0 = *ret1 = *ret2 = NULL;
    return -1;
}

/* ----------------------------------------------- CompositeImplicitAutograd */

/* PyTorch's batchify: [C, L...] or [N, C, L...] for nd spatial dims */
static tl_tensor *batchify(tl_tensor *input, int nd, const char *fn, bool *batched) {
    const int64_t dim = tl_tensor_ndim(input);
    *batched = dim == nd + 2;
    if (dim != nd + 1 && !*batched) {
        char b[160];
        return (tl_set_error(TL_ERR_RUNTIME, "Expected %dD (unbatched) or %dD (batched) input to %s, but got input of "
                             "size: %s", nd + 1, nd + 2, fn,
                             si_shape_str(b, sizeof b, dim, tl_tensor_sizes(input))), NULL);
    }
    if (*batched) {
        tl_tensor_retain(input);
        return input;
    }
    return tl_ops_unsqueeze(input, 0);
}

/* the batched result back to the caller's form (consumes out) */
static tl_tensor *unbatchify(tl_tensor *out, bool batched) {
    if (!out || batched) return out;
    tl_tensor *r = tl_ops_squeeze_dim(out, 0);
    tl_tensor_release(out);
    return r;
}

/* conv1d/2d/3d's bias check (PyTorch's TypeMeta names) */
static int check_bias_dtype(const tl_tensor *input, const tl_tensor *bias) {
    if (bias && tl_tensor_dtype(bias) != tl_tensor_dtype(input))
        return tl_set_error(TL_ERR_RUNTIME, "Input type (%s) and bias type (%s) should be the same",
                            tl_dtype_caffe2_name(tl_tensor_dtype(input)), tl_dtype_caffe2_name(tl_tensor_dtype(bias)));
    return 0;
}

static tl_tensor *conv_nd(tl_tensor *input, tl_tensor *weight, tl_tensor *bias, const int64_t *stride,
                          int64_t stride_len, const int64_t *padding, int64_t padding_len, const int64_t *dilation,
                          int64_t dilation_len, int64_t groups, int nd, const char *fn) {
    if (check_bias_dtype(input, bias)) return NULL;
    bool batched;
    tl_tensor *x = batchify(input, nd, fn, &batched);
    if (!x) return NULL;
    const int64_t zeros[TL_CONV_MAXD] = {0, 0, 0};
    tl_tensor *out = tl_ops_convolution(x, weight, bias, stride, stride_len, padding, padding_len, dilation,
                                        dilation_len, false, zeros, nd, groups);
    tl_tensor_release(x);
    return unbatchify(out, batched);
}

tl_tensor *tl_native_conv1d_symint(tl_keyset ks, tl_tensor *input, tl_tensor *weight, tl_tensor *bias,
                                   const int64_t *stride, int64_t stride_len, const int64_t *padding,
                                   int64_t padding_len, const int64_t *dilation, int64_t dilation_len, int64_t groups) {
    (void)ks;
    return conv_nd(input, weight, bias, stride, stride_len, padding, padding_len, dilation, dilation_len, groups, 1,
                   "conv1d");
}

tl_tensor *tl_native_conv2d_symint(tl_keyset ks, tl_tensor *input, tl_tensor *weight, tl_tensor *bias,
                                   const int64_t *stride, int64_t stride_len, const int64_t *padding,
                                   int64_t padding_len, const int64_t *dilation, int64_t dilation_len, int64_t groups) {
    (void)ks;
    return conv_nd(input, weight, bias, stride, stride_len, padding, padding_len, dilation, dilation_len, groups, 2,
                   "conv2d");
}

tl_tensor *tl_native_conv3d_symint(tl_keyset ks, tl_tensor *input, tl_tensor *weight, tl_tensor *bias,
                                   const int64_t *stride, int64_t stride_len, const int64_t *padding,
                                   int64_t padding_len, const int64_t *dilation, int64_t dilation_len, int64_t groups) {
    (void)ks;
    return conv_nd(input, weight, bias, stride, stride_len, padding, padding_len, dilation, dilation_len, groups, 3,
                   "conv3d");
}

/* input zero-padded by `extra[i]` at the end of spatial dim i (cat with
 * zeros: recorded by autograd) */
static tl_tensor *pad_right(tl_tensor *input, int nd, const int64_t *extra) {
    tl_tensor *cur = input;
    tl_tensor_retain(cur);
    for (int i = 0; i < nd; i++) {
        if (extra[i] == 0) continue;
        const int64_t dim = tl_tensor_ndim(cur) - nd + i;
        int64_t sz[TL_CONV_MAXD + 2];
        memcpy(sz, tl_tensor_sizes(cur), (size_t)tl_tensor_ndim(cur) * sizeof(int64_t));
        sz[dim] = extra[i];
        tl_tensor *z = tl_ops_new_zeros(cur, sz, tl_tensor_ndim(cur), TL_DTYPE_UNDEFINED, -1, -1, false, false);
        tl_tensor *r = NULL;
        if (z) r = tl_ops_cat((tl_tensor *const[]){cur, z}, 2, dim);
        tl_tensor_release(z);
        tl_tensor_release(cur);
        if (!r) return NULL;
        cur = r;
    }
    return cur;
}

/* PyTorch's _convolution_same: padding d * (k - 1) split left / right; an
 * odd total pads the extra element on the right first (with its warning) */
static tl_tensor *convolution_same(tl_tensor *input, tl_tensor *weight, tl_tensor *bias, const int64_t *stride,
                                   int64_t stride_len, const int64_t *dilation, int64_t dilation_len, int64_t groups) {
    const int64_t k = tl_tensor_ndim(weight);
    if (k <= 2) return (tl_set_error(TL_ERR_RUNTIME, "weight should have at least three dimensions"), NULL);
    if (groups <= 0) return (tl_set_error(TL_ERR_RUNTIME, "non-positive groups is not supported"), NULL);
    const int64_t dim = k - 2;
    if (dim > TL_CONV_MAXD) return (tl_set_error(TL_ERR_RUNTIME, "unsupported ConvNd parameters"), NULL);
    if (k != tl_tensor_ndim(input)) {
        char wb[160], ib[160];
        return (tl_set_error(TL_ERR_RUNTIME, "Expected %lld-dimensional input for %lld-dimensional weight%s, but got "
                             "%lld-dimensional input of size %s instead", (long long)k, (long long)k,
                             si_shape_str(wb, sizeof wb, k, tl_tensor_sizes(weight)),
                             (long long)tl_tensor_ndim(input),
                             si_shape_str(ib, sizeof ib, tl_tensor_ndim(input), tl_tensor_sizes(input))), NULL);
    }
    if (stride_len != dim && stride_len != 1)
        return (tl_set_error(TL_ERR_RUNTIME, "stride cannot broadcast to %lld dimensions", (long long)dim), NULL);
    if (dilation_len != dim && dilation_len != 1)
        return (tl_set_error(TL_ERR_RUNTIME, "dilation cannot broadcast to %lld dimensions", (long long)dim), NULL);
    for (int64_t i = 0; i < stride_len; i++)
        if (stride[i] != 1)
            return (tl_set_error(TL_ERR_RUNTIME, "padding='same' is not supported for strided convolutions"), NULL);
    int64_t left[TL_CONV_MAXD], extra[TL_CONV_MAXD];
    bool symmetric = true;
    for (int64_t i = 0; i < dim; i++) {
        const int64_t d = dilation_len == 1 ? dilation[0] : dilation[i];
        const int64_t total = d * (tl_tensor_size(weight, i + 2) - 1);
        left[i] = total / 2;
        extra[i] = total - 2 * left[i];
        symmetric = symmetric && extra[i] == 0;
    }
    const int64_t zeros[TL_CONV_MAXD] = {0, 0, 0};
    if (symmetric)
        return tl_ops_convolution(input, weight, bias, stride, stride_len, left, dim, dilation, dilation_len, false,
                                  zeros, dim, groups);
    TL_WARN_ONCE("Using padding='same' with even kernel lengths and odd dilation may require a zero-padded copy of the "
                 "input be created");
    tl_tensor *padded = pad_right(input, (int)dim, extra);
    if (!padded) return NULL;
    tl_tensor *out = tl_ops_convolution(padded, weight, bias, stride, stride_len, left, dim, dilation, dilation_len,
                                        false, zeros, dim, groups);
    tl_tensor_release(padded);
    return out;
}

tl_tensor *tl_native__convolution_mode_symint(tl_keyset ks, tl_tensor *input, tl_tensor *weight, tl_tensor *bias,
                                              const int64_t *stride, int64_t stride_len, const char *padding,
                                              const int64_t *dilation, int64_t dilation_len, int64_t groups) {
    (void)ks;
    if (strcmp(padding, "same") == 0)
        return convolution_same(input, weight, bias, stride, stride_len, dilation, dilation_len, groups);
    if (strcmp(padding, "valid") == 0) {
        const int64_t zero[1] = {0};
        return tl_ops_convolution(input, weight, bias, stride, stride_len, zero, 1, dilation, dilation_len, false,
                                  zero, 1, groups);
    }
    return (tl_set_error(TL_ERR_RUNTIME, "Invalid padding string: '%s'", padding), NULL);
}

static tl_tensor *conv_nd_padding(tl_tensor *input, tl_tensor *weight, tl_tensor *bias, const int64_t *stride,
                                  int64_t stride_len, const char *padding, const int64_t *dilation,
                                  int64_t dilation_len, int64_t groups, int nd, const char *fn) {
    bool batched;
    tl_tensor *x = batchify(input, nd, fn, &batched);
    if (!x) return NULL;
    tl_tensor *out = tl_ops__convolution_mode(x, weight, bias, stride, stride_len, padding, dilation, dilation_len,
                                              groups);
    tl_tensor_release(x);
    return unbatchify(out, batched);
}

tl_tensor *tl_native_conv1d_padding_symint(tl_keyset ks, tl_tensor *input, tl_tensor *weight, tl_tensor *bias,
                                           const int64_t *stride, int64_t stride_len, const char *padding,
                                           const int64_t *dilation, int64_t dilation_len, int64_t groups) {
    (void)ks;
    return conv_nd_padding(input, weight, bias, stride, stride_len, padding, dilation, dilation_len, groups, 1,
                           "conv1d");
}

tl_tensor *tl_native_conv2d_padding_symint(tl_keyset ks, tl_tensor *input, tl_tensor *weight, tl_tensor *bias,
                                           const int64_t *stride, int64_t stride_len, const char *padding,
                                           const int64_t *dilation, int64_t dilation_len, int64_t groups) {
    (void)ks;
    return conv_nd_padding(input, weight, bias, stride, stride_len, padding, dilation, dilation_len, groups, 2,
                           "conv2d");
}

tl_tensor *tl_native_conv3d_padding_symint(tl_keyset ks, tl_tensor *input, tl_tensor *weight, tl_tensor *bias,
                                           const int64_t *stride, int64_t stride_len, const char *padding,
                                           const int64_t *dilation, int64_t dilation_len, int64_t groups) {
    (void)ks;
    return conv_nd_padding(input, weight, bias, stride, stride_len, padding, dilation, dilation_len, groups, 3,
                           "conv3d");
}

static tl_tensor *conv_transpose_nd(tl_tensor *input, tl_tensor *weight, tl_tensor *bias, const int64_t *stride,
                                    int64_t stride_len, const int64_t *padding, int64_t padding_len,
                                    const int64_t *output_padding, int64_t output_padding_len, int64_t groups,
                                    const int64_t *dilation, int64_t dilation_len, int nd, const char *fn) {
    bool batched;
    tl_tensor *x = batchify(input, nd, fn, &batched);
    if (!x) return NULL;
    tl_tensor *out = tl_ops_convolution(x, weight, bias, stride, stride_len, padding, padding_len, dilation,
                                        dilation_len, true, output_padding, output_padding_len, groups);
    tl_tensor_release(x);
    return unbatchify(out, batched);
}

tl_tensor *tl_native_conv_transpose1d_symint(tl_keyset ks, tl_tensor *input, tl_tensor *weight, tl_tensor *bias,
                                             const int64_t *stride, int64_t stride_len, const int64_t *padding,
                                             int64_t padding_len, const int64_t *output_padding,
                                             int64_t output_padding_len, int64_t groups, const int64_t *dilation,
                                             int64_t dilation_len) {
    (void)ks;
    return conv_transpose_nd(input, weight, bias, stride, stride_len, padding, padding_len, output_padding,
                             output_padding_len, groups, dilation, dilation_len, 1, "conv_transpose1d");
}

tl_tensor *tl_native_conv_transpose2d_symint(tl_keyset ks, tl_tensor *input, tl_tensor *weight, tl_tensor *bias,
                                             const int64_t *stride, int64_t stride_len, const int64_t *padding,
                                             int64_t padding_len, const int64_t *output_padding,
                                             int64_t output_padding_len, int64_t groups, const int64_t *dilation,
                                             int64_t dilation_len) {
    (void)ks;
    return conv_transpose_nd(input, weight, bias, stride, stride_len, padding, padding_len, output_padding,
                             output_padding_len, groups, dilation, dilation_len, 2, "conv_transpose2d");
}

tl_tensor *tl_native_conv_transpose3d_symint(tl_keyset ks, tl_tensor *input, tl_tensor *weight, tl_tensor *bias,
                                             const int64_t *stride, int64_t stride_len, const int64_t *padding,
                                             int64_t padding_len, const int64_t *output_padding,
                                             int64_t output_padding_len, int64_t groups, const int64_t *dilation,
                                             int64_t dilation_len) {
    (void)ks;
    return conv_transpose_nd(input, weight, bias, stride, stride_len, padding, padding_len, output_padding,
                             output_padding_len, groups, dilation, dilation_len, 3, "conv_transpose3d");
}
