/* Inner loops of softmax / log_softmax (forward and backward) and layer_norm
 * rows (kernels/cpu/nn_kernel.h describes the calling convention). Compiled
 * once per CPU capability; float exp is tl_vexp.h's (inlined), log and double
 * exp vectorize through libmvec (tl_mvec.h), and the reductions use LANES
 * independent accumulators so GCC vectorizes them without reassociating (no
 * -ffast-math).
 *
 * Numerics as PyTorch's CPU kernels: the row maximum is subtracted before
 * exp (a NaN anywhere in a row makes the sum, hence the whole row, NaN);
 * float32 sums of softmax accumulate in float32 (PyTorch's vectorized
 * kernel does the same); layer_norm's mean and variance accumulate in double
 * (two passes), so long rows stay accurate. */
#include <math.h>
#include <stdint.h>

#include "tl_mvec.h"
#include "tl_kernel.h"
#include "tl_rowdot.h"
#include "tl_vexp.h"
#include "nn_kernel.h"

#define LANES 16

/* exp for softmax. float: tl_vexp.h's in-house exp, inlined into the loops
 * (nothing reaches libmvec's slow scalar path for special inputs), with
 * PyTorch's subnormal results for arguments in (-104, -87.3] (a microcode
 * assist per such vector, as in PyTorch's kernel) and an exact 0 without an
 * assist below -104 and for -inf from masks; NaN propagates. double: libm's
 * exp with arguments below LO given 0 (no slow path for -inf). */
#define SEXP_LO_f64 (-708.0)
#define SEXP_f32(d) tl_expf_sm(d)
#define SEXP_f64(d) sexp_f64(d)
static inline double sexp_f64(double d) {
    const double e = exp(d < SEXP_LO_f64 ? SEXP_LO_f64 : d);
    return d < SEXP_LO_f64 ? 0.0 : e;
}

