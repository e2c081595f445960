/* 3-d pooling: max_pool3d_with_indices (+ backward), avg_pool3d (+
 * backward), adaptive_max_pool3d (+ backward), and max_pool3d
 * (CompositeImplicitAutograd: the values of max_pool3d_with_indices, as
 * PyTorch's CPU path).
 *
 * Checks, messages and windows as PyTorch 2.13's CPU kernels
 * (pool3d_shape_check, cpu_max_pool / cpu_avg_pool / adaptive max pooling
 * over (T, H, W)). Inputs are made contiguous in the compute dtype (float32
 * for float16 / bfloat16 / float32, float64; int64 for the integer inputs
 * max_pool3d and avg_pool3d accept); the N * C volumes go to the thread pool,
 * each to one loop below, and every backward writes only its own volume. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/adaptive_max_pool3d.h"
#include "ops/adaptive_max_pool3d_backward.h"
#include "ops/avg_pool3d.h"
#include "ops/avg_pool3d_backward.h"
#include "ops/max_pool3d.h"
#include "ops/max_pool3d_with_indices.h"
#include "ops/max_pool3d_with_indices_backward.h"
#include "tl_tensor.h"
#include "nn_common.h"

typedef struct {
    int64_t in[3], out[3], k[3], s[3], p[3], d[3];
    bool count_include_pad;
    int64_t divisor; /* 0: none */
} p3_geom;

enum { P3_MAX, P3_MAX_BWD, P3_AVG, P3_AVG_BWD, P3_AMAX };

static int64_t a_start(int64_t o, int64_t out, int64_t in) { return (o * in) / out; }
static int64_t a_end(int64_t o, int64_t out, int64_t in) { return ((o + 1) * in + out - 1) / out; }

/* the window [b, e) (step d) of output o along dim i of a (dilated) max pool */
static void max_window(const p3_geom *g, int i, int64_t o, int64_t *b, int64_t *e) {
    int64_t s = o * g->s[i] - g->p[i];
    *e = s + (g->k[i] - 1) * g->d[i] + 1 < g->in[i] ? s + (g->k[i] - 1) * g->d[i] + 1 : g->in[i];
    while (s < 0) s += g->d[i];
    *b = s;
}

/* avg window along dim i: clamped bounds and the padded extent */
static void avg_window(const p3_geom *g, int i, int64_t o, int64_t *b, int64_t *e, int64_t *padded) {
    int64_t s = o * g->s[i] - g->p[i], t = s + g->k[i];
    if (t > g->in[i] + g->p[i]) t = g->in[i] + g->p[i];
    *padded = t - s;
    *b = s < 0 ? 0 : s;
    *e = t > g->in[i] ? g->in[i] : t;
}

/* the divisor of avg output (ot, oh, ow), 0 for a window entirely in padding */
static int64_t avg_bounds(const p3_geom *g, int64_t ot, int64_t oh, int64_t ow, int64_t b[3], int64_t e[3]) {
    const int64_t o[3] = {ot, oh, ow};
    int64_t pool = 1, n = 1;
    for (int i = 0; i < 3; i++) {
        int64_t padded;
        avg_window(g, i, o[i], &b[i], &e[i], &padded);
        pool *= padded;
        n *= e[i] - b[i];
        if (b[i] >= e[i]) return 0;
    }
    return g->divisor ? g->divisor : g->count_include_pad ? pool : n;
}

/* max pooling (not adaptive): the depth and height windows are found once
 * per output row. With dilation 1, each output row keeps its running
 * maxima and indices in `mv` / `mi` (OW each) and sweeps the window's input
 * rows (t, h ascending) and offsets j across all interior columns at once:
 * every output still visits (t, h, w) in ascending order with the generic
 * loop's NaN rule, and the column loop vectorizes. Edge columns (clipped
 * windows) and dilated pools take the per-output loop. */
