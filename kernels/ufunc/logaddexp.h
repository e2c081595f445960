/* logaddexp: log(e^self + e^other) = max + log1p(e^-|self - other|); equal
 * infinities return themselves (inf - inf would be NaN). Floating loops only:
 * "logaddexp_cpu" not implemented for integers, as PyTorch.
 * ufunc_error_name: logaddexp_cpu
 */
#include "tl_umath.h"
#define TL_UFUNC_logaddexp(self, other)                                                        \
    ((isinf(self) && (self) == (other))                                             \
         ? (self)                                                                               \
         : ((self) > (other) ? (self) : (other)) +                                                   \
               TL_UMATH(log1p, TL_UMATH(exp, -TL_UMATH(fabs, (self) - (other)))))
