/* im2col / col2im and the GEMM driver of the convolutions (conv_gemm.h).
 *
 * Work split: with at least as many batch items as threads, items go to
 * the thread pool (each chunk with its own column buffer; the GEMMs inside
 * run single-threaded, tl_blas_gemm's rule inside a parallel region).
 * With fewer items the items run in turn; the forward splits each image's
 * column blocks over the pool, the other products let OpenBLAS split each
 * GEMM over the threads. weight_grad's per-chunk partial sums are added in
 * batch order, so results do not depend on which thread ran what. */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "conv_dnnl.h"
#include "conv_gemm.h"
#include "tl_blas.h"
#include "tl_error.h"
#include "tl_internal.h"
#include "tl_runtime.h"

void tl_conv_geom_spatial(tl_conv_geom *g, int nd, const int64_t *isz, const int64_t *osz, const int64_t *k,
                          const int64_t *s, const int64_t *p, const int64_t *d) {
    const int lead = TL_CONV_MAXD - nd;
    for (int i = 0; i < TL_CONV_MAXD; i++) {
        const bool pad = i < lead;
        g->isz[i] = pad ? 1 : isz[i - lead];
        g->osz[i] = pad ? 1 : osz[i - lead];
        g->k[i] = pad ? 1 : k[i - lead];
        g->s[i] = pad ? 1 : s[i - lead];
        g->p[i] = pad ? 0 : p[i - lead];
        g->d[i] = pad ? 1 : d[i - lead];
    }
}

/* sizes derived once per call */
typedef struct {
    const tl_conv_geom *g;
    int64_t K, IL, OL, Cig, Ccg, rows; /* rows = Cig * K: the column matrix's height */
    int64_t esz;
    bool direct; /* 1x1 window, stride 1, no padding: the image is the column matrix */
    int64_t R, block; /* output rows (os[0] * os[1]) and rows per column block */
} conv_dims;

/* The column matrix is built and consumed in blocks of whole output rows of
 * about TL_CONV_COL_BYTES, so it stays in L2 between im2col and the GEMM
 * that reads it (OpenBLAS also runs faster on the narrower panel: 64 x 576
 * @ 576 x 392 at ~97 GF/s against ~85 for 576 x 3136 on the dev VM); at
 * least TL_CONV_COL_MIN columns, so the GEMM stays wide. */
#define TL_CONV_COL_BYTES (384 * 1024)
#define TL_CONV_COL_MIN 256

static conv_dims dims_of(const tl_conv_geom *g) {
    conv_dims c = {.g = g, .K = 1, .IL = 1, .OL = 1};
    bool direct = true;
    for (int i = 0; i < TL_CONV_MAXD; i++) {
        c.K *= g->k[i];
        c.IL *= g->isz[i];
        c.OL *= g->osz[i];
        /* same sizes too: a transposed 1x1 with output_padding (allowed below the dilation) is larger */
        direct = direct && g->k[i] == 1 && g->s[i] == 1 && g->p[i] == 0 && g->isz[i] == g->osz[i];
    }
    c.Cig = g->Ci / g->G;
    c.Ccg = g->Cc / g->G;
    c.rows = c.Cig * c.K;
    c.esz = g->dt == TL_FLOAT64 ? 8 : 4;
    c.direct = direct;
    c.R = g->osz[0] * g->osz[1];
    int64_t cols = c.rows > 0 ? TL_CONV_COL_BYTES / (c.rows * c.esz) : c.OL;
    if (cols < TL_CONV_COL_MIN) cols = TL_CONV_COL_MIN;
    c.block = g->osz[2] > 0 ? cols / g->osz[2] : c.R;
    if (c.block < 1) c.block = 1;
    if (c.block > c.R) c.block = c.R;
    return c;
}

/* [lo, hi): the window positions o < n whose tap o * s - p + off lies in [0, size) */
static inline void valid_range(int64_t n, int64_t s, int64_t p, int64_t off, int64_t size, int64_t *lo, int64_t *hi) {
    const int64_t a = p - off; /* o * s >= a */
    int64_t l = a <= 0 ? 0 : (a + s - 1) / s;
    const int64_t b = size + p - off; /* o * s < b */
    int64_t h = b <= 0 ? 0 : (b + s - 1) / s;
    if (h > n) h = n;
    if (l > h) l = h;
    *lo = l;
    *hi = h;
}

/* im2col over the output rows [r0, r1) (a row: one (od, oh) pair, os[2]
 * positions): col[(c, kd, kh, kw), (r - r0, ow)] = X[c, od*s - p + kd*d, ...]
 * (0 outside), leading dimension (r1 - r0) * os[2]; col2im: its adjoint,
 * X[...] += col[...]. One body per element type. */
