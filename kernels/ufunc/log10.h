/* log10: base-10 log */
#include "tl_umath.h"
#define TL_UFUNC_log10(self) (TL_UMATH(log10, self))
