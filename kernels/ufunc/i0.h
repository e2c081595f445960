/* i0: the modified Bessel function of the first kind, order 0 (tl_special.h) */
#include "tl_special.h"
#define TL_UFUNC_i0(self) (TL_USPECIAL(i0, self))
