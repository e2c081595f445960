/* reciprocal: 1 / self (floats only: integers are promoted by the meta function) */
#include "tl_umath.h"
#define TL_UFUNC_reciprocal(self) (1 / (self))