#define P3_MAX_ROWS(T, LOWEST)                                                                                        \
    static void max_out_##T(const T *x, int64_t IH, int64_t IW, int64_t tb, int64_t te, int64_t hb, int64_t he,      \
                            int64_t wb, int64_t we, const int64_t st[3], T *y, int64_t *ind) {                        \
        int64_t mi = (tb * IH + hb) * IW + wb;                                                                        \
        T mv = LOWEST;                                                                                                \
        for (int64_t t = tb; t < te; t += st[0])                                                                      \
            for (int64_t h = hb; h < he; h += st[1]) {                                                                \
                const int64_t r = (t * IH + h) * IW;                                                                  \
                for (int64_t w = wb; w < we; w += st[2]) {                                                            \
                    const T v = x[r + w];                                                                             \
                    if (v > mv || v != v) {                                                                           \
                        mv = v;                                                                                       \
                        mi = r + w;                                                                                   \
                    }                                                                                                 \
                }                                                                                                     \
            }                                                                                                         \
        *y = mv;                                                                                                      \
        *ind = mi;                                                                                                    \
    }                                                                                                                 \
    static void max_fwd_rows_##T(const p3_geom *g, const T *x, T *y, int64_t *ind) {                                  \
        const int64_t IH = g->in[1], IW = g->in[2], OW = g->out[2], sw = g->s[2], pw = g->p[2], kw = g->k[2];       \
        const int dil1 = g->d[0] == 1 && g->d[1] == 1 && g->d[2] == 1;                                               \
        /* interior columns [o0, o1): ow * sw - pw >= 0 and ow * sw - pw + kw <= IW */                               \
        int64_t o0 = (pw + sw - 1) / sw, o1 = IW - kw + pw >= 0 ? (IW - kw + pw) / sw + 1 : 0;                       \
        if (o1 > OW) o1 = OW;                                                                                         \
        if (o0 > o1) o0 = o1;                                                                                         \
        T *mv = dil1 && o1 > o0 ? malloc((size_t)(o1 - o0) * sizeof(T)) : NULL;                                      \
        int64_t *mx = mv ? malloc((size_t)(o1 - o0) * sizeof(int64_t)) : NULL;                                       \
        if (!mx) o0 = o1 = 0;                                                                                         \
        for (int64_t ot = 0; ot < g->out[0]; ot++) {                                                                  \
            int64_t tb, te, hb, he;                                                                                   \
            max_window(g, 0, ot, &tb, &te);                                                                           \
            for (int64_t oh = 0; oh < g->out[1]; oh++) {                                                              \
                max_window(g, 1, oh, &hb, &he);                                                                       \
                const int64_t oi0 = (ot * g->out[1] + oh) * OW;                                                       \
                for (int64_t ow = 0; ow < OW; ow++) {                                                                 \
                    if (ow == o0) ow = o1;                                                                            \
                    if (ow >= OW) break;                                                                              \
                    int64_t wb, we;                                                                                   \
                    max_window(g, 2, ow, &wb, &we);                                                                   \
                    max_out_##T(x, IH, IW, tb, te, hb, he, wb, we, g->d, y + oi0 + ow, ind + oi0 + ow);               \
                }                                                                                                     \
                if (o1 <= o0) continue;                                                                               \
                const int64_t n = o1 - o0, c0 = o0 * sw - pw, first = (tb * IH + hb) * IW + c0;                       \
                for (int64_t o = 0; o < n; o++) {                                                                     \
                    mv[o] = LOWEST;                                                                                   \
                    mx[o] = first + o * sw;                                                                           \
                }                                                                                                     \
                for (int64_t t = tb; t < te; t++)                                                                     \
                    for (int64_t h = hb; h < he; h++) {                                                               \
                        const int64_t r = (t * IH + h) * IW + c0;                                                     \
                        for (int64_t j = 0; j < kw; j++) {                                                            \
                            const T *restrict src = x + r + j;                                                        \
                            _Pragma("omp simd") for (int64_t o = 0; o < n; o++) {                                     \
                                const T v = src[o * sw];                                                              \
                                const int take = v > mv[o] || v != v;                                                 \
                                mv[o] = take ? v : mv[o];                                                             \
                                mx[o] = take ? r + j + o * sw : mx[o];                                                \
                            }                                                                                         \
                        }                                                                                             \
                    }                                                                                                 \
                memcpy(y + oi0 + o0, mv, (size_t)n * sizeof(T));                                                      \
                memcpy(ind + oi0 + o0, mx, (size_t)n * sizeof(int64_t));                                              \
            }                                                                                                         \
        }                                                                                                             \
        free(mv);                                                                                                     \
        free(mx);                                                                                                     \
    }

