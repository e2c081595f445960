/* Leaf sums for sum / mean (kernels/native/reduce_ops.c): n contiguous
 * elements (at most TL_SUM_BLOCK = 4096 per call; the caller combines leaves
 * pairwise in double).
 *
 * float32: each 8-float load is widened to doubles and added into one of 8
 * independent 8-lane double accumulators (GCC vector types, lowered to the
 * variant's ISA), so the error stays far below the 1e-6 bar (about 1e-9 at
 * 2^24). On one thread this reaches ~8 GB/s, not memory bandwidth (PyTorch's
 * float32 cascade: ~22 GB/s): the open speed item of issue 6.
 * float64: 16 double accumulators. float16/bfloat16 go through float32 in
 * chunks (bulk conversions). Compiled once per CPU capability. */
#include <stdint.h>

#include "tl_half.h"
#include "tl_kernel.h"
#include "tl_ufunc.h"

#define LANES 16

static inline double combine(const double *a) {
    double s[LANES];
    for (int j = 0; j < LANES; j++) s[j] = a[j];
    for (int w = LANES / 2; w > 0; w /= 2)
        for (int j = 0; j < w; j++) s[j] += s[j + w];
    return s[0];
}

typedef float tl_v8f __attribute__((vector_size(32)));
typedef double tl_v8d __attribute__((vector_size(64)));

/* acc += 8 floats at p as doubles (unaligned load); a macro, not a function:
 * returning a 64-byte vector changes the ABI below AVX-512 (-Wpsabi) */
#define ADD8(acc, p)                                       \
    do {                                                   \
        tl_v8f v_;                                         \
        __builtin_memcpy(&v_, (p), sizeof v_);             \
        (acc) += __builtin_convertvector(v_, tl_v8d);      \
    } while (0)

static double TL_KNAME(leaf_f32)(const void *p_, int64_t n) {
    const float *restrict p = (const float *)p_;
    tl_v8d a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, a4 = {0}, a5 = {0}, a6 = {0}, a7 = {0};
    int64_t k = 0;
    for (; k + 64 <= n; k += 64) {
        ADD8(a0, p + k);
        ADD8(a1, p + k + 8);
        ADD8(a2, p + k + 16);
        ADD8(a3, p + k + 24);
        ADD8(a4, p + k + 32);
        ADD8(a5, p + k + 40);
        ADD8(a6, p + k + 48);
        ADD8(a7, p + k + 56);
    }
    for (; k + 8 <= n; k += 8) ADD8(a0, p + k);
    double s = 0;
    for (; k < n; k++) s += (double)p[k];
    a0 += a1;
    a2 += a3;
    a4 += a5;
    a6 += a7;
    a0 += a2;
    a4 += a6;
    a0 += a4;
    double lanes[16];
    for (int j = 0; j < 8; j++) {
        lanes[j] = a0[j];
        lanes[j + 8] = 0;
    }
    return combine(lanes) + s;
}

static double TL_KNAME(leaf_f64)(const void *p_, int64_t n) {
    const double *restrict p = (const double *)p_;
    double a[LANES] = {0};
    int64_t k = 0;
    for (; k + LANES <= n; k += LANES)
        for (int j = 0; j < LANES; j++) a[j] += p[k + j];
    double tail = 0;
    for (; k < n; k++) tail += p[k];
    return combine(a) + tail;
}

static double TL_KNAME(leaf_f16)(const void *p_, int64_t n) {
    const uint16_t *p = (const uint16_t *)p_;
    float buf[TL_UFUNC_CHUNK];
    double s = 0;
    for (int64_t b = 0; b < n; b += TL_UFUNC_CHUNK) {
        const int64_t m = n - b < TL_UFUNC_CHUNK ? n - b : TL_UFUNC_CHUNK;
        tl_f16_to_f32_n(buf, p + b, m);
        s += TL_KNAME(leaf_f32)(buf, m);
    }
    return s;
}

static double TL_KNAME(leaf_bf16)(const void *p_, int64_t n) {
    const uint16_t *p = (const uint16_t *)p_;
    float buf[TL_UFUNC_CHUNK];
    double s = 0;
    for (int64_t b = 0; b < n; b += TL_UFUNC_CHUNK) {
        const int64_t m = n - b < TL_UFUNC_CHUNK ? n - b : TL_UFUNC_CHUNK;
        tl_bf16_to_f32_n(buf, p + b, m);
        s += TL_KNAME(leaf_f32)(buf, m);
    }
    return s;
}

/* row accumulation (a kept dimension innermost, e.g. sum(x, 0)):
 * acc[k] += p[k] for n contiguous elements; floats into double, integers and
 * bool into wrapping 64-bit */
#define TL_DEF_ROWACC(NAME, T, ACC, LOAD)                                                  \
    static void TL_KNAME(rowacc_##NAME)(void *acc_, const void *p_, int64_t n) {          \
        ACC *restrict acc = (ACC *)acc_;                                                  \
        const T *restrict p = (const T *)p_;                                              \
        for (int64_t k = 0; k < n; k++) acc[k] += (ACC)LOAD(p[k]);                        \
    }
#define ID(x) (x)
#define I64(x) ((int64_t)(x))
TL_DEF_ROWACC(f32, float, double, ID)
TL_DEF_ROWACC(f64, double, double, ID)
TL_DEF_ROWACC(f16, uint16_t, double, tl_f16_to_f32)
TL_DEF_ROWACC(bf16, uint16_t, double, tl_bf16_to_f32)
TL_DEF_ROWACC(u8, uint8_t, uint64_t, I64)
TL_DEF_ROWACC(i8, int8_t, uint64_t, I64)
TL_DEF_ROWACC(i16, int16_t, uint64_t, I64)
TL_DEF_ROWACC(i32, int32_t, uint64_t, I64)
TL_DEF_ROWACC(i64, int64_t, uint64_t, I64)

const tl_sum_rowacc_table_t TL_KNAME(tl_sum_rowacc_table) = {
    TL_KNAME(rowacc_u8), TL_KNAME(rowacc_u8), TL_KNAME(rowacc_i8), TL_KNAME(rowacc_i16), TL_KNAME(rowacc_i32),
    TL_KNAME(rowacc_i64), TL_KNAME(rowacc_f16), TL_KNAME(rowacc_bf16), TL_KNAME(rowacc_f32), TL_KNAME(rowacc_f64),
};

const tl_sum_leaf_table_t TL_KNAME(tl_sum_leaf_table) = {
    [TL_FLOAT16] = TL_KNAME(leaf_f16),
    [TL_BFLOAT16] = TL_KNAME(leaf_bf16),
    [TL_FLOAT32] = TL_KNAME(leaf_f32),
    [TL_FLOAT64] = TL_KNAME(leaf_f64),
};
