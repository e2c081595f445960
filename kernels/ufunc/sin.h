/* sin: sine */
#include "tl_umath.h"
#define TL_UFUNC_sin(self) (TL_UMATH(sin, self))
