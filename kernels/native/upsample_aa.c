/* Antialiased bilinear / bicubic 2-d upsampling (_upsample_bilinear2d_aa,
 * _upsample_bicubic2d_aa and their backward; docs/NN.md "Upsampling"), as
 * PyTorch's CPU kernels (UpSampleKernel.cpp, the separable "aa" path).
 *
 * Per spatial dim, output o reads the input range [xmin, xmin + xsize) with
 * PIL's filter (triangle, or cubic with A = -0.5) centred at scale * (o +
 * 0.5) and stretched by the scale when downsampling, the weights normalized
 * to sum 1; the weights are computed in the input's dtype (float32 rounds
 * where PyTorch's float arithmetic does). The forward resamples the width
 * first into an intermediate image of the input's dtype, then the height
 * (a dim whose size is unchanged is skipped); each output is the sum of
 * taps in index order. The backward adds wx * wy * grad to every tap of every
 * output, in PyTorch's order. uint8 goes to upsample_uint8.c's fixed point;
 * other dtypes raise PyTorch's NotImplementedError. Planes go to threads. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tl_error.h"
#include "tl_internal.h"
#include "tl_tensor.h"
#include "upsample_aa.h"
#include "upsample_uint8.h"

typedef struct {
    int64_t in, out, K;
    int64_t *xmin, *xsize;
    double *w; /* [out, K]: float32 values when the dtype is float32 */
} aa_dim;

static float tri_f(float x) {
    x = fabsf(x);
    return x < 1.0f ? (float)(1.0 - (double)x) : 0.0f;
}

static float cubic_f(float x) {
    const float a = -0.5f;
    x = fabsf(x);
    if (x < 1.0f) return ((a + 2) * x - (a + 3)) * x * x + 1;
    if (x < 2.0f) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
    return 0.0f;
}

/* area_pixel_compute_scale<float> / <double> */
static double aa_scale(bool f32, int64_t in, int64_t out, bool align, double scale, bool has) {
    if (f32) {
        if (align) return out > 1 ? (double)((float)(in - 1) / (float)(out - 1)) : 0.0;
        return has && scale > 0. ? (double)(float)(1.0 / scale) : (double)((float)in / (float)out);
    }
    if (align) return out > 1 ? (double)(in - 1) / (double)(out - 1) : 0.0;
    return has && scale > 0. ? 1.0 / scale : (double)in / (double)out;
}

/* one output's taps in float32, with C++'s promotions of PyTorch's
 * float-typed computation (double literals widen, stores round) */
static void taps_f32(aa_dim *d, int64_t o, float scale, float support, bool cubic) {
    const float center = (float)((double)scale * ((double)o + 0.5));
    const float invscale = scale >= 1.0f ? (float)(1.0 / (double)scale) : 1.0f;
    int64_t lo = (int64_t)((double)(center - support) + 0.5), hi = (int64_t)((double)(center + support) + 0.5);
    lo = lo < 0 ? 0 : lo;
    hi = (hi > d->in ? d->in : hi) - lo;
    const int64_t n = hi < 0 ? 0 : hi > d->K ? d->K : hi;
    float w[d->K], total = 0.0f;
    for (int64_t j = 0; j < n; j++) {
        const float x = (float)(((double)((float)(j + lo) - center) + 0.5) * (double)invscale);
        w[j] = cubic ? cubic_f(x) : tri_f(x);
        total += w[j];
    }
    for (int64_t j = 0; j < d->K; j++) d->w[o * d->K + j] = j < n ? (double)(total != 0.0f ? w[j] / total : w[j]) : 0.0;
    d->xmin[o] = lo;
    d->xsize[o] = n;
}

