/* copysign: |self| with the sign of other (libm's copysign: -0.0 and nan
 * signs count). The entry's promotes_int_to_float tag derives a binary float
 * meta, so integers compute in the default float dtype, as in PyTorch.
 * ufunc_error_name: copysign_cpu
 */
#include "tl_umath.h"
#define TL_UFUNC_copysign(self, other) (TL_UMATH2(copysign, (self), (other)))
