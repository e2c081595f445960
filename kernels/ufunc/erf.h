/* erf (unary math slice): error function */
#include "tl_umath.h"
#define TL_UFUNC_erf(self) (TL_UMATH(erf, self))
