/* sinc: sin(pi self) / (pi self), 1 at 0; the product pi * self in the
 * compute type, as PyTorch's kernel (tl_special.h) */
#include "tl_special.h"
#define TL_UFUNC_sinc(self) (_Generic((self), double: tl_special_sinc, default: tl_special_sincf)(self))
