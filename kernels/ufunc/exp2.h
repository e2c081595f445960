/* exp2: 2^self */
#include "tl_umath.h"
#define TL_UFUNC_exp2(self) (TL_UMATH(exp2, self))
