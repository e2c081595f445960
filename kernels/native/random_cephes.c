/* The single-precision log and sin/cos PyTorch's AVX2 / AVX-512 kernels use
 * for randn's Box-Muller (ATen/native/cpu/avx_mathfun.h: Julien Pommier's
 * port of the cephes polynomials), as one scalar lane: every vector
 * operation there is one IEEE single-precision operation here, in the same
 * order, so the results are bit-identical and torchlet.randn draws PyTorch's
 * numbers on the CPUs where PyTorch runs those kernels (random_draws.h).
 * PyTorch's build compiles those intrinsics with -mfma and GCC's default
 * -ffp-contract=fast, which fuses each multiply into the add or subtract it
 * feeds (the earlier multiply when both operands are products): those
 * fusions are written out as fmaf() here, and nothing else may be
 * contracted. Checked bit for bit against torch.randn on 2^20 draws. */
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "random_draws.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define TL_CEPHES_TARGET __attribute__((target("avx2,fma")))
#else
#define TL_CEPHES_TARGET
#endif
#define TL_CEPHES_LANE static inline __attribute__((always_inline)) TL_CEPHES_TARGET

/* The lanes are only computed at capability avx2 / avx512 (random_draws.h),
 * so they are compiled for AVX2 + FMA: fmaf() becomes one instruction. */

TL_CEPHES_LANE uint32_t bits_of(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
TL_CEPHES_LANE float float_of(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* log256_ps */
TL_CEPHES_LANE float cephes_logf(float x) {
    const int invalid = x <= 0.0f;
    const float min_norm_pos = float_of(0x00800000u);
    if (x < min_norm_pos) x = min_norm_pos; /* _mm256_max_ps */
    int32_t imm0 = (int32_t)(bits_of(x) >> 23);
    x = float_of((bits_of(x) & ~0x7f800000u) | bits_of(0.5f));
    imm0 -= 0x7f;
    float e = (float)imm0;
    e = e + 1.0f;
    const int mask = x < (float)0.707106781186547524;
    const float tmp0 = mask ? x : 0.0f;
    x = x - 1.0f;
    e = e - (mask ? 1.0f : 0.0f);
    x = x + tmp0;
    const float z = x * x;
    float y = (float)7.0376836292E-2;
    y = fmaf(y, x, (float)-1.1514610310E-1);
    y = fmaf(y, x, (float)1.1676998740E-1);
    y = fmaf(y, x, (float)-1.2420140846E-1);
    y = fmaf(y, x, (float)1.4249322787E-1);
    y = fmaf(y, x, (float)-1.6668057665E-1);
    y = fmaf(y, x, (float)2.0000714765E-1);
    y = fmaf(y, x, (float)-2.4999993993E-1);
    y = fmaf(y, x, (float)3.3333331174E-1);
    y = y * x;
    y = fmaf(y, z, e * (float)-2.12194440e-4);
    y = fmaf(-z, 0.5f, y);
    x = x + y;
    x = fmaf(e, (float)0.693359375, x);
    return invalid ? float_of(0xffffffffu) : x;
}

/* sincos256_ps */
TL_CEPHES_LANE void cephes_sincosf(float x, float *s, float *c) {
    uint32_t sign_bit_sin = bits_of(x) & 0x80000000u;
    x = float_of(bits_of(x) & 0x7fffffffu);
    float y = x * (float)1.27323954473516;
    int32_t imm2 = (int32_t)y; /* cvttps: truncation */
    imm2 = (imm2 + 1) & ~1;
    y = (float)imm2;
    int32_t imm4 = imm2;
    const uint32_t swap_sign_bit_sin = (uint32_t)(imm2 & 4) << 29;
    const int poly_mask = (imm2 & 2) == 0;
    x = fmaf(y, (float)-0.78515625, x);
    x = fmaf(y, (float)-2.4187564849853515625e-4, x);
    x = fmaf(y, (float)-3.77489497744594108e-8, x);
    imm4 = imm4 - 2;
    imm4 = ~imm4 & 4;
    const uint32_t sign_bit_cos = (uint32_t)imm4 << 29;
    sign_bit_sin ^= swap_sign_bit_sin;
    const float z = x * x;
    y = (float)2.443315711809948E-005;
    y = fmaf(y, z, (float)-1.388731625493765E-003);
    y = fmaf(y, z, (float)4.166664568298827E-002);
    y = y * z;
    y = fmaf(y, z, -(z * 0.5f));
    y = y + 1.0f;
    float y2 = (float)-1.9515295891E-4;
    y2 = fmaf(y2, z, (float)8.3321608736E-3);
    y2 = fmaf(y2, z, (float)-1.6666654611E-1);
    y2 = y2 * z;
    y2 = fmaf(y2, x, x);
    const float ysin2 = poly_mask ? y2 : 0.0f, ysin1 = poly_mask ? 0.0f : y;
    y2 = y2 - ysin2;
    y = y - ysin1;
    const float r1 = ysin1 + ysin2, r2 = y + y2;
    *s = float_of(bits_of(r1) ^ sign_bit_sin);
    *c = float_of(bits_of(r2) ^ sign_bit_cos);
}

TL_CEPHES_TARGET void tl__cephes_logf_sincosf(const float *u1, const float *theta, float *log_u1, float *sin_t,
                                              float *cos_t) {
#pragma omp simd
    for (int j = 0; j < 8; j++) {   /* the 8 lanes in one pass: vector instructions, the same IEEE results */
        log_u1[j] = cephes_logf(u1[j]);
        cephes_sincosf(theta[j], &sin_t[j], &cos_t[j]);
    }
}
