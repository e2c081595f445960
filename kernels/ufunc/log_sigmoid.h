/* log_sigmoid_forward's output, PyTorch's CPU log_sigmoid kernel:
 * min(x, 0) - log1p(exp(-|x|)) (no overflow for either sign).
 *
 * ufunc_inner_loop: Generic: log_sigmoid (Floating, BFloat16, Half)
 * ufunc_error_name: log_sigmoid_cpu
 */
#include "tl_umath.h"
#define TL_UFUNC_log_sigmoid(self)                                                                     \
    (((self) < 0 ? (self) : 0) - TL_UMATH(log1p, TL_UEXP(-TL_UMATH(fabs, self))))