#define P3_LOOPS(T, LOWEST)                                                                                           \
    static void max_fwd_##T(const p3_geom *g, const T *x, T *y, int64_t *ind, int adaptive) {                          \
        const int64_t IH = g->in[1], IW = g->in[2];                                                                   \
        if (!adaptive) {                                                                                              \
            max_fwd_rows_##T(g, x, y, ind);                                                                           \
            return;                                                                                                   \
        }                                                                                                             \
        for (int64_t ot = 0; ot < g->out[0]; ot++)                                                                    \
            for (int64_t oh = 0; oh < g->out[1]; oh++)                                                                \
                for (int64_t ow = 0; ow < g->out[2]; ow++) {                                                          \
                    int64_t b[3], e[3], st[3] = {1, 1, 1};                                                            \
                    const int64_t o[3] = {ot, oh, ow};                                                                \
                    for (int i = 0; i < 3; i++) {                                                                     \
                        if (adaptive) {                                                                               \
                            b[i] = a_start(o[i], g->out[i], g->in[i]);                                                \
                            e[i] = a_end(o[i], g->out[i], g->in[i]);                                                  \
                        } else {                                                                                      \
                            max_window(g, i, o[i], &b[i], &e[i]);                                                     \
                            st[i] = g->d[i];                                                                          \
                        }                                                                                             \
                    }                                                                                                 \
                    int64_t mi = (b[0] * IH + b[1]) * IW + b[2];                                                      \
                    T mv = LOWEST;                                                                                    \
                    for (int64_t t = b[0]; t < e[0]; t += st[0])                                                      \
                        for (int64_t h = b[1]; h < e[1]; h += st[1])                                                  \
                            for (int64_t w = b[2]; w < e[2]; w += st[2]) {                                            \
                                const int64_t idx = (t * IH + h) * IW + w;                                            \
                                const T v = x[idx];                                                                   \
                                if (v > mv || v != v) { /* a NaN wins (the last one, as PyTorch) */                   \
                                    mv = v;                                                                           \
                                    mi = idx;                                                                         \
                                }                                                                                     \
                            }                                                                                         \
                    const int64_t oi = (ot * g->out[1] + oh) * g->out[2] + ow;                                        \
                    y[oi] = mv;                                                                                       \
                    ind[oi] = mi;                                                                                     \
                }                                                                                                     \
    }                                                                                                                 \
    static void avg_##T(const p3_geom *g, const T *x, T *y, int bwd) {                                                \
        const int64_t IH = g->in[1], IW = g->in[2];                                                                   \
        if (bwd) memset(y, 0, (size_t)(g->in[0] * IH * IW) * sizeof(T));                                             \
        for (int64_t ot = 0; ot < g->out[0]; ot++)                                                                    \
            for (int64_t oh = 0; oh < g->out[1]; oh++)                                                                \
                for (int64_t ow = 0; ow < g->out[2]; ow++) {                                                          \
                    const int64_t oi = (ot * g->out[1] + oh) * g->out[2] + ow;                                        \
                    int64_t b[3], e[3];                                                                               \
                    const int64_t div = avg_bounds(g, ot, oh, ow, b, e);                                              \
                    if (!div) {                                                                                       \
                        if (!bwd) y[oi] = 0;                                                                          \
                        continue;                                                                                     \
                    }                                                                                                 \
                    if (bwd) {                                                                                        \
                        const T gd = x[oi] / (T)div;                                                                  \
                        for (int64_t t = b[0]; t < e[0]; t++)                                                         \
                            for (int64_t h = b[1]; h < e[1]; h++)                                                     \
                                for (int64_t w = b[2]; w < e[2]; w++) y[(t * IH + h) * IW + w] += gd;                 \
                        continue;                                                                                     \
                    }                                                                                                 \
                    T sum = 0;                                                                                        \
                    for (int64_t t = b[0]; t < e[0]; t++)                                                             \
                        for (int64_t h = b[1]; h < e[1]; h++)                                                         \
                            for (int64_t w = b[2]; w < e[2]; w++) sum += x[(t * IH + h) * IW + w];                    \
                    y[oi] = sum / (T)div;                                                                             \
                }                                                                                                     \
    }                                                                                                                 \
    static void max_bwd_##T(const p3_geom *g, const T *go, const int64_t *ind, T *gi) {                               \
        const int64_t n_in = g->in[0] * g->in[1] * g->in[2], n_out = g->out[0] * g->out[1] * g->out[2];              \
        memset(gi, 0, (size_t)n_in * sizeof(T));                                                                      \
        for (int64_t o = 0; o < n_out; o++) gi[ind[o]] += go[o];                                                      \
    }
P3_MAX_ROWS(float, -INFINITY)
P3_MAX_ROWS(double, -INFINITY)
P3_MAX_ROWS(int64_t, INT64_MIN)
P3_LOOPS(float, -INFINITY)
P3_LOOPS(double, -INFINITY)
P3_LOOPS(int64_t, INT64_MIN)

