/* log2: base-2 log */
#include "tl_umath.h"
#define TL_UFUNC_log2(self) (TL_UMATH(log2, self))
