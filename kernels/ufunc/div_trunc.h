/* div(..., rounding_mode="trunc"): the quotient rounded toward zero.
 * Standalone kernel (div.out_mode's str argument picks the formula, so its
 * hand-written impl in kernels/native/binary_ops.c runs these loops):
 *
 * ufunc_inner_loop: Generic: div_trunc (Floating, BFloat16, Half)
 * ufunc_inner_loop: ScalarOnly: div_trunc_int (Char, Short, Int, Long)
 * ufunc_inner_loop: ScalarOnly: div_trunc_uint (Byte)
 *
 * Integer division by zero is refused before the loop runs (ZeroDivisionError);
 * x / -1 is written as -x so the most negative integer wraps instead of trapping.
 */
#include <tgmath.h>

#define TL_UFUNC_div_trunc(self, other) trunc((self) / (other))
#define TL_UFUNC_div_trunc_int(self, other) ((other) == -1 ? -(self) : (self) / (other))
/* unsigned: rounding toward zero is the floor, and there is no -1 */
#define TL_UFUNC_div_trunc_uint(self, other) ((self) / (other))