typedef struct {
    int op;
    tl_dtype ct;
    const char *src;
    char *dst;
    int64_t *ind;        /* max forward: written */
    const int64_t *cind; /* max backward: read */
    p3_geom g;
} p3_ctx;

#define P3_DISPATCH(T)                                                                                                \
    do {                                                                                                              \
        const T *s = (const T *)c->src + p * sp;                                                                      \
        T *d = (T *)c->dst + p * dp;                                                                                  \
        switch (c->op) {                                                                                              \
        case P3_MAX: max_fwd_##T(&c->g, s, d, c->ind + p * n_out, 0); break;                                          \
        case P3_AMAX: max_fwd_##T(&c->g, s, d, c->ind + p * n_out, 1); break;                                         \
        case P3_MAX_BWD: max_bwd_##T(&c->g, s, c->cind + p * n_out, d); break;                                        \
        default: avg_##T(&c->g, s, d, c->op == P3_AVG_BWD); break;                                                    \
        }                                                                                                             \
    } while (0)

static void run_volumes(int64_t b, int64_t e, void *ctx) {
    const p3_ctx *c = ctx;
    const int64_t n_in = c->g.in[0] * c->g.in[1] * c->g.in[2], n_out = c->g.out[0] * c->g.out[1] * c->g.out[2];
    const int bwd = c->op == P3_MAX_BWD || c->op == P3_AVG_BWD;
    const int64_t sp = bwd ? n_out : n_in, dp = bwd ? n_in : n_out;
    for (int64_t p = b; p < e; p++) {
        if (c->ct == TL_FLOAT32) P3_DISPATCH(float);
        else if (c->ct == TL_FLOAT64) P3_DISPATCH(double);
        else P3_DISPATCH(int64_t);
    }
}

static int64_t num_volumes(const tl_tensor *t) {
    int64_t n = 1;
    for (int64_t i = 0; i < tl_tensor_ndim(t) - 3; i++) n *= tl_tensor_sizes(t)[i];
    return n;
}

static void launch(int op, tl_dtype ct, const p3_geom *g, int64_t vols, const tl_tensor *src, tl_tensor *dst,
                   int64_t *ind, const int64_t *cind) {
    p3_ctx c = {op, ct, tl_tensor_data_ptr(src), tl_tensor_data_ptr(dst), ind, cind, *g};
    const int64_t n_in = g->in[0] * g->in[1] * g->in[2], n_out = g->out[0] * g->out[1] * g->out[2];
    const int64_t work = n_in + n_out * g->k[0] * g->k[1] * g->k[2] + 1, grain = 65536 / work;
    if (vols > 0 && n_in > 0) tl_parallel_for(vols, grain > 0 ? grain : 1, run_volumes, &c);
}

/* ------------------------------------------------------------ checks */

/* the compute dtype: floating -> float32 / float64; `ints` 2: every integer
 * dtype, 1: int64 only (and no float16 / bfloat16: avg_pool3d's CPU list),
 * 0: none (PyTorch's dispatch lists) */
static int p3_dtype(const tl_tensor *t, const char *name, int ints, tl_dtype *ct) {
    const tl_dtype dt = tl_tensor_dtype(t);
    if (tl_dtype_is_floating(dt) && (ints != 1 || dt == TL_FLOAT32 || dt == TL_FLOAT64)) {
        *ct = compute_dtype(dt);
        return 0;
    }
    if ((ints == 2 && dt != TL_BOOL) || (ints == 1 && dt == TL_INT64)) {
        *ct = TL_INT64;
        return 0;
    }
    return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", name, tl_dtype_scalar_name(dt));
}

/* one of kernel_size / stride / padding / dilation: 1 or 3 ints (stride: 0 too) */
static int triple(const char *msg, const int64_t *v, int64_t n, const int64_t *dflt, int64_t *o) {
    if (n == 0 && dflt) {
        memcpy(o, dflt, 3 * sizeof(int64_t));
        return 0;
    }
    if (n != 1 && n != 3) return tl_set_error(TL_ERR_RUNTIME, "%s", msg);
    for (int i = 0; i < 3; i++) o[i] = v[n == 1 ? 0 : i];
    return 0;
}

