/* frac: self - trunc(self) (floats only) */
#include "tl_umath.h"
#define TL_UFUNC_frac(self) ((self) - TL_UMATH(trunc, self))
