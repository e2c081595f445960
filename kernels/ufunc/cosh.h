/* cosh: float-valued, integers compute in the default float dtype */
#include "tl_umath.h"
#define TL_UFUNC_cosh(self) (TL_UMATH(cosh, self))
