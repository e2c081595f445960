/* asinh: float-valued, integers compute in the default float dtype */
#include "tl_umath.h"
#define TL_UFUNC_asinh(self) (TL_UMATH(asinh, self))
