/* special_i1: the modified Bessel function of the first kind, order 1
 * (tl_special.h); float loops as i0's.
 * ufunc_fallback: special_i1 -> special_i1_exact if special_i1_slow
 */
#include "tl_special.h"
#define TL_UFUNC_special_i1(self) (_Generic((self), double: tl_special_i1, default: tl_special_i1f_finite)(self))
#define TL_UFUNC_special_i1_exact(self) (TL_USPECIAL(i1, self))
#define TL_UFUNC_special_i1_slow(self) (_Generic((self), double: 0, default: !((self) - (self) == 0)))   /* inf - inf, NaN: NaN */
