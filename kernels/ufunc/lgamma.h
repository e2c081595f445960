/* lgamma: log |Gamma(self)| (tl_special.h). float32 / float16 / bfloat16:
 * a vectorized Lanczos formula for 0 < x < inf, libm's reentrant lgammaf_r
 * for the rest (poles, negative arguments, inf, NaN); float64: lgamma_r.
 * ufunc_fallback: lgamma -> lgamma_exact if lgamma_slow
 */
#include "tl_special.h"
#define TL_UFUNC_lgamma(self) (_Generic((self), double: tl_special_lgamma, default: tl_special_lgammaf_pos)(self))
#define TL_UFUNC_lgamma_exact(self) (_Generic((self), double: tl_special_lgamma, default: tl_special_lgammaf)(self))
#define TL_UFUNC_lgamma_slow(self) (_Generic((self), double: 0, default: !((self) > 0 && (self) < INFINITY)))
