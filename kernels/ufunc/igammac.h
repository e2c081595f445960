/* igammac(a, x): the regularized incomplete gamma function Q(a, x) = 1 - P(a, x)
 * (tl_special_fns.h), in double
 * ufunc_error_name: igammac_cpu
 */
#include "tl_special_fns.h"
#define TL_UFUNC_igammac(self, other) (TL_USPECIAL2(igammac, self, other))
