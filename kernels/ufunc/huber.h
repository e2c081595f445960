/* huber_loss's elementwise term, PyTorch's huber_kernel: with z = |x - y|,
 * 0.5 z^2 below delta, delta * (z - 0.5 delta) from it on.
 *
 * ufunc_inner_loop: Generic: huber (Floating, BFloat16, Half)
 * ufunc_scalar_args: delta
 * ufunc_error_name: huber_cpu
 */
#include "tl_umath.h"
#define TL__HUB_Z(x, y) TL_UMATH(fabs, (x) - (y))
#define TL_UFUNC_huber(self, target, delta)                                                            \
    (TL__HUB_Z(self, target) < (delta) ? (float)0.5 * TL__HUB_Z(self, target) * TL__HUB_Z(self, target)      \
                                        : (delta) * (TL__HUB_Z(self, target) - (float)0.5 * (delta)))
