/* digamma: psi(self) = Gamma'(self) / Gamma(self) (tl_special.h): -inf / +inf
 * at +0 / -0, NaN at the negative integers. float32 / float16 / bfloat16: a
 * vectorized form for 0 < x < inf, the general one for the rest.
 * ufunc_fallback: digamma -> digamma_exact if digamma_slow
 */
#include "tl_special.h"
#define TL_UFUNC_digamma(self) (_Generic((self), double: tl_special_digamma, default: tl_special_digammaf_pos)(self))
#define TL_UFUNC_digamma_exact(self) (TL_USPECIAL(digamma, self))
#define TL_UFUNC_digamma_slow(self) (_Generic((self), double: 0, default: !((self) > 0 && (self) < INFINITY)))
