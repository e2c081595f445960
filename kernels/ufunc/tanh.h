/* tanh: hyperbolic tangent (float, AVX2 loops: tl_vtanh.h's) */
#include "tl_umath.h"
#define TL_UFUNC_tanh(self) (TL_UTANH(self))
