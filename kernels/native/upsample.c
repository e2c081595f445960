/* Upsampling operators: upsample_nearest1d/2d/3d, _upsample_nearest_exact1d/2d/3d,
 * upsample_linear1d, upsample_bilinear2d, upsample_bicubic2d,
 * upsample_trilinear3d, _upsample_bilinear2d_aa, _upsample_bicubic2d_aa
 * (structured, + their _backward; the antialiased ones in upsample_aa.c), and the .vec
 * overloads PyTorch writes over them (CompositeImplicitAutograd).
 *
 * Every mode is separable: per spatial dim, each output index reads T input
 * indices (nearest 1, linear 2, cubic 4) with weights, computed as PyTorch's
 * CPU kernels compute them (aten/src/ATen/native/UpSample.h: the source index
 * and scale rules, in float for float32 / float16 / bfloat16 and double for
 * float64). An output element is the nested sum over the dims, outermost dim
 * last (PyTorch's `Interpolate<n>` order); the backward adds each output
 * gradient into the same taps. Nearest copies elements of any dtype by size;
 * uint8 bilinear / bicubic run PyTorch's fixed-point kernel (upsample_uint8.c).
 * Inputs are made contiguous (NCDHW); the N * C planes go to threads. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/_upsample_bicubic2d_aa.h"
#include "ops/_upsample_bicubic2d_aa_backward.h"
#include "ops/_upsample_bilinear2d_aa.h"
#include "ops/_upsample_bilinear2d_aa_backward.h"
#include "ops/_upsample_nearest_exact1d.h"
#include "ops/_upsample_nearest_exact1d_backward.h"
#include "ops/_upsample_nearest_exact2d.h"
#include "ops/_upsample_nearest_exact2d_backward.h"
#include "ops/_upsample_nearest_exact3d.h"
#include "ops/_upsample_nearest_exact3d_backward.h"
#include "ops/upsample_bicubic2d.h"
#include "ops/upsample_bicubic2d_backward.h"
#include "ops/upsample_bilinear2d.h"
#include "ops/upsample_bilinear2d_backward.h"
#include "ops/upsample_linear1d.h"
#include "ops/upsample_linear1d_backward.h"
#include "ops/upsample_nearest1d.h"
#include "ops/upsample_nearest1d_backward.h"
#include "ops/upsample_nearest2d.h"
#include "ops/upsample_nearest2d_backward.h"
#include "ops/upsample_nearest3d.h"
#include "ops/upsample_nearest3d_backward.h"
#include "ops/upsample_trilinear3d.h"
#include "ops/upsample_trilinear3d_backward.h"
#include "tl_structured.h"
#include "tl_tensor.h"
#include "nn_common.h"
#include "upsample_aa.h"
#include "upsample_uint8.h"

enum { NEAREST, NEAREST_EXACT, LINEAR, CUBIC, AA_LINEAR, AA_CUBIC }; /* AA_*: upsample_aa.c */

/* one spatial dim's taps: out[o] reads in[idx[o*t + j]] with weight w[o*t + j] */
typedef struct {
    int64_t in, out, t;
    int64_t *idx;
    double *w;
} ups_dim;

/* ------------------------------------------------------------ PyTorch's index rules */

/* compute_scales_value<float> / <double> */
static double scales_value(int fl, double scale, bool has, int64_t in, int64_t out) {
    if (fl) return has && scale > 0. ? (float)(1.0 / scale) : (float)in / (float)out;
    return has && scale > 0. ? 1.0 / scale : (double)in / (double)out;
}

/* area_pixel_compute_scale */
static double area_scale(int fl, int64_t in, int64_t out, bool align, double scale, bool has) {
    if (align) {
        if (out <= 1) return 0.;
        return fl ? (double)((float)(in - 1) / (float)(out - 1)) : (double)(in - 1) / (double)(out - 1);
    }
    return scales_value(fl, scale, has, in, out);
}

