/* uint8 bilinear / bicubic upsampling in fixed point, as PyTorch's CPU
 * kernel for uint8 images (the Pillow-derived separable resampler of
 * UpSampleKernel.cpp; docs/NN.md "Upsampling").
 *
 * Per spatial dim, output o reads the input range [xmin, xmin + xsize)
 * with the filter (triangle; cubic with A = -0.75, or -0.5 antialiased).
 * Without antialias the taps are the float kernels' (source index, lambda;
 * taps beyond the input folded onto the edge ones); antialiased, PIL's
 * (centred at scale * (o + 0.5), the support widened by the scale when
 * downsampling, normalized to sum 1). The double weights become int16 at
 * the largest precision p keeping 2 * max weight * 2^p below 2^15; an output
 * is (2^(p-1) + sum of pixel * weight) >> p clamped to [0, 255]. The width
 * is resampled first into a uint8 image, then the height; a dim whose size is
 * unchanged is not resampled at all. Planes go to the thread pool. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tl_error.h"
#include "tl_internal.h"
#include "tl_tensor.h"
#include "upsample_uint8.h"

typedef struct {
    int64_t in, out, K;  /* K: taps per output (the widest window) */
    int64_t *xmin, *xsize;
    int16_t *w;          /* [out, K] */
    unsigned prec;
} u8_dim;

/* area_pixel_compute_scale<double> */
static double dim_scale(int64_t in, int64_t out, bool align, double scale, bool has) {
    if (align) return out > 1 ? (double)(in - 1) / (double)(out - 1) : 0.0;
    return has && scale > 0. ? 1.0 / scale : (double)in / (double)out;
}

/* antialiased taps of output o (PIL's): the filter stretched by the scale
 * when downsampling, normalized; returns the largest weight */
static double taps_aa(const u8_dim *d, int64_t o, double scale, double support, bool cubic, double *w, int64_t *lo,
                      int64_t *n) {
    const double center = scale * ((double)o + 0.5), invscale = scale >= 1.0 ? 1.0 / scale : 1.0;
    int64_t a = (int64_t)(center - support + 0.5), b = (int64_t)(center + support + 0.5);
    a = a < 0 ? 0 : a;
    b = (b > d->in ? d->in : b) - a;
    *lo = a;
    *n = b < 0 ? 0 : b > d->K ? d->K : b;
    double total = 0.0, wmax = 0.0;
    for (int64_t j = 0; j < *n; j++) {
        const double x = ((double)(j + a) - center + 0.5) * invscale;
        w[j] = cubic ? tl_ups_cubic(x, -0.5) : tl_ups_tri(x);
        total += w[j];
    }
    if (total != 0.0)
        for (int64_t j = 0; j < *n; j++) {
            w[j] /= total;
            wmax = w[j] > wmax ? w[j] : wmax;
        }
    for (int64_t j = *n; j < d->K; j++) w[j] = 0.0;
    return wmax;
}

/* taps of output o without antialias: the float kernels' source index and
 * lambda, the taps that fall outside the input folded onto the edge ones;
 * returns the largest weight */
static double taps_plain(const u8_dim *d, int64_t o, double scale, bool align, bool cubic, double *w, int64_t *lo,
                         int64_t *n) {
    double real = align ? scale * (double)o : scale * ((double)o + 0.5) - 0.5;
    if (!cubic && !align && real < 0.0) real = 0.0;
    /* guard_index_and_lambda: floorf of the index rounded to float, as PyTorch's */
    int64_t idx = (int64_t)floorf((float)real);
    idx = idx < d->in - 1 ? idx : d->in - 1;
    double lambda = real - (double)idx;
    lambda = lambda < 0.0 ? 0.0 : lambda > 1.0 ? 1.0 : lambda;
    const int64_t support = d->K / 2, umin = idx - support + 1, umax = idx + support + 1;
    *lo = umin > 0 ? umin : 0;
    int64_t size = (umax < d->in ? umax : d->in) - *lo;
    *n = size < 0 ? 0 : size > d->K ? d->K : size;
    double wmax = 0.0;
    int64_t k = 0;
    for (int64_t j = 0; j < d->K; j++) w[j] = 0.0;
    for (int64_t j = 0; j < d->K; j++) {
        const double x = (double)(j + 1 - support) - lambda;
        if (umin + j <= 0)
            k = 0;
        else if (umin + j >= d->in - 1)
            k = *n - 1;
        if (k >= 0 && k < d->K) {
            w[k] += cubic ? tl_ups_cubic(x, -0.75) : tl_ups_tri(x);
            wmax = w[k] > wmax ? w[k] : wmax;
        }
        k++;
    }
    return wmax;
}

static int dim_make(u8_dim *d, bool cubic, bool aa, bool align, double sc, bool has) {
    const double scale = dim_scale(d->in, d->out, align, sc, has);
    const double interp = cubic ? 4 : 2;
    const double support = aa && scale >= 1.0 ? interp * 0.5 * scale : interp * 0.5;
    d->K = aa ? (int64_t)ceil(support) * 2 + 1 : (int64_t)interp;
    d->xmin = malloc((size_t)d->out * sizeof(int64_t));
    d->xsize = malloc((size_t)d->out * sizeof(int64_t));
    double *wf = malloc((size_t)(d->out * d->K) * sizeof(double));
    d->w = malloc((size_t)(d->out * d->K) * sizeof(int16_t));
    if (!d->xmin || !d->xsize || !wf || !d->w) {
        free(wf);
        return tl_set_error(TL_ERR_MEMORY, "upsample: out of memory");
    }
    double wmax = 0.0;
    for (int64_t o = 0; o < d->out; o++) {
        double *w = wf + o * d->K;
        const double m = aa ? taps_aa(d, o, scale, support, cubic, w, &d->xmin[o], &d->xsize[o])
                            : taps_plain(d, o, scale, align, cubic, w, &d->xmin[o], &d->xsize[o]);
        wmax = m > wmax ? m : wmax;
    }
    /* the largest precision whose doubled maximum weight still fits int16 */
    unsigned p = 0;
    for (p = 0; p < 22; p++)
        if ((int)(0.5 + wmax * (double)(1 << (p + 1))) >= (1 << 15)) break;
    d->prec = p;
    for (int64_t i = 0; i < d->out * d->K; i++) {
        const double v = wf[i] * (double)(1 << p);
        d->w[i] = (int16_t)(int)(v < 0 ? -0.5 + v : 0.5 + v);
    }
    free(wf);
    return 0;
}

