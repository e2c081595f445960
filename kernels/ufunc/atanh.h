/* atanh: float-valued, integers compute in the default float dtype */
#include "tl_umath.h"
#define TL_UFUNC_atanh(self) (TL_UMATH(atanh, self))
