/* atan: float-valued, integers compute in the default float dtype */
#include "tl_umath.h"
#define TL_UFUNC_atan(self) (TL_UMATH(atan, self))