/* area_pixel_compute_source_index in float (fl) or double */
static double source_index(int fl, double scale, int64_t dst, bool align, int cubic) {
    if (fl) {
        const float s = (float)scale;
        if (align) return s * (float)dst;
        const float r = s * ((float)dst + 0.5f) - 0.5f;
        return (!cubic && r < 0.f) ? 0. : r;
    }
    if (align) return scale * (double)dst;
    const double r = scale * ((double)dst + 0.5) - 0.5;
    return (!cubic && r < 0.) ? 0. : r;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t clamp64(int64_t v, int64_t n) { return v < 0 ? 0 : v >= n ? n - 1 : v; }

/* get_cubic_upsample_coefficients (A = -0.75), in float or double */
static void cubic_coeffs(int fl, double t, double c[4]) {
    if (fl) {
        const float A = -0.75f, x1 = (float)t, x2 = 1.f - x1;
        float y = x1 + 1.f;
        c[0] = ((A * y - 5.f * A) * y + 8.f * A) * y - 4.f * A;
        c[1] = ((A + 2.f) * x1 - (A + 3.f)) * x1 * x1 + 1.f;
        c[2] = ((A + 2.f) * x2 - (A + 3.f)) * x2 * x2 + 1.f;
        y = x2 + 1.f;
        c[3] = ((A * y - 5.f * A) * y + 8.f * A) * y - 4.f * A;
        return;
    }
    const double A = -0.75, x1 = t, x2 = 1. - x1;
    double y = x1 + 1.;
    c[0] = ((A * y - 5. * A) * y + 8. * A) * y - 4. * A;
    c[1] = ((A + 2.) * x1 - (A + 3.)) * x1 * x1 + 1.;
    c[2] = ((A + 2.) * x2 - (A + 3.)) * x2 * x2 + 1.;
    y = x2 + 1.;
    c[3] = ((A * y - 5. * A) * y + 8. * A) * y - 4. * A;
}

/* fills d's taps (d->in / d->out set). PyTorch's shortcuts: linear copies
 * a dim whose sizes are equal (compute_source_index_and_lambda), both ways;
 * nearest's backward and 2-d forward (nearest_idx; `shortcut`) also copy
 * equal sizes and halve the index at twice the size, while its 1-d and 3-d
 * forward (HelperInterpNearest) always scale */
static int dim_taps(ups_dim *d, int mode, int fl, bool align, double scale, bool has, int shortcut) {
    d->t = mode == LINEAR ? 2 : mode == CUBIC ? 4 : 1;
    d->idx = malloc((size_t)(d->out * d->t) * sizeof(int64_t));
    d->w = malloc((size_t)(d->out * d->t) * sizeof(double));
    if (!d->idx || !d->w) return tl_set_error(TL_ERR_RUNTIME, "upsample: out of memory");
    const int64_t in = d->in, out = d->out;
    if (mode == NEAREST || mode == NEAREST_EXACT) {
        const float s = (float)scales_value(1, scale, has, in, out);
        for (int64_t o = 0; o < out; o++) {
            int64_t i;
            if (mode == NEAREST_EXACT) i = min64((int64_t)floorf((float)(((double)o + 0.5) * (double)s)), in - 1);
            else if (shortcut && out == in) i = o;
            else if (shortcut && out == 2 * in) i = o >> 1;
            else i = min64((int64_t)floorf((float)o * s), in - 1);
            d->idx[o] = i;
            d->w[o] = 1.;
        }
        return 0;
    }
    const double sc = area_scale(fl, in, out, align, scale, has);
    for (int64_t o = 0; o < out; o++) {
        int64_t *ix = d->idx + o * d->t;
        double *w = d->w + o * d->t;
        const double real = source_index(fl, sc, o, align, mode == CUBIC);
        if (mode == LINEAR) {
            if (in == out) {
                ix[0] = ix[1] = o;
                w[0] = 1.;
                w[1] = 0.;
                continue;
            }
            /* guard_index_and_lambda */
            const int64_t i = min64((int64_t)floorf((float)real), in - 1);
            double lam = fl ? (double)((float)real - (float)i) : real - (double)i;
            lam = lam < 0. ? 0. : lam > 1. ? 1. : lam;
            ix[0] = i;
            ix[1] = i + (i < in - 1 ? 1 : 0);
            w[0] = fl ? (double)(1.f - (float)lam) : 1. - lam;
            w[1] = lam;
        } else {
            const int64_t i = (int64_t)floorf((float)real);
            cubic_coeffs(fl, fl ? (double)((float)real - (float)i) : real - (double)i, w);
            for (int j = 0; j < 4; j++) ix[j] = clamp64(i - 1 + j, in);
        }
    }
    return 0;
}

/* ------------------------------------------------------------ plane loops */

typedef struct {
    ups_dim d[3];           /* depth, height, width (unused leading dims: 1 -> 1, weight 1) */
    const char *src;
    char *dst;
    int64_t in_plane, out_plane, isz;
    int copy, f64, bwd;
    int failed; /* a thread could not allocate its row buffer (every writer stores 1) */
} ups_ctx;

/* forward: per output row, the T_d x T_h input rows interpolated along W
 * into `rows` (the inner sums of PyTorch's nested order), then combined
 * along H and D in contiguous, vectorizable passes: the same arithmetic in
 * the same order as the nested sum */
#define UPS_FWD(T)                                                                                                    \
    static void fwd_##T(const ups_ctx *c, const T *x, T *y, T *rows) {                                                \
        const ups_dim *D = &c->d[0], *H = &c->d[1], *W = &c->d[2];                                                    \
        const int64_t ow_n = W->out, tw = W->t;                                                                       \
        T *acc_h = rows + D->t * H->t * ow_n;                                                                         \
        for (int64_t od = 0; od < D->out; od++)                                                                       \
            for (int64_t oh = 0; oh < H->out; oh++, y += ow_n) {                                                      \
                for (int64_t a = 0; a < D->t; a++)                                                                    \
                    for (int64_t b = 0; b < H->t; b++) {                                                              \
                        const T *xh = x + (D->idx[od * D->t + a] * H->in + H->idx[oh * H->t + b]) * W->in;            \
                        T *r = rows + (a * H->t + b) * ow_n;                                                          \
                        for (int64_t ow = 0; ow < ow_n; ow++) {                                                       \
                            T acc_w = 0;                                                                              \
                            for (int64_t e = 0; e < tw; e++) acc_w += xh[W->idx[ow * tw + e]] * (T)W->w[ow * tw + e]; \
                            r[ow] = acc_w;                                                                            \
                        }                                                                                             \
                    }                                                                                                 \
                for (int64_t ow = 0; ow < ow_n; ow++) y[ow] = 0;                                                      \
                for (int64_t a = 0; a < D->t; a++) {                                                                  \
                    for (int64_t ow = 0; ow < ow_n; ow++) acc_h[ow] = 0;                                              \
                    for (int64_t b = 0; b < H->t; b++) {                                                              \
                        const T wh = (T)H->w[oh * H->t + b], *r = rows + (a * H->t + b) * ow_n;                       \
                        for (int64_t ow = 0; ow < ow_n; ow++) acc_h[ow] += r[ow] * wh;                                \
                    }                                                                                                 \
                    const T wd = (T)D->w[od * D->t + a];                                                              \
                    for (int64_t ow = 0; ow < ow_n; ow++) y[ow] += acc_h[ow] * wd;                                    \
                }                                                                                                     \
            }                                                                                                         \
    }                                                                                                                 \
    static void bwd_##T(const ups_ctx *c, const T *g, T *gi) {                                                        \
        const ups_dim *D = &c->d[0], *H = &c->d[1], *W = &c->d[2];                                                    \
        memset(gi, 0, (size_t)c->in_plane * sizeof(T));                                                               \
        for (int64_t od = 0; od < D->out; od++)                                                                       \
            for (int64_t oh = 0; oh < H->out; oh++)                                                                   \
                for (int64_t ow = 0; ow < W->out; ow++) {                                                             \
                    const T gv = *g++;                                                                                \
                    for (int64_t a = 0; a < D->t; a++) {                                                              \
                        T *gd = gi + D->idx[od * D->t + a] * H->in * W->in;                                           \
                        const T wd = (T)D->w[od * D->t + a];                                                          \
                        for (int64_t b = 0; b < H->t; b++) {                                                          \
                            T *gh = gd + H->idx[oh * H->t + b] * W->in;                                               \
                            const T wdh = wd * (T)H->w[oh * H->t + b];                                                \
                            for (int64_t e = 0; e < W->t; e++)                                                        \
                                gh[W->idx[ow * W->t + e]] += wdh * (T)W->w[ow * W->t + e] * gv;                       \
                        }                                                                                             \
                    }                                                                                                 \
                }                                                                                                     \
    }
