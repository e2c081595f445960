/* log10 (unary math slice): base-10 log */
#include "tl_umath.h"
#define TL_UFUNC_log10(self) (TL_UMATH(log10, self))
