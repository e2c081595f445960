/* exp (unary math slice): e^self */
#include "tl_umath.h"
#define TL_UFUNC_exp(self) (TL_UMATH(exp, self))
