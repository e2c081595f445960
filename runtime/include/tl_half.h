/* float16 / bfloat16 conversions (internal, header-only).
 *
 * Both types are stored as uint16_t. Conversions round to nearest even, as
 * numpy (float16) and ml_dtypes (bfloat16) do; float64 sources round once,
 * directly (no double rounding through float32).
 * With F16C (the AVX2/AVX512 kernel variants) float32<->float16 use the
 * hardware instructions through _Float16 casts; the portable versions below are
 * bit-identical (branch-light, from Maratyszcza's FP16 library technique).
 */
#ifndef TL_HALF_H
#define TL_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint32_t tl_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float tl_f32_from_bits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint64_t tl_f64_bits(double f) { uint64_t u; memcpy(&u, &f, 8); return u; }

/* ---- float16 -> float32 (exact) */
static inline float tl_f16_to_f32_portable(uint16_t h) {
    const uint32_t w = (uint32_t)h << 16;
    const uint32_t sign = w & 0x80000000u;
    const uint32_t two_w = w + w;
    const uint32_t exp_offset = 0xE0u << 23;
    const float exp_scale = 0x1.0p-112f;
    const float normalized = tl_f32_from_bits((two_w >> 4) + exp_offset) * exp_scale;
    const uint32_t magic_mask = 126u << 23;
    const float magic_bias = 0.5f;
    const float denormalized = tl_f32_from_bits((two_w >> 17) | magic_mask) - magic_bias;
    const uint32_t denormalized_cutoff = 1u << 27;
    const uint32_t result = sign | (two_w < denormalized_cutoff ? tl_f32_bits(denormalized)
                                                                : tl_f32_bits(normalized));
    return tl_f32_from_bits(result);
}

/* ---- float32 -> float16 (round to nearest even; NaN stays NaN) */
static inline uint16_t tl_f32_to_f16_portable(float f) {
    const float scale_to_inf = 0x1.0p+112f;
    const float scale_to_zero = 0x1.0p-110f;
    uint32_t wabs = tl_f32_bits(f) & 0x7fffffffu;
    float base = (tl_f32_from_bits(wabs) * scale_to_inf) * scale_to_zero;
    const uint32_t w = tl_f32_bits(f);
    const uint32_t shl1_w = w + w;
    const uint32_t sign = w & 0x80000000u;
    uint32_t bias = shl1_w & 0xFF000000u;
    if (bias < 0x71000000u) bias = 0x71000000u;
    base = tl_f32_from_bits((bias >> 1) + 0x07800000u) + base;
    const uint32_t bits = tl_f32_bits(base);
    const uint32_t exp_bits = (bits >> 13) & 0x00007C00u;
    const uint32_t mantissa_bits = bits & 0x00000FFFu;
    const uint32_t nonsign = exp_bits + mantissa_bits;
    if (shl1_w > 0xFF000000u) /* NaN: keep the top payload bits, force quiet */
        return (uint16_t)((sign >> 16) | 0x7E00u | ((w >> 13) & 0x3FFu));
    return (uint16_t)((sign >> 16) | nonsign);
}

/* ---- float64 -> small float, rounded once (RNE).
 * mbits: mantissa bits of the target; ebias: its exponent bias; emax_biased:
 * all-ones exponent value. */
static inline uint16_t tl__f64_to_small(double d, int mbits, int ebias, int ebits) {
    uint64_t x = tl_f64_bits(d);
    uint16_t sign = (uint16_t)((x >> 63) << 15);
    x &= 0x7fffffffffffffffull;
    const uint16_t inf = (uint16_t)(((1u << ebits) - 1u) << mbits);
    if (x >= 0x7ff0000000000000ull) {
        if (x == 0x7ff0000000000000ull) return sign | inf;
        /* NaN: quiet, keep top payload bits */
        return sign | inf | (uint16_t)(1u << (mbits - 1)) |
               (uint16_t)((x >> (52 - mbits)) & ((1u << mbits) - 1u));
    }
    int e = (int)(x >> 52) - 1023;
    const int emin = 1 - ebias;                    /* smallest normal exponent */
    const int emax = ebias;                        /* largest finite exponent */
    if (e > emax) return sign | inf;
    if (e < emin - mbits - 1) return sign;         /* below half the smallest subnormal */
    uint64_t m = (x & ((1ull << 52) - 1)) | (1ull << 52);
    int shift = 52 - mbits;
    if (e < emin) shift += emin - e;
    uint64_t q = m >> shift;
    uint64_t rem = m & ((1ull << shift) - 1);
    uint64_t half = 1ull << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) q++;
    uint32_t h;
    if (e >= emin)
        h = ((uint32_t)(e + ebias) << mbits) + (uint32_t)q - (1u << mbits);
    else
        h = (uint32_t)q;
    if (h >= inf) h = inf;
    return sign | (uint16_t)h;
}
static inline uint16_t tl_f64_to_f16(double d) { return tl__f64_to_small(d, 10, 15, 5); }
static inline uint16_t tl_f64_to_bf16_direct(double d) { return tl__f64_to_small(d, 7, 127, 8); }

/* ---- bfloat16 */
static inline float tl_bf16_to_f32(uint16_t h) { return tl_f32_from_bits((uint32_t)h << 16); }
static inline uint16_t tl_f32_to_bf16(float f) {
    uint32_t u = tl_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);  /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

/* ---- choose hardware conversions when compiled with F16C */
#if defined(__F16C__)
static inline float tl_f16_to_f32(uint16_t h) {
    _Float16 v; memcpy(&v, &h, 2); return (float)v;
}
static inline uint16_t tl_f32_to_f16(float f) {
    _Float16 v = (_Float16)f; uint16_t h; memcpy(&h, &v, 2); return h;
}
#else
static inline float tl_f16_to_f32(uint16_t h) { return tl_f16_to_f32_portable(h); }
static inline uint16_t tl_f32_to_f16(float f) { return tl_f32_to_f16_portable(f); }
#endif

/* ---- bulk contiguous conversions: 16 / 8 lanes with AVX-512 / F16C */
#if defined(__F16C__) || defined(__AVX512F__)
#include <immintrin.h>
#endif
static inline void tl_f32_to_f16_n(uint16_t *restrict out, const float *restrict in, int64_t n) {
    int64_t i = 0;
#if defined(__AVX512F__)
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *)(out + i),
                            _mm512_cvtps_ph(_mm512_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#elif defined(__F16C__)
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(out + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#endif
    for (; i < n; i++) out[i] = tl_f32_to_f16(in[i]);
}
static inline void tl_f16_to_f32_n(float *restrict out, const uint16_t *restrict in, int64_t n) {
    int64_t i = 0;
#if defined(__AVX512F__)
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(out + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(in + i))));
#elif defined(__F16C__)
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(in + i))));
#endif
    for (; i < n; i++) out[i] = tl_f16_to_f32(in[i]);
}

#endif
