/* var/std moments, vector-norm accumulations and logsumexp over float32 /
 * float64 data read in place (kernels/ufunc/tl_reduce_stats_kernel.h gives
 * the calling convention). Compiled once per CPU capability; every loop runs
 * over LANES independent accumulators (or along the columns), so GCC
 * vectorizes it without reassociating (no -ffast-math), and exp/log/pow
 * vectorize through libmvec (tl_mvec.h, as the exp ufunc and softmax do).
 *
 * Numerics: everything accumulates in double, so float32 results are the
 * float64 result rounded (1e-6 relative holds at 2^24 elements for any data).
 * var: Welford per lane (one memory pass; a lane's mean moves with its data,
 * so a large common offset such as 1e4 + noise does not cancel), lanes merged
 * pairwise with Chan's formula. max/min select `(x > a || x != x) ? x : a`,
 * which keeps a NaN once seen (NaN propagates as in PyTorch). */
#include <math.h>
#include <stdint.h>

#include "tl_mvec.h"
#include "tl_kernel.h"
#include "tl_reduce_stats_kernel.h"

#define LANES 32

#define ABS(x) ((__typeof__(x))fabs((double)(x)))   /* fabsf for a float (GCC folds the casts) */
#define SEL_MAX(a, x) ((x) > (a) || (x) != (x) ? (x) : (a))
#define SEL_MIN(a, x) ((x) < (a) || (x) != (x) ? (x) : (a))

/* one accumulation step a <- UPD(a, x), the accumulator's type given by a */
#define U_L2(a, x) ((a) + (__typeof__(a))(x) * (__typeof__(a))(x))
#define U_L1(a, x) ((a) + ABS((__typeof__(a))(x)))
#define U_INF(a, x) SEL_MAX(a, ABS((__typeof__(a))(x)))
#define U_NEGINF(a, x) SEL_MIN(a, ABS((__typeof__(a))(x)))
#define U_L0(a, x) ((a) + ((x) != 0 ? 1.0 : 0.0))
#define U_P(a, x) ((a) + pow(fabs((double)(x)), ord))
#define U_MAX(a, x) SEL_MAX(a, (__typeof__(a))(x))
#define C_SUM(a, b) ((a) + (b))

/* a row kernel (LANES accumulators of type ACC, tail into lane 0, lanes
 * combined pairwise by CMB) and a column kernel (one double per column) */
#define DEF_RED(NAME, T, ACC, INIT, UPD, CMB)                                                               \
    static double TL_KNAME(nrow_##NAME)(const void *p_, int64_t n, double ord) {                            \
        const T *restrict p = (const T *)p_;                                                                \
        ACC a[LANES];                                                                                       \
        for (int j = 0; j < LANES; j++) a[j] = (ACC)(INIT);                                                 \
        int64_t k = 0;                                                                                      \
        for (; k + LANES <= n; k += LANES)                                                                  \
            for (int j = 0; j < LANES; j++) a[j] = UPD(a[j], p[k + j]);                                     \
        for (; k < n; k++) a[0] = UPD(a[0], p[k]);                                                          \
        for (int w = LANES / 2; w > 0; w /= 2)                                                              \
            for (int j = 0; j < w; j++) a[j] = CMB(a[j], a[j + w]);                                         \
        (void)ord;                                                                                          \
        return (double)a[0];                                                                                \
    }                                                                                                       \
    static void TL_KNAME(ncol_##NAME)(const void *p_, int64_t n, int64_t stride, int64_t w, double ord,    \
                                      double *restrict out) {                                               \
        const T *restrict p = (const T *)p_;                                                                \
        for (int64_t c = 0; c < w; c++) out[c] = (double)(INIT);                                            \
        for (int64_t i = 0; i < n; i++) {                                                                   \
            const T *restrict r = p + i * stride;                                                           \
            for (int64_t c = 0; c < w; c++) out[c] = UPD(out[c], r[c]);                                     \
        }                                                                                                   \
        (void)ord;                                                                                          \
    }

