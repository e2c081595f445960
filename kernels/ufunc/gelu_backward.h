/* gelu_backward(approximate='none'): grad * (Phi(x) + x * phi(x)), with
 * Phi(x) = 0.5 * (1 + erf(x/sqrt(2))) and phi(x) = exp(-x^2/2) / sqrt(2*pi)
 * (float, AVX-512 loops: tl_vexp.h's erf and exp).
 *
 * ufunc_inner_loop: Generic: gelu_backward (Floating, BFloat16, Half)
 */
#include "tl_umath.h"
#define TL_UFUNC_gelu_backward(grad_output, self)                                                      \
    ((grad_output) * (0.5f * (1 + TL_UERF((self) * TL_UCONST(self, M_SQRT1_2))) +                     \
                      (self) * TL_UCONST(self, M_2_SQRTPI * M_SQRT1_2 * 0.5) *                         \
                          TL_UEXP(-0.5f * (self) * (self))))
