/* log_sigmoid_backward, PyTorch's CPU kernel: with z = exp(-|x|),
 * grad * (1 - z / (1 + z)) for x < 0 and grad * z / (1 + z) otherwise
 * (the buffer argument is unused on CPU, as in PyTorch).
 *
 * ufunc_inner_loop: Generic: log_sigmoid_backward (Floating, BFloat16, Half)
 * ufunc_error_name: log_sigmoid_backward_cpu
 */
#include "tl_umath.h"
#define TL__LSB_Q(x) (TL_UEXP(-TL_UMATH(fabs, x)) / (1 + TL_UEXP(-TL_UMATH(fabs, x))))
#define TL_UFUNC_log_sigmoid_backward(grad_output, self)                                               \
    ((grad_output) * ((self) < 0 ? 1 - TL__LSB_Q(self) : TL__LSB_Q(self)))