UPS_FWD(float)
UPS_FWD(double)

/* nearest forward of any dtype: element copies by size */
static void copy_plane(const ups_ctx *c, const char *x, char *y) {
    const ups_dim *D = &c->d[0], *H = &c->d[1], *W = &c->d[2];
    const int64_t sz = c->isz;
    for (int64_t od = 0; od < D->out; od++)
        for (int64_t oh = 0; oh < H->out; oh++) {
            const char *row = x + (D->idx[od] * H->in + H->idx[oh]) * W->in * sz;
            if (sz == 4)
                for (int64_t ow = 0; ow < W->out; ow++, y += 4) memcpy(y, row + W->idx[ow] * 4, 4);
            else if (sz == 8)
                for (int64_t ow = 0; ow < W->out; ow++, y += 8) memcpy(y, row + W->idx[ow] * 8, 8);
            else
                for (int64_t ow = 0; ow < W->out; ow++, y += sz) memcpy(y, row + W->idx[ow] * sz, (size_t)sz);
        }
}

static void run_planes(int64_t b, int64_t e, void *ctx) {
    const ups_ctx *c = ctx;
    const int64_t sp = c->bwd ? c->out_plane : c->in_plane, dp = c->bwd ? c->in_plane : c->out_plane;
    /* the forward's interpolated rows and its H accumulator */
    void *rows = NULL;
    if (!c->copy && !c->bwd) {
        rows = malloc((size_t)((c->d[0].t * c->d[1].t + 1) * c->d[2].out * c->isz));
        if (!rows) {
            ((ups_ctx *)c)->failed = 1;
            return;
        }
    }
    for (int64_t p = b; p < e; p++) {
        const char *s = c->src + p * sp * c->isz;
        char *d = c->dst + p * dp * c->isz;
        if (c->copy) copy_plane(c, s, d);
        else if (c->bwd) c->f64 ? bwd_double(c, (const double *)s, (double *)d) : bwd_float(c, (const float *)s, (float *)d);
        else if (c->f64) fwd_double(c, (const double *)s, (double *)d, rows);
        else fwd_float(c, (const float *)s, (float *)d, rows);
    }
    free(rows);
}

