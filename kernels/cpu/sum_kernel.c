/* Leaf sums for sum / mean (kernels/native/reduce_ops.c), compiled once per
 * CPU capability.
 *
 * leaf: n contiguous elements (at most TL_SUM_BLOCK = 32768 per call; the
 * caller combines leaves pairwise in double).
 * float32: 128 floats per step as eight 16-lane float vectors added as a
 * balanced tree (each float lane then holds 8 elements, 3 roundings deep),
 * the 16 lanes widened to double and added to a double accumulator. The
 * float32 part adds at most ~3 ulp of sum|x| (1.8e-7 relative for same-sign
 * data), the rest is double: float32 results stay far inside the 1e-6 bar
 * at 2^24 elements, while the loop runs at memory bandwidth (one convert per
 * 128 floats; the previous float->double per element ran at ~8 GB/s).
 * float64: 16 double accumulators. float16/bfloat16 are converted to float32
 * in the loads (16 at a time, F16C / AVX-512 converts for float16) and summed
 * by the same float32 code, as PyTorch computes them.
 *
 * cols: acc[k] += sum over `rows` rows (row stride rs elements) of element
 * k, for n contiguous kept elements (sum(a2, dim=0)). float32: 8 rows at a
 * time added as the same float tree per column, then widened into the double
 * accumulator; columns are blocked so acc stays in L1/L2. Every column gets
 * the same operations whichever column range a thread is given (the scalar
 * tail computes the same tree), so results do not depend on threads.
 * float16/bfloat16: converted to float32 in bulk, 8 rows of a column chunk at
 * a time, then the float32 column kernel. float64: row by row. Integers and
 * bool: wrapping 64-bit, row by row.
 *
 * nansum's tables: the same kernels with NaN read as 0 (float32 chunks
 * zeroed into an L1 buffer like the half-precision conversions; float64
 * through a select in the loop). */
#include <stdint.h>

#include "tl_half.h"
#include "tl_kernel.h"
#include "tl_ufunc.h"
#include "tl_widen.h"
#include "nansum_kernel.h"

typedef float tl_v16f __attribute__((vector_size(64)));
typedef double tl_v8d __attribute__((vector_size(64)));

/* macros, not functions: returning a 64-byte vector changes the ABI below
 * AVX-512 (-Wpsabi under -Werror) */
#define LD16(v, p) __builtin_memcpy(&(v), (p), sizeof(tl_v16f))
/* the 16 float lanes of v as two 8-lane double vectors lo, hi (tl_widen.h) */
#define WIDEN(lo, hi, v) TL_WIDEN16(lo, hi, v, tl_v8d)
/* v0 = balanced float tree of the 8 vectors v0..v7 */
#define TREE8(v0, v1, v2, v3, v4, v5, v6, v7) \
    do {                                      \
        v0 += v1; v2 += v3; v4 += v5; v6 += v7; \
        v0 += v2; v4 += v6;                   \
        v0 += v4;                             \
    } while (0)

/* the 16 float16 / bfloat16 values at p as a float vector: float16 with
 * F16C / AVX-512 converts (bulk, in registers), bfloat16 a 16-bit shift */
typedef float tl_v8f __attribute__((vector_size(32)));
typedef uint16_t tl_v16h __attribute__((vector_size(32)));
typedef uint32_t tl_v16u __attribute__((vector_size(64)));
#if defined(__AVX512F__)
#define LDH16(v, p) ((v) = (tl_v16f)_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p))))
#elif defined(__F16C__)
#define LDH16(v, p)                                                                       \
    ((v) = __builtin_shufflevector((tl_v8f)_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p))),     \
                                   (tl_v8f)_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p) + 1)), \
                                   0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))
#else
#define LDH16(v, p) \
    do { for (int j_ = 0; j_ < 16; j_++) (v)[j_] = tl_f16_to_f32((p)[j_]); } while (0)
