/* trunc: identity on integers */
#include "tl_umath.h"
#define TL_UFUNC_trunc(self) (TL_UMATH_INT(trunc, self, self))
