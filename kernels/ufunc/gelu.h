/* gelu (gelu.out, approximate='none' and 'tanh'): standalone kernels, since the
 * str argument picks the formula (tl_impl_gelu_out_cpu, kernels/native/activation.c).
 *
 * ufunc_inner_loop: Generic: gelu (Floating, BFloat16, Half)
 *
 * x * Phi(x) = 0.5 * x * (1 + erf(x / sqrt(2))). float64 calls erf; float
 * loops (float32/16/bf16) use the Abramowitz & Stegun 7.1.26 rational form of
 * erf (|error| < 1.5e-7, with expf from libmvec), the approximation PyTorch's
 * own vectorized float gelu uses: libmvec's erff is ~1.7x slower here and
 * would leave gelu behind torch's.
 */
#include "tl_umath.h"

static inline float tl_gelu_erf_f(float x) {
    const float t = 1.0f / (1.0f + 0.3275911f * fabsf(x));
    const float r = (((1.061405429f * t - 1.453152027f) * t + 1.421413741f) * t - 0.284496736f) * t + 0.254829592f;
    return copysignf(1.0f - r * t * expf(-x * x), x);
}
#define TL__GELU_ERF(x) _Generic((x), double: erf, default: tl_gelu_erf_f)(x)
#define TL_UFUNC_gelu(self) ((self) * 0.5f * (1 + TL__GELU_ERF((self) * TL_UCONST(self, M_SQRT1_2))))
