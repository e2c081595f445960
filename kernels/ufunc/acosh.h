/* acosh: float-valued, integers compute in the default float dtype */
#include "tl_umath.h"
#define TL_UFUNC_acosh(self) (TL_UMATH(acosh, self))
