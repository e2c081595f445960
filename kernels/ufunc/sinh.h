/* sinh: float-valued, integers compute in the default float dtype */
#include "tl_umath.h"
#define TL_UFUNC_sinh(self) (TL_UMATH(sinh, self))
