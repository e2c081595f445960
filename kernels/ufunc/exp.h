/* exp: e^self. float: tl_vexp.h's tl_expf in every ISA's
 * loop (<= 0.89 ulp; libmvec's SSE / AVX2 expf is up to 2.6 ulp off and not
 * even exact at 1, for 3-8% less time on ordinary data; ~20x faster on -inf /
 * overflowing / underflowing lanes). double: libm's exp. */
#include "tl_umath.h"
#define TL_UFUNC_exp(self) (_Generic((self), float: tl_expf, default: exp)(self))
