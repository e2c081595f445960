/* erfc: complementary error function */
#include "tl_umath.h"
#define TL_UFUNC_erfc(self) (TL_UMATH(erfc, self))
