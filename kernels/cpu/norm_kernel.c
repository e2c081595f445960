/* Contiguous-run primitives of batch_norm / group_norm (norm_kernel.h).
 * Compiled once per CPU capability; the reductions sum blocks of BLOCK
 * elements in vector partial sums of the dtype and the blocks in double. */
#include <stdint.h>

#include "norm_kernel.h"

#define BLOCK 1024

/* block kernels (n <= BLOCK): `omp simd reduction` loops (vector partial
 * sums in T, the order PyTorch's vectorized reductions also use), kept out of
 * line: inlined into the block loop, GCC vectorized the outer loop instead
 * (permutes / gathers, 3-5x slower) */
#define TL_DEF_NORM(NAME, T)                                                                            \
    __attribute__((noinline)) static double bsum_##NAME(const T *restrict x, int64_t n) {               \
        T s = 0;                                                                                        \
        _Pragma("omp simd reduction(+ : s)") for (int64_t i = 0; i < n; i++) s += x[i];                 \
        return (double)s;                                                                               \
    }                                                                                                   \
    __attribute__((noinline)) static double bsqdev_##NAME(const T *restrict x, int64_t n, T m) {        \
        T s = 0;                                                                                        \
        _Pragma("omp simd reduction(+ : s)") for (int64_t i = 0; i < n; i++) s += (x[i] - m) * (x[i] - m); \
        return (double)s;                                                                               \
    }                                                                                                   \
    __attribute__((noinline)) static void bgdot_##NAME(const T *restrict g, const T *restrict x, int64_t n, \
                                                       T m, double *sg, double *sd) {                   \
        T a = 0, d = 0;                                                                                 \
        _Pragma("omp simd reduction(+ : a, d)") for (int64_t i = 0; i < n; i++) {                       \
            a += g[i];                                                                                  \
            d += g[i] * (x[i] - m);                                                                     \
        }                                                                                               \
        *sg += (double)a;                                                                               \
        *sd += (double)d;                                                                               \
    }                                                                                                   \
    static double TL_KNAME(sum_##NAME)(const void *xv, int64_t n) {                                     \
        const T *x = xv;                                                                                \
        double total = 0;                                                                               \
        for (int64_t b = 0; b < n; b += BLOCK) total += bsum_##NAME(x + b, n - b < BLOCK ? n - b : BLOCK); \
        return total;                                                                                   \
    }                                                                                                   \
    static double TL_KNAME(sqdev_##NAME)(const void *xv, int64_t n, double mean) {                      \
        const T *x = xv;                                                                                \
        double total = 0;                                                                               \
        for (int64_t b = 0; b < n; b += BLOCK)                                                          \
            total += bsqdev_##NAME(x + b, n - b < BLOCK ? n - b : BLOCK, (T)mean);                      \
        return total;                                                                                   \
    }                                                                                                   \
    static void TL_KNAME(gdot_##NAME)(const void *gv, const void *xv, int64_t n, double mean, double *sum_g, \
                                      double *dot) {                                                    \
        const T *g = gv, *x = xv;                                                                       \
        for (int64_t b = 0; b < n; b += BLOCK)                                                          \
            bgdot_##NAME(g + b, x + b, n - b < BLOCK ? n - b : BLOCK, (T)mean, sum_g, dot);             \
    }                                                                                                   \
    static void TL_KNAME(affine_##NAME)(const void *xv, void *yv, int64_t n, double m, double a, double b) { \
        const T *x = xv;                                                                                \
        T *y = yv;                                                                                      \
        const T tm = (T)m, ta = (T)a, tb = (T)b;                                                        \
        for (int64_t i = 0; i < n; i++) y[i] = (x[i] - tm) * ta + tb;                                   \
    }                                                                                                   \
    static void TL_KNAME(bwd_##NAME)(const void *gv, const void *xv, void *giv, int64_t n, double a, double b, \
                                     double c) {                                                        \
        const T *g = gv, *x = xv;                                                                       \
        T *gi = giv;                                                                                    \
        const T ta = (T)a, tb = (T)b, tc = (T)c;                                                        \
        for (int64_t i = 0; i < n; i++) gi[i] = g[i] * ta + x[i] * tb + tc;                             \
    }

TL_DEF_NORM(f32, float)
TL_DEF_NORM(f64, double)

const tl_norm_table_t TL_KNAME(tl_norm_table) = {
    {TL_KNAME(sum_f32), TL_KNAME(sqdev_f32), TL_KNAME(affine_f32), TL_KNAME(gdot_f32), TL_KNAME(bwd_f32)},
    {TL_KNAME(sum_f64), TL_KNAME(sqdev_f64), TL_KNAME(affine_f64), TL_KNAME(gdot_f64), TL_KNAME(bwd_f64)},
};