#define DEFINE_COLS(T, SUF)                                                                                       \
    static void im2col_##SUF(const tl_conv_geom *g, int64_t C, const T *X, T *col, int64_t r0, int64_t r1) {      \
        const int64_t *is = g->isz, *os = g->osz, *k = g->k, *s = g->s, *p = g->p, *d = g->d;                    \
        const int64_t ld = (r1 - r0) * os[2];                                                                     \
        for (int64_t c = 0; c < C; c++)                                                                           \
            for (int64_t kd = 0; kd < k[0]; kd++)                                                                 \
                for (int64_t kh = 0; kh < k[1]; kh++)                                                             \
                    for (int64_t kw = 0; kw < k[2]; kw++) {                                                       \
                        T *dst = col + (((c * k[0] + kd) * k[1] + kh) * k[2] + kw) * ld;                          \
                        int64_t lo, hi;                                                                           \
                        valid_range(os[2], s[2], p[2], kw * d[2], is[2], &lo, &hi);                               \
                        for (int64_t r = r0; r < r1; r++, dst += os[2]) {                                         \
                            const int64_t id = r / os[1] * s[0] - p[0] + kd * d[0];                               \
                            const int64_t ih = r % os[1] * s[1] - p[1] + kh * d[1];                               \
                            if (id < 0 || id >= is[0] || ih < 0 || ih >= is[1]) {                                 \
                                memset(dst, 0, (size_t)os[2] * sizeof(T));                                        \
                                continue;                                                                         \
                            }                                                                                     \
                            const T *src = X + ((c * is[0] + id) * is[1] + ih) * is[2] - p[2] + kw * d[2];        \
                            for (int64_t o = 0; o < lo; o++) dst[o] = 0;                                          \
                            if (s[2] == 1)                                                                        \
                                memcpy(dst + lo, src + lo, (size_t)(hi - lo) * sizeof(T));                        \
                            else                                                                                  \
                                for (int64_t o = lo; o < hi; o++) dst[o] = src[o * s[2]];                         \
                            for (int64_t o = hi; o < os[2]; o++) dst[o] = 0;                                      \
                        }                                                                                         \
                    }                                                                                             \
    }                                                                                                             \
    static void col2im_##SUF(const tl_conv_geom *g, int64_t C, const T *col, T *X, int64_t r0, int64_t r1) {      \
        const int64_t *is = g->isz, *os = g->osz, *k = g->k, *s = g->s, *p = g->p, *d = g->d;                    \
        const int64_t ld = (r1 - r0) * os[2];                                                                     \
        for (int64_t c = 0; c < C; c++)                                                                           \
            for (int64_t kd = 0; kd < k[0]; kd++)                                                                 \
                for (int64_t kh = 0; kh < k[1]; kh++)                                                             \
                    for (int64_t kw = 0; kw < k[2]; kw++) {                                                       \
                        const T *src = col + (((c * k[0] + kd) * k[1] + kh) * k[2] + kw) * ld;                    \
                        int64_t lo, hi;                                                                           \
                        valid_range(os[2], s[2], p[2], kw * d[2], is[2], &lo, &hi);                               \
                        for (int64_t r = r0; r < r1; r++, src += os[2]) {                                         \
                            const int64_t id = r / os[1] * s[0] - p[0] + kd * d[0];                               \
                            const int64_t ih = r % os[1] * s[1] - p[1] + kh * d[1];                               \
                            if (id < 0 || id >= is[0] || ih < 0 || ih >= is[1]) continue;                         \
                            T *dst = X + ((c * is[0] + id) * is[1] + ih) * is[2] - p[2] + kw * d[2];              \
                            if (s[2] == 1) {                                                                      \
                                _Pragma("omp simd") for (int64_t o = lo; o < hi; o++) dst[o] += src[o];           \
                            } else {                                                                              \
                                for (int64_t o = lo; o < hi; o++) dst[o * s[2]] += src[o];                        \
                            }                                                                                     \
                        }                                                                                         \
                    }                                                                                             \
    }                                                                                                             \
    /* every channel c of n items [C, L] set to bias[c] (0 without bias) */                                       \
    static void fill_bias_##SUF(T *out, const T *bias, int64_t C, int64_t L) {                                    \
        for (int64_t c = 0; c < C; c++) {                                                                         \
            const T v = bias ? bias[c] : (T)0;                                                                    \
            for (int64_t i = 0; i < L; i++) out[c * L + i] = v;                                                   \
        }                                                                                                         \
    }

DEFINE_COLS(float, f32)
DEFINE_COLS(double, f64)

