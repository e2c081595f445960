/* smooth_l1_loss's elementwise term, PyTorch's smooth_l1_kernel: with
 * z = |x - y|, 0.5 z^2 / beta below beta, z - 0.5 beta from it on.
 *
 * ufunc_inner_loop: Generic: smooth_l1 (Floating, BFloat16, Half)
 * ufunc_scalar_args: beta
 * ufunc_error_name: smooth_l1_cpu
 */
#include "tl_umath.h"
#define TL__SL1_Z(x, y) TL_UMATH(fabs, (x) - (y))
#define TL_UFUNC_smooth_l1(self, target, beta)                                                         \
    (TL__SL1_Z(self, target) < (beta) ? (float)0.5 * TL__SL1_Z(self, target) * TL__SL1_Z(self, target) / (beta) \
                                       : TL__SL1_Z(self, target) - (float)0.5 * (beta))
