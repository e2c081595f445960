/* gelu (gelu.out, approximate='none' and 'tanh'): standalone kernels, since the
 * str argument picks the formula (tl_impl_gelu_out_cpu, kernels/native/activation.c).
 *
 * ufunc_inner_loop: Generic: gelu (Floating, BFloat16, Half)
 *
 * x * Phi(x) = 0.5 * x * (1 + erf(x / sqrt(2))); erf vectorizes through libmvec.
 */
#include "tl_umath.h"
#define TL_UFUNC_gelu(self) ((self) * 0.5f * (1 + TL_UMATH(erf, (self) * TL_UCONST(self, M_SQRT1_2))))
