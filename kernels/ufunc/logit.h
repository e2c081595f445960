/* logit(self, eps) = log(z / (1 - z)), z = self clamped to [lo, hi]
 * (lo = eps, hi = 1 - eps; without eps lo = -inf, hi = +inf, so nothing is
 * clamped and NaN stays NaN). Standalone kernel: logit's `float? eps` cannot
 * reach a structured ufunc formula; kernels/native/pointwise_math.c builds the
 * unary float iterator and runs these loops.
 *
 * ufunc_inner_loop: Generic: logit (Floating, BFloat16, Half)
 * ufunc_scalar_args: lo, hi
 */
#include "tl_umath.h"
#define TL_UFUNC_logit(self, lo, hi) \
    (TL_UMATH(log, tl_ufunc_logit_z((self), (lo), (hi)) / (1 - tl_ufunc_logit_z((self), (lo), (hi)))))
#define tl_ufunc_logit_z(x, lo, hi) ((x) < (lo) ? (lo) : (x) > (hi) ? (hi) : (x))
