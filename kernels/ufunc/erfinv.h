/* erfinv: the inverse error function on [-1, 1] (tl_special.h); +-inf at
 * +-1, NaN outside */
#include "tl_special.h"
#define TL_UFUNC_erfinv(self) (TL_USPECIAL(erfinv, self))
