/* tan: tangent */
#include "tl_umath.h"
#define TL_UFUNC_tan(self) (TL_UMATH(tan, self))
