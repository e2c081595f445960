/* The convolution products for integer dtypes (docs/NN.md "Convolution").
 *
 * PyTorch's CPU slow paths compute integer convolutions with a GEMM in the
 * integer type itself, so every product is exact modulo 2^bits. Here the
 * operands are int64 and the sums wrap in uint64 arithmetic (defined
 * overflow); integer addition being associative modulo 2^64, any order gives
 * PyTorch's bits, and the narrowing cast back to int8 / int16 / int32 / uint8
 * keeps the low bits, as PyTorch's own wrap does. A direct loop over the
 * window (no float GEMM, no rounding): each output element of a product is
 * one thread's. Same geometry and layouts as conv_gemm.h. */
#include <string.h>

#include "conv_int.h"
#include "tl_internal.h"

typedef struct {
    const tl_conv_geom *g;
    const uint64_t *a, *w, *bias; /* the product's two operands (see each product) and the optional bias */
    uint64_t *out;
    int64_t K, IL, OL, Cig, Ccg;
} int_ctx;

static void int_dims(const tl_conv_geom *g, int_ctx *c) {
    c->g = g;
    c->K = g->k[0] * g->k[1] * g->k[2];
    c->IL = g->isz[0] * g->isz[1] * g->isz[2];
    c->OL = g->osz[0] * g->osz[1] * g->osz[2];
    c->Cig = g->Ci / g->G;
    c->Ccg = g->Cc / g->G;
}

/* the flat image offset of column position o under window tap t, or -1 where
 * the tap falls into padding */
static int64_t img_offset(const tl_conv_geom *g, int64_t o, int64_t t) {
    int64_t off = 0;
    for (int i = 0; i < TL_CONV_MAXD; i++) {
        int64_t os = 1, ks = 1;
        for (int j = i + 1; j < TL_CONV_MAXD; j++) {
            os *= g->osz[j];
            ks *= g->k[j];
        }
        const int64_t oi = o / os % g->osz[i], ki = t / ks % g->k[i];
        const int64_t x = oi * g->s[i] - g->p[i] + ki * g->d[i];
        if (x < 0 || x >= g->isz[i]) return -1;
        off = off * g->isz[i] + x;
    }
    return off;
}

/* Y[n, c] for one (n, c) per index: bias + sum over the group's image
 * channels and the window (a = X) */
static void cols_rows(int64_t b, int64_t e, void *ctx) {
    const int_ctx *c = ctx;
    const tl_conv_geom *g = c->g;
    for (int64_t r = b; r < e; r++) {
        const int64_t n = r / g->Cc, oc = r % g->Cc, grp = oc / c->Ccg;
        const uint64_t *x = c->a + (n * g->Ci + grp * c->Cig) * c->IL;
        const uint64_t *w = c->w + oc * c->Cig * c->K;
        uint64_t *y = c->out + r * c->OL;
        for (int64_t o = 0; o < c->OL; o++) {
            uint64_t acc = c->bias ? c->bias[oc] : 0;
            for (int64_t t = 0; t < c->K; t++) {
                const int64_t off = img_offset(g, o, t);
                if (off < 0) continue;
                for (int64_t ic = 0; ic < c->Cig; ic++) acc += w[ic * c->K + t] * x[ic * c->IL + off];
            }
            y[o] = acc;
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
            for (int64_t o = 0; o < c->OL; o++)
                for (int64_t t = 0; t < c->K; t++) {
                    const int64_t off = img_offset(g, o, t);
                    if (off < 0) continue;
                    for (int64_t ic = 0; ic < c->Cig; ic++) x[ic * c->IL + off] += w[ic * c->K + t] * y[o];
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
            for (int64_t o = 0; o < c->OL; o++)
                for (int64_t t = 0; t < c->K; t++) {
                    const int64_t off = img_offset(g, o, t);
                    if (off < 0) continue;
                    for (int64_t ic = 0; ic < c->Cig; ic++) dw[ic * c->K + t] += y[o] * x[ic * c->IL + off];
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
    int_dims(g, &c);
    tl_parallel_for(g->N * g->Cc, grain(c.OL * c.K * c.Cig), cols_rows, &c);
    return 0;
}

int tl_conv_int_image_from_cols(const tl_conv_geom *g, const int64_t *Y, const int64_t *W, const int64_t *bias,
                                int64_t *X) {
    int_ctx c = {.a = (const uint64_t *)Y, .w = (const uint64_t *)W, .bias = (const uint64_t *)bias,
                 .out = (uint64_t *)X};
    int_dims(g, &c);
    tl_parallel_for(g->N * g->G, grain(c.Ccg * c.OL * c.K * c.Cig), image_groups, &c);
    return 0;
}

int tl_conv_int_weight_grad(const tl_conv_geom *g, const int64_t *X, const int64_t *Y, int64_t *dW) {
    int_ctx c = {.a = (const uint64_t *)X, .w = (const uint64_t *)Y, .out = (uint64_t *)dW};
    int_dims(g, &c);
    tl_parallel_for(g->Cc, grain(g->N * c.OL * c.K * c.Cig), weight_rows, &c);
    return 0;
}
