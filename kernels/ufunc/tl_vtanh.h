/* In-house float32 tanh, written for the compiler to vectorize (as
 * tl_vexp.h's exp and erf): no call, no scalar slow path for special lanes.
 * One user: tanh's float AVX2 loops (TL_UTANH, tl_umath.h), where it is
 * 1.2-1.3x libmvec's tanhf; the AVX-512 loops keep libmvec's (faster there),
 * the baseline libm's tanhf, float64 libm's tanh. gelu(approximate='tanh'),
 * its backward and mish need no tanh: closed forms over one exp.
 *
 * tl_tanhf: within 2 ulp of tanh over every float32 (tests/ops/
 * test_vmath_accuracy.py; the exhaustive sweep of all 2^32 patterns is
 * described there; the constants come from kernels/ufunc/tl_vexp_fit.py).
 *   |x| < 0.5493 (tanh < 1/2): |x| + |x| u P(u), u = x^2, P a degree-4
 *   minimax polynomial (relative error of tanh 1.0e-9; 0.76 ulp worst
 *   case); the correction is what rounds, not |x|;
 *   |x| >= 0.5493: 1 - 2 / (e^(2|x|) + 1), e^(2|x|) from tl_vexp.h's
 *   reduction and polynomial (2|x| clamped at 20, where the result rounds to
 *   1 already; n <= 29, so one exponent factor). 2 / (e + 1) <= 1/2, so the
 *   subtraction halves its relative error instead of magnifying it (1.56
 *   ulp worst case, at 0.5562, the worst over all float32).
 * Both are computed and one selected; the sign goes back last, so tanh(-0)
 * = -0, +-inf give +-1 and NaN stays NaN (it takes the second branch:
 * comparisons with NaN are false, and the clamp keeps it).
 */
#ifndef TL_VTANH_H
#define TL_VTANH_H

#include "tl_vexp.h"

static inline float tl_tanhf(float x) {
    const float a = __builtin_fabsf(x), u = a * a;
    float s = -6.27951743081212044e-03f;
    s = s * u + 2.10751835256814957e-02f;
    s = s * u + -5.38531020283699036e-02f;
    s = s * u + 1.33325934410095215e-01f;
    s = s * u + -3.33333164453506470e-01f;
    const float small = a + a * (u * s);
    const float t = 2.0f * a > 20.0f ? 20.0f : 2.0f * a;   /* NaN stays NaN */
    int32_t n;
    const float e = tl_vexp_p(t, &n) * tl_vexp_pow2(n);
    const float large = 1.0f - 2.0f / (e + 1.0f);
    return __builtin_copysignf(a < 0.5493f ? small : large, x);
}

#endif
