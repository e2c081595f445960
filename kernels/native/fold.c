/* im2col (F.unfold) and col2im (F.fold), PyTorch 2.13's CPU operators:
 * checks and messages of im2col_shape_check / col2im_shape_check, and
 * PyTorch's loop order (column rows c * kH * kW + kh * kW + kw, blocks
 * row-major). im2col copies elements (any floating dtype or bool, by
 * element size); col2im sums the overlapping blocks: float16 / bfloat16 in
 * float32, rounded once; bool ORs. Channels go to the thread pool (each
 * owns its column rows and image plane); the `im2col` derivative,
 * col2im back to the input's spatial size, is tl_ag_im2col_backward. */
#include <stdint.h>
#include <string.h>

#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/col2im.h"
#include "ops/im2col.h"
#include "tl_tensor.h"
#include "nn_common.h"

typedef struct {
    int64_t ih, iw, kh, kw, dh, dw, ph, pw, sh, sw, oh, ow; /* oh x ow: the array of blocks */
} fold_geom;

typedef struct {
    fold_geom g;
    const char *src;
    char *dst;
    int64_t esz; /* im2col: element size; col2im: 4 / 8 (float / double) or 1 (bool) */
    int col2im;
} fold_ctx;

/* one column row segment: the ow blocks of output row h for tap (kh, kw).
 * The blocks whose column lies inside the image are [w0, w1); the rest are
 * padding (zeros). Stride 1 copies the inside run at once. */
static void im2col_channel(const fold_geom *g, const char *im, char *col, int64_t esz) {
    const int64_t L = g->oh * g->ow;
    for (int64_t kh = 0; kh < g->kh; kh++)
        for (int64_t kw = 0; kw < g->kw; kw++) {
            char *row = col + (kh * g->kw + kw) * L * esz;
            const int64_t off = kw * g->dw - g->pw; /* x = w * sw + off */
            int64_t w0 = off >= 0 ? 0 : (-off + g->sw - 1) / g->sw;
            int64_t w1 = g->iw - 1 - off >= 0 ? (g->iw - 1 - off) / g->sw + 1 : 0;
            if (w1 > g->ow) w1 = g->ow;
            if (w0 > w1) w0 = w1;
            for (int64_t h = 0; h < g->oh; h++) {
                const int64_t y = h * g->sh - g->ph + kh * g->dh;
                char *d = row + h * g->ow * esz;
                if (y < 0 || y >= g->ih) {
                    memset(d, 0, (size_t)(g->ow * esz));
                    continue;
                }
                const char *src = im + y * g->iw * esz;
                memset(d, 0, (size_t)(w0 * esz));
                if (g->sw == 1) memcpy(d + w0 * esz, src + (w0 + off) * esz, (size_t)((w1 - w0) * esz));
                else if (esz == 4)
                    for (int64_t w = w0; w < w1; w++) ((uint32_t *)d)[w] = ((const uint32_t *)src)[w * g->sw + off];
                else if (esz == 8)
                    for (int64_t w = w0; w < w1; w++) ((uint64_t *)d)[w] = ((const uint64_t *)src)[w * g->sw + off];
                else
                    for (int64_t w = w0; w < w1; w++) memcpy(d + w * esz, src + (w * g->sw + off) * esz, (size_t)esz);
                memset(d + w1 * esz, 0, (size_t)((g->ow - w1) * esz));
            }
        }
}

#define COL2IM(T, ADD)                                                                                                \
    static void col2im_##T(const fold_geom *g, const T *col, T *im) {                                                 \
        const int64_t L = g->oh * g->ow;                                                                              \
        memset(im, 0, (size_t)(g->ih * g->iw) * sizeof(T));                                                           \
        for (int64_t kh = 0; kh < g->kh; kh++)                                                                        \
            for (int64_t kw = 0; kw < g->kw; kw++) {                                                                  \
                const T *row = col + (kh * g->kw + kw) * L;                                                           \
                for (int64_t h = 0; h < g->oh; h++) {                                                                 \
                    const int64_t y = h * g->sh - g->ph + kh * g->dh;                                                 \
                    if (y < 0 || y >= g->ih) continue;                                                                \
                    for (int64_t w = 0; w < g->ow; w++) {                                                             \
                        const int64_t x = w * g->sw - g->pw + kw * g->dw;                                             \
                        if (x >= 0 && x < g->iw) ADD(im[y * g->iw + x], row[h * g->ow + w]);                          \
                    }                                                                                                 \
                }                                                                                                     \
            }                                                                                                         \
    }
