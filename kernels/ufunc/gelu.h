/* gelu (gelu.out, approximate='none' and 'tanh'): standalone kernels, since the
 * str argument picks the formula (tl_impl_gelu_out_cpu, kernels/native/activation.c).
 *
 * ufunc_inner_loop: Generic: gelu (Floating, BFloat16, Half)
 *
 * x * Phi(x) = 0.5 * x * (1 + erf(x / sqrt(2))), PyTorch's formula; float64
 * calls libm's erf. float loops (float32/16/bf16): in the AVX-512 variant
 * tl_vexp.h's in-house erf (within 2 ulp, inlined: 1.2x the form below);
 * in the baseline / AVX2 variants the Abramowitz & Stegun 7.1.26 rational
 * form of erf (|error| < 1.5e-7, with libmvec's expf), the approximation
 * PyTorch's own vectorized float gelu uses, which is faster there than
 * either the in-house erf or libmvec's erff.
 */
#include "tl_umath.h"

#if defined(__AVX512F__)
#define TL__GELU_ERF(x) TL_UERF(x)
#else
static inline float tl_gelu_erf_f(float x) {
    const float t = 1.0f / (1.0f + 0.3275911f * fabsf(x));
    const float r = (((1.061405429f * t - 1.453152027f) * t + 1.421413741f) * t - 0.284496736f) * t + 0.254829592f;
    return copysignf(1.0f - r * t * expf(-x * x), x);
}
#define TL__GELU_ERF(x) _Generic((x), double: erf, default: tl_gelu_erf_f)(x)
#endif
#define TL_UFUNC_gelu(self) ((self) * 0.5f * (1 + TL__GELU_ERF((self) * TL_UCONST(self, M_SQRT1_2))))
