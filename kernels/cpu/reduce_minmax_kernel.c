/* max/min and argmax/argmin reduction kernels (see
 * kernels/ufunc/tl_reduce_kernel.h), compiled once per CPU capability.
 * Columns: the select `(x > a || x != x) ? x : a` keeps NaN (compare + blend
 * once vectorized).
 *
 * argmax/argmin rows go block by block (ARG_BLOCK elements, in cache): the
 * vectorized row max of each block, the first block whose max beats the best
 * so far (strictly: ties keep the earlier block), and at the end one scan of
 * that block for the first element equal to its max. A block with a NaN
 * answers at once with its first NaN (PyTorch: NaN is the max and the min).
 * One pass over memory, all of it at the speed of the max kernel. */
#include <stdint.h>

#include "tl_reduce_kernel.h"

#define SEL_MAX(a, x) ((x) > (a) || (x) != (x) ? (x) : (a))
#define SEL_MIN(a, x) ((x) < (a) || (x) != (x) ? (x) : (a))

/* rows: 64 lanes of `x > a ? x : a` (exactly maxps / minps, so GCC emits
 * them) plus a lane-wise NaN flag; any NaN makes the result NaN */
#define DEF_ROW(NAME, T, OP)                                                                  \
    static T TL_KNAME(NAME)(const T *restrict p, int64_t n) {                                 \
        int64_t k = 0;                                                                        \
        T r = p[0];                                                                           \
        if (n >= 64) {                                                                        \
            T a[64];                                                                          \
            int32_t nan[64];                                                                  \
            for (int j = 0; j < 64; j++) {                                                    \
                a[j] = p[j];                                                                  \
                nan[j] = p[j] != p[j];                                                        \
            }                                                                                 \
            for (k = 64; k + 64 <= n; k += 64)                                                \
                for (int j = 0; j < 64; j++) {                                                \
                    const T x = p[k + j];                                                     \
                    a[j] = x OP a[j] ? x : a[j];                                              \
                    nan[j] |= x != x;                                                         \
                }                                                                             \
            int32_t any = 0;                                                                  \
            for (int j = 0; j < 64; j++) any |= nan[j];                                       \
            if (any) return (T)__builtin_nan("");                                             \
            for (int w = 32; w > 0; w /= 2)   /* a tree: vectorized, no 63-step chain */      \
                for (int j = 0; j < w; j++) a[j] = a[j + w] OP a[j] ? a[j + w] : a[j];         \
            r = a[0];                                                                         \
        }                                                                                     \
        for (; k < n; k++) {                                                                  \
            const T x = p[k];                                                                 \
            if (x != x) return x;                                                             \
            r = x OP r ? x : r;                                                               \
        }                                                                                     \
        return r;                                                                             \
    }

#define DEF_COL(NAME, SEL)                                                                    \
    static void TL_KNAME(NAME)(float *restrict acc, const float *restrict p, int64_t n) {     \
        for (int64_t k = 0; k < n; k++) acc[k] = SEL(acc[k], p[k]);                           \
    }

DEF_ROW(rowmax_f32, float, >)
DEF_ROW(rowmin_f32, float, <)
DEF_ROW(rowmax_f64, double, >)
DEF_ROW(rowmin_f64, double, <)
DEF_COL(colmax_f32, SEL_MAX)
DEF_COL(colmin_f32, SEL_MIN)

/* ---- argmax / argmin */

#define ARG_BLOCK 8192

/* the first k < n with p[k] == v (v NaN: the first NaN); v is in p[0, n).
 * 256 bytes at a time (GCC vector types, lowered to the variant's ISA):
 * four compares OR-ed, one test, an early exit at the first hit, then the
 * scalar loop finds the element. */
#define FIRST_SCAN(T, VT, MT, HIT)                                                            \
    for (; k + 4 * VL <= n; k += 4 * VL) {                                                    \
        MT m = {0};                                                                           \
        for (int b = 0; b < 4; b++) {                                                         \
            VT x;                                                                             \
            __builtin_memcpy(&x, p + k + b * VL, sizeof x);                                   \
            m |= HIT;                                                                         \
        }                                                                                     \
        uint64_t u[8], any = 0;                                                               \
        __builtin_memcpy(u, &m, sizeof u);                                                    \
        for (int j = 0; j < 8; j++) any |= u[j];                                              \
        if (any) break;                                                                       \
    }
