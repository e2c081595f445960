/* polygamma(n, self): the n-th derivative of digamma (tl_special.h); n >= 0
 * is checked by the meta function, n reaches the formula as a number */
#include "tl_special.h"
#define TL_UFUNC_polygamma(self, n) (TL_USPECIAL2(polygamma, n, self))
