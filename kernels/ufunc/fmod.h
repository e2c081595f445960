/* fmod (fmod.Tensor_out): C's remainder, the result takes the dividend's sign.
 * Floats: exact like libm's fmod (PyTorch: SLEEF's exact vectorized fmod), from
 * the vectorized TL_UMATH_FMOD (tl_umath.h); the few elements it cannot do in
 * one step (zero divisor, infinite dividend, huge quotient) take libm's fmod.
 * Integers: a zero divisor is refused by the meta function (ZeroDivisionError);
 * x % -1 is 0 without the division that would trap for the most negative value.
 * ufunc_error_name: fmod_cpu
 * ufunc_fallback: fmod -> fmod_exact if fmod_slow
 */
#include "tl_umath.h"
#define TL_UFUNC_fmod(self, other) TL_UMATH_FMOD((self), (other))
#define TL_UFUNC_fmod_exact(self, other) (TL_UMATH2(fmod, (self), (other)))
#define TL_UFUNC_fmod_slow(self, other) TL_UMATH_FMOD_SLOW((self), (other))
#define TL_UFUNC_fmod_int(self, other) ((other) == -1 ? 0 : (self) % (other))
#define TL_UFUNC_fmod_uint(self, other) ((self) % (other))