/* PyTorch's pool3d_shape_check (and the output sizes before it) */
static int pool3d_shape(const tl_tensor *x, bool ceil_mode, int check_input_size, const char *fn, p3_geom *g) {
    const int64_t nd = tl_tensor_ndim(x), *sz = tl_tensor_sizes(x);
    char a[256];
    for (int i = 0; i < 3; i++) {
        g->in[i] = sz[nd - 3 + i];
        if (pooling_output_shape(g->in[i], g->k[i], g->p[i], g->s[i], g->d[i], ceil_mode, &g->out[i])) return -1;
    }
    if (g->k[0] <= 0 || g->k[1] <= 0 || g->k[2] <= 0)
        return tl_set_error(TL_ERR_RUNTIME, "kernel size should be greater than zero, but got kT: %lld kH: %lld kW: "
                            "%lld", (long long)g->k[0], (long long)g->k[1], (long long)g->k[2]);
    if (g->s[0] <= 0 || g->s[1] <= 0 || g->s[2] <= 0)
        return tl_set_error(TL_ERR_RUNTIME, "stride should be greater than zero, but got dT: %lld dH: %lld dW: %lld",
                            (long long)g->s[0], (long long)g->s[1], (long long)g->s[2]);
    if (g->d[0] <= 0 || g->d[1] <= 0 || g->d[2] <= 0)
        return tl_set_error(TL_ERR_RUNTIME, "dilation should be greater than zero, but got dilationT: %lld dilationH: "
                            "%lld dilationW: %lld", (long long)g->d[0], (long long)g->d[1], (long long)g->d[2]);
    fmt_shape(a, sizeof a, sz, nd);
    for (int64_t i = nd == 5 ? 1 : 0; i < nd; i++)
        if (sz[i] <= 0)
            return tl_set_error(TL_ERR_RUNTIME, "%s: Expected input's non-batch dimensions to have positive length, but "
                                "input has a shape of %s and non-batch dimension %lld has length zero!", fn, a,
                                (long long)sz[i]);
    if (check_input_size && (g->in[0] < g->k[0] || g->in[1] < g->k[1] || g->in[2] < g->k[2]))
        return tl_set_error(TL_ERR_RUNTIME, "input image (T: %lld H: %lld W: %lld) smaller than kernel size (kT: %lld "
                            "kH: %lld kW: %lld)", (long long)g->in[0], (long long)g->in[1], (long long)g->in[2],
                            (long long)g->k[0], (long long)g->k[1], (long long)g->k[2]);
    if (!(g->k[0] / 2 >= g->p[0] && g->k[2] / 2 >= g->p[2] && g->k[1] / 2 >= g->p[1]))
        return tl_set_error(TL_ERR_RUNTIME, "pad should be smaller than or equal to half of kernel size, but got kT: "
                            "%lld kW: %lld kH: %lld padT: %lld padW: %lld padH: %lld", (long long)g->k[0],
                            (long long)g->k[2], (long long)g->k[1], (long long)g->p[0], (long long)g->p[2],
                            (long long)g->p[1]);
    if (g->out[0] < 1 || g->out[1] < 1 || g->out[2] < 1) {
        const long long c = (long long)sz[nd - 4];
        return tl_set_error(TL_ERR_RUNTIME, "Given input size: (%lldx%lldx%lldx%lld). Calculated output size: "
                            "(%lldx%lldx%lldx%lld). Output size is too small", c, (long long)g->in[0],
                            (long long)g->in[1], (long long)g->in[2], c, (long long)g->out[0], (long long)g->out[1],
                            (long long)g->out[2]);
    }
    return 0;
}

static int max3d_geom(const tl_tensor *x, const int64_t *k, int64_t kl, const int64_t *s, int64_t sl,
                      const int64_t *p, int64_t pl, const int64_t *d, int64_t dl, bool ceil_mode, p3_geom *g) {
    if (triple("max_pool3d: kernel_size must either be a single int, or a tuple of three ints", k, kl, NULL, g->k) ||
        triple("max_pool3d: stride must either be omitted, a single int, or a tuple of three ints", s, sl, g->k,
               g->s) ||
        triple("max_pool3d: padding must either be a single int, or a tuple of three ints", p, pl, NULL, g->p) ||
        triple("max_pool3d: dilation must be either a single int, or a tuple of three ints", d, dl, NULL, g->d))
        return -1;
    const int64_t nd = tl_tensor_ndim(x);
    if (nd != 4 && nd != 5)
        return tl_set_error(TL_ERR_RUNTIME, "non-empty 4D or 5D (batch mode) tensor expected for input");
    g->count_include_pad = true;
    g->divisor = 0;
    return pool3d_shape(x, ceil_mode, 0, "max_pool3d_with_indices_out_cpu_template()", g);
}

