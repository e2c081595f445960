/* erf: error function (float, AVX-512 loops: tl_vexp.h's tl_erff) */
#include "tl_umath.h"
#define TL_UFUNC_erf(self) (TL_UERF(self))
