/* soft_margin_loss_backward: -norm * y * z / (1 + z) * grad with
 * z = exp(-y * x) (PyTorch's soft_margin_loss_backward_out).
 *
 * ufunc_inner_loop: Generic: soft_margin_backward (Floating, BFloat16, Half)
 * ufunc_scalar_args: norm
 * ufunc_error_name: soft_margin_backward_cpu
 */
#include "tl_umath.h"
#define TL__SMB_Z(x, y) TL_UEXP(-(y) * (x))
#define TL_UFUNC_soft_margin_backward(self, target, grad_output, norm)                                 \
    (-(norm) * (target) * TL__SMB_Z(self, target) / (1 + TL__SMB_Z(self, target)) * (grad_output))
