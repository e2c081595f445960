/* round.decimals_out with decimals != 0 (decimals == 0 runs round's loops), as
 * PyTorch's round_decimals_kernel, in the opmath type (float for float16 /
 * bfloat16): ten = 10^|decimals|; decimals > 0: rint(x * ten) / ten,
 * decimals < 0: rint(x / ten) * ten. Floats only ("round_cpu" is not
 * implemented for integers in PyTorch). decimals arrives converted to the
 * compute type and is the same for the whole call: GCC hoists the pow call and
 * unswitches the sign test. (ten is computed here, not passed in, because a
 * scalar argument must fit the tensor's dtype: 10^5 does not fit float16.)
 *
 * ufunc_inner_loop: Generic: round_decimals (Floating, BFloat16, Half)
 * ufunc_scalar_args: decimals
 */
#include "tl_umath.h"
/* 10^|d| in d's type (float or double) */
#define TL__TEN_POW(d) TL_UMATH2(pow, (d) * 0 + 10, (d) < 0 ? -(d) : (d))
#define TL_UFUNC_round_decimals(self, decimals)                                               \
    ((decimals) < 0 ? TL_UMATH(rint, (self) / TL__TEN_POW(decimals)) * TL__TEN_POW(decimals) \
                    : TL_UMATH(rint, (self) * TL__TEN_POW(decimals)) / TL__TEN_POW(decimals))