static int avg3d_geom(const tl_tensor *x, const int64_t *k, int64_t kl, const int64_t *s, int64_t sl,
                      const int64_t *p, int64_t pl, bool ceil_mode, bool cip, int64_t div, bool div_has, p3_geom *g) {
    static const int64_t one[3] = {1, 1, 1};
    if (triple("avg_pool3d: kernel_size must be a single int, or a tuple of three ints", k, kl, NULL, g->k) ||
        triple("avg_pool3d: stride must be omitted, a single int, or a tuple of three ints", s, sl, g->k, g->s) ||
        triple("avg_pool3d: padding must be a single int, or a tuple of three ints", p, pl, NULL, g->p))
        return -1;
    memcpy(g->d, one, sizeof one);
    const int64_t nd = tl_tensor_ndim(x);
    if (nd != 4 && nd != 5)
        return tl_set_error(TL_ERR_RUNTIME, "non-empty 4D or 5D (batch mode) tensor expected for input");
    if (div_has && div == 0) return tl_set_error(TL_ERR_RUNTIME, "divisor must be not zero");
    g->count_include_pad = cip;
    g->divisor = div_has ? div : 0;
    return pool3d_shape(x, ceil_mode, 1, "avg_pool3d()", g);
}

/* grad's shape must be x's with the last three sizes `out` */
static int check_grad(const tl_tensor *grad, const tl_tensor *x, const int64_t *out, const char *what) {
    const int64_t nd = tl_tensor_ndim(x);
    int ok = tl_tensor_ndim(grad) == nd;
    for (int64_t i = 0; ok && i < nd; i++)
        ok = tl_tensor_sizes(grad)[i] == (i < nd - 3 ? tl_tensor_sizes(x)[i] : out[i - (nd - 3)]);
    if (ok) return 0;
    char a[256], b[256];
    int64_t want[5];
    memcpy(want, tl_tensor_sizes(x), (size_t)nd * sizeof(int64_t));
    memcpy(want + nd - 3, out, 3 * sizeof(int64_t));
    fmt_shape(a, sizeof a, want, nd);
    fmt_shape(b, sizeof b, tl_tensor_sizes(grad), tl_tensor_ndim(grad));
    return tl_set_error(TL_ERR_RUNTIME, "Expected %s of size %s, but got %s", what, a, b);
}

/* ------------------------------------------------------------ runners */

static tl_tensor *as_dtype(tl_tensor *y, tl_dtype dt) {
    if (!y || tl_tensor_dtype(y) == dt) return y;
    tl_tensor *r = tl_to_dtype(y, dt, 0);
    tl_tensor_release(y);
    return r;
}

static int max_forward(tl_tensor *self, int op, tl_dtype ct, const p3_geom *g, tl_tensor **ret0, tl_tensor **ret1) {
    const int64_t nd = tl_tensor_ndim(self);
    int64_t shape[5];
    memcpy(shape, tl_tensor_sizes(self), (size_t)nd * sizeof(int64_t));
    memcpy(shape + nd - 3, g->out, 3 * sizeof(int64_t));
    tl_tensor *x = contig_as(self, ct), *y = x ? tl_empty(nd, shape, ct, TL_CPU) : NULL;
    tl_tensor *ind = y ? tl_empty(nd, shape, TL_INT64, TL_CPU) : NULL;
    if (ind) launch(op, ct, g, num_volumes(self), x, y, tl_tensor_data_ptr(ind), NULL);
    tl_tensor_release(x);
    if (!ind || !(y = as_dtype(y, tl_tensor_dtype(self)))) {
        tl_tensor_release(y);
        tl_tensor_release(ind);
        return -1;
    }
    *ret0 = y;
    *ret1 = ind;
    return 0;
}

/* grad_input of a max pooling: grad_output scattered to the saved indices
 * (each checked to lie in its volume: user-given indices must not address
 * memory outside it) */
