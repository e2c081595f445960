/* erfinv: the inverse error function on [-1, 1] (tl_special.h); +-inf at
 * +-1, NaN outside */
#include "tl_special.h"
#define TL_UFUNC_erfinv(self) (_Generic((self), double: tl_special_erfinv, default: tl_special_erfinvf)(self))
