/* sgn: for the real dtypes (torchlet has no complex ones) PyTorch's sgn is
 * sign: -1, 0 or 1, NaN gives 0, bool is itself */
#include "tl_umath.h"
#define TL_UFUNC_sgn(self) (TL_UMATH_SIGN(self))
