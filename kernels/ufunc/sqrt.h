/* sqrt: square root */
#include "tl_umath.h"
#define TL_UFUNC_sqrt(self) (TL_UMATH(sqrt, self))