static void im2col(const conv_dims *c, const void *X, void *col, int64_t r0, int64_t r1) {
    if (c->g->dt == TL_FLOAT64)
        im2col_f64(c->g, c->Cig, X, col, r0, r1);
    else
        im2col_f32(c->g, c->Cig, X, col, r0, r1);
}

static void col2im(const conv_dims *c, const void *col, void *X, int64_t r0, int64_t r1) {
    if (c->g->dt == TL_FLOAT64)
        col2im_f64(c->g, c->Cig, col, X, r0, r1);
    else
        col2im_f32(c->g, c->Cig, col, X, r0, r1);
}

static void fill_bias(const conv_dims *c, void *out, const void *bias, int64_t C, int64_t L) {
    if (c->g->dt == TL_FLOAT64)
        fill_bias_f64(out, bias, C, L);
    else
        fill_bias_f32(out, bias, C, L);
}

static void gemm(const conv_dims *c, bool ta, bool tb, int64_t M, int64_t N, int64_t K, const void *A, int64_t lda,
                 const void *B, int64_t ldb, double beta, void *C, int64_t ldc) {
    if (M == 0 || N == 0) return;
    if (K == 0) { /* no channels to sum (BLAS rejects a zero leading dimension) */
        if (beta == 0)
            for (int64_t i = 0; i < M; i++) memset((char *)C + i * ldc * c->esz, 0, (size_t)(N * c->esz));
        return;
    }
    tl_blas_gemm(c->g->dt, ta, tb, M, N, K, 1.0, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1);
}

/* the BLAS takes 32-bit dimensions (tl_blas.h) */
static int check_blas_dims(const conv_dims *c) {
    if (c->rows > TL_BLAS_INT_MAX || c->OL > TL_BLAS_INT_MAX || c->Ccg > TL_BLAS_INT_MAX)
        return tl_set_error(TL_ERR_RUNTIME, "convolution: a dimension of the GEMM exceeds the BLAS integer range");
    return 0;
}

typedef struct {
    conv_dims c;
    const char *X, *Y, *W, *bias;
    char *out;
    char *partial;       /* weight_grad: one dW per chunk */
    int64_t *part_begin; /* its first item, to add the partials in order */
    atomic_int nparts;
    atomic_int failed;
} conv_job;

/* one column block (at least a byte: malloc(0) may give NULL) */
static size_t col_bytes(const conv_dims *c) { return (size_t)(c->rows * c->block * c->g->osz[2] * c->esz) + 1; }

static const char *at(const char *base, int64_t elems, int64_t esz) { return base + elems * esz; }

/* the column buffer of one chunk (none when the image is the column
 * matrix); false, and the job marked failed, when out of memory */
static bool chunk_cols(conv_job *j, void **col) {
    *col = NULL;
    if (j->c.direct) return true;
    if ((*col = malloc(col_bytes(&j->c)))) return true;
    atomic_store(&j->failed, 1);
    return false;
}

/* ---------------------------------------------------------------- forward */

/* Y_g's column blocks [kb, ke) = W_g @ im2col(X_g) for those output rows */
static void forward_blocks(const conv_job *j, const char *Xg, const char *Wg, char *Yg, void *col, int64_t kb,
                           int64_t ke) {
    const conv_dims *c = &j->c;
    for (int64_t kbi = kb; kbi < ke; kbi++) {
        const int64_t r0 = kbi * c->block, r1 = r0 + c->block < c->R ? r0 + c->block : c->R;
        const int64_t o0 = r0 * c->g->osz[2], nc = (r1 - r0) * c->g->osz[2];
        im2col(c, Xg, col, r0, r1);
        gemm(c, false, false, c->Ccg, nc, c->rows, Wg, c->rows, col, nc, j->bias ? 1.0 : 0.0, Yg + o0 * c->esz,
             c->OL);
    }
}

/* one (item, group) with its blocks over the pool: a batch smaller than
 * the thread count (one image) still builds its columns on every thread */
typedef struct {
    conv_job *j;
    const char *Xg, *Wg;
    char *Yg;
} block_job;

static void forward_block_range(int64_t b, int64_t e, void *ctx) {
    const block_job *bj = ctx;
    void *col = NULL;
    if (!chunk_cols(bj->j, &col)) return;
    forward_blocks(bj->j, bj->Xg, bj->Wg, bj->Yg, col, b, e);
    free(col);
}

