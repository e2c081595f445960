/* acos: float-valued, integers compute in the default float dtype */
#include "tl_umath.h"
#define TL_UFUNC_acos(self) (TL_UMATH(acos, self))
