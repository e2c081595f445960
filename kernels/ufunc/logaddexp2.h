/* logaddexp2: log2(2^self + 2^other) = max + log1p(2^-|self - other|) / ln 2;
 * equal infinities return themselves.
 * ufunc_error_name: logaddexp2_cpu
 */
#include "tl_umath.h"
#define TL_UFUNC_logaddexp2(self, other)                                                       \
    ((isinf(self) && (self) == (other))                                             \
         ? (self)                                                                               \
         : ((self) > (other) ? (self) : (other)) +                                                   \
               TL_UMATH(log1p, TL_UMATH(exp2, -TL_UMATH(fabs, (self) - (other)))) *             \
                   TL_UCONST(self, 1.44269504088896340735992468100189214))