/* ------------------------------------------------------------ checks (PyTorch's upsample_Nd_common_check) */

static const char *const DIM_NAMES[3] = {"D", "H", "W"};

/* full output shape of an nsp-spatial-dim upsample of input_size into full */
static int common_check(int nsp, const int64_t *osz, int64_t olen, const int64_t *isz, int64_t ilen, int64_t *full) {
    if (olen != nsp)
        return tl_set_error(TL_ERR_RUNTIME, "It is expected output_size equals to %d, but got size %lld", nsp,
                            (long long)olen);
    if (ilen != nsp + 2)
        return tl_set_error(TL_ERR_RUNTIME, "It is expected input_size equals to %d, but got size %lld", nsp + 2,
                            (long long)ilen);
    int ok = 1;
    for (int i = 0; i < nsp; i++) ok = ok && isz[i + 2] > 0 && osz[i] > 0;
    if (!ok) {
        char in[160], out[160];
        size_t ki = 0, ko = 0;
        for (int i = 0; i < nsp; i++) {
            const char *nm = DIM_NAMES[3 - nsp + i];
            ki += (size_t)snprintf(in + ki, sizeof in - ki, "%s%s: %lld", i ? ", " : "", nm, (long long)isz[i + 2]);
            ko += (size_t)snprintf(out + ko, sizeof out - ko, "%s%s: %lld", i ? ", " : "", nm, (long long)osz[i]);
        }
        return tl_set_error(TL_ERR_RUNTIME,
                            "Input and output sizes should be greater than 0, but got input (%s)%s output (%s)", in,
                            nsp == 1 ? " and" : "", out);
    }
    full[0] = isz[0];
    full[1] = isz[1];
    for (int i = 0; i < nsp; i++) full[i + 2] = osz[i];
    return 0;
}

static int forward_meta(tl_structured *s, int nsp, tl_tensor *self, const int64_t *osz, int64_t olen) {
    const int64_t nd = tl_tensor_ndim(self);
    int64_t full[5];
    if (common_check(nsp, osz, olen, tl_tensor_sizes(self), nd, full)) return -1;
    int64_t rest = 1;
    for (int64_t i = 1; i < nd; i++) rest *= tl_tensor_sizes(self)[i];
    if (tl_tensor_numel(self) == 0 && rest == 0) {
        char b[128];
        fmt_shape(b, sizeof b, tl_tensor_sizes(self), nd);
        return tl_set_error(TL_ERR_RUNTIME, "Non-empty %dD data tensor expected but got a tensor with sizes %s",
                            nsp + 2, b);
    }
    return tl_structured_set_output(s, 0, nd, full, NULL, tl_tensor_dtype(self));
}

