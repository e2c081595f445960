/* soft_margin_loss's elementwise term: log1p(exp(-y * x)) (PyTorch's
 * composite at::log1p(at::exp(-input * target))).
 *
 * ufunc_inner_loop: Generic: soft_margin (Floating, BFloat16, Half)
 * ufunc_error_name: soft_margin_cpu
 */
#include "tl_umath.h"
#define TL_UFUNC_soft_margin(self, target) TL_UMATH(log1p, TL_UEXP(-(self) * (target)))
