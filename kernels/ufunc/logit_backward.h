/* logit_backward(grad_output, self, eps), PyTorch's logit_backward kernel:
 * grad_output / (self * (1 - self)) inside [lo, hi]; outside it 0 when eps
 * was given (nan_out = 0), NaN without eps (lo = 0, hi = 1, nan_out = 1).
 * `+ 0` turns the -0 of self = -0.0 into +0, so grad / 0 has grad's sign like
 * PyTorch's dy / kZero.
 *
 * ufunc_inner_loop: Generic: logit_backward (Floating, BFloat16, Half)
 * ufunc_scalar_args: lo, hi, nan_out
 */
#include <math.h>
#define TL_UFUNC_logit_backward(grad_output, self, lo, hi, nan_out)                           \
    (((self) < (lo) || (self) > (hi)) ? ((nan_out) ? NAN : 0) \
                                      : (grad_output) / ((self) * (1 - (self)) + 0))