static tl_tensor *max_backward(tl_tensor *grad_output, tl_tensor *self, tl_tensor *indices, const p3_geom *g,
                               const char *name) {
    tl_dtype ct;
    if (p3_dtype(self, name, 2, &ct) || check_grad(grad_output, self, g->out, "grad_output") ||
        check_grad(indices, self, g->out, "indices"))
        return NULL;
    tl_tensor *gr = contig_as(grad_output, ct), *ind = gr ? contig_as(indices, TL_INT64) : NULL;
    tl_tensor *gi = ind ? tl_empty(tl_tensor_ndim(self), tl_tensor_sizes(self), ct, TL_CPU) : NULL;
    if (gi) {
        const int64_t *v = tl_tensor_data_ptr(ind), n_in = g->in[0] * g->in[1] * g->in[2];
        for (int64_t i = 0, n = tl_tensor_numel(ind); i < n; i++)
            if (v[i] < 0 || v[i] >= n_in) {
                tl_set_error(TL_ERR_INDEX, "index %lld is out of bounds for a pooling volume of %lld elements",
                             (long long)v[i], (long long)n_in);
                tl_tensor_release(gi);
                gi = NULL;
                break;
            }
    }
    if (gi) launch(P3_MAX_BWD, ct, g, num_volumes(self), gr, gi, NULL, tl_tensor_data_ptr(ind));
    tl_tensor_release(gr);
    tl_tensor_release(ind);
    return as_dtype(gi, tl_tensor_dtype(self));
}

/* ------------------------------------------------------------ operators */

int tl_native_max_pool3d_with_indices_cpu(tl_keyset ks, tl_tensor *self, const int64_t *kernel_size,
                                          int64_t kernel_size_len, const int64_t *stride, int64_t stride_len,
                                          const int64_t *padding, int64_t padding_len, const int64_t *dilation,
                                          int64_t dilation_len, bool ceil_mode, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    p3_geom g;
    tl_dtype ct;
    if (max3d_geom(self, kernel_size, kernel_size_len, stride, stride_len, padding, padding_len, dilation,
                   dilation_len, ceil_mode, &g) ||
        p3_dtype(self, "max_pool3d", 2, &ct))
        return -1;
    return max_forward(self, P3_MAX, ct, &g, ret0, ret1);
}

tl_tensor *tl_native_max_pool3d_with_indices_backward_cpu(tl_keyset ks, tl_tensor *grad_output, tl_tensor *self,
                                                          const int64_t *kernel_size, int64_t kernel_size_len,
                                                          const int64_t *stride, int64_t stride_len,
                                                          const int64_t *padding, int64_t padding_len,
                                                          const int64_t *dilation, int64_t dilation_len,
                                                          bool ceil_mode, tl_tensor *indices) {
    (void)ks;
    p3_geom g;
    if (max3d_geom(self, kernel_size, kernel_size_len, stride, stride_len, padding, padding_len, dilation,
                   dilation_len, ceil_mode, &g))
        return NULL;
    return max_backward(grad_output, self, indices, &g, "max_pool3d_with_indices_backward");
}

/* max_pool3d (CompositeImplicitAutograd): PyTorch's CPU path returns
 * max_pool3d_with_indices' values */
tl_tensor *tl_native_max_pool3d(tl_keyset ks, tl_tensor *self, const int64_t *kernel_size, int64_t kernel_size_len,
                                const int64_t *stride, int64_t stride_len, const int64_t *padding,
                                int64_t padding_len, const int64_t *dilation, int64_t dilation_len, bool ceil_mode) {
    (void)ks;
    tl_tensor *out = NULL, *ind = NULL;
    if (tl_ops_max_pool3d_with_indices(self, kernel_size, kernel_size_len, stride, stride_len, padding, padding_len,
                                       dilation, dilation_len, ceil_mode, &out, &ind))
        return NULL;
    tl_tensor_release(ind);
    return out;
}

tl_tensor *tl_native_avg_pool3d_cpu(tl_keyset ks, tl_tensor *self, const int64_t *kernel_size,
                                    int64_t kernel_size_len, const int64_t *stride, int64_t stride_len,
                                    const int64_t *padding, int64_t padding_len, bool ceil_mode,
                                    bool count_include_pad, int64_t divisor_override, bool divisor_override_has) {
    (void)ks;
    p3_geom g;
    tl_dtype ct;
    if (avg3d_geom(self, kernel_size, kernel_size_len, stride, stride_len, padding, padding_len, ceil_mode,
                   count_include_pad, divisor_override, divisor_override_has, &g) ||
        p3_dtype(self, "avg_pool3d_out_frame", 1, &ct))
        return NULL;
    const int64_t nd = tl_tensor_ndim(self);
    int64_t shape[5];
    memcpy(shape, tl_tensor_sizes(self), (size_t)nd * sizeof(int64_t));
    memcpy(shape + nd - 3, g.out, 3 * sizeof(int64_t));
    tl_tensor *x = contig_as(self, ct), *y = x ? tl_empty(nd, shape, ct, TL_CPU) : NULL;
    if (y) launch(P3_AVG, ct, &g, num_volumes(self), x, y, NULL, NULL);
    tl_tensor_release(x);
    return as_dtype(y, tl_tensor_dtype(self));
}

