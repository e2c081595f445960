/* cos: cosine */
#include "tl_umath.h"
#define TL_UFUNC_cos(self) (TL_UMATH(cos, self))
