/* bitwise_left_shift (bitwise_left_shift.Tensor_out; `<<`): integers only
 * (PyTorch's "lshift_cpu" has no float or bool loop; the meta function refuses
 * them with its message). Out-of-range counts: kernels/ufunc/tl_shift.h. */
#include "tl_shift.h"
#define TL_UFUNC_bitwise_left_shift(self, other) TL_SHIFT(lshift, (self), (other))
