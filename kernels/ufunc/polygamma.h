/* polygamma(n, self): the n-th derivative of digamma (tl_special.h); n >= 0
 * is checked by the meta function, n reaches the formula as a number;
 * trigamma's poles take PyTorch's values (tl_special.h) */
#include "tl_special.h"
#define TL_UFUNC_polygamma(self, n)                                              \
    ((n) == 1 && (self) <= 0 && (self) == floor(self) ? TL_SPECIAL_TRIGAMMA_POLE(self) \
                                                      : TL_USPECIAL2(polygamma, n, self))
