/* In-house float32 exp and erf, written for the compiler to vectorize.
 *
 * libmvec's expf / erff (tl_mvec.h) are calls the loop cannot inline, with a
 * scalar fallback for special lanes (a masked -inf, an overflow, a
 * subnormal result) that costs ~10-20x per vector. These are plain
 * branch-free C instead: inside a generated ufunc loop (or a kernels/cpu
 * loop) GCC turns them into straight vector code for whichever ISA the file
 * is compiled for (SSE2 baseline, AVX2+FMA, AVX-512), no call and no slow
 * path. float64 stays on libm. Users: softmax / log_softmax / attention
 * (tl_expf_sm) and logsumexp (tl_expf_ftz) on every ISA; tanh and the
 * tanh-based formulas (tl_vtanh.h); the exp, erf, sigmoid, silu, gelu
 * formulas in the AVX-512 loops only (TL_UEXP / TL_UERF, tl_umath.h), since
 * on ordinary data libmvec's calls are 3-17% faster in the baseline and AVX2
 * loops.
 *
 * tl_expf: <= 1 ulp from the correctly rounded e^x over every float32
 * (tests/ops/test_vexp.py sweeps the bit patterns; the derivation of the
 * constants is in kernels/ufunc/tl_vexp_fit.py).
 *   x = n ln2 + r, n = rint(x / ln2), |r| <= ln2/2: n comes from adding
 *   1.5 * 2^23 (the sum's low mantissa bits are n, no rounding instruction
 *   needed); r by a two-constant Cody-Waite split of ln2 (LN2_HI has 9
 *   significant bits, so n * LN2_HI and x - n * LN2_HI are exact, with or
 *   without FMA contraction);
 *   e^r by a degree-6 minimax polynomial (relative error 3.1e-9) in Horner
 *   form;
 *   2^n as two factors 2^(n>>1) * 2^(n - (n>>1)) made from exponent bits,
 *   both normal for every n in [-150, 128], so results that are subnormal
 *   round once and results past FLT_MAX become inf by the multiplication.
 *   x is clamped below at -104 (e^x rounds to 0 there; -inf too), which
 *   keeps n in that range; above 88.7228317 (+inf too) the result is
 *   replaced by inf; NaN fails both comparisons and stays NaN through the
 *   arithmetic. With FMA (AVX2, AVX-512 variants) the polynomial is plain
 *   Horner; without it (baseline) the last step is arranged so that r's
 *   rounding error stays out of the sum: both 0.89 ulp worst case.
 *
 * tl_erff: within 2 ulp of erf over every float32 (same test).
 *   |x| < 1: x + x P(x^2), an odd minimax polynomial (degree 13, relative
 *   error 1.2e-9; the correction x P is what rounds, not x);
 *   1 <= |x| < 3.9375: 1 - Q(|x| - 2.46875), Q a degree-12 minimax
 *   polynomial for erfc on that interval (absolute error 2^-25);
 *   |x| >= 3.9375 (and +-inf): 1, erf(x) within half an ulp of 1. Both branches are computed and one is
 *   selected (vector code has no branches anyway); the sign is put back
 *   last, so erf(-0) = -0 and NaN stays NaN.
 */
#ifndef TL_VEXP_H
#define TL_VEXP_H

#include <stdint.h>

static inline float tl_vexp_bits_f(int32_t i) {
    float f;
    __builtin_memcpy(&f, &i, sizeof f);
    return f;
}

/* the shared part of e^x (tl_vexp_f, tl_vtanh.h): e^x = p 2^n, returns p
 * (in [0.7, 1.42]) and sets *ni = n; |x| <= 104 */
static inline float tl_vexp_p(float xc, int32_t *ni_out) {
    const float t = xc * 1.44269504088896341f + 0x1.8p23f;   /* 1.5 * 2^23 + rint(x / ln2) */
    const float n = t - 0x1.8p23f;
    const float rh = xc - n * 0x1.63p-1f, nl = n * -2.12194440054690583e-4f;   /* ln2 = 0x1.63p-1 + lo */
    const float r = rh - nl;
    float p = 1.38150574639439583e-3f;
    p = p * r + 8.36872588843107224e-3f;
    p = p * r + 4.16683815419673920e-2f;
    p = p * r + 1.66665211319923401e-1f;
    p = p * r + 4.99999940395355225e-1f;
#ifdef __FMA__
    /* fused: each step rounds once (0.89 ulp worst case) */
    p = p * r + 1.0f;
    p = p * r + 1.0f;
#else
    /* without FMA the Horner steps round twice (1.18 ulp); here the exact rh
     * is the linear term, so r's own rounding error stays out of the sum
     * (0.89 ulp) */
    p = 1.0f + (rh + ((r * r) * p - nl));
#endif
    int32_t ti;
    __builtin_memcpy(&ti, &t, sizeof ti);
    *ni_out = ti - 0x4b400000;   /* the bits of 1.5 * 2^23 */
    return p;
}

