/* rsqrt: 1 / sqrt(self) */
#include "tl_umath.h"
#define TL_UFUNC_rsqrt(self) (1 / TL_UMATH(sqrt, self))