static void dim_free(u8_dim *d) {
    free(d->xmin);
    free(d->xsize);
    free(d->w);
}

static uint8_t fixed_sum(const uint8_t *src, int64_t step, const u8_dim *d, int64_t o) {
    int32_t acc = (int32_t)1 << (d->prec - 1);
    const int16_t *w = d->w + o * d->K;
    for (int64_t j = 0; j < d->xsize[o]; j++) acc += (int32_t)src[(d->xmin[o] + j) * step] * w[j];
    acc >>= d->prec; /* arithmetic shift: floor, as PyTorch's */
    return (uint8_t)(acc < 0 ? 0 : acc > 255 ? 255 : acc);
}

typedef struct {
    const uint8_t *src;
    uint8_t *tmp, *dst;
    const u8_dim *h, *w;
    bool do_h, do_w;
    int failed; /* a worker could not allocate its row of sums */
} u8_ctx;

static void u8_planes(int64_t b, int64_t e, void *vc) {
    u8_ctx *c = vc;
    const int64_t ih = c->h->in, iw = c->w->in, oh = c->h->out, ow = c->w->out;
    int32_t *acc = c->do_h ? malloc((size_t)ow * sizeof(int32_t)) : NULL;
    if (c->do_h && !acc) {
        __atomic_store_n(&c->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    for (int64_t p = b; p < e; p++) {
        const uint8_t *x = c->src + p * ih * iw;
        /* width first, into the row buffer (or straight out when the height stays) */
        uint8_t *mid = c->do_h ? c->tmp + p * ih * ow : c->dst + p * oh * ow;
        if (c->do_w) {
            for (int64_t y = 0; y < ih; y++)
                for (int64_t o = 0; o < ow; o++) mid[y * ow + o] = fixed_sum(x + y * iw, 1, c->w, o);
        } else {
            memcpy(mid, x, (size_t)(ih * iw));
        }
        if (!c->do_h) continue;
        /* the height: whole rows at a time (each column's taps in index order) */
        uint8_t *y = c->dst + p * oh * ow;
        for (int64_t o = 0; o < oh; o++) {
            const int16_t *w = c->h->w + o * c->h->K;
            const uint8_t *r0 = mid + c->h->xmin[o] * ow;
            for (int64_t col = 0; col < ow; col++) acc[col] = (int32_t)1 << (c->h->prec - 1);
            for (int64_t j = 0; j < c->h->xsize[o]; j++) {
                const uint8_t *r = r0 + j * ow;
                const int32_t wj = w[j];
                for (int64_t col = 0; col < ow; col++) acc[col] += (int32_t)r[col] * wj;
            }
            for (int64_t col = 0; col < ow; col++) {
                const int32_t v = acc[col] >> c->h->prec;
                y[o * ow + col] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
            }
        }
    }
    free(acc);
}

int tl_upsample_uint8_2d(const tl_tensor *input, tl_tensor *out, bool cubic, bool antialias, bool align_corners,
                         const double *scales, const bool *has) {
    const int64_t *is = tl_tensor_sizes(input), *os = tl_tensor_sizes(out);
    const int64_t planes = is[0] * is[1];
    u8_dim h = {.in = is[2], .out = os[2]}, w = {.in = is[3], .out = os[3]};
    int rc = dim_make(&h, cubic, antialias, align_corners, scales[0], has[0]);
    if (!rc) rc = dim_make(&w, cubic, antialias, align_corners, scales[1], has[1]);
    tl_tensor *x = rc ? NULL : tl_contiguous(input);
    tl_tensor *y = x ? tl_empty(4, os, TL_UINT8, TL_CPU) : NULL;
    uint8_t *tmp = NULL;
    const bool do_h = h.out != h.in, do_w = w.out != w.in;
    if (y && do_h && planes > 0) {
        tmp = malloc((size_t)(planes * h.in * w.out));
        if (!tmp) rc = tl_set_error(TL_ERR_MEMORY, "upsample: out of memory");
    }
    if (y && !rc && planes > 0 && tl_tensor_numel(y) > 0) {
        u8_ctx c = {tl_tensor_data_ptr(x), tmp, tl_tensor_data_ptr(y), &h, &w, do_h, do_w, 0};
        const int64_t work = (h.in * w.out * w.K + h.out * w.out * h.K) + 1;
        tl_parallel_for(planes, 65536 / work > 0 ? 65536 / work : 1, u8_planes, &c);
        if (c.failed) rc = tl_set_error(TL_ERR_MEMORY, "upsample: out of memory");
    }
    if (y && !rc) rc = tl_copy_(out, y);
    if (!y && !rc) rc = -1;
    free(tmp);
    tl_tensor_release(x);
    tl_tensor_release(y);
    dim_free(&h);
    dim_free(&w);
    return rc;
}