#endif
#define LDB16(v, p)                                                    \
    do {                                                               \
        tl_v16h h_;                                                    \
        __builtin_memcpy(&h_, (p), sizeof h_);                         \
        (v) = (tl_v16f)(__builtin_convertvector(h_, tl_v16u) << 16);   \
    } while (0)
/* the first level of the leaf tree (v0 += v1, v2 += v3, v4 += v5, v6 += v7)
 * on AVX-512 as fma(a, 1, b): the same rounding as a + b, bit for bit
 * (a * 1 is exact), but on the FMA pipes, while the adds, the float16
 * converts and the widening share the add pipes on AMD Zen 4 (a float16 leaf
 * in L1: 19.5 -> 24.4 elements/ns; PyTorch's float16 sum ~19.5). `one` is
 * hidden from the optimizer, which would fold the multiply away. */
#if defined(__AVX512F__)
#define TREE_ONE(one)                                  \
    __m512 one = _mm512_set1_ps(1.0f);                 \
    __asm__("" : "+v"(one))
#define FADD1(a, b, one) ((a) = (tl_v16f)_mm512_fmadd_ps((__m512)(a), (one), (__m512)(b)))
#else
#define TREE_ONE(one) const int one = 0
#define FADD1(a, b, one) ((void)(one), (a) += (b))
#endif
#define CV_F32(x) ((double)(x))
#define CV_F16(x) ((double)tl_f16_to_f32(x))
#define CV_BF16(x) ((double)tl_bf16_to_f32(x))

/* adds the n elements at p (T, loaded 16 at a time as floats by LD, one by
 * one by CV) into the double accumulators d0, d1 (128 per step as a float
 * tree, a shorter float chain for the last whole vectors) and returns the
 * sum of the scalar tail in double. float16 / bfloat16 are converted in the
 * loads: the same float32 values and operations as converting the leaf
 * first (PyTorch also sums them in float32), with no store and reload of a
 * converted chunk (the chunked form read float16 at 0.5-0.7 of float32's
 * bytes per second) */
#define TL_DEF_ACC(NAME, T, LD, CV)                                                              \
    static inline double TL_KNAME(acc_##NAME)(const T *restrict p, int64_t n, tl_v8d *d0, tl_v8d *d1) { \
        tl_v8d lo, hi, a0 = *d0, a1 = *d1;   /* locals: kept in registers below AVX-512 */       \
        TREE_ONE(one);                                                                           \
        int64_t k = 0;                                                                           \
        for (; k + 128 <= n; k += 128) {                                                         \
            tl_v16f v0, v1, v2, v3, v4, v5, v6, v7;                                              \
            LD(v0, p + k);                                                                       \
            LD(v1, p + k + 16);                                                                  \
            LD(v2, p + k + 32);                                                                  \
            LD(v3, p + k + 48);                                                                  \
            LD(v4, p + k + 64);                                                                  \
            LD(v5, p + k + 80);                                                                  \
            LD(v6, p + k + 96);                                                                  \
            LD(v7, p + k + 112);                                                                 \
            FADD1(v0, v1, one);                                                                  \
            FADD1(v2, v3, one);                                                                  \
            FADD1(v4, v5, one);                                                                  \
            FADD1(v6, v7, one);                                                                  \
            v0 += v2;                                                                            \
            v4 += v6;                                                                            \
            v0 += v4;   /* TREE8's order */                                                      \
            WIDEN(lo, hi, v0);                                                                   \
            a0 += lo;                                                                            \
            a1 += hi;                                                                            \
        }                                                                                        \
        if (k + 16 <= n) {   /* at most 7 more vectors: a short float chain */                   \
            tl_v16f t, v;                                                                        \
            LD(t, p + k);                                                                        \
            for (k += 16; k + 16 <= n; k += 16) {                                                \
                LD(v, p + k);                                                                    \
                t += v;                                                                          \
            }                                                                                    \
            WIDEN(lo, hi, t);                                                                    \
            a0 += lo;                                                                            \
            a1 += hi;                                                                            \
        }                                                                                        \
        *d0 = a0;                                                                                \
        *d1 = a1;                                                                                \
        double s = 0;                                                                            \
        for (; k < n; k++) s += CV(p[k]);                                                        \
        return s;                                                                                \
    }