/* 2^n for n in [-126, 127] (-127: 0), from the exponent bits */
static inline float tl_vexp_pow2(int32_t n) { return tl_vexp_bits_f((int32_t)((uint32_t)(n + 127) << 23)); }

/* e^x, see above; ftz (a constant after inlining) 1: results below 2^-125
 * (x < ~-87.3) are 0, without subnormals, which cost a microcode assist per
 * vector (~13x; logsumexp, where such terms vanish next to the row
 * maximum's exp(0) = 1); 2: see tl_expf_sm */
static inline float tl_vexp_f(float x, int ftz) {
    /* below -104 e^x rounds to 0 (also -inf); NaN fails the comparison. The
     * upper end needs no clamp: x > 88.7228317 (where e^x rounds to inf;
     * also +inf) is replaced by inf at the end, whatever the arithmetic
     * made of it, and NaN stays NaN through the arithmetic */
    const float xc = x < -104.0f ? -104.0f : x;
    int32_t ni;
    const float p = tl_vexp_p(xc, &ni);
    const int32_t n1 = ni >> 1;
    /* a zero second factor (exponent field 0), so the product is exactly 0
     * and never a tiny value to round (a microcode assist per vector); the
     * first, 2^(n>>1) >= 2^-75, keeps p normal. ftz 1: results below
     * 2^-125; ftz 2: only x < -104 (-inf too), where e^x rounds to 0
     * anyway, so subnormal results stay (rounded once) */
    const int32_t n2 = (ftz == 1 && ni < -125) || (ftz == 2 && x < -104.0f) ? -127 : ni - n1;
    const float e = p * tl_vexp_pow2(n1) * tl_vexp_pow2(n2);
    return x > 88.7228317f ? __builtin_inff() : e;
}
static inline float tl_expf(float x) { return tl_vexp_f(x, 0); }
static inline float tl_expf_ftz(float x) { return tl_vexp_f(x, 1); }
/* softmax / attention: e^x with PyTorch's subnormal results, and exactly 0
 * without an assist for masked (-inf) and far-underflowed (x < -104) lanes;
 * on other inputs the same instructions as tl_expf_ftz */
static inline float tl_expf_sm(float x) { return tl_vexp_f(x, 2); }

/* erf(x), see above. Both polynomials in Estrin's form (short Horner chains
 * joined by powers of the variable), not one Horner chain: the loops that
 * use erf (erf, gelu, gelu_backward) were bound by the chain's latency
 * (13 dependent FMAs) more than by the instruction count (1.19x in L1) */
static inline float tl_erff(float x) {
    const float a = __builtin_fabsf(x), u = a * a, u2 = u * u, u4 = u2 * u2;
    /* |x| < 1: a + a (c0 - 1 + c1 u + ... + c6 u^6) */
    const float s0 = (-3.76126259565353394e-01f * u + 1.28379166126251221e-01f) +
                     u2 * (-2.68538128584623337e-02f * u + 1.12835854291915894e-01f);
    const float s1 = (-8.01019370555877686e-04f * u + 5.18832774832844734e-03f) + u2 * 7.85386073403060436e-05f;
    const float small = a + a * (s0 + u4 * s1);
    /* 1 <= |x| < 3.9375: 1 - erfc(|x|), erfc as a polynomial in |x| - 2.46875 */
    const float t = a - 2.46875f, t4 = (t * t) * (t * t);
    float q0 = -9.49149858206510544e-03f;
    q0 = q0 * t + 6.28216378390789032e-03f;
    q0 = q0 * t + -2.54404917359352112e-03f;
    q0 = q0 * t + 4.80578659335151315e-04f;
    float q1 = -4.88744000904262066e-04f;
    q1 = q1 * t + 2.93455040082335472e-03f;
    q1 = q1 * t + -6.64280634373426437e-03f;
    q1 = q1 * t + 9.61074698716402054e-03f;
    float q2 = 9.11158349481411278e-06f;
    q2 = q2 * t + -2.44647744693793356e-05f;
    q2 = q2 * t + -5.39896209375001490e-05f;
    q2 = q2 * t + 2.97061837045475841e-04f;
    q2 = q2 * t + -3.67725675459951162e-04f;
    const float q = q0 + t4 * (q1 + t4 * q2);
    /* NaN takes the middle branch (both comparisons false) and stays NaN */
    const float e = a < 1.0f ? small : a >= 3.9375f ? 1.0f : 1.0f - q;
    return __builtin_copysignf(e, x);
}

#endif
