/* var/std moments, vector-norm accumulations and logsumexp over float32 /
 * float64 data read in place (kernels/ufunc/tl_reduce_stats_kernel.h gives
 * the calling convention). Compiled once per CPU capability; every loop runs
 * over LANES independent accumulators (or along the columns), so GCC
 * vectorizes it without reassociating (no -ffast-math); log/pow and double
 * exp vectorize through libmvec (tl_mvec.h), float exp is tl_vexp.h's
 * (inlined, as in the exp ufunc and softmax).
 *
 * Numerics: everything accumulates in double, so float32 results are the
 * float64 result rounded (1e-6 relative holds at 2^24 elements for any data).
 * var in one memory pass: rows by shifted sums over short blocks per lane
 * (the shift a data point of the block, so a large common offset such as
 * 1e4 + noise does not cancel), merged with Chan's formula; columns by
 * Welford along the rows. max/min select `(x > a || x != x) ? x : a`,
 * which keeps a NaN once seen (NaN propagates as in PyTorch). */
#include <math.h>
#include <stdint.h>

#include "tl_mvec.h"
#include "tl_kernel.h"
#include "tl_vexp.h"
#include "tl_reduce_stats_kernel.h"
#include "tl_widen.h"

#define LANES 32
#define MBLOCK 64   /* var: steps of LANES elements per shifted block */

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
    /* unused: float32 l2 / l1 rows, which use the float trees below */                                    \
    __attribute__((unused)) static double TL_KNAME(nrow_##NAME)(const void *p_, int64_t n, double ord) {    \
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

/* exp(d) for logsumexp: exactly 0 where it underflows and for -inf; the row
 * max term exp(0) = 1 is always in the sum, so nothing below ~2^-125
 * matters. float: tl_vexp.h's exp, which flushes those terms itself, without
 * making subnormals (a microcode assist per vector) or taking libmvec's slow
 * path for special inputs; double: libm's exp clamped at LO. */
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
    /* per lane (each lane sees every LANES-th element), blocks of MBLOCK */    \
    /* steps: the sums of d = x - c and d^2, c the lane's first element in the */ \
    /* block (a data point, so S2 <= (MBLOCK + 1) M2: no harmful cancellation), */ \
    /* merged into the lane's running (mean, M2) with Chan's formula; lanes */     \
    /* merged pairwise (equal counts c: mean = (a + b) / 2, M2 += d^2 c / 2), */    \
    /* then the tail by Welford */                                                  \
    static void TL_KNAME(mrow_##NAME)(const void *p_, int64_t n, double *mean_out, double *m2_out) {        \
        const T *restrict p = (const T *)p_;                                                                \
        double mu[LANES] = {0}, q[LANES] = {0};                                                             \
        const int64_t steps = n / LANES;                                                                    \
        double cnt = 0;                                                                                     \
        for (int64_t i0 = 0; i0 < steps; i0 += MBLOCK) {                                                    \
            const int64_t nb = steps - i0 < MBLOCK ? steps - i0 : MBLOCK;                                   \
            const T *restrict r = p + i0 * LANES;                                                           \
            double c[LANES], s1[LANES] = {0}, s2[LANES] = {0};                                              \
            for (int j = 0; j < LANES; j++) c[j] = (double)r[j];                                            \
            for (int64_t i = 0; i < nb; i++)                                                                \
                for (int j = 0; j < LANES; j++) {                                                           \
                    const double d = (double)r[i * LANES + j] - c[j];                                       \
                    s1[j] += d;                                                                             \
                    s2[j] += d * d;                                                                         \
                }                                                                                           \
            const double inb = 1.0 / (double)nb, tot = cnt + (double)nb;                                    \
            const double wb = (double)nb / tot, wab = cnt * (double)nb / tot;                               \
            for (int j = 0; j < LANES; j++) {                                                               \
                const double dm = c[j] + s1[j] * inb - mu[j];                                               \
                mu[j] += dm * wb;                                                                           \
                q[j] += (s2[j] - s1[j] * s1[j] * inb) + dm * dm * wab;                                      \
            }                                                                                               \
            cnt = tot;                                                                                      \
        }                                                                                                   \
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
        *m2_out = s < 0 ? 0 : s;                                                                         \
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

/* float32 sum x^2 and sum |x| rows: 128 elements per step as eight 16-lane
 * float vectors (squared / made absolute) added as a balanced tree, each
 * tree widened to double once. The terms are non-negative, so the float part
 * (one rounding for the square, three for the tree) is within ~2.4e-7 of
 * the result for any data, and the loop runs at memory bandwidth (a convert
 * per element cannot). Squares overflow to inf beyond 1.8e19 and underflow
 * to 0 below 1e-23 (denormals lose bits from 1e-19), as in PyTorch's float32
 * accumulation: norm([1e20, 1e20]) is inf and norm([1e-30]) 0 in both. */
typedef float v16f __attribute__((vector_size(64)));
typedef int32_t v16i __attribute__((vector_size(64)));
typedef double v8d __attribute__((vector_size(64)));
/* software prefetch 4 KiB ahead: without it the loop's compute delays the
 * loads enough to read at ~0.8x the speed of a plain load loop */
#ifndef NORM_PF
#define NORM_PF 1024
#endif
#define PREFETCH(q) __builtin_prefetch(q)
#define SQ_V(v) ((v) * (v))
#define ABS_V(v) ((v16f)((v16i)(v) & 0x7fffffff))
#define DEF_FTREE(NAME, FV, FS)                                                                             \
    static double TL_KNAME(NAME)(const void *p_, int64_t n, double ord) {                                   \
        const float *restrict p = (const float *)p_;                                                        \
        v8d d0 = {0}, d1 = {0};                                                                             \
        int64_t k = 0;                                                                                      \
        for (; k + 128 <= n; k += 128) {                                                                    \
            v16f v[8];                                                                                      \
            for (int b = 0; b < 8; b++) {                                                                   \
                PREFETCH(p + k + NORM_PF + 16 * b);                                                        \
                __builtin_memcpy(&v[b], p + k + 16 * b, sizeof v[b]);                                       \
                v[b] = FV(v[b]);                                                                            \
            }                                                                                               \
            for (int w = 4; w > 0; w /= 2)                                                                  \
                for (int b = 0; b < w; b++) v[b] += v[b + w];                                               \
            v8d lo, hi;                                                                                     \
            TL_WIDEN16(lo, hi, v[0], v8d);                                                                  \
            d0 += lo;                                                                                       \
            d1 += hi;                                                                                       \
        }                                                                                                   \
        d0 += d1;                                                                                           \
        double t = 0;                                                                                       \
        for (; k < n; k++) t += (double)FS(p[k]);   /* in float, as the trees */                             \
        for (int j = 0; j < 8; j++) t += d0[j];                                                             \
        (void)ord;                                                                                          \
        return t;                                                                                           \
    }
#define SQ_S(x) ((x) * (x))
DEF_FTREE(ftree_l2_f32, SQ_V, SQ_S)
DEF_FTREE(ftree_l1_f32, ABS_V, fabsf)

static inline float sexp_f32(float d) { return tl_expf_ftz(d); }
DEF_SEXP(f64, double, exp, -708.0)
DEF_STATS(f32, float, log)
DEF_STATS(f64, double, log)

#define TABLE(NAME)                                                                                         \
    {TL_KNAME(mrow_##NAME), TL_KNAME(mcol_##NAME),                                                          \
     {TL_KNAME(ROW_L2_##NAME), TL_KNAME(ROW_L1_##NAME), TL_KNAME(nrow_inf_##NAME),                          \
      TL_KNAME(nrow_neginf_##NAME), TL_KNAME(nrow_l0_##NAME), TL_KNAME(nrow_p_##NAME)},                     \
     {TL_KNAME(ncol_l2_##NAME), TL_KNAME(ncol_l1_##NAME), TL_KNAME(ncol_inf_##NAME),                        \
      TL_KNAME(ncol_neginf_##NAME), TL_KNAME(ncol_l0_##NAME), TL_KNAME(ncol_p_##NAME)},                     \
     TL_KNAME(lse_row_##NAME), TL_KNAME(lse_col_##NAME)}

#define ROW_L2_f32 ftree_l2_f32
#define ROW_L1_f32 ftree_l1_f32
#define ROW_L2_f64 nrow_l2_f64
#define ROW_L1_f64 nrow_l1_f64
const tl_rstats_table_t TL_KNAME(tl_rstats_table) = {TABLE(f32), TABLE(f64)};
