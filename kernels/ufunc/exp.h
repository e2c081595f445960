/* exp (unary math slice): e^self (float: tl_vexp.h's tl_expf) */
#include "tl_umath.h"
#define TL_UFUNC_exp(self) (TL_UEXP(self))
