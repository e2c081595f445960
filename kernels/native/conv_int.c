/* The convolution products for integer dtypes (docs/NN.md "Convolution").
 *
 * PyTorch's CPU slow paths compute integer convolutions with a GEMM in the
 * integer type itself, so every product is exact modulo 2^bits. Here the
 * operands are int64 and the sums wrap in uint64 arithmetic (defined
 * overflow); integer addition being associative modulo 2^64, any order gives
 * PyTorch's bits, and the narrowing cast back to int8 / int16 / int32 / uint8
 * keeps the low bits, as PyTorch's own wrap does. Direct loops (no float
 * GEMM, no rounding): per channel and window tap, a pass over the column
 * positions through per-dim coordinate tables (no division per element);
 * each output row of a product is one thread's. Same geometry and layouts as
 * conv_gemm.h. */
#include <stdlib.h>
#include <string.h>

#include "conv_int.h"
#include "tl_error.h"
#include "tl_internal.h"

typedef struct {
    const tl_conv_geom *g;
    const uint64_t *a, *w, *bias; /* the product's two operands (see each product) and the optional bias */
    uint64_t *out;
    int64_t K, IL, OL, Cig, Ccg;
    int64_t *pos[TL_CONV_MAXD]; /* per dim: image coordinate of (column position, tap), -1 in padding */
} int_ctx;

static int int_dims(const tl_conv_geom *g, int_ctx *c) {
    c->g = g;
    c->K = g->k[0] * g->k[1] * g->k[2];
    c->IL = g->isz[0] * g->isz[1] * g->isz[2];
    c->OL = g->osz[0] * g->osz[1] * g->osz[2];
    c->Cig = g->Ci / g->G;
    c->Ccg = g->Cc / g->G;
    for (int i = 0; i < TL_CONV_MAXD; i++) {
        c->pos[i] = malloc((size_t)(g->osz[i] * g->k[i]) * sizeof(int64_t) + 1);
        if (!c->pos[i]) return tl_set_error(TL_ERR_MEMORY, "convolution: out of memory");
        for (int64_t o = 0; o < g->osz[i]; o++)
            for (int64_t t = 0; t < g->k[i]; t++) {
                const int64_t x = o * g->s[i] - g->p[i] + t * g->d[i];
                c->pos[i][o * g->k[i] + t] = x < 0 || x >= g->isz[i] ? -1 : x;
            }
    }
    return 0;
}

static void int_free(int_ctx *c) {
    for (int i = 0; i < TL_CONV_MAXD; i++) free(c->pos[i]);
}

/* BODY for every column position o whose window tap (t0, t1, t2) lies in the
 * image, with off its flat image offset */
#define FOR_TAP(c, t0, t1, t2, BODY)                                                                              \
    do {                                                                                                          \
        const tl_conv_geom *g_ = (c)->g;                                                                          \
        for (int64_t o0 = 0; o0 < g_->osz[0]; o0++) {                                                             \
            const int64_t x0 = (c)->pos[0][o0 * g_->k[0] + (t0)];                                                 \
            if (x0 < 0) continue;                                                                                 \
            for (int64_t o1 = 0; o1 < g_->osz[1]; o1++) {                                                         \
                const int64_t x1 = (c)->pos[1][o1 * g_->k[1] + (t1)];                                             \
                if (x1 < 0) continue;                                                                             \
                const int64_t row = (x0 * g_->isz[1] + x1) * g_->isz[2], orow = (o0 * g_->osz[1] + o1) * g_->osz[2]; \
                for (int64_t o2 = 0; o2 < g_->osz[2]; o2++) {                                                     \
                    const int64_t x2 = (c)->pos[2][o2 * g_->k[2] + (t2)];                                         \
                    if (x2 < 0) continue;                                                                         \
                    const int64_t o = orow + o2, off = row + x2;                                                  \
                    BODY;                                                                                         \
                }                                                                                                 \
            }                                                                                                     \
        }                                                                                                         \
    } while (0)

/* Y[n, c] for one (n, c) per index: bias + the group's image channels under
 * every tap (a = X) */
static void cols_rows(int64_t b, int64_t e, void *ctx) {
    const int_ctx *c = ctx;
    const tl_conv_geom *g = c->g;
    for (int64_t r = b; r < e; r++) {
        const int64_t n = r / g->Cc, oc = r % g->Cc, grp = oc / c->Ccg;
        const uint64_t *x = c->a + (n * g->Ci + grp * c->Cig) * c->IL;
        const uint64_t *w = c->w + oc * c->Cig * c->K;
        uint64_t *y = c->out + r * c->OL;
        for (int64_t o = 0; o < c->OL; o++) y[o] = c->bias ? c->bias[oc] : 0;
        for (int64_t ic = 0; ic < c->Cig; ic++)
            for (int64_t t0 = 0, t = 0; t0 < g->k[0]; t0++)
                for (int64_t t1 = 0; t1 < g->k[1]; t1++)
                    for (int64_t t2 = 0; t2 < g->k[2]; t2++, t++) {
                        const uint64_t wv = w[ic * c->K + t], *xc = x + ic * c->IL;
                        FOR_TAP(c, t0, t1, t2, y[o] += wv * xc[off]);
                    }
    }
}

