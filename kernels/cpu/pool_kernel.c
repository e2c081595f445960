/* Plane loops of the pooling operators (kernels/cpu/pool_kernel.h describes
 * the calling convention and PyTorch's window rules). Compiled once per CPU
 * capability.
 *
 * Each max window is scanned in row-major order (PyTorch's order, so ties and
 * NaNs pick the same index). avg_pool2d and the adaptive pools sum in the
 * accumulation type of PyTorch's kernels (float for float32, double, int64);
 * avg_pool2d sums each output row's window rows into column sums first (the
 * same terms in another order than PyTorch's: float32 results may differ in
 * the last bits). */
#include <math.h>
#include <string.h>

#include "pool_kernel.h"

/* avg_pool2d forward: the widest plane row summed through column sums */
enum { COLS = 4096 };

static inline int64_t pk_min(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t pk_max(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t start_index(int64_t a, int64_t b, int64_t c) { return (a * c) / b; }
static inline int64_t end_index(int64_t a, int64_t b, int64_t c) { return ((a + 1) * c + b - 1) / b; }

/* avg_pool2d's window of output (oh_, ow_), clamped to the input, and
 * PyTorch's divide factor for it */
static inline int64_t avg_window(const tl_pool_geom *g, int64_t oh_, int64_t ow_, int64_t *h0, int64_t *h1,
                                 int64_t *w0, int64_t *w1) {
    *h0 = oh_ * g->sh - g->ph;
    *w0 = ow_ * g->sw - g->pw;
    *h1 = pk_min(*h0 + g->kh, g->ih + g->ph);
    *w1 = pk_min(*w0 + g->kw, g->iw + g->pw);
    const int64_t pool = (*h1 - *h0) * (*w1 - *w0);
    *h0 = pk_max(*h0, 0);
    *w0 = pk_max(*w0, 0);
    *h1 = pk_min(*h1, g->ih);
    *w1 = pk_min(*w1, g->iw);
    if (g->divisor) return g->divisor;
    return g->count_include_pad ? pool : (*h1 - *h0) * (*w1 - *w0);
}

/* one family of plane loops per dtype T (accumulator ACC); `v != v` (NaN) is
 * false for integers */
#define TL_DEF_POOL(NAME, T, ACC, LOWEST)                                                              \
    /* the maximum of window rows [h0, h1) step dh, columns [w0, w1) step dw in   \
     * row-major order (a larger value or a NaN replaces it), its offset in *mi */ \
    static inline T max_window_##NAME(const T *x, int64_t iw, int64_t h0, int64_t h1, int64_t dh, int64_t w0, \
                                      int64_t w1, int64_t dw, int64_t *mi) {                         \
        T m = LOWEST;                                                                                \
        int64_t best = h0 * iw + w0;                                                                 \
        for (int64_t h = h0; h < h1; h += dh)                                                        \
            for (int64_t w = w0; w < w1; w += dw) {                                                  \
                const T v = x[h * iw + w];                                                           \
                const int take = (v > m) | (v != v); /* selects, not branches: maxima of random  \
                                                        data are unpredictable */                    \
                m = take ? v : m;                                                                    \
                best = take ? h * iw + w : best;                                                     \
            }                                                                                        \
        *mi = best;                                                                                  \
        return m;                                                                                    \
    }                                                                                                \
    /* one output row of max pooling. Interior columns [c0, c1) (window      \
     * inside the row) run the window offsets in PyTorch's row-major order   \
     * with the output columns innermost: selects over strided loads, which  \
     * GCC vectorizes (per element the branches mispredicted on random data);  \
     * border columns scan their clamped windows one by one */               \
    static void max_row_##NAME(const T *restrict x, T *restrict y, int64_t *restrict ind, const tl_pool_geom *g, \
                               int64_t oh_) {                                                        \
        const int64_t iw = g->iw, sw = g->sw, pw = g->pw, dw = g->dw, kw = g->kw, ow = g->ow;        \
        int64_t h0 = oh_ * g->sh - g->ph;                                                            \
        const int64_t h1 = pk_min(h0 + (g->kh - 1) * g->dh + 1, g->ih);                                \
        while (h0 < 0) h0 += g->dh;                                                                  \
        int64_t c0 = (pw + sw - 1) / sw, c1 = (iw + pw - (kw - 1) * dw - 1) / sw + 1;                \
        if (iw + pw - (kw - 1) * dw - 1 < 0) c1 = 0;                                                 \
        c1 = pk_min(c1, ow);                                                                         \
        if (c0 > c1) c0 = c1;                                                                        \
        for (int64_t o = 0; o < ow; o++) {                                                           \
            if (o == c0) o = c1;                                                                     \
            if (o >= ow) break;                                                                      \
            int64_t w0 = o * sw - pw;                                                                \
            const int64_t w1 = pk_min(w0 + (kw - 1) * dw + 1, iw);                                     \
            while (w0 < 0) w0 += dw;                                                                 \
            y[o] = max_window_##NAME(x, iw, h0, h1, g->dh, w0, w1, dw, ind + o);                     \
        }                                                                                            \
        for (int64_t o = c0; o < c1; o++) {                                                          \
            y[o] = LOWEST;                                                                           \
            ind[o] = h0 * iw + o * sw - pw;                                                          \
        }                                                                                            \
        for (int64_t h = h0; h < h1; h += g->dh)                                                     \
            for (int64_t k = 0; k < kw; k++) {                                                       \
                const int64_t off = h * iw + k * dw - pw;                                            \
                for (int64_t o = c0; o < c1; o++) {                                                  \
                    const T v = x[off + o * sw];                                                     \
                    const int take = (v > y[o]) | (v != v);                                          \
                    y[o] = take ? v : y[o];                                                          \
                    ind[o] = take ? off + o * sw : ind[o];                                           \
                }                                                                                    \
            }                                                                                        \
    }                                                                                                \
    static void TL_KNAME(max_fwd_##NAME)(const void *xv, void *yv, int64_t *ind, const tl_pool_geom *g) { \
        const T *x = xv;                                                                             \
        T *y = yv;                                                                                   \
        for (int64_t o = 0; o < g->oh; o++) max_row_##NAME(x, y + o * g->ow, ind + o * g->ow, g, o);  \
    }                                                                                                \
    static void TL_KNAME(max_bwd_##NAME)(const void *gv, const int64_t *ind, void *giv, int64_t n_out, \
                                         int64_t n_in) {                                             \
        const T *gr = gv;                                                                            \
        T *gi = giv;                                                                                 \
        memset(gi, 0, (size_t)n_in * sizeof(T));                                                     \
        for (int64_t i = 0; i < n_out; i++) gi[ind[i]] += gr[i];                                     \
    }                                                                                                \
    /* per output row: the column sums of its window rows (one vectorizable  \
     * pass over the input row span), then each window's columns summed from   \
     * them; planes wider than COLS take the direct window sums */             \
    static void TL_KNAME(avg_fwd_##NAME)(const void *xv, void *yv, const tl_pool_geom *g) {         \
        const T *x = xv;                                                                             \
        T *y = yv;                                                                                   \
        ACC cols[COLS];                                                                              \
        const int use_cols = g->iw <= COLS;                                                          \
        for (int64_t oh_ = 0; oh_ < g->oh; oh_++) {                                                  \
            int64_t rh0 = 0, rh1 = 0, rw0, rw1;                                                      \
            avg_window(g, oh_, 0, &rh0, &rh1, &rw0, &rw1);                                           \
            if (use_cols) {                                                                          \
                for (int64_t w = 0; w < g->iw; w++) cols[w] = 0;                                     \
                for (int64_t h = rh0; h < rh1; h++)                                                  \
                    for (int64_t w = 0; w < g->iw; w++) cols[w] += x[h * g->iw + w];                 \
            }                                                                                        \
            for (int64_t ow_ = 0; ow_ < g->ow; ow_++) {                                              \
                int64_t h0, h1, w0, w1;                                                              \
                const int64_t div = avg_window(g, oh_, ow_, &h0, &h1, &w0, &w1);                     \
                T *o = y + oh_ * g->ow + ow_;                                                        \
                if (h0 >= h1 || w0 >= w1) {                                                          \
                    *o = 0;                                                                          \
                    continue;                                                                        \
                }                                                                                    \
                ACC s = 0;                                                                           \
                if (use_cols)                                                                        \
                    for (int64_t w = w0; w < w1; w++) s += cols[w];                                  \
                else                                                                                 \
                    for (int64_t h = h0; h < h1; h++)                                                \
                        for (int64_t w = w0; w < w1; w++) s += x[h * g->iw + w];                     \
                *o = (T)(s / (ACC)div);                                                              \
            }                                                                                        \
        }                                                                                            \
    }                                                                                                \
    static void TL_KNAME(avg_bwd_##NAME)(const void *gv, void *giv, const tl_pool_geom *g) {        \
        const T *gr = gv;                                                                            \
        T *gi = giv;                                                                                 \
        memset(gi, 0, (size_t)(g->ih * g->iw) * sizeof(T));                                          \
        for (int64_t oh_ = 0; oh_ < g->oh; oh_++)                                                    \
            for (int64_t ow_ = 0; ow_ < g->ow; ow_++) {                                              \
                int64_t h0, h1, w0, w1;                                                              \
                const int64_t div = avg_window(g, oh_, ow_, &h0, &h1, &w0, &w1);               \
                const T v = (T)(gr[oh_ * g->ow + ow_] / (T)div);                                     \
                for (int64_t h = h0; h < h1; h++)                                                    \
                    for (int64_t w = w0; w < w1; w++) gi[h * g->iw + w] += v;                        \
            }                                                                                        \
    }                                                                                                \
    static void TL_KNAME(aavg_fwd_##NAME)(const void *xv, void *yv, const tl_pool_geom *g) {        \
        const T *x = xv;                                                                             \
        T *y = yv;                                                                                   \
        for (int64_t oh_ = 0; oh_ < g->oh; oh_++) {                                                  \
            const int64_t h0 = start_index(oh_, g->oh, g->ih), h1 = end_index(oh_, g->oh, g->ih);    \
            for (int64_t ow_ = 0; ow_ < g->ow; ow_++) {                                              \
                const int64_t w0 = start_index(ow_, g->ow, g->iw), w1 = end_index(ow_, g->ow, g->iw); \
                ACC s = 0;                                                                           \
                for (int64_t h = h0; h < h1; h++)                                                    \
                    for (int64_t w = w0; w < w1; w++) s += x[h * g->iw + w];                         \
                y[oh_ * g->ow + ow_] = (T)(s / (ACC)((h1 - h0) * (w1 - w0)));                        \
            }                                                                                        \
        }                                                                                            \
    }                                                                                                \
    static void TL_KNAME(aavg_bwd_##NAME)(const void *gv, void *giv, const tl_pool_geom *g) {       \
        const T *gr = gv;                                                                            \
        T *gi = giv;                                                                                 \
        memset(gi, 0, (size_t)(g->ih * g->iw) * sizeof(T));                                          \
        for (int64_t oh_ = 0; oh_ < g->oh; oh_++) {                                                  \
            const int64_t h0 = start_index(oh_, g->oh, g->ih), h1 = end_index(oh_, g->oh, g->ih);    \
            for (int64_t ow_ = 0; ow_ < g->ow; ow_++) {                                              \
                const int64_t w0 = start_index(ow_, g->ow, g->iw), w1 = end_index(ow_, g->ow, g->iw); \
                const T v = gr[oh_ * g->ow + ow_] / (T)((h1 - h0) * (w1 - w0));                      \
                for (int64_t h = h0; h < h1; h++)                                                    \
                    for (int64_t w = w0; w < w1; w++) gi[h * g->iw + w] += v;                        \
            }                                                                                        \
        }                                                                                            \
    }                                                                                                \
    static void TL_KNAME(amax_fwd_##NAME)(const void *xv, void *yv, int64_t *ind, const tl_pool_geom *g) { \
        const T *x = xv;                                                                             \
        T *y = yv;                                                                                   \
        for (int64_t oh_ = 0; oh_ < g->oh; oh_++) {                                                  \
            const int64_t h0 = start_index(oh_, g->oh, g->ih), h1 = end_index(oh_, g->oh, g->ih);    \
            for (int64_t ow_ = 0; ow_ < g->ow; ow_++) {                                              \
                const int64_t w0 = start_index(ow_, g->ow, g->iw), w1 = end_index(ow_, g->ow, g->iw); \
                y[oh_ * g->ow + ow_] =                                                               \
                    max_window_##NAME(x, g->iw, h0, h1, 1, w0, w1, 1, ind + oh_ * g->ow + ow_);          \
            }                                                                                        \
        }                                                                                            \
    }

TL_DEF_POOL(f32, float, float, -INFINITY)
TL_DEF_POOL(f64, double, double, -INFINITY)
TL_DEF_POOL(i64, int64_t, int64_t, INT64_MIN)

#define POOL_ROW(NAME)                                                                               \
    {TL_KNAME(max_fwd_##NAME), TL_KNAME(max_bwd_##NAME), TL_KNAME(avg_fwd_##NAME), TL_KNAME(avg_bwd_##NAME), \
     TL_KNAME(aavg_fwd_##NAME), TL_KNAME(aavg_bwd_##NAME), TL_KNAME(amax_fwd_##NAME)}

const tl_pool_table_t TL_KNAME(tl_pool_table) = {POOL_ROW(f32), POOL_ROW(f64), POOL_ROW(i64)};
