/* The 16 float lanes of a 64-byte GCC float vector as two 8-lane double
 * vectors (lo: lanes 0-7, hi: 8-15), for the float32 reductions that add a
 * float tree into double accumulators (sum_kernel.c, reduce_stats_kernel.c).
 * On AVX-512 two 512-bit converts: GCC lowers the generic shuffle + convert
 * to four 256-bit converts plus extracts and inserts, ~10% of a leaf sum's
 * time from L2 (measured in C: 105 -> 117 GB/s). float -> double is exact,
 * so every variant gives the same bits. A macro, not a function: returning
 * a 64-byte vector changes the ABI below AVX-512 (-Wpsabi). VD is the
 * caller's 8-double vector type. */
#ifndef TL_WIDEN_H
#define TL_WIDEN_H

#if defined(__AVX512F__)
#include <immintrin.h>
#define TL_WIDEN16(lo, hi, v, VD)                                                                  \
    do {                                                                                           \
        const __m512 w_ = (__m512)(v);                                                             \
        (lo) = (VD)_mm512_cvtps_pd(_mm512_castps512_ps256(w_));                                    \
        (hi) = (VD)_mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(w_), 1))); \
    } while (0)
#else
#define TL_WIDEN16(lo, hi, v, VD)                                                                  \
    do {                                                                                           \
        (lo) = __builtin_convertvector(__builtin_shufflevector((v), (v), 0, 1, 2, 3, 4, 5, 6, 7), VD); \
        (hi) = __builtin_convertvector(__builtin_shufflevector((v), (v), 8, 9, 10, 11, 12, 13, 14, 15), VD); \
    } while (0)
#endif

#endif
