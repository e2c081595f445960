/* float32 max/min reduction kernels (see kernels/ufunc/tl_reduce_kernel.h),
 * compiled once per CPU capability. Columns: the select
 * `(x > a || x != x) ? x : a` keeps NaN (compare + blend once vectorized). */
#include <stdint.h>

#include "tl_reduce_kernel.h"

#define SEL_MAX(a, x) ((x) > (a) || (x) != (x) ? (x) : (a))
#define SEL_MIN(a, x) ((x) < (a) || (x) != (x) ? (x) : (a))

/* rows: 64 lanes of `x > a ? x : a` (exactly maxps / minps, so GCC emits
 * them) plus a lane-wise NaN flag; any NaN makes the result NaN */
#define DEF_ROW(NAME, OP)                                                                     \
    static float TL_KNAME(NAME)(const float *restrict p, int64_t n) {                         \
        int64_t k = 0;                                                                        \
        float r = p[0];                                                                       \
        if (n >= 64) {                                                                        \
            float a[64];                                                                      \
            int32_t nan[64];                                                                  \
            for (int j = 0; j < 64; j++) {                                                    \
                a[j] = p[j];                                                                  \
                nan[j] = p[j] != p[j];                                                        \
            }                                                                                 \
            for (k = 64; k + 64 <= n; k += 64)                                                \
                for (int j = 0; j < 64; j++) {                                                \
                    const float x = p[k + j];                                                 \
                    a[j] = x OP a[j] ? x : a[j];                                              \
                    nan[j] |= x != x;                                                         \
                }                                                                             \
            int32_t any = 0;                                                                  \
            for (int j = 0; j < 64; j++) any |= nan[j];                                       \
            if (any) return __builtin_nanf("");                                               \
            r = a[0];                                                                         \
            for (int j = 1; j < 64; j++) r = a[j] OP r ? a[j] : r;                            \
        }                                                                                     \
        for (; k < n; k++) {                                                                  \
            const float x = p[k];                                                             \
            if (x != x) return x;                                                             \
            r = x OP r ? x : r;                                                               \
        }                                                                                     \
        return r;                                                                             \
    }

#define DEF_COL(NAME, SEL)                                                                    \
    static void TL_KNAME(NAME)(float *restrict acc, const float *restrict p, int64_t n) {     \
        for (int64_t k = 0; k < n; k++) acc[k] = SEL(acc[k], p[k]);                           \
    }

DEF_ROW(rowmax_f32, >)
DEF_ROW(rowmin_f32, <)
DEF_COL(colmax_f32, SEL_MAX)
DEF_COL(colmin_f32, SEL_MIN)

const tl_minmax_f32_table_t TL_KNAME(tl_minmax_f32_table) = {{
    {TL_KNAME(rowmax_f32), TL_KNAME(rowmin_f32)},
    {TL_KNAME(colmax_f32), TL_KNAME(colmin_f32)},
}};