static void taps_f64(aa_dim *d, int64_t o, double scale, double support, bool cubic) {
    const double center = scale * ((double)o + 0.5), invscale = scale >= 1.0 ? 1.0 / scale : 1.0;
    int64_t lo = (int64_t)(center - support + 0.5), hi = (int64_t)(center + support + 0.5);
    lo = lo < 0 ? 0 : lo;
    hi = (hi > d->in ? d->in : hi) - lo;
    const int64_t n = hi < 0 ? 0 : hi > d->K ? d->K : hi;
    double *w = d->w + o * d->K, total = 0.0;
    for (int64_t j = 0; j < n; j++) {
        const double x = ((double)(j + lo) - center + 0.5) * invscale;
        w[j] = cubic ? tl_ups_cubic(x, -0.5) : tl_ups_tri(x);
        total += w[j];
    }
    for (int64_t j = 0; j < d->K; j++) w[j] = j < n ? (total != 0.0 ? w[j] / total : w[j]) : 0.0;
    d->xmin[o] = lo;
    d->xsize[o] = n;
}

static int dim_make(aa_dim *d, bool f32, bool cubic, bool align, double sc, bool has) {
    const double scale = aa_scale(f32, d->in, d->out, align, sc, has), interp = cubic ? 4 : 2;
    double support = scale >= 1.0 ? interp * 0.5 * scale : interp * 0.5;
    if (f32) support = (float)support;
    d->K = (int64_t)ceil(support) * 2 + 1;
    d->xmin = malloc((size_t)d->out * sizeof(int64_t));
    d->xsize = malloc((size_t)d->out * sizeof(int64_t));
    d->w = malloc((size_t)(d->out * d->K) * sizeof(double));
    if (!d->xmin || !d->xsize || !d->w) return tl_set_error(TL_ERR_MEMORY, "upsample: out of memory");
    for (int64_t o = 0; o < d->out; o++) {
        if (f32)
            taps_f32(d, o, (float)scale, (float)support, cubic);
        else
            taps_f64(d, o, scale, support, cubic);
    }
    return 0;
}

static void dim_free(aa_dim *d) {
    free(d->xmin);
    free(d->xsize);
    free(d->w);
}

typedef struct {
    const void *src;
    void *tmp, *dst;
    const aa_dim *h, *w;
    bool f32, do_h, do_w;
} aa_ctx;

/* one output of a pass: the taps of output o along a line of stride `step` */
static double tap_sum(const aa_ctx *c, const void *line, int64_t step, const aa_dim *d, int64_t o) {
    const double *w = d->w + o * d->K;
    const int64_t a = d->xmin[o];
    if (c->f32) {
        const float *x = line;
        float s = x[a * step] * (float)w[0];
        for (int64_t j = 1; j < d->xsize[o]; j++) s += x[(a + j) * step] * (float)w[j];
        return s;
    }
    const double *x = line;
    double s = x[a * step] * w[0];
    for (int64_t j = 1; j < d->xsize[o]; j++) s += x[(a + j) * step] * w[j];
    return s;
}

static void put(bool f32, void *p, int64_t i, double v) {
    if (f32)
        ((float *)p)[i] = (float)v;
    else
        ((double *)p)[i] = v;
}

static void fwd_planes(int64_t b, int64_t e, void *vc) {
    const aa_ctx *c = vc;
    const int64_t ih = c->h->in, iw = c->w->in, oh = c->h->out, ow = c->w->out, es = c->f32 ? 4 : 8;
    for (int64_t p = b; p < e; p++) {
        const char *x = (const char *)c->src + p * ih * iw * es;
        char *mid = c->do_h ? (char *)c->tmp + p * ih * ow * es : (char *)c->dst + p * oh * ow * es;
        if (c->do_w) {
            for (int64_t y = 0; y < ih; y++)
                for (int64_t o = 0; o < ow; o++) put(c->f32, mid, y * ow + o, tap_sum(c, x + y * iw * es, 1, c->w, o));
        } else {
            memcpy(mid, x, (size_t)(ih * iw * es));
        }
        if (!c->do_h) continue;
        char *y = (char *)c->dst + p * oh * ow * es;
        for (int64_t o = 0; o < oh; o++)
            for (int64_t col = 0; col < ow; col++) put(c->f32, y, o * ow + col, tap_sum(c, mid + col * es, ow, c->h, o));
    }
}