#define DEF_FIRST(NAME, T, VT, MT)                                                            \
    static int64_t first_##NAME(const T *restrict p, int64_t n, T v) {                        \
        enum { VL = 64 / sizeof(T) };                                                         \
        int64_t k = 0;                                                                        \
        if (v != v) {                                                                         \
            FIRST_SCAN(T, VT, MT, x != x)                                                     \
            for (; k < n; k++)                                                                \
                if (p[k] != p[k]) return k;                                                   \
        } else {                                                                              \
            FIRST_SCAN(T, VT, MT, x == v)                                                     \
            for (; k < n; k++)                                                                \
                if (p[k] == v) return k;                                                      \
        }                                                                                     \
        return 0;                                                                             \
    }
typedef float v16f __attribute__((vector_size(64)));
typedef int32_t v16i __attribute__((vector_size(64)));
typedef double v8d __attribute__((vector_size(64)));
typedef int64_t v8i __attribute__((vector_size(64)));
DEF_FIRST(f32, float, v16f, v16i)
DEF_FIRST(f64, double, v8d, v8i)

#define DEF_ARGROW(NAME, T, SUF, BEST, OP)                                                    \
    static int64_t TL_KNAME(NAME)(const void *p_, int64_t n) {                                \
        const T *restrict p = (const T *)p_;                                                  \
        int64_t bb = 0;                                                                       \
        T best = 0;                                                                           \
        for (int64_t b = 0; b < n; b += ARG_BLOCK) {                                          \
            const int64_t len = n - b < ARG_BLOCK ? n - b : ARG_BLOCK;                        \
            const T m = TL_KNAME(BEST)(p + b, len);                                           \
            if (m != m) return b + first_##SUF(p + b, len, m);                                 \
            if (b == 0 || m OP best) {                                                        \
                best = m;                                                                     \
                bb = b;                                                                       \
            }                                                                                 \
        }                                                                                     \
        return bb + first_##SUF(p + bb, n - bb < ARG_BLOCK ? n - bb : ARG_BLOCK, best);       \
    }
DEF_ARGROW(argmax_row_f32, float, f32, rowmax_f32, >)
DEF_ARGROW(argmin_row_f32, float, f32, rowmin_f32, <)
DEF_ARGROW(argmax_row_f64, double, f64, rowmax_f64, >)
DEF_ARGROW(argmin_row_f64, double, f64, rowmin_f64, <)

/* columns: an element replaces the best when it beats it, or is the first NaN */
#define DEF_ARGCOL(NAME, T, OP)                                                               \
    static void TL_KNAME(NAME)(const void *p_, int64_t n, int64_t stride, int64_t w, void *best_, \
                               int64_t *restrict idx) {                                       \
        const T *restrict p = (const T *)p_;                                                  \
        T *restrict b = (T *)best_;                                                           \
        for (int64_t c = 0; c < w; c++) {                                                     \
            b[c] = p[c];                                                                      \
            idx[c] = 0;                                                                       \
        }                                                                                     \
        for (int64_t i = 1; i < n; i++) {                                                     \
            const T *restrict r = p + i * stride;                                             \
            for (int64_t c = 0; c < w; c++) {                                                 \
                const T x = r[c];                                                             \
                const int take = (x OP b[c]) | ((x != x) & (b[c] == b[c]));                   \
                b[c] = take ? x : b[c];                                                       \
                idx[c] = take ? i : idx[c];                                                   \
            }                                                                                 \
        }                                                                                     \
    }
DEF_ARGCOL(argmax_col_f32, float, >)
DEF_ARGCOL(argmin_col_f32, float, <)
DEF_ARGCOL(argmax_col_f64, double, >)
DEF_ARGCOL(argmin_col_f64, double, <)

const tl_argbest_table_t TL_KNAME(tl_argbest_table) = {
    {{TL_KNAME(argmax_row_f32), TL_KNAME(argmin_row_f32)}, {TL_KNAME(argmax_col_f32), TL_KNAME(argmin_col_f32)}},
    {{TL_KNAME(argmax_row_f64), TL_KNAME(argmin_row_f64)}, {TL_KNAME(argmax_col_f64), TL_KNAME(argmin_col_f64)}},
};

const tl_minmax_f32_table_t TL_KNAME(tl_minmax_f32_table) = {{
    {TL_KNAME(rowmax_f32), TL_KNAME(rowmin_f32)},
    {TL_KNAME(colmax_f32), TL_KNAME(colmin_f32)},
}};