tl_tensor *tl_native_avg_pool3d_backward_cpu(tl_keyset ks, tl_tensor *grad_output, tl_tensor *self,
                                             const int64_t *kernel_size, int64_t kernel_size_len,
                                             const int64_t *stride, int64_t stride_len, const int64_t *padding,
                                             int64_t padding_len, bool ceil_mode, bool count_include_pad,
                                             int64_t divisor_override, bool divisor_override_has) {
    (void)ks;
    p3_geom g;
    tl_dtype ct;
    if (avg3d_geom(self, kernel_size, kernel_size_len, stride, stride_len, padding, padding_len, ceil_mode,
                   count_include_pad, divisor_override, divisor_override_has, &g) ||
        p3_dtype(self, "avg_pool3d_backward_out_frame", 1, &ct) ||
        check_grad(grad_output, self, g.out, "grad_output"))
        return NULL;
    tl_tensor *gr = contig_as(grad_output, ct);
    tl_tensor *gi = gr ? tl_empty(tl_tensor_ndim(self), tl_tensor_sizes(self), ct, TL_CPU) : NULL;
    if (gi) launch(P3_AVG_BWD, ct, &g, num_volumes(self), gr, gi, NULL, NULL);
    tl_tensor_release(gr);
    return as_dtype(gi, tl_tensor_dtype(self));
}

/* PyTorch's adaptive_max_pool3d meta checks */
static int adaptive_geom(const tl_tensor *self, const int64_t *os, int64_t osl, p3_geom *g) {
    const int64_t nd = tl_tensor_ndim(self), *sz = tl_tensor_sizes(self);
    char a[256];
    fmt_shape(a, sizeof a, sz, nd);
    for (int64_t i = 1; i < nd; i++)
        if (sz[i] <= 0)
            return tl_set_error(TL_ERR_RUNTIME, "adaptive_max_pool3d(): Expected input to have non-zero size for "
                                "non-batch dimensions, but input has sizes %s with dimension %lld being empty", a,
                                (long long)i);
    if (nd != 4 && nd != 5)
        return tl_set_error(TL_ERR_RUNTIME, "adaptive_max_pool3d(): Expected 4D or 5D tensor, but got: %s", a);
    if (osl != 3)
        return tl_set_error(TL_ERR_RUNTIME, "adaptive_max_pool3d(): internal error: output_size.size() must be 3");
    memset(g, 0, sizeof *g);
    for (int i = 0; i < 3; i++) {
        g->in[i] = sz[nd - 3 + i];
        g->out[i] = os[i];
        g->k[i] = 1; /* a negative size is tl_empty's error, as PyTorch's */
    }
    return 0;
}

int tl_native_adaptive_max_pool3d_cpu(tl_keyset ks, tl_tensor *self, const int64_t *output_size,
                                      int64_t output_size_len, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    p3_geom g;
    tl_dtype ct;
    if (adaptive_geom(self, output_size, output_size_len, &g) || p3_dtype(self, "adaptive_max_pool3d_cpu", 0, &ct))
        return -1;
    return max_forward(self, P3_AMAX, ct, &g, ret0, ret1);
}

tl_tensor *tl_native_adaptive_max_pool3d_backward_cpu(tl_keyset ks, tl_tensor *grad_output, tl_tensor *self,
                                                      tl_tensor *indices) {
    (void)ks;
    p3_geom g;
    if (tl_tensor_ndim(grad_output) != tl_tensor_ndim(self) || tl_tensor_ndim(self) < 4) {
        char a[256];
        fmt_shape(a, sizeof a, tl_tensor_sizes(grad_output), tl_tensor_ndim(grad_output));
        tl_set_error(TL_ERR_RUNTIME, "adaptive_max_pooling3d_backward(): Expected 4D or 5D grad_output, but got: %s",
                     a);
        return NULL;
    }
    const int64_t nd = tl_tensor_ndim(self);
    if (adaptive_geom(self, tl_tensor_sizes(grad_output) + nd - 3, 3, &g)) return NULL;
    if (tl_tensor_dtype(grad_output) != tl_tensor_dtype(self)) {
        tl_set_error(TL_ERR_RUNTIME, "expected dtype %s for `grad_output` but got dtype %s",
                     tl_dtype_caffe2_name(tl_tensor_dtype(self)), tl_dtype_caffe2_name(tl_tensor_dtype(grad_output)));
        return NULL;
    }
    return max_backward(grad_output, self, indices, &g, "adaptive_max_pool3d_backward_cpu");
}