/* X[n, group] = col2im(W_g^T Y[n, group]) (+ bias), one (n, group) per
 * index: its image channels are written by this index only (a = Y) */
static void image_groups(int64_t b, int64_t e, void *ctx) {
    const int_ctx *c = ctx;
    const tl_conv_geom *g = c->g;
    for (int64_t r = b; r < e; r++) {
        const int64_t n = r / g->G, grp = r % g->G;
        uint64_t *x = c->out + (n * g->Ci + grp * c->Cig) * c->IL;
        for (int64_t ic = 0; ic < c->Cig; ic++)
            for (int64_t i = 0; i < c->IL; i++) x[ic * c->IL + i] = c->bias ? c->bias[grp * c->Cig + ic] : 0;
        for (int64_t cc = 0; cc < c->Ccg; cc++) {
            const uint64_t *y = c->a + (n * g->Cc + grp * c->Ccg + cc) * c->OL;
            const uint64_t *w = c->w + (grp * c->Ccg + cc) * c->Cig * c->K;
            for (int64_t ic = 0; ic < c->Cig; ic++)
                for (int64_t t0 = 0, t = 0; t0 < g->k[0]; t0++)
                    for (int64_t t1 = 0; t1 < g->k[1]; t1++)
                        for (int64_t t2 = 0; t2 < g->k[2]; t2++, t++) {
                            const uint64_t wv = w[ic * c->K + t];
                            uint64_t *xc = x + ic * c->IL;
                            FOR_TAP(c, t0, t1, t2, xc[off] += wv * y[o]);
                        }
        }
    }
}

/* dW[c, ic, t] = sum_n sum_o Y[n, c, o] X[n, group ic, tap t of o], one
 * weight row c per index (a = X, w = Y) */
static void weight_rows(int64_t b, int64_t e, void *ctx) {
    const int_ctx *c = ctx;
    const tl_conv_geom *g = c->g;
    for (int64_t oc = b; oc < e; oc++) {
        const int64_t grp = oc / c->Ccg;
        uint64_t *dw = c->out + oc * c->Cig * c->K;
        memset(dw, 0, (size_t)(c->Cig * c->K) * sizeof(uint64_t));
        for (int64_t n = 0; n < g->N; n++) {
            const uint64_t *y = c->w + (n * g->Cc + oc) * c->OL;
            const uint64_t *x = c->a + (n * g->Ci + grp * c->Cig) * c->IL;
            for (int64_t ic = 0; ic < c->Cig; ic++)
                for (int64_t t0 = 0, t = 0; t0 < g->k[0]; t0++)
                    for (int64_t t1 = 0; t1 < g->k[1]; t1++)
                        for (int64_t t2 = 0; t2 < g->k[2]; t2++, t++) {
                            const uint64_t *xc = x + ic * c->IL;
                            uint64_t acc = 0;
                            FOR_TAP(c, t0, t1, t2, acc += y[o] * xc[off]);
                            dw[ic * c->K + t] += acc;
                        }
        }
    }
}

/* rows of about 64 Ki multiply-adds per task */
static int64_t grain(int64_t per_row) { return per_row > 0 && 65536 / per_row > 0 ? 65536 / per_row : 1; }

int tl_conv_int_cols_from_image(const tl_conv_geom *g, const int64_t *X, const int64_t *W, const int64_t *bias,
                                int64_t *Y) {
    int_ctx c = {.a = (const uint64_t *)X, .w = (const uint64_t *)W, .bias = (const uint64_t *)bias,
                 .out = (uint64_t *)Y};
    const int rc = int_dims(g, &c);
    if (!rc) tl_parallel_for(g->N * g->Cc, grain(c.OL * c.K * c.Cig), cols_rows, &c);
    int_free(&c);
    return rc;
}

int tl_conv_int_image_from_cols(const tl_conv_geom *g, const int64_t *Y, const int64_t *W, const int64_t *bias,
                                int64_t *X) {
    int_ctx c = {.a = (const uint64_t *)Y, .w = (const uint64_t *)W, .bias = (const uint64_t *)bias,
                 .out = (uint64_t *)X};
    const int rc = int_dims(g, &c);
    if (!rc) tl_parallel_for(g->N * g->G, grain(c.Ccg * c.OL * c.K * c.Cig), image_groups, &c);
    int_free(&c);
    return rc;
}

int tl_conv_int_weight_grad(const tl_conv_geom *g, const int64_t *X, const int64_t *Y, int64_t *dW) {
    int_ctx c = {.a = (const uint64_t *)X, .w = (const uint64_t *)Y, .out = (uint64_t *)dW};
    const int rc = int_dims(g, &c);
    if (!rc) tl_parallel_for(g->Cc, grain(g->N * c.OL * c.K * c.Cig), weight_rows, &c);
    int_free(&c);
    return rc;
}