#define ADD_SUM(a, b) (a) += (b)
#define ADD_OR(a, b) (a) |= (b)
COL2IM(float, ADD_SUM)
COL2IM(double, ADD_SUM)
COL2IM(uint8_t, ADD_OR)

static void run_channels(int64_t b, int64_t e, void *ctx) {
    const fold_ctx *c = ctx;
    const int64_t img = c->g.ih * c->g.iw * c->esz, cols = c->g.kh * c->g.kw * c->g.oh * c->g.ow * c->esz;
    for (int64_t p = b; p < e; p++) {
        if (!c->col2im) {
            im2col_channel(&c->g, c->src + p * img, c->dst + p * cols, c->esz);
            continue;
        }
        const char *s = c->src + p * cols;
        char *d = c->dst + p * img;
        if (c->esz == 4) col2im_float(&c->g, (const float *)s, (float *)d);
        else if (c->esz == 8) col2im_double(&c->g, (const double *)s, (double *)d);
        else col2im_uint8_t(&c->g, (const uint8_t *)s, (uint8_t *)d);
    }
}

static void launch(const fold_geom *g, int col2im, int64_t esz, int64_t channels, const tl_tensor *src, tl_tensor *dst) {
    fold_ctx c = {*g, tl_tensor_data_ptr(src), tl_tensor_data_ptr(dst), esz, col2im};
    const int64_t work = g->kh * g->kw * g->oh * g->ow + g->ih * g->iw + 1, grain = 32768 / work;
    if (channels > 0 && work > 1) tl_parallel_for(channels, grain > 0 ? grain : 1, run_channels, &c);
}

/* ------------------------------------------------------------ checks */

static int pair(const char *what, const int64_t *v, int64_t n, int64_t *a, int64_t *b) {
    if (n != 2)
        return tl_set_error(TL_ERR_RUNTIME, "It is expected %s equals to 2, but got size %lld", what, (long long)n);
    *a = v[0];
    *b = v[1];
    return 0;
}

static int64_t div_rtn(int64_t x, int64_t y) {
    int64_t q = x / y;
    if ((x % y != 0) && ((x < 0) != (y < 0))) q--;
    return q;
}

static int parse(const int64_t *k, int64_t kl, const int64_t *d, int64_t dl, const int64_t *p, int64_t pl,
                 const int64_t *s, int64_t sl, fold_geom *g) {
    return pair("kernel_size", k, kl, &g->kh, &g->kw) || pair("dilation", d, dl, &g->dh, &g->dw) ||
                   pair("padding", p, pl, &g->ph, &g->pw) || pair("stride", s, sl, &g->sh, &g->sw)
               ? -1
               : 0;
}

/* the kernel / dilation / padding / stride checks, in im2col's (col2im:
 * stride before dilation) order */
static int check_params(const fold_geom *g, int col2im) {
    if (g->kw <= 0 || g->kh <= 0)
        return tl_set_error(TL_ERR_RUNTIME, "kernel size should be greater than zero, but got kernel_height: %lld "
                            "kernel_width: %lld", (long long)g->kh, (long long)g->kw);
    if (col2im && (g->sw <= 0 || g->sh <= 0))
        return tl_set_error(TL_ERR_RUNTIME, "stride should be greater than zero, but got stride_height: %lld "
                            "stride_width: %lld", (long long)g->sh, (long long)g->sw);
    if (g->dw <= 0 || g->dh <= 0)
        return tl_set_error(TL_ERR_RUNTIME, "dilation should be greater than zero, but got dilation_height: %lld "
                            "dilation_width: %lld", (long long)g->dh, (long long)g->dw);
    if (g->pw < 0 || g->ph < 0)
        return tl_set_error(TL_ERR_RUNTIME, "padding should be non-negative, but got pad_height: %lld pad_width: %lld",
                            (long long)g->ph, (long long)g->pw);
    if (!col2im && (g->sw <= 0 || g->sh <= 0))
        return tl_set_error(TL_ERR_RUNTIME, "stride should be greater than zero, but got stride_height: %lld "
                            "stride_width: %lld", (long long)g->sh, (long long)g->sw);
    return 0;
}

