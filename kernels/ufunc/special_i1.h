/* special_i1: the modified Bessel function of the first kind, order 1 (tl_special.h) */
#include "tl_special.h"
#define TL_UFUNC_special_i1(self) (TL_USPECIAL(i1, self))
