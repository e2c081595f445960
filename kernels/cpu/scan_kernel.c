/* cumsum / cumprod kernels (kernels/ufunc/tl_scan_kernel.h), compiled once
 * per CPU capability from GCC vector types, so every variant does the same
 * double operations (the same bits on DEFAULT, AVX2 and AVX-512).
 *
 * Rows: 16 elements per step as two 8-double vectors, each scanned in
 * registers by three shift-and-add steps (lane i += lane i - 1, i - 2,
 * i - 4), then the running value c added; c moves on by the vectors' last
 * lanes (the same additions as the stored lane 7, so the stored values and
 * the carry agree, and a nonnegative input gives a nondecreasing result).
 * The dependent chain is two adds per 16 elements instead of one per
 * element. Every value is a double sum (product) of its prefix, as
 * PyTorch's sequential double loop, associated differently: results may
 * differ from PyTorch's in the last bit of the double before rounding, so a
 * float32 result is almost always the same bits. Columns: the sequential
 * loop itself (each column in order), vectorized across the columns. */
#include <stdint.h>

#include "tl_scan_kernel.h"

typedef double v8d __attribute__((vector_size(64)));
typedef float v8f __attribute__((vector_size(32)));

#define SUM_OP(a, b) ((a) + (b))
#define PROD_OP(a, b) ((a) * (b))

/* prefix of the 8 lanes in registers: the shifted-in lanes are the identity
 * (macros, not functions: a 64-byte vector argument would change the
 * baseline ABI) */
#define PREFIX(x, OP, ID)                                                                              \
    ({                                                                                                 \
        const v8d e_ = {ID, ID, ID, ID, ID, ID, ID, ID};                                               \
        v8d x_ = (x);                                                                                  \
        x_ = OP(x_, __builtin_shufflevector(e_, x_, 0, 8, 9, 10, 11, 12, 13, 14));                     \
        x_ = OP(x_, __builtin_shufflevector(e_, x_, 0, 1, 8, 9, 10, 11, 12, 13));                      \
        x_ = OP(x_, __builtin_shufflevector(e_, x_, 0, 1, 2, 3, 8, 9, 10, 11));                        \
        x_;                                                                                            \
    })

#define LANE7(v) __builtin_shufflevector(v, v, 7, 7, 7, 7, 7, 7, 7, 7)

#define LOAD_f32(p) ({ v8f f_; __builtin_memcpy(&f_, (p), sizeof f_); __builtin_convertvector(f_, v8d); })
#define STORE_f32(p, d) ({ const v8f f_ = __builtin_convertvector((d), v8f); __builtin_memcpy((p), &f_, sizeof f_); })

#define DEF_ROWSCAN(NAME, T, SUF, OP, ID)                                                         \
    static double TL_KNAME(row_##NAME)(const void *p_, void *o_, int64_t n, double carry, int store) {  \
        const T *p = (const T *)p_;                                                                    \
        T *o = (T *)o_;                                                                                \
        const v8d cv = {carry, carry, carry, carry, carry, carry, carry, carry};                       \
        v8d c = {ID, ID, ID, ID, ID, ID, ID, ID};                                                      \
        int64_t k = 0;                                                                                 \
        for (; k + 16 <= n; k += 16) {                                                                 \
            const v8d d0 = PREFIX(LOAD_##SUF(p + k), OP, ID), d1 = PREFIX(LOAD_##SUF(p + k + 8), OP, ID);              \
            const v8d c1 = OP(c, LANE7(d0));   /* == lane 7 of OP(c, d0) */                            \
            if (store) {                                                                               \
                STORE_##SUF(o + k, OP(cv, OP(c, d0)));                                                 \
                STORE_##SUF(o + k + 8, OP(cv, OP(c1, d1)));                                            \
            }                                                                                          \
            c = OP(c1, LANE7(d1));                                                                     \
        }                                                                                              \
        double l = c[0];                                                                               \
        for (; k < n; k++) {                                                                           \
            l = OP(l, (double)p[k]);                                                                   \
            if (store) o[k] = (T)OP(carry, l);                                                         \
        }                                                                                              \
        return l;                                                                                      \
    }

#define DEF_COLSCAN(NAME, T, OP, ID)                                                                   \
    static void TL_KNAME(col_##NAME)(const void *p_, void *o_, int64_t n, int64_t stride, int64_t w,    \
                                     double *restrict acc) {                                           \
        const T *p = (const T *)p_;                                                                    \
        T *o = (T *)o_;                                                                                \
        for (int64_t c = 0; c < w; c++) acc[c] = ID;                                                   \
        for (int64_t i = 0; i < n; i++) {                                                              \
            const T *r = p + i * stride;                                                               \
            T *q = o + i * stride;                                                                     \
            for (int64_t c = 0; c < w; c++) {                                                          \
                acc[c] = OP(acc[c], (double)r[c]);                                                     \
                q[c] = (T)acc[c];                                                                      \
            }                                                                                          \
        }                                                                                              \
    }

DEF_ROWSCAN(sum_f32, float, f32, SUM_OP, 0.0)
DEF_ROWSCAN(prod_f32, float, f32, PROD_OP, 1.0)
DEF_COLSCAN(sum_f32, float, SUM_OP, 0.0)
DEF_COLSCAN(prod_f32, float, PROD_OP, 1.0)
DEF_COLSCAN(sum_f64, double, SUM_OP, 0.0)
DEF_COLSCAN(prod_f64, double, PROD_OP, 1.0)

/* float64 rows: PyTorch's sequential loop (bit for bit; the caller never
 * chunks them); at ~4 cycles per element it keeps up with reading and
 * writing 16 bytes per element */
#define DEF_SEQ(NAME, OP, ID)                                                                          \
    static double TL_KNAME(seq_##NAME)(const void *p_, void *o_, int64_t n, double carry, int store) {  \
        const double *p = (const double *)p_;                                                          \
        double *o = (double *)o_, l = ID;                                                              \
        for (int64_t k = 0; k < n; k++) {                                                              \
            l = OP(l, p[k]);                                                                           \
            if (store) o[k] = OP(carry, l);                                                            \
        }                                                                                              \
        return l;                                                                                      \
    }
DEF_SEQ(sum_f64, SUM_OP, 0.0)
DEF_SEQ(prod_f64, PROD_OP, 1.0)

const tl_scan_table_t TL_KNAME(tl_scan_table) = {
    {{TL_KNAME(row_sum_f32), TL_KNAME(row_prod_f32)}, {TL_KNAME(col_sum_f32), TL_KNAME(col_prod_f32)}},
    {{TL_KNAME(seq_sum_f64), TL_KNAME(seq_prod_f64)}, {TL_KNAME(col_sum_f64), TL_KNAME(col_prod_f64)}},
};