/* exp(d) for logsumexp: below LO (where exp underflows, and -inf) exactly 0
 * without reaching libmvec's slow scalar path for special inputs; the row
 * max term exp(0) = 1 is always in the sum, so nothing below LO matters */
#define DEF_SEXP(NAME, T, EXPF, LO)                                                                         \
    static inline T sexp_##NAME(T d) {                                                                      \
        const T e = EXPF(d < (LO) ? (LO) : d);                                                              \
        return d < (LO) ? 0 : e;                                                                            \
    }

#define DEF_STATS(NAME, T, LOGF)                                                                            \
    DEF_RED(l2_##NAME, T, double, 0, U_L2, C_SUM)                                                           \
    DEF_RED(l1_##NAME, T, double, 0, U_L1, C_SUM)                                                           \
    DEF_RED(inf_##NAME, T, T, 0, U_INF, SEL_MAX)                                                            \
    DEF_RED(neginf_##NAME, T, T, INFINITY, U_NEGINF, SEL_MIN)                                               \
    DEF_RED(l0_##NAME, T, double, 0, U_L0, C_SUM)                                                           \
    DEF_RED(p_##NAME, T, double, 0, U_P, C_SUM)                                                             \
    DEF_RED(max_##NAME, T, T, -INFINITY, U_MAX, SEL_MAX)                                                    \
    /* Welford per lane (each lane sees every LANES-th element), lanes merged */                           \
    /* pairwise (equal counts c: mean = (a + b) / 2, M2 += d^2 c / 2), then the tail */                    \
    static void TL_KNAME(mrow_##NAME)(const void *p_, int64_t n, double *mean_out, double *m2_out) {        \
        const T *restrict p = (const T *)p_;                                                                \
        double mu[LANES] = {0}, q[LANES] = {0};                                                             \
        const int64_t steps = n / LANES;                                                                    \
        for (int64_t i = 0; i < steps; i++) {                                                               \
            const double inv = 1.0 / (double)(i + 1);                                                       \
            const T *restrict r = p + i * LANES;                                                            \
            for (int j = 0; j < LANES; j++) {                                                               \
                const double x = (double)r[j], d = x - mu[j];                                               \
                mu[j] += d * inv;                                                                           \
                q[j] += d * (x - mu[j]);                                                                    \
            }                                                                                               \
        }                                                                                                   \
        double cnt = (double)steps;                                                                         \
        if (steps > 0)                                                                                      \
            for (int w = LANES / 2; w > 0; w /= 2, cnt *= 2)                                                \
                for (int j = 0; j < w; j++) {                                                               \
                    const double d = mu[j + w] - mu[j];                                                     \
                    mu[j] += d * 0.5;                                                                       \
                    q[j] += q[j + w] + d * d * (cnt * 0.5);                                                 \
                }                                                                                           \
        double m = mu[0], s = q[0];                                                                         \
        for (int64_t k = steps * LANES; k < n; k++) {                                                       \
            cnt += 1;                                                                                       \
            const double x = (double)p[k], d = x - m;                                                       \
            m += d / cnt;                                                                                   \
            s += d * (x - m);                                                                               \
        }                                                                                                   \
        *mean_out = m;                                                                                      \
        *m2_out = s;                                                                                        \
    }                                                                                                       \
    /* Welford along the columns */                                                                        \
    static void TL_KNAME(mcol_##NAME)(const void *p_, int64_t n, int64_t stride, int64_t w,                 \
                                      double *restrict mean, double *restrict m2) {                         \
        const T *restrict p = (const T *)p_;                                                                \
        for (int64_t c = 0; c < w; c++) mean[c] = m2[c] = 0;                                                \
        for (int64_t i = 0; i < n; i++) {                                                                   \
            const double inv = 1.0 / (double)(i + 1);                                                       \
            const T *restrict r = p + i * stride;                                                           \
            for (int64_t c = 0; c < w; c++) {                                                               \
                const double x = (double)r[c], d = x - mean[c];                                             \
                mean[c] += d * inv;                                                                         \
                m2[c] += d * (x - mean[c]);                                                                 \
            }                                                                                               \
        }                                                                                                   \
    }                                                                                                       \
    /* logsumexp: the row max (NaN-propagating; 0 when infinite, PyTorch's */                              \
    /* masked_fill), then sum exp(x - max) in double */                                                     \
    static void TL_KNAME(lse_row_##NAME)(const void *p_, int64_t n, double *m_out, double *s_out) {         \
        const T *restrict p = (const T *)p_;                                                                \
        T m = (T)TL_KNAME(nrow_max_##NAME)(p, n, 0);                                                        \
        if (m != m) {                                                                                       \
            *m_out = 0;                                                                                     \
            *s_out = m;                                                                                     \
            return;                                                                                         \
        }                                                                                                   \
        if (isinf(m)) m = 0;                                                                                \
        double a[LANES] = {0};                                                                              \
        int64_t k = 0;                                                                                      \
        for (; k + LANES <= n; k += LANES)                                                                  \
            for (int j = 0; j < LANES; j++) a[j] += (double)sexp_##NAME(p[k + j] - m);                      \
        for (; k < n; k++) a[0] += (double)sexp_##NAME(p[k] - m);                                           \
        for (int w = LANES / 2; w > 0; w /= 2)                                                              \
            for (int j = 0; j < w; j++) a[j] += a[j + w];                                                   \
        *m_out = (double)m;                                                                                 \
        *s_out = a[0];                                                                                      \
    }                                                                                                       \
    static void TL_KNAME(lse_col_##NAME)(const void *p_, int64_t n, int64_t stride, int64_t w,              \
                                         double *restrict out, double *restrict mx) {                       \
        const T *restrict p = (const T *)p_;                                                                \
        TL_KNAME(ncol_max_##NAME)(p, n, stride, w, 0, mx);                                                  \
        for (int64_t c = 0; c < w; c++) {                                                                   \
            if (isinf(mx[c])) mx[c] = 0;                                                                    \
            out[c] = 0;                                                                                     \
        }                                                                                                   \
        for (int64_t i = 0; i < n; i++) {                                                                   \
            const T *restrict r = p + i * stride;                                                           \
            for (int64_t c = 0; c < w; c++) out[c] += (double)sexp_##NAME(r[c] - (T)mx[c]);                 \
        }                                                                                                   \
        for (int64_t c = 0; c < w; c++) out[c] = (double)LOGF(out[c]) + mx[c];                              \
    }

DEF_SEXP(f32, float, expf, -87.0f)
DEF_SEXP(f64, double, exp, -708.0)
DEF_STATS(f32, float, log)
DEF_STATS(f64, double, log)

#define TABLE(NAME)                                                                                         \
    {TL_KNAME(mrow_##NAME), TL_KNAME(mcol_##NAME),                                                          \
     {TL_KNAME(nrow_l2_##NAME), TL_KNAME(nrow_l1_##NAME), TL_KNAME(nrow_inf_##NAME),                        \
      TL_KNAME(nrow_neginf_##NAME), TL_KNAME(nrow_l0_##NAME), TL_KNAME(nrow_p_##NAME)},                     \
     {TL_KNAME(ncol_l2_##NAME), TL_KNAME(ncol_l1_##NAME), TL_KNAME(ncol_inf_##NAME),                        \
      TL_KNAME(ncol_neginf_##NAME), TL_KNAME(ncol_l0_##NAME), TL_KNAME(ncol_p_##NAME)},                     \
     TL_KNAME(lse_row_##NAME), TL_KNAME(lse_col_##NAME)}

const tl_rstats_table_t TL_KNAME(tl_rstats_table) = {TABLE(f32), TABLE(f64)};
