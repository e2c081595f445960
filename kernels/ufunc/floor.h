/* floor: identity on integers */
#include "tl_umath.h"
#define TL_UFUNC_floor(self) (TL_UMATH_INT(floor, self, self))