/* grad_input[p] += wx * wy * grad_output[p] over every output's taps */
static void bwd_planes(int64_t b, int64_t e, void *vc) {
    const aa_ctx *c = vc;
    const int64_t iw = c->w->in, ih = c->h->in, oh = c->h->out, ow = c->w->out;
    for (int64_t p = b; p < e; p++)
        for (int64_t y = 0; y < oh; y++) {
            const double *wy = c->h->w + y * c->h->K;
            for (int64_t x = 0; x < ow; x++) {
                const double *wx = c->w->w + x * c->w->K;
                const int64_t y0 = c->h->xmin[y], x0 = c->w->xmin[x], gi = (p * oh + y) * ow + x;
                for (int64_t a = 0; a < c->h->xsize[y]; a++)
                    for (int64_t k = 0; k < c->w->xsize[x]; k++) {
                        const int64_t t = (p * ih + y0 + a) * iw + x0 + k;
                        if (c->f32) {
                            float *g = c->tmp;
                            g[t] += (float)wx[k] * (float)wy[a] * ((const float *)c->src)[gi];
                        } else {
                            double *g = c->tmp;
                            g[t] += wx[k] * wy[a] * ((const double *)c->src)[gi];
                        }
                    }
            }
        }
}

int tl_upsample_aa_2d(const tl_tensor *src, tl_tensor *dst, bool backward, bool cubic, bool align_corners,
                      const double *scales, const bool *has) {
    const tl_dtype dt = tl_tensor_dtype(src);
    if (!backward && dt == TL_UINT8) return tl_upsample_uint8_2d(src, dst, cubic, true, align_corners, scales, has);
    if (dt != TL_FLOAT32 && dt != TL_FLOAT64) {
        const char *name = !backward ? "compute_index_ranges_weights"
                           : cubic   ? "upsample_bicubic2d_aa_backward_cpu"
                                     : "upsample_bilinear2d_aa_backward_cpu";
        return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", name, tl_dtype_scalar_name(dt));
    }
    const bool f32 = dt == TL_FLOAT32;
    /* in: the image side (input forward, grad_input backward) */
    const int64_t *is = tl_tensor_sizes(backward ? dst : src), *os = tl_tensor_sizes(backward ? src : dst);
    const int64_t planes = is[0] * is[1], es = f32 ? 4 : 8;
    aa_dim h = {.in = is[2], .out = os[2]}, w = {.in = is[3], .out = os[3]};
    int rc = dim_make(&h, f32, cubic, align_corners, scales[0], has[0]);
    if (!rc) rc = dim_make(&w, f32, cubic, align_corners, scales[1], has[1]);
    tl_tensor *x = rc ? NULL : tl_contiguous(src);
    tl_tensor *y = x ? (backward ? tl_zeros(4, is, dt, TL_CPU) : tl_empty(4, os, dt, TL_CPU)) : NULL;
    void *tmp = NULL;
    const bool do_h = h.out != h.in, do_w = w.out != w.in;
    if (y && !backward && do_h && planes > 0) {
        tmp = malloc((size_t)(planes * h.in * w.out * es));
        if (!tmp) rc = tl_set_error(TL_ERR_MEMORY, "upsample: out of memory");
    }
    if (y && !rc && planes > 0 && tl_tensor_numel(y) > 0) {
        aa_ctx c = {tl_tensor_data_ptr(x), tmp, tl_tensor_data_ptr(y), &h, &w, f32, do_h, do_w};
        const int64_t work = h.in * w.out * w.K + h.out * w.out * h.K + 1;
        if (backward) {
            c.tmp = tl_tensor_data_ptr(y);
            tl_parallel_for(planes, 65536 / work > 0 ? 65536 / work : 1, bwd_planes, &c);
        } else {
            tl_parallel_for(planes, 65536 / work > 0 ? 65536 / work : 1, fwd_planes, &c);
        }
    }
    if (y && !rc) rc = tl_copy_(dst, y);
    if (!y && !rc) rc = -1;
    free(tmp);
    tl_tensor_release(x);
    tl_tensor_release(y);
    dim_free(&h);
    dim_free(&w);
    return rc;
}
