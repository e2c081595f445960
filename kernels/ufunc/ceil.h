/* ceil: identity on integers */
#include "tl_umath.h"
#define TL_UFUNC_ceil(self) (TL_UMATH_INT(ceil, self, self))
