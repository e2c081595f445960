/* expm1: e^self - 1 */
#include "tl_umath.h"
#define TL_UFUNC_expm1(self) (TL_UMATH(expm1, self))
