/* log: natural log */
#include "tl_umath.h"
#define TL_UFUNC_log(self) (TL_UMATH(log, self))