static void cols_from_image_items(int64_t b, int64_t e, void *ctx) {
    conv_job *j = ctx;
    const conv_dims *c = &j->c;
    const tl_conv_geom *g = c->g;
    const int64_t nblocks = c->block > 0 ? (c->R + c->block - 1) / c->block : 0;
    /* blocks over the pool: items run in turn (fewer than threads) and not already inside the pool */
    const bool split = !c->direct && nblocks > 1 && !tl__in_parallel_region() && tl_get_num_threads() > 1;
    void *col = NULL;
    if (!split && !chunk_cols(j, &col)) return;
    for (int64_t n = b; n < e; n++) {
        char *Yn = j->out + n * g->Cc * c->OL * c->esz;
        if (j->bias) fill_bias(c, Yn, j->bias, g->Cc, c->OL);
        for (int64_t gi = 0; gi < g->G; gi++) {
            const char *Xg = at(j->X, (n * g->Ci + gi * c->Cig) * c->IL, c->esz);
            const char *Wg = at(j->W, gi * c->Ccg * c->rows, c->esz);
            char *Yg = Yn + gi * c->Ccg * c->OL * c->esz;
            if (c->direct) {
                gemm(c, false, false, c->Ccg, c->OL, c->rows, Wg, c->rows, Xg, c->OL, j->bias ? 1.0 : 0.0, Yg, c->OL);
            } else if (split) {
                block_job bj = {j, Xg, Wg, Yg};
                tl_parallel_for(nblocks, 1, forward_block_range, &bj);
            } else {
                forward_blocks(j, Xg, Wg, Yg, col, 0, nblocks);
            }
        }
    }
    free(col);
}

/* split items over the pool when there are enough of them (see the top) */
static bool batch_parallel(int64_t items) {
    if (tl__in_parallel_region()) return false;
    const int n = tl_get_num_threads();
    return n > 1 && items >= n;
}

static int run(conv_job *j, tl_range_fn fn) {
    if (batch_parallel(j->c.g->N))
        tl_parallel_for(j->c.g->N, 1, fn, j);
    else
        fn(0, j->c.g->N, j);
    if (atomic_load(&j->failed)) return tl_set_error(TL_ERR_MEMORY, "convolution: out of memory for the column buffer");
    return 0;
}

int tl_conv_cols_from_image(const tl_conv_geom *g, const void *X, const void *W, const void *bias, void *Y) {
    if (tl_conv_dnnl_cols_from_image(g, X, W, bias, Y)) return 0;
    conv_job j = {.c = dims_of(g), .X = X, .W = W, .bias = bias, .out = Y};
    if (check_blas_dims(&j.c)) return -1;
    return run(&j, cols_from_image_items);
}

/* --------------------------------------------------------------- adjoint */

static void image_from_cols_items(int64_t b, int64_t e, void *ctx) {
    conv_job *j = ctx;
    const conv_dims *c = &j->c;
    const tl_conv_geom *g = c->g;
    void *col = NULL;
    if (!chunk_cols(j, &col)) return;
    for (int64_t n = b; n < e; n++) {
        char *Xn = j->out + n * g->Ci * c->IL * c->esz;
        if (!c->direct || j->bias) fill_bias(c, Xn, j->bias, g->Ci, c->IL);
        for (int64_t gi = 0; gi < g->G; gi++) {
            const char *Yg = at(j->Y, (n * g->Cc + gi * c->Ccg) * c->OL, c->esz);
            char *Xg = Xn + gi * c->Cig * c->IL * c->esz;
            const char *Wg = at(j->W, gi * c->Ccg * c->rows, c->esz);
            if (c->direct) {
                gemm(c, true, false, c->rows, c->OL, c->Ccg, Wg, c->rows, Yg, c->OL, j->bias ? 1.0 : 0.0, Xg, c->OL);
                continue;
            }
            for (int64_t r0 = 0; r0 < c->R; r0 += c->block) {
                const int64_t r1 = r0 + c->block < c->R ? r0 + c->block : c->R, o0 = r0 * g->osz[2];
                const int64_t nc = (r1 - r0) * g->osz[2];
                gemm(c, true, false, c->rows, nc, c->Ccg, Wg, c->rows, Yg + o0 * c->esz, c->OL, 0.0, col, nc);
                col2im(c, col, Xg, r0, r1);
            }
        }
    }
    free(col);
}

int tl_conv_image_from_cols(const tl_conv_geom *g, const void *Y, const void *W, const void *bias, void *X) {
    if (tl_conv_dnnl_image_from_cols(g, Y, W, bias, X)) return 0;
    conv_job j = {.c = dims_of(g), .Y = Y, .W = W, .bias = bias, .out = X};
    if (check_blas_dims(&j.c)) return -1;
    return run(&j, image_from_cols_items);
}

/* ---------------------------------------------------------- weight grad */

