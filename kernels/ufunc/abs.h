/* abs: |self|; floats through fabs (clears the sign of -0.0 and NaN) */
#include "tl_umath.h"
#define TL_UFUNC_abs(self) (TL_UMATH_INT(fabs, self, (self) > 0 ? (self) : -(self)))