static int backward_meta(tl_structured *s, int nsp, tl_tensor *g, const int64_t *osz, int64_t olen,
                         const int64_t *isz, int64_t ilen) {
    int64_t full[5];
    if (common_check(nsp, osz, olen, isz, ilen, full)) return -1;
    if (tl_tensor_ndim(g) != nsp + 2)
        return tl_set_error(TL_ERR_RUNTIME, "Expected grad_output to be a tensor of dimension %d but got: dimension %lld",
                            nsp + 2, (long long)tl_tensor_ndim(g));
    for (int i = 0; i < nsp + 2; i++)
        if (tl_tensor_sizes(g)[i] != full[i])
            return tl_set_error(TL_ERR_RUNTIME,
                                "Expected grad_output to have the same shape as output; output.size(%d) = %lld but "
                                "got grad_output.size(%d) = %lld",
                                i, (long long)full[i], i, (long long)tl_tensor_sizes(g)[i]);
    return tl_structured_set_output(s, 0, ilen, isz, NULL, tl_tensor_dtype(g));
}

/* ------------------------------------------------------------ the driver */

static const char *const KERNEL_NAMES[4][2] = {
    {"upsample_nearest", "upsample_nearest_backward"},
    {"_upsample_nearest_exact", "_upsample_nearest_exact_backward"},
    {"upsample_linear", "upsample_linear_backward"},
    {"upsample_bicubic2d_out_frame", "upsample_bicubic2d_backward_out_frame"},
};

/* src: the input (forward) or grad_output (backward); dst: out / grad_input,
 * whose shape the meta function has set; in5 / out5: the full input / output
 * shapes; scales: per spatial dim (has[i] false: none) */
static int run(int mode, int bwd, int nsp, tl_tensor *src, tl_tensor *dst, const int64_t *in_full,
               const int64_t *out_full, bool align, const double *scales, const bool *has) {
    const tl_dtype dt = tl_tensor_dtype(src);
    if (mode == AA_LINEAR || mode == AA_CUBIC)
        return tl_upsample_aa_2d(src, dst, bwd, mode == AA_CUBIC, align, scales, has);
    /* uint8 images: PyTorch's fixed-point resampler (upsample_uint8.c) */
    if (!bwd && nsp == 2 && (mode == LINEAR || mode == CUBIC) && dt == TL_UINT8)
        return tl_upsample_uint8_2d(src, dst, mode == CUBIC, false, align, scales, has);
    const int copy = !bwd && (mode == NEAREST || mode == NEAREST_EXACT) && dt != TL_BOOL;
    if (!copy && !tl_dtype_is_floating(dt))
        return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", KERNEL_NAMES[mode][bwd],
                            tl_dtype_scalar_name(dt));
    const tl_dtype ct = copy ? dt : compute_dtype(dt);
    ups_ctx c;
    memset(&c, 0, sizeof c);
    c.copy = copy;
    c.bwd = bwd;
    c.f64 = ct == TL_FLOAT64;
    c.isz = tl__itemsize(ct);
    int rc = 0;
    /* bicubic's backward copies when every spatial size is unchanged */
    int same = 1;
    for (int i = 0; i < nsp; i++) same = same && in_full[i + 2] == out_full[i + 2];
    if (bwd && mode == CUBIC && same) mode = NEAREST;
    for (int i = 0; i < 3 && rc == 0; i++) {
        ups_dim *d = &c.d[i];
        const int k = i - (3 - nsp);
        d->in = k < 0 ? 1 : in_full[k + 2];
        d->out = k < 0 ? 1 : out_full[k + 2];
        rc = dim_taps(d, k < 0 ? NEAREST : mode, dt != TL_FLOAT64, align, k < 0 ? 0. : scales[k],
                      k < 0 ? false : has[k], bwd || nsp == 2);
    }
    int64_t planes = in_full[0] * in_full[1];
    c.in_plane = c.d[0].in * c.d[1].in * c.d[2].in;
    c.out_plane = c.d[0].out * c.d[1].out * c.d[2].out;
    tl_tensor *x = rc == 0 ? contig_as(src, ct) : NULL;
    tl_tensor *o = x ? begin_dst(dst, ct, &src, 1) : NULL;
    if (o && planes > 0) {
        c.src = tl_tensor_data_ptr(x);
        c.dst = tl_tensor_data_ptr(o);
        const int64_t work = (c.in_plane > c.out_plane ? c.in_plane : c.out_plane) * c.d[2].t * c.d[1].t + 1;
        const int64_t grain = 32768 / work;
        tl_parallel_for(planes, grain > 0 ? grain : 1, run_planes, &c);
    }
    for (int i = 0; i < 3; i++) {
        free(c.d[i].idx);
        free(c.d[i].w);
    }
    tl_tensor_release(x);
    if (rc == 0 && c.failed) rc = tl_set_error(TL_ERR_RUNTIME, "upsample: out of memory");
    if (rc || !x) {
        tl_tensor_release(o);
        return -1;
    }
    return o ? finish_dst(dst, o, 0) : -1;
}

