/* gelu(approximate='tanh'): 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))).
 *
 * ufunc_inner_loop: Generic: gelu_tanh (Floating, BFloat16, Half)
 */
#include "tl_umath.h"
#define TL_UFUNC_gelu_tanh(self)                                                                       \
    (0.5f * (self) *                                                                                   \
     (1 + TL_UMATH(tanh, TL_UCONST(self, M_SQRT2 * M_2_SQRTPI * 0.5) *                                 \
                             ((self) + TL_UCONST(self, 0.044715) * (self) * (self) * (self)))))
