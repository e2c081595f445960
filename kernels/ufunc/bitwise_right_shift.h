/* bitwise_right_shift (bitwise_right_shift.Tensor_out; `>>`): integers only,
 * arithmetic for signed types. Out-of-range counts: kernels/ufunc/tl_shift.h. */
#include "tl_shift.h"
#define TL_UFUNC_bitwise_right_shift(self, other) TL_SHIFT(rshift, (self), (other))
