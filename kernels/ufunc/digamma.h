/* digamma: psi(self) = Gamma'(self) / Gamma(self) (tl_special.h): -inf / +inf
 * at +0 / -0, NaN at the negative integers */
#include "tl_special.h"
#define TL_UFUNC_digamma(self) (TL_USPECIAL(digamma, self))