#define TL_DEF_NN(NAME, T, LOG)                                                                      \
    static inline T combine_##NAME(const T *a) {                                                          \
        T s[LANES];                                                                                       \
        for (int j = 0; j < LANES; j++) s[j] = a[j];                                                      \
        for (int w = LANES / 2; w > 0; w /= 2)                                                            \
            for (int j = 0; j < w; j++) s[j] += s[j + w];                                                 \
        return s[0];                                                                                      \
    }                                                                                                     \
    static T rowsum_##NAME(const T *restrict p, int64_t n) {                                              \
        T a[LANES] = {0};                                                                                 \
        int64_t k = 0;                                                                                    \
        for (; k + LANES <= n; k += LANES)                                                                \
            for (int j = 0; j < LANES; j++) a[j] += p[k + j];                                             \
        T t = combine_##NAME(a);                                                                          \
        for (; k < n; k++) t += p[k];                                                                     \
        return t;                                                                                         \
    }                                                                                                     \
    static T rowmax_##NAME(const T *restrict p, int64_t n) {                                              \
        T m[LANES];                                                                                       \
        for (int j = 0; j < LANES; j++) m[j] = -INFINITY;                                                 \
        int64_t k = 0;                                                                                    \
        for (; k + LANES <= n; k += LANES)                                                                \
            for (int j = 0; j < LANES; j++) m[j] = p[k + j] > m[j] ? p[k + j] : m[j];                     \
        T mx = -INFINITY;                                                                                 \
        for (int j = 0; j < LANES; j++) mx = m[j] > mx ? m[j] : mx;                                       \
        for (; k < n; k++) mx = p[k] > mx ? p[k] : mx;                                                    \
        return mx;                                                                                        \
    }                                                                                                     \
    /* y = softmax(x) or log_softmax(x) along one contiguous row; y may not alias x */                    \
    static void TL_KNAME(sm_row_##NAME)(const void *x_, void *y_, int64_t n, int mode) {                  \
        const T *restrict x = (const T *)x_;                                                              \
        T *restrict y = (T *)y_;                                                                          \
        T mx = rowmax_##NAME(x, n);                                                                       \
        for (int64_t k = 0; k < n; k++) y[k] = SEXP_##NAME(x[k] - mx);                                    \
        const T tot = rowsum_##NAME(y, n);                                                                \
        if (mode == 0) {                                                                                  \
            const T r = (T)1 / tot;                                                                       \
            for (int64_t k = 0; k < n; k++) y[k] *= r;                                                    \
        } else {                                                                                          \
            const T l = LOG(tot);                                                                         \
            for (int64_t k = 0; k < n; k++) y[k] = (x[k] - mx) - l;                                       \
        }                                                                                                 \
    }                                                                                                     \
    static void TL_KNAME(sm_col_##NAME)(const void *x_, void *y_, int64_t n, int64_t stride, int64_t len, \
                                        int mode, void *scratch) {                                        \
        const T *restrict x = (const T *)x_;                                                              \
        T *restrict y = (T *)y_;                                                                          \
        T *restrict mx = (T *)scratch, *restrict s = (T *)scratch + len;                                  \
        for (int64_t c = 0; c < len; c++) {                                                               \
            mx[c] = -INFINITY;                                                                            \
            s[c] = 0;                                                                                     \
        }                                                                                                 \
        for (int64_t i = 0; i < n; i++) {                                                                 \
            const T *restrict xi = x + i * stride;                                                        \
            for (int64_t c = 0; c < len; c++) mx[c] = xi[c] > mx[c] ? xi[c] : mx[c];                    \
        }                                                                                                 \
        for (int64_t i = 0; i < n; i++) {                                                                 \
            const T *restrict xi = x + i * stride;                                                        \
            T *restrict yi = y + i * stride;                                                              \
            for (int64_t c = 0; c < len; c++) yi[c] = SEXP_##NAME(xi[c] - mx[c]);                         \
            for (int64_t c = 0; c < len; c++) s[c] += yi[c];                                              \
        }                                                                                                 \
        if (mode == 0) {                                                                                  \
            for (int64_t c = 0; c < len; c++) s[c] = (T)1 / s[c];                                         \
            for (int64_t i = 0; i < n; i++) {                                                             \
                T *restrict yi = y + i * stride;                                                          \
                for (int64_t c = 0; c < len; c++) yi[c] *= s[c];                                          \
            }                                                                                             \
        } else {                                                                                          \
            for (int64_t c = 0; c < len; c++) s[c] = LOG(s[c]);                                           \
            for (int64_t i = 0; i < n; i++) {                                                             \
                const T *restrict xi = x + i * stride;                                                    \
                T *restrict yi = y + i * stride;                                                          \
                for (int64_t c = 0; c < len; c++) yi[c] = (xi[c] - mx[c]) - s[c];                         \
            }                                                                                             \
        }                                                                                                 \
    }                                                                                                     \
    static void TL_KNAME(sm_bwd_row_##NAME)(const void *g_, const void *y_, void *gi_, int64_t n, int mode) { \
        const T *restrict g = (const T *)g_, *restrict y = (const T *)y_;                                 \
        T *restrict gi = (T *)gi_;                                                                        \
        if (mode == 0) {                                                                                  \
            const T d = tl_rowdot_##NAME(g, y, n);                                                           \
            for (int64_t k = 0; k < n; k++) gi[k] = y[k] * (g[k] - d);                                    \
        } else {                                                                                          \
            const T s = rowsum_##NAME(g, n);                                                              \
            for (int64_t k = 0; k < n; k++) gi[k] = g[k] - SEXP_##NAME(y[k]) * s;                         \
        }                                                                                                 \
    }                                                                                                     \
    static void TL_KNAME(sm_bwd_col_##NAME)(const void *g_, const void *y_, void *gi_, int64_t n,         \
                                            int64_t stride, int64_t len, int mode, void *scratch) {       \
        const T *restrict g = (const T *)g_, *restrict y = (const T *)y_;                                 \
        T *restrict gi = (T *)gi_;                                                                        \
        T *restrict s = (T *)scratch;                                                                     \
        for (int64_t c = 0; c < len; c++) s[c] = 0;                                                       \
        for (int64_t i = 0; i < n; i++) {                                                                 \
            const T *restrict gr = g + i * stride, *restrict yr = y + i * stride;                         \
            if (mode == 0)                                                                                \
                for (int64_t c = 0; c < len; c++) s[c] += gr[c] * yr[c];                                  \
            else                                                                                          \
                for (int64_t c = 0; c < len; c++) s[c] += gr[c];                                          \
        }                                                                                                 \
        for (int64_t i = 0; i < n; i++) {                                                                 \
            const T *restrict gr = g + i * stride, *restrict yr = y + i * stride;                         \
            T *restrict o = gi + i * stride;                                                              \
            if (mode == 0)                                                                                \
                for (int64_t c = 0; c < len; c++) o[c] = yr[c] * (gr[c] - s[c]);                          \
            else                                                                                          \
                for (int64_t c = 0; c < len; c++) o[c] = gr[c] - SEXP_##NAME(yr[c]) * s[c];               \
        }                                                                                                 \
    }                                                                                                     \
    static void TL_KNAME(ln_row_##NAME)(const void *x_, const void *w_, const void *b_, void *y_, int64_t n, \
                                        double eps, double *mean_out, double *rstd_out) {                 \
        const T *restrict x = (const T *)x_, *restrict w = (const T *)w_, *restrict b = (const T *)b_;    \
        T *restrict y = (T *)y_;                                                                          \
        double a[LANES] = {0};                                                                            \
        int64_t k = 0;                                                                                    \
        for (; k + LANES <= n; k += LANES)                                                                \
            for (int j = 0; j < LANES; j++) a[j] += (double)x[k + j];                                     \
        double t = combine_d(a);                                                                          \
        for (; k < n; k++) t += (double)x[k];                                                             \
        const double mean = t / (double)n;                                                                \
        double v[LANES] = {0};                                                                            \
        for (k = 0; k + LANES <= n; k += LANES)                                                           \
            for (int j = 0; j < LANES; j++) {                                                             \
                const double d = (double)x[k + j] - mean;                                                 \
                v[j] += d * d;                                                                            \
            }                                                                                             \
        double vs = combine_d(v);                                                                         \
        for (; k < n; k++) {                                                                              \
            const double d = (double)x[k] - mean;                                                         \
            vs += d * d;                                                                                  \
        }                                                                                                 \
        const double rstd = 1.0 / sqrt(vs / (double)n + eps);                                             \
        *mean_out = mean;                                                                                 \
        *rstd_out = rstd;                                                                                 \
        /* (x - mean) * rstd: a row of equal values (one element) normalises to exactly 0 */              \
        const T mu = (T)mean, sc = (T)rstd;                                                               \
        if (w && b)                                                                                       \
            for (k = 0; k < n; k++) y[k] = ((x[k] - mu) * sc) * w[k] + b[k];                              \
        else if (w)                                                                                       \
            for (k = 0; k < n; k++) y[k] = ((x[k] - mu) * sc) * w[k];                                     \
        else if (b)                                                                                       \
            for (k = 0; k < n; k++) y[k] = ((x[k] - mu) * sc) + b[k];                                     \
        else                                                                                              \
            for (k = 0; k < n; k++) y[k] = (x[k] - mu) * sc;                                              \
    }                                                                                                     \
    static void TL_KNAME(ln_bwd_row_##NAME)(const void *g_, const void *x_, const void *w_, void *gx_,    \
                                            int64_t n, double mean, double rstd) {                        \
        const T *restrict g = (const T *)g_, *restrict x = (const T *)x_, *restrict w = (const T *)w_;    \
        T *restrict gx = (T *)gx_;                                                                        \
        double sa[LANES] = {0}, sb[LANES] = {0};                                                          \
        int64_t k = 0;                                                                                    \
        for (; k + LANES <= n; k += LANES)                                                                \
            for (int j = 0; j < LANES; j++) {                                                             \
                const double gw = w ? (double)g[k + j] * (double)w[k + j] : (double)g[k + j];             \
                sa[j] += gw;                                                                              \
                sb[j] += gw * (double)x[k + j];                                                           \
            }                                                                                             \
        double A = combine_d(sa), B = combine_d(sb);                                                      \
        for (; k < n; k++) {                                                                              \
            const double gw = w ? (double)g[k] * (double)w[k] : (double)g[k];                             \
            A += gw;                                                                                      \
            B += gw * (double)x[k];                                                                       \
        }                                                                                                 \
        const double k2d = rstd * rstd * rstd * (B - mean * A) / (double)n;                              \
        const T k1 = (T)rstd, k2 = (T)k2d, k3 = (T)(mean * k2d - rstd * A / (double)n);                  \
        if (w)                                                                                            \
            for (k = 0; k < n; k++) gx[k] = k1 * (g[k] * w[k]) - k2 * x[k] + k3;                          \
        else                                                                                              \
            for (k = 0; k < n; k++) gx[k] = k1 * g[k] - k2 * x[k] + k3;                                   \
    }

static inline double combine_d(const double *a) {
    double s[LANES];
    for (int j = 0; j < LANES; j++) s[j] = a[j];
    for (int w = LANES / 2; w > 0; w /= 2)
        for (int j = 0; j < w; j++) s[j] += s[j + w];
    return s[0];
}

TL_DEF_NN(f32, float, logf)
TL_DEF_NN(f64, double, log)

const tl_nn_table_t TL_KNAME(tl_nn_table) = {
    {TL_KNAME(sm_row_f32), TL_KNAME(sm_col_f32), TL_KNAME(sm_bwd_row_f32), TL_KNAME(sm_bwd_col_f32),
     TL_KNAME(ln_row_f32), TL_KNAME(ln_bwd_row_f32)},
    {TL_KNAME(sm_row_f64), TL_KNAME(sm_col_f64), TL_KNAME(sm_bwd_row_f64), TL_KNAME(sm_bwd_col_f64),
     TL_KNAME(ln_row_f64), TL_KNAME(ln_bwd_row_f64)},
};
