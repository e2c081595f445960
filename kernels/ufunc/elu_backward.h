/* elu_backward (elu_backward.grad_input), PyTorch's formula: with is_result the
 * saved tensor is elu's output y (y <= 0: grad * input_scale * (y + alpha*scale)),
 * else the input x (x <= 0: grad * input_scale * alpha*scale * exp(x*input_scale));
 * positive side: grad * scale. */
#include "tl_umath.h"
#define TL_UFUNC_elu_backward(grad_output, self_or_result, alpha, scale, input_scale, is_result)         \
    ((self_or_result) <= 0                                                                             \
         ? (grad_output) * (input_scale) *                                                             \
               ((is_result) ? (self_or_result) + (alpha) * (scale)                                     \
                            : (alpha) * (scale) * TL_UMATH(exp, (self_or_result) * (input_scale)))     \
         : (grad_output) * (scale))