static void blocks(fold_geom *g) {
    g->oh = div_rtn(g->ih + 2 * g->ph - (g->dh * (g->kh - 1) + 1), g->sh) + 1;
    g->ow = div_rtn(g->iw + 2 * g->pw - (g->dw * (g->kw - 1) + 1), g->sw) + 1;
}

/* floating dtypes and bool (PyTorch's dispatch, complex aside) */
static int fold_dtype(const tl_tensor *t, const char *name) {
    const tl_dtype dt = tl_tensor_dtype(t);
    if (tl_dtype_is_floating(dt) || dt == TL_BOOL) return 0;
    return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", name, tl_dtype_scalar_name(dt));
}

/* ------------------------------------------------------------ operators */

tl_tensor *tl_native_im2col_cpu(tl_keyset ks, tl_tensor *self, const int64_t *kernel_size, int64_t kernel_size_len,
                                const int64_t *dilation, int64_t dilation_len, const int64_t *padding,
                                int64_t padding_len, const int64_t *stride, int64_t stride_len) {
    (void)ks;
    fold_geom g;
    if (parse(kernel_size, kernel_size_len, dilation, dilation_len, padding, padding_len, stride, stride_len, &g) ||
        check_params(&g, 0))
        return NULL;
    const int64_t nd = tl_tensor_ndim(self), *sz = tl_tensor_sizes(self);
    if (!((nd == 3 && sz[0] != 0 && sz[1] != 0 && sz[2] != 0) || (nd == 4 && sz[1] != 0 && sz[2] != 0 && sz[3] != 0))) {
        char a[256];
        fmt_shape(a, sizeof a, sz, nd);
        tl_set_error(TL_ERR_RUNTIME, "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other "
                     "non-zero dimensions for input, but got: %s", a);
        return NULL;
    }
    g.ih = sz[nd - 2];
    g.iw = sz[nd - 1];
    blocks(&g);
    if (g.oh < 1 || g.ow < 1) {
        tl_set_error(TL_ERR_RUNTIME, "Given input with spatial size (%lld, %lld), kernel_size=(%lld, %lld), "
                     "dilation=(%lld, %lld), padding=(%lld, %lld), calculated shape of the array of sliding blocks as "
                     "(%lld, %lld), but its components must be at least one.", (long long)g.ih, (long long)g.iw,
                     (long long)g.kh, (long long)g.kw, (long long)g.dh, (long long)g.dw, (long long)g.ph,
                     (long long)g.pw, (long long)g.oh, (long long)g.ow);
        return NULL;
    }
    if (fold_dtype(self, "im2col_out_cpu")) return NULL;
    const int64_t n = nd == 4 ? sz[0] : 1, C = sz[nd - 3];
    int64_t shape[3] = {n, C * g.kh * g.kw, g.oh * g.ow};
    tl_tensor *x = tl_contiguous(self);
    tl_tensor *y = x ? tl_empty(nd - 1, shape + (nd == 4 ? 0 : 1), tl_tensor_dtype(self), TL_CPU) : NULL;
    if (y) launch(&g, 0, tl__itemsize(tl_tensor_dtype(self)), n * C, x, y);
    tl_tensor_release(x);
    return y;
}

