/* softplus_backward (softplus_backward.grad_input): grad * z / (z + 1) with
 * z = exp(beta * x) (the sigmoid of beta * x); grad itself in the linear regime. */
#include "tl_umath.h"
#define TL_UFUNC_softplus_backward(grad_output, self, beta, threshold)                                 \
    ((self) * (beta) > (threshold)                                                                     \
         ? (grad_output)                                                                               \
         : (grad_output) * TL_UMATH(exp, (self) * (beta)) / (TL_UMATH(exp, (self) * (beta)) + 1))
