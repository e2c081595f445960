/* tanh (unary math slice): hyperbolic tangent */
#include "tl_umath.h"
#define TL_UFUNC_tanh(self) (TL_UMATH(tanh, self))