/* dW (all groups) = sum over items [b, e) into `dst` (overwritten) */
static void weight_grad_range(conv_job *j, int64_t b, int64_t e, char *dst, void *col) {
    const conv_dims *c = &j->c;
    const tl_conv_geom *g = c->g;
    for (int64_t n = b; n < e; n++)
        for (int64_t gi = 0; gi < g->G; gi++) {
            const char *Xg = at(j->X, (n * g->Ci + gi * c->Cig) * c->IL, c->esz);
            const char *Yg = at(j->Y, (n * g->Cc + gi * c->Ccg) * c->OL, c->esz);
            char *dWg = dst + gi * c->Ccg * c->rows * c->esz;
            if (c->direct) {
                gemm(c, false, true, c->Ccg, c->rows, c->OL, Yg, c->OL, Xg, c->OL, n > b ? 1.0 : 0.0, dWg, c->rows);
                continue;
            }
            for (int64_t r0 = 0; r0 < c->R; r0 += c->block) {
                const int64_t r1 = r0 + c->block < c->R ? r0 + c->block : c->R, o0 = r0 * g->osz[2];
                const int64_t nc = (r1 - r0) * g->osz[2];
                im2col(c, Xg, col, r0, r1);
                gemm(c, false, true, c->Ccg, c->rows, nc, Yg + o0 * c->esz, c->OL, col, nc,
                     n > b || r0 > 0 ? 1.0 : 0.0, dWg, c->rows);
            }
        }
}

static void weight_grad_items(int64_t b, int64_t e, void *ctx) {
    conv_job *j = ctx;
    const conv_dims *c = &j->c;
    void *col = NULL;
    if (!chunk_cols(j, &col)) return;
    const int slot = atomic_fetch_add(&j->nparts, 1);
    j->part_begin[slot] = b;
    weight_grad_range(j, b, e, j->partial + slot * c->g->Cc * c->rows * c->esz, col);
    free(col);
}

int tl_conv_weight_grad(const tl_conv_geom *g, const void *X, const void *Y, void *dW) {
    if (tl_conv_dnnl_weight_grad(g, X, Y, dW)) return 0;
    conv_job j = {.c = dims_of(g), .X = X, .Y = Y, .out = dW};
    const conv_dims *c = &j.c;
    if (check_blas_dims(c)) return -1;
    const int64_t wn = g->Cc * c->rows; /* elements of dW */
    if (g->N == 0) {
        memset(dW, 0, (size_t)(wn * c->esz));
        return 0;
    }
    if (!batch_parallel(g->N)) {
        void *col = NULL;
        if (!c->direct && !(col = malloc(col_bytes(c))))
            return tl_set_error(TL_ERR_MEMORY, "convolution: out of memory for the column buffer");
        weight_grad_range(&j, 0, g->N, dW, col);
        free(col);
        return 0;
    }
    int nt = tl_get_num_threads(); /* tl_parallel_for: at most one chunk per thread */
    if (nt > TL_MAX_THREADS) nt = TL_MAX_THREADS;
    j.partial = malloc((size_t)(nt * wn * c->esz));
    j.part_begin = malloc((size_t)nt * sizeof(int64_t));
    int *order = malloc((size_t)nt * sizeof(int));
    int rc = -1;
    if (!j.partial || !j.part_begin || !order) {
        tl_set_error(TL_ERR_MEMORY, "convolution: out of memory for the weight gradient");
        goto done;
    }
    tl_parallel_for(g->N, 1, weight_grad_items, &j);
    if (atomic_load(&j.failed)) {
        tl_set_error(TL_ERR_MEMORY, "convolution: out of memory for the column buffer");
        goto done;
    }
    const int np = atomic_load(&j.nparts);
    for (int i = 0; i < np; i++) { /* partials by first item (insertion sort: a few entries) */
        int t = i;
        for (; t > 0 && j.part_begin[order[t - 1]] > j.part_begin[i]; t--) order[t] = order[t - 1];
        order[t] = i;
    }
    memcpy(dW, j.partial + order[0] * wn * c->esz, (size_t)(wn * c->esz));
    for (int i = 1; i < np; i++) {
        if (g->dt == TL_FLOAT64) {
            double *o = dW;
            const double *q = (const double *)(j.partial + order[i] * wn * 8);
            for (int64_t t = 0; t < wn; t++) o[t] += q[t];
        } else {
            float *o = dW;
            const float *q = (const float *)(j.partial + order[i] * wn * 4);
            for (int64_t t = 0; t < wn; t++) o[t] += q[t];
        }
    }
    rc = 0;
done:
    free(j.partial);
    free(j.part_begin);
    free(order);
    return rc;
}
