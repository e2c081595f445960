/* gelu (gelu.out, approximate='none' and 'tanh'): standalone kernels, since the
 * str argument picks the formula (tl_impl_gelu_out_cpu, kernels/native/activation.c).
 *
 * ufunc_inner_loop: Generic: gelu (Floating, BFloat16, Half)
 *
 * x * Phi(x) = 0.5 * x * (1 + erf(x / sqrt(2))), PyTorch's formula. float
 * loops (float32/16/bf16) take tl_vexp.h's in-house erf (within 2 ulp,
 * inlined into the loop); float64 calls libm's erf. (Before: the Abramowitz
 * & Stegun 7.1.26 form PyTorch's vectorized gelu uses, |error| < 1.5e-7,
 * with libmvec's expf.)
 */
#include "tl_umath.h"

#define TL_UFUNC_gelu(self) ((self) * 0.5f * (1 + TL_UERF((self) * TL_UCONST(self, M_SQRT1_2))))
