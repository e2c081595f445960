/* i0: the modified Bessel function of the first kind, order 0 (tl_special.h).
 * float32 / float16 / bfloat16: a vectorized form for finite x, the general
 * one for +-inf and NaN.
 * ufunc_fallback: i0 -> i0_exact if i0_slow
 */
#include "tl_special.h"
#define TL_UFUNC_i0(self) (_Generic((self), double: tl_special_i0, default: tl_special_i0f_finite)(self))
#define TL_UFUNC_i0_exact(self) (TL_USPECIAL(i0, self))
#define TL_UFUNC_i0_slow(self) (_Generic((self), double: 0, default: !((self) - (self) == 0)))   /* inf - inf, NaN: NaN */