static int run_fwd(int mode, int nsp, tl_tensor *self, tl_tensor *out, bool align, const double *scales,
                   const bool *has) {
    return run(mode, 0, nsp, self, out, tl_tensor_sizes(self), tl_tensor_sizes(out), align, scales, has);
}

static int run_bwd(int mode, int nsp, tl_tensor *g, tl_tensor *gi, bool align, const double *scales,
                   const bool *has) {
    return run(mode, 1, nsp, g, gi, tl_tensor_sizes(gi), tl_tensor_sizes(g), align, scales, has);
}

/* ------------------------------------------------------------ structured entry points */

#define SC1 double scales, bool scales_has
#define SC2 double scales_h, bool scales_h_has, double scales_w, bool scales_w_has
#define SC3 double scales_d, bool scales_d_has, double scales_h, bool scales_h_has, double scales_w, bool scales_w_has
#define V1 const double sc[1] = {scales}; const bool hs[1] = {scales_has}
#define V2 const double sc[2] = {scales_h, scales_w}; const bool hs[2] = {scales_h_has, scales_w_has}
#define V3                                                                                                            \
    const double sc[3] = {scales_d, scales_h, scales_w};                                                              \
    const bool hs[3] = {scales_d_has, scales_h_has, scales_w_has}
#define OSZ const int64_t *output_size, int64_t output_size_len
#define ISZ const int64_t *input_size, int64_t input_size_len

/* nearest / nearest-exact: NAME, kernel suffix, dims, scale params, scale vector */
#define NEAREST_OPS(NAME, MODE, N, SC, V)                                                                             \
    int tl_meta_##NAME(tl_structured *s, tl_tensor *self, OSZ, SC) {                                                  \
        V; (void)sc; (void)hs;                                                                                        \
        return forward_meta(s, N, self, output_size, output_size_len);                                                \
    }                                                                                                                 \
    int tl_impl_##NAME##_out_cpu(tl_structured *s, tl_tensor *self, OSZ, SC, tl_tensor *out) {                        \
        (void)s; (void)output_size; (void)output_size_len;                                                            \
        V;                                                                                                            \
        return run_fwd(MODE, N, self, out, false, sc, hs);                                                            \
    }                                                                                                                 \
    int tl_meta_##NAME##_backward(tl_structured *s, tl_tensor *grad_output, OSZ, ISZ, SC) {                           \
        V; (void)sc; (void)hs;                                                                                        \
        return backward_meta(s, N, grad_output, output_size, output_size_len, input_size, input_size_len);            \
    }                                                                                                                 \
    int tl_impl_##NAME##_backward_out_cpu(tl_structured *s, tl_tensor *grad_output, OSZ, ISZ, SC,                     \
                                          tl_tensor *grad_input) {                                                    \
        (void)s; (void)output_size; (void)output_size_len; (void)input_size; (void)input_size_len;                    \
        V;                                                                                                            \
        return run_bwd(MODE, N, grad_output, grad_input, false, sc, hs);                                              \
    }

