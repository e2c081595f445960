/* lgamma: log |Gamma(self)| (libm's reentrant lgammaf_r / lgamma_r, tl_special.h) */
#include "tl_special.h"
#define TL_UFUNC_lgamma(self) (_Generic((self), double: tl_special_lgamma, default: tl_special_lgammaf)(self))
