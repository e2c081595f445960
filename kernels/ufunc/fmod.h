/* fmod (fmod.Tensor_out): C's remainder, the result takes the dividend's sign.
 * Integers: a zero divisor is refused by the meta function (ZeroDivisionError);
 * x % -1 is 0 without the division that would trap for the most negative value.
 * ufunc_error_name: fmod_cpu
 */
#include "tl_umath.h"
#define TL_UFUNC_fmod(self, other) (TL_UMATH2(fmod, (self), (other)))
#define TL_UFUNC_fmod_int(self, other) ((other) == -1 ? 0 : (self) % (other))
#define TL_UFUNC_fmod_uint(self, other) ((self) % (other))