tl_tensor *tl_native_col2im_cpu(tl_keyset ks, tl_tensor *self, const int64_t *output_size, int64_t output_size_len,
                                const int64_t *kernel_size, int64_t kernel_size_len, const int64_t *dilation,
                                int64_t dilation_len, const int64_t *padding, int64_t padding_len,
                                const int64_t *stride, int64_t stride_len) {
    (void)ks;
    fold_geom g;
    if (pair("output_size", output_size, output_size_len, &g.ih, &g.iw) ||
        parse(kernel_size, kernel_size_len, dilation, dilation_len, padding, padding_len, stride, stride_len, &g) ||
        check_params(&g, 1))
        return NULL;
    const int64_t nd = tl_tensor_ndim(self), *sz = tl_tensor_sizes(self);
    char a[256];
    if (!((nd == 2 && sz[0] != 0 && sz[1] != 0) || (nd == 3 && sz[1] != 0 && sz[2] != 0))) {
        fmt_shape(a, sizeof a, sz, nd);
        tl_set_error(TL_ERR_RUNTIME, "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
                     "non-zero dimensions for input, but got: %s", a);
        return NULL;
    }
    const int64_t planes = sz[nd - 2], len = sz[nd - 1];
    if (planes % (g.kw * g.kh) != 0) {
        tl_set_error(TL_ERR_RUNTIME, "Expected size of input's dimension 1 to be divisible by the product of "
                     "kernel_size, but got input.size(1)=%lld and kernel_size=(%lld, %lld).", (long long)planes,
                     (long long)g.kh, (long long)g.kw);
        return NULL;
    }
    blocks(&g);
    if (len != g.oh * g.ow) {
        tl_set_error(TL_ERR_RUNTIME, "Given output_size=(%lld, %lld), kernel_size=(%lld, %lld), dilation=(%lld, "
                     "%lld), padding=(%lld, %lld), stride=(%lld, %lld), expected size of input's dimension 2 to match "
                     "the calculated number of sliding blocks %lld * %lld = %lld, but got input.size(2)=%lld.",
                     (long long)g.ih, (long long)g.iw, (long long)g.kh, (long long)g.kw, (long long)g.dh,
                     (long long)g.dw, (long long)g.ph, (long long)g.pw, (long long)g.sh, (long long)g.sw,
                     (long long)g.oh, (long long)g.ow, (long long)(g.oh * g.ow), (long long)len);
        return NULL;
    }
    if (g.oh < 1 || g.ow < 1) {
        tl_set_error(TL_ERR_RUNTIME, "Given output_size=(%lld, %lld), kernel_size=(%lld, %lld), dilation=(%lld, "
                     "%lld), padding=(%lld, %lld), stride=(%lld, %lld), calculated shape of the array of sliding "
                     "blocks as (%lld, %lld), which is too small (non-positive)", (long long)g.ih, (long long)g.iw,
                     (long long)g.kh, (long long)g.kw, (long long)g.dh, (long long)g.dw, (long long)g.ph,
                     (long long)g.pw, (long long)g.sh, (long long)g.sw, (long long)g.oh, (long long)g.ow);
        return NULL;
    }
    if (fold_dtype(self, "col2im_out_cpu")) return NULL;
    const tl_dtype dt = tl_tensor_dtype(self), ct = dt == TL_BOOL ? TL_BOOL : compute_dtype(dt);
    const int64_t n = nd == 3 ? sz[0] : 1, C = planes / (g.kh * g.kw);
    int64_t shape[4] = {n, C, g.ih, g.iw};
    tl_tensor *x = contig_as(self, ct);
    tl_tensor *y = x ? tl_empty(nd + 1, shape + (nd == 3 ? 0 : 1), ct, TL_CPU) : NULL;
    if (y) launch(&g, 1, tl__itemsize(ct), n * C, x, y);
    tl_tensor_release(x);
    if (!y || ct == dt) return y;
    tl_tensor *r = tl_to_dtype(y, dt, 0);
    tl_tensor_release(y);
    return r;
}

/* im2col's derivative: PyTorch's `col2im_symint(grad, {self.sym_size(-2),
 * self.sym_size(-1)}, ...)` (the formula compiler has no braced lists) */
tl_tensor *tl_ag_im2col_backward(tl_tensor *grad, tl_tensor *self, const int64_t *kernel_size,
                                 int64_t kernel_size_len, const int64_t *dilation, int64_t dilation_len,
                                 const int64_t *padding, int64_t padding_len, const int64_t *stride,
                                 int64_t stride_len) {
    const int64_t nd = tl_tensor_ndim(self), os[2] = {tl_tensor_sizes(self)[nd - 2], tl_tensor_sizes(self)[nd - 1]};
    return tl_ops_col2im(grad, os, 2, kernel_size, kernel_size_len, dilation, dilation_len, padding, padding_len,
                         stride, stride_len);
}
