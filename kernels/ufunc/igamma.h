/* igamma(a, x): the regularized incomplete gamma function P(a, x)
 * (tl_special_fns.h), in double
 * ufunc_error_name: igamma_cpu
 */
#include "tl_special_fns.h"
#define TL_UFUNC_igamma(self, other) (TL_USPECIAL2(igamma, self, other))
