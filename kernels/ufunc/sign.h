/* sign: -1, 0 or 1; NaN gives 0 like PyTorch; bool is itself */
#include "tl_umath.h"
#define TL_UFUNC_sign(self) (TL_UMATH_SIGN(self))