#define LINEAR_OPS(NAME, MODE, N, SC, V)                                                                              \
    int tl_meta_##NAME(tl_structured *s, tl_tensor *self, OSZ, bool align_corners, SC) {                              \
        (void)align_corners;                                                                                          \
        V; (void)sc; (void)hs;                                                                                        \
        return forward_meta(s, N, self, output_size, output_size_len);                                                \
    }                                                                                                                 \
    int tl_impl_##NAME##_out_cpu(tl_structured *s, tl_tensor *self, OSZ, bool align_corners, SC, tl_tensor *out) {    \
        (void)s; (void)output_size; (void)output_size_len;                                                            \
        V;                                                                                                            \
        return run_fwd(MODE, N, self, out, align_corners, sc, hs);                                                    \
    }                                                                                                                 \
    int tl_meta_##NAME##_backward(tl_structured *s, tl_tensor *grad_output, OSZ, ISZ, bool align_corners, SC) {       \
        (void)align_corners;                                                                                          \
        V; (void)sc; (void)hs;                                                                                        \
        return backward_meta(s, N, grad_output, output_size, output_size_len, input_size, input_size_len);            \
    }                                                                                                                 \
    int tl_impl_##NAME##_backward_out_cpu(tl_structured *s, tl_tensor *grad_output, OSZ, ISZ, bool align_corners,     \
                                          SC, tl_tensor *grad_input) {                                                \
        (void)s; (void)output_size; (void)output_size_len; (void)input_size; (void)input_size_len;                    \
        V;                                                                                                            \
        return run_bwd(MODE, N, grad_output, grad_input, align_corners, sc, hs);                                      \
    }

NEAREST_OPS(upsample_nearest1d, NEAREST, 1, SC1, V1)
NEAREST_OPS(upsample_nearest2d, NEAREST, 2, SC2, V2)
NEAREST_OPS(upsample_nearest3d, NEAREST, 3, SC3, V3)
NEAREST_OPS(_upsample_nearest_exact1d, NEAREST_EXACT, 1, SC1, V1)
NEAREST_OPS(_upsample_nearest_exact2d, NEAREST_EXACT, 2, SC2, V2)
NEAREST_OPS(_upsample_nearest_exact3d, NEAREST_EXACT, 3, SC3, V3)
LINEAR_OPS(upsample_linear1d, LINEAR, 1, SC1, V1)
LINEAR_OPS(upsample_bilinear2d, LINEAR, 2, SC2, V2)
LINEAR_OPS(upsample_trilinear3d, LINEAR, 3, SC3, V3)
LINEAR_OPS(upsample_bicubic2d, CUBIC, 2, SC2, V2)
LINEAR_OPS(_upsample_bilinear2d_aa, AA_LINEAR, 2, SC2, V2)
LINEAR_OPS(_upsample_bicubic2d_aa, AA_CUBIC, 2, SC2, V2)

/* ------------------------------------------------------------ .vec overloads (CompositeImplicitAutograd) */

/* PyTorch's upsample::compute_output_size, and the per-dim scales of
 * get_scale_value */
static int vec_sizes(tl_tensor *input, const int64_t *osz, const double *sf, int64_t sflen, int64_t *out, double *sc,
                     bool *has) {
    const int64_t nsp = tl_tensor_ndim(input) - 2;
    if (osz && sf) return tl_set_error(TL_ERR_RUNTIME, "Must specify exactly one of output_size and scale_factors");
    if (!osz && !sf) return tl_set_error(TL_ERR_RUNTIME, "Must specify exactly one of output_size and scale_factors");
    if (!osz && sflen != nsp)
        return tl_set_error(TL_ERR_RUNTIME, "Expected static_cast<int64_t>(scale_factors->size()) == "
                                            "spatial_dimensions to be true, but got false.  (Could this error "
                                            "message be improved?  If so, please report an enhancement request to "
                                            "PyTorch.)");
    for (int64_t i = 0; i < nsp && i < 8; i++) {
        has[i] = sf != NULL;
        sc[i] = sf ? sf[i] : 0.;
        if (osz) continue;
        const double od = (double)tl_tensor_sizes(input)[i + 2] * sf[i];
        if (!(od >= -9223372036854775808.0 && od < 9223372036854775808.0))
            return tl_set_error(TL_ERR_RUNTIME, "value cannot be converted to type int64_t without overflow");
        out[i] = (int64_t)od;
    }
    if (osz && nsp > 0) memcpy(out, osz, (size_t)(nsp < 8 ? nsp : 8) * sizeof(int64_t));
    return 0;
}

#define VEC_CHECK(OLEN)                                                                                               \
    if (output_size && OLEN != tl_tensor_ndim(input) - 2)                                                             \
        return tl_set_error(TL_ERR_RUNTIME, "Expected static_cast<int64_t>(output_size->size()) == "                  \
                                            "spatial_dimensions to be true, but got false.  (Could this error "       \
                                            "message be improved?  If so, please report an enhancement request to "   \
                                            "PyTorch.)"),                                                             \
               (tl_tensor *)NULL;                                                                                     \
    int64_t o[8] = {0};                                                                                               \
    double sc[8] = {0};                                                                                               \
    bool hs[8] = {false};                                                                                             \
    const int64_t n = tl_tensor_ndim(input) - 2 < 8 ? tl_tensor_ndim(input) - 2 : 8;                                  \
    if (vec_sizes(input, output_size, scale_factors, scale_factors_len, o, sc, hs)) return NULL;

