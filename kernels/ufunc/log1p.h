/* log1p: log(1 + self) */
#include "tl_umath.h"
#define TL_UFUNC_log1p(self) (TL_UMATH(log1p, self))
