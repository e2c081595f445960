/* binary_cross_entropy's elementwise term, PyTorch's CPU loop:
 * (y - 1) * max(log1p(-x), -100) - y * max(log(x), -100) (the logs clamped
 * so that x = 0 or 1 gives a finite loss).
 *
 * ufunc_inner_loop: Generic: binary_cross_entropy (Floating, BFloat16, Half)
 * ufunc_error_name: binary_cross_entropy
 */
#include "tl_umath.h"
#define TL__BCE_CL(v) ((v) < -100 ? -100 : (v))
#define TL_UFUNC_binary_cross_entropy(self, target)                                                    \
    (((target) - 1) * TL__BCE_CL(TL_UMATH(log1p, -(self))) - (target) * TL__BCE_CL(TL_UMATH(log, self)))
