/* float32 max/min reduction kernels (see kernels/ufunc/tl_reduce_kernel.h),
 * compiled once per CPU capability. The select `(x > a || x != x) ? x : a`
 * keeps the first NaN and vectorizes to compare + blend; 8 independent
 * 16-lane accumulators hide the latency. */
#include <stdint.h>

#include "tl_reduce_kernel.h"

typedef float tl_mm_v16f __attribute__((vector_size(64)));
typedef int32_t tl_mm_v16i __attribute__((vector_size(64)));

static inline tl_mm_v16f mm_load(const float *p) {
    tl_mm_v16f v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
}

/* m ? x : y per lane (GCC's vector ?: is C++ only) */
static inline tl_mm_v16f blend(tl_mm_v16i m, tl_mm_v16f x, tl_mm_v16f y) {
    return (tl_mm_v16f)(((tl_mm_v16i)x & m) | ((tl_mm_v16i)y & ~m));
}

#define SEL_MAX(a, x) ((x) > (a) || (x) != (x) ? (x) : (a))
#define SEL_MIN(a, x) ((x) < (a) || (x) != (x) ? (x) : (a))

#define DEF_ROW(NAME, SEL, OP)                                                                 \
    static float TL_KNAME(NAME)(const float *p, int64_t n) {                                  \
        int64_t k = 0;                                                                        \
        float r = p[0];                                                                       \
        if (n >= 128) {                                                                       \
            tl_mm_v16f a[8];                                                                  \
            for (int j = 0; j < 8; j++) a[j] = mm_load(p + 16 * j);                           \
            for (k = 128; k + 128 <= n; k += 128)                                             \
                for (int j = 0; j < 8; j++) {                                                 \
                    const tl_mm_v16f x = mm_load(p + k + 16 * j);                             \
                    const tl_mm_v16i m = (x OP a[j]) | (x != x);                               \
                    a[j] = blend(m, x, a[j]);                                                  \
                }                                                                             \
            for (int j = 1; j < 8; j++) {                                                     \
                const tl_mm_v16i m = (a[j] OP a[0]) | (a[j] != a[j]);                          \
                a[0] = blend(m, a[j], a[0]);                                                     \
            }                                                                                 \
            r = a[0][0];                                                                      \
            for (int j = 1; j < 16; j++) r = SEL(r, a[0][j]);                                 \
        }                                                                                     \
        for (; k < n; k++) r = SEL(r, p[k]);                                                  \
        return r;                                                                             \
    }

#define DEF_COL(NAME, SEL)                                                                    \
    static void TL_KNAME(NAME)(float *restrict acc, const float *restrict p, int64_t n) {     \
        for (int64_t k = 0; k < n; k++) acc[k] = SEL(acc[k], p[k]);                           \
    }

DEF_ROW(rowmax_f32, SEL_MAX, >)
DEF_ROW(rowmin_f32, SEL_MIN, <)
DEF_COL(colmax_f32, SEL_MAX)
DEF_COL(colmin_f32, SEL_MIN)

const tl_minmax_f32_table_t TL_KNAME(tl_minmax_f32_table) = {{
    {TL_KNAME(rowmax_f32), TL_KNAME(rowmin_f32)},
    {TL_KNAME(colmax_f32), TL_KNAME(colmin_f32)},
}};