TL_DEF_ACC(f32, float, LD16, CV_F32)
TL_DEF_ACC(f16, uint16_t, LDH16, CV_F16)
TL_DEF_ACC(bf16, uint16_t, LDB16, CV_BF16)

/* the 16 double lanes of d0, d1 as one sum, in a fixed order */
static inline double TL_KNAME(lanes_sum)(const tl_v8d *d0, const tl_v8d *d1) {
    const tl_v8d d = *d0 + *d1;
    double r[8];
    for (int j = 0; j < 8; j++) r[j] = d[j];
    return ((r[0] + r[4]) + (r[2] + r[6])) + ((r[1] + r[5]) + (r[3] + r[7]));
}

#define TL_DEF_LEAF(NAME, T)                                                  \
    static double TL_KNAME(leaf_##NAME)(const void *p_, int64_t n) {          \
        tl_v8d d0 = {0}, d1 = {0};                                            \
        const double tail = TL_KNAME(acc_##NAME)((const T *)p_, n, &d0, &d1); \
        return TL_KNAME(lanes_sum)(&d0, &d1) + tail;                          \
    }
TL_DEF_LEAF(f32, float)
TL_DEF_LEAF(f16, uint16_t)
TL_DEF_LEAF(bf16, uint16_t)

/* LOAD: the element as added (NZ: NaN read as 0, for nansum) */
#define ID(x) (x)
#define NZ(x) ((x) == (x) ? (x) : 0)
#define TL_DEF_F64_LEAF(NAME, LOAD)                                            \
    static double TL_KNAME(leaf_##NAME)(const void *p_, int64_t n) {           \
        enum { LANES = 16 };                                                   \
        const double *restrict p = (const double *)p_;                         \
        double a[LANES] = {0};                                                 \
        int64_t k = 0;                                                         \
        for (; k + LANES <= n; k += LANES)                                     \
            for (int j = 0; j < LANES; j++) a[j] += LOAD(p[k + j]);            \
        double tail = 0;                                                       \
        for (; k < n; k++) tail += LOAD(p[k]);                                 \
        for (int w = LANES / 2; w > 0; w /= 2)                                 \
            for (int j = 0; j < w; j++) a[j] += a[j + w];                      \
        return a[0] + tail;                                                    \
    }
TL_DEF_F64_LEAF(f64, ID)
TL_DEF_F64_LEAF(nan_f64, NZ)

/* nansum's leaves: chunks converted to float32 with NaN zeroed (bulk
 * conversions), each added into the same double accumulators as the float32
 * leaf */
#define TL_DEF_CHUNK_LEAF(NAME, T, CONV)                                               \
    static double TL_KNAME(leaf_##NAME)(const void *p_, int64_t n) {                 \
        const T *p = (const T *)p_;                                                  \
        float buf[TL_UFUNC_CHUNK];                                                   \
        tl_v8d d0 = {0}, d1 = {0};                                                   \
        double tail = 0;                                                             \
        for (int64_t b = 0; b < n; b += TL_UFUNC_CHUNK) {                            \
            const int64_t m = n - b < TL_UFUNC_CHUNK ? n - b : TL_UFUNC_CHUNK;       \
            CONV(buf, p + b, m);                                                     \
            tail += TL_KNAME(acc_f32)(buf, m, &d0, &d1);                             \
        }                                                                            \
        return TL_KNAME(lanes_sum)(&d0, &d1) + tail;                                   \
    }
/* nansum's conversions: NaN read as 0 (a select the compiler vectorizes) */
static inline void TL_KNAME(nz_inplace)(float *p, int64_t n) {
    for (int64_t i = 0; i < n; i++) p[i] = NZ(p[i]);
}
static inline void TL_KNAME(nz_f32_n)(float *restrict out, const float *restrict in, int64_t n) {
    for (int64_t i = 0; i < n; i++) out[i] = NZ(in[i]);
}
static inline void TL_KNAME(nz_f16_n)(float *restrict out, const uint16_t *restrict in, int64_t n) {
    tl_f16_to_f32_n(out, in, n);
    TL_KNAME(nz_inplace)(out, n);
}
static inline void TL_KNAME(nz_bf16_n)(float *restrict out, const uint16_t *restrict in, int64_t n) {
    tl_bf16_to_f32_n(out, in, n);
    TL_KNAME(nz_inplace)(out, n);
}

TL_DEF_CHUNK_LEAF(nan_f32, float, TL_KNAME(nz_f32_n))
TL_DEF_CHUNK_LEAF(nan_f16, uint16_t, TL_KNAME(nz_f16_n))
TL_DEF_CHUNK_LEAF(nan_bf16, uint16_t, TL_KNAME(nz_bf16_n))

/* ---- column sums */

/* columns per block: 32 KB of double accumulators, in L1 beside the 8 input
 * streams; 4096 columns read whole 16 KB rows of a (4096, 4096) float32
 * matrix (2048: each row in two passes, ~1% slower on a quiet machine) */
enum { COLBLOCK = 4096 };

static void TL_KNAME(cols_f32)(void *acc_, const void *p_, int64_t n, int64_t rows, int64_t rs) {
    double *restrict acc = (double *)acc_;
    const float *restrict p = (const float *)p_;
    for (int64_t c0 = 0; c0 < n; c0 += COLBLOCK) {
        const int64_t c1 = n - c0 < COLBLOCK ? n : c0 + COLBLOCK;
        int64_t r = 0;
        for (; r + 8 <= rows; r += 8) {
            const float *q = p + r * rs;
            int64_t k = c0;
            for (; k + 16 <= c1; k += 16) {
                tl_v16f v0, v1, v2, v3, v4, v5, v6, v7;
                LD16(v0, q + k);
                LD16(v1, q + rs + k);
                LD16(v2, q + 2 * rs + k);
                LD16(v3, q + 3 * rs + k);
                LD16(v4, q + 4 * rs + k);
                LD16(v5, q + 5 * rs + k);
                LD16(v6, q + 6 * rs + k);
                LD16(v7, q + 7 * rs + k);
                TREE8(v0, v1, v2, v3, v4, v5, v6, v7);
                tl_v8d lo, hi, a0, a1;
                WIDEN(lo, hi, v0);
                __builtin_memcpy(&a0, acc + k, sizeof a0);
                __builtin_memcpy(&a1, acc + k + 8, sizeof a1);
                a0 += lo;
                a1 += hi;
                __builtin_memcpy(acc + k, &a0, sizeof a0);
                __builtin_memcpy(acc + k + 8, &a1, sizeof a1);
            }
            for (; k < c1; k++) {   /* the same float tree, one column */
                float s0 = q[k], s1 = q[rs + k], s2 = q[2 * rs + k], s3 = q[3 * rs + k];
                float s4 = q[4 * rs + k], s5 = q[5 * rs + k], s6 = q[6 * rs + k], s7 = q[7 * rs + k];
                TREE8(s0, s1, s2, s3, s4, s5, s6, s7);
                acc[k] += (double)s0;
            }
        }
        for (; r < rows; r++)
            for (int64_t k = c0; k < c1; k++) acc[k] += (double)p[r * rs + k];
    }
}

/* the other dtypes: one row at a time, acc[k] += element k (floats into
 * double, integers and bool into wrapping 64-bit) */
#define TL_DEF_COLS(NAME, T, ACC, LOAD)                                                    \
    static void TL_KNAME(cols_##NAME)(void *acc_, const void *p_, int64_t n, int64_t rows, \
                                      int64_t rs) {                                         \
        ACC *restrict acc = (ACC *)acc_;                                                   \
        for (int64_t r = 0; r < rows; r++) {                                               \
            const T *restrict p = (const T *)p_ + r * rs;                                  \
            for (int64_t k = 0; k < n; k++) acc[k] += (ACC)LOAD(p[k]);                     \
        }                                                                                  \
    }
#define I64(x) ((int64_t)(x))
TL_DEF_COLS(f64, double, double, ID)
TL_DEF_COLS(nan_f64, double, double, NZ)

/* float16 / bfloat16 (and nansum's float32): 8 rows at a time, column
 * chunks converted to float32 in bulk, then the float32 column kernel (the
 * same per-column arithmetic) */
#define TL_DEF_CHUNK_COLS(NAME, T, CONV)                                                    \
    static void TL_KNAME(cols_##NAME)(void *acc_, const void *p_, int64_t n, int64_t rows, \
                                      int64_t rs) {                                         \
        enum { CH = 512 };                                                                  \
        double *acc = (double *)acc_;                                                       \
        const T *p = (const T *)p_;                                                         \
        float buf[8 * CH];                                                                  \
        for (int64_t r = 0; r < rows; r += 8) {                                             \
            const int64_t g = rows - r < 8 ? rows - r : 8;                                  \
            for (int64_t c0 = 0; c0 < n; c0 += CH) {                                        \
                const int64_t m = n - c0 < CH ? n - c0 : CH;                                \
                for (int64_t i = 0; i < g; i++) CONV(buf + i * CH, p + (r + i) * rs + c0, m); \
                TL_KNAME(cols_f32)(acc + c0, buf, m, g, CH);                                \
            }                                                                               \
        }                                                                                   \
    }
TL_DEF_CHUNK_COLS(f16, uint16_t, tl_f16_to_f32_n)
TL_DEF_CHUNK_COLS(bf16, uint16_t, tl_bf16_to_f32_n)
TL_DEF_CHUNK_COLS(nan_f32, float, TL_KNAME(nz_f32_n))
TL_DEF_CHUNK_COLS(nan_f16, uint16_t, TL_KNAME(nz_f16_n))
TL_DEF_CHUNK_COLS(nan_bf16, uint16_t, TL_KNAME(nz_bf16_n))
TL_DEF_COLS(u8, uint8_t, uint64_t, I64)
TL_DEF_COLS(i8, int8_t, uint64_t, I64)
TL_DEF_COLS(i16, int16_t, uint64_t, I64)
TL_DEF_COLS(i32, int32_t, uint64_t, I64)
TL_DEF_COLS(i64, int64_t, uint64_t, I64)

const tl_sum_cols_table_t TL_KNAME(tl_sum_cols_table) = {
    TL_KNAME(cols_u8), TL_KNAME(cols_u8), TL_KNAME(cols_i8), TL_KNAME(cols_i16), TL_KNAME(cols_i32),
    TL_KNAME(cols_i64), TL_KNAME(cols_f16), TL_KNAME(cols_bf16), TL_KNAME(cols_f32), TL_KNAME(cols_f64),
};

const tl_sum_leaf_table_t TL_KNAME(tl_sum_leaf_table) = {
    [TL_FLOAT16] = TL_KNAME(leaf_f16),
    [TL_BFLOAT16] = TL_KNAME(leaf_bf16),
    [TL_FLOAT32] = TL_KNAME(leaf_f32),
    [TL_FLOAT64] = TL_KNAME(leaf_f64),
};

/* nansum: the floating dtypes only (integer nansum is sum) */
const tl_sum_leaf_table_t TL_KNAME(tl_nansum_leaf_table) = {
    [TL_FLOAT16] = TL_KNAME(leaf_nan_f16),
    [TL_BFLOAT16] = TL_KNAME(leaf_nan_bf16),
    [TL_FLOAT32] = TL_KNAME(leaf_nan_f32),
    [TL_FLOAT64] = TL_KNAME(leaf_nan_f64),
};

const tl_sum_cols_table_t TL_KNAME(tl_nansum_cols_table) = {
    [TL_FLOAT16] = TL_KNAME(cols_nan_f16),
    [TL_BFLOAT16] = TL_KNAME(cols_nan_bf16),
    [TL_FLOAT32] = TL_KNAME(cols_nan_f32),
    [TL_FLOAT64] = TL_KNAME(cols_nan_f64),
};