#define VSF const double *scale_factors, int64_t scale_factors_len

tl_tensor *tl_native_upsample_nearest1d(tl_keyset ks, tl_tensor *input, OSZ, VSF) {
    (void)ks;
    VEC_CHECK(output_size_len)
    return tl_ops_upsample_nearest1d(input, o, n, sc[0], hs[0]);
}
tl_tensor *tl_native__upsample_nearest_exact1d(tl_keyset ks, tl_tensor *input, OSZ, VSF) {
    (void)ks;
    VEC_CHECK(output_size_len)
    return tl_ops__upsample_nearest_exact1d(input, o, n, sc[0], hs[0]);
}
tl_tensor *tl_native_upsample_nearest2d(tl_keyset ks, tl_tensor *input, OSZ, VSF) {
    (void)ks;
    VEC_CHECK(output_size_len)
    return tl_ops_upsample_nearest2d(input, o, n, sc[0], hs[0], sc[1], hs[1]);
}
tl_tensor *tl_native__upsample_nearest_exact2d(tl_keyset ks, tl_tensor *input, OSZ, VSF) {
    (void)ks;
    VEC_CHECK(output_size_len)
    return tl_ops__upsample_nearest_exact2d(input, o, n, sc[0], hs[0], sc[1], hs[1]);
}
tl_tensor *tl_native_upsample_nearest3d(tl_keyset ks, tl_tensor *input, OSZ, VSF) {
    (void)ks;
    VEC_CHECK(output_size_len)
    return tl_ops_upsample_nearest3d(input, o, n, sc[0], hs[0], sc[1], hs[1], sc[2], hs[2]);
}
tl_tensor *tl_native__upsample_nearest_exact3d(tl_keyset ks, tl_tensor *input, OSZ, VSF) {
    (void)ks;
    VEC_CHECK(output_size_len)
    return tl_ops__upsample_nearest_exact3d(input, o, n, sc[0], hs[0], sc[1], hs[1], sc[2], hs[2]);
}
tl_tensor *tl_native_upsample_linear1d(tl_keyset ks, tl_tensor *input, OSZ, bool align_corners, VSF) {
    (void)ks;
    VEC_CHECK(output_size_len)
    return tl_ops_upsample_linear1d(input, o, n, align_corners, sc[0], hs[0]);
}
tl_tensor *tl_native_upsample_bilinear2d(tl_keyset ks, tl_tensor *input, OSZ, bool align_corners, VSF) {
    (void)ks;
    VEC_CHECK(output_size_len)
    return tl_ops_upsample_bilinear2d(input, o, n, align_corners, sc[0], hs[0], sc[1], hs[1]);
}
tl_tensor *tl_native_upsample_bicubic2d(tl_keyset ks, tl_tensor *input, OSZ, bool align_corners, VSF) {
    (void)ks;
    VEC_CHECK(output_size_len)
    return tl_ops_upsample_bicubic2d(input, o, n, align_corners, sc[0], hs[0], sc[1], hs[1]);
}
tl_tensor *tl_native_upsample_trilinear3d(tl_keyset ks, tl_tensor *input, OSZ, bool align_corners, VSF) {
    (void)ks;
    VEC_CHECK(output_size_len)
    return tl_ops_upsample_trilinear3d(input, o, n, align_corners, sc[0], hs[0], sc[1], hs[1], sc[2], hs[2]);
}
tl_tensor *tl_native__upsample_bilinear2d_aa(tl_keyset ks, tl_tensor *input, OSZ, bool align_corners, VSF) {
    (void)ks;
    VEC_CHECK(output_size_len)
    return tl_ops__upsample_bilinear2d_aa(input, o, n, align_corners, sc[0], hs[0], sc[1], hs[1]);
}
tl_tensor *tl_native__upsample_bicubic2d_aa(tl_keyset ks, tl_tensor *input, OSZ, bool align_corners, VSF) {
    (void)ks;
    VEC_CHECK(output_size_len)
    return tl_ops__upsample_bicubic2d_aa(input, o, n, align_corners, sc[0], hs[0], sc[1], hs[1]);
}
