/* asin: float-valued, integers compute in the default float dtype */
#include "tl_umath.h"
#define TL_UFUNC_asin(self) (TL_UMATH(asin, self))
