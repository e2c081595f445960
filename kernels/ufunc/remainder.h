/* remainder (remainder.Tensor_out): Python's %, the result takes the divisor's
 * sign. Floats as PyTorch: fmod, then + other when the signs differ (x % 0 is
 * NaN). Integers: a zero divisor is refused by the meta function
 * (ZeroDivisionError); x % -1 is 0 without the division that would trap for
 * the most negative value.
 * ufunc_error_name: remainder_cpu
 */
#include "tl_umath.h"
#define TL_UFUNC_remainder(self, other) tl_ufunc_remainder_fp((self), (other))
#define TL_UFUNC_remainder_int(self, other)                                                  \
    ((other) == -1 ? 0                                                                       \
                   : (self) % (other) + (((self) % (other) != 0) & (((self) % (other) < 0) != ((other) < 0))) * (other))
/* unsigned: C's % already is the floor remainder */
#define TL_UFUNC_remainder_uint(self, other) ((self) % (other))

#define TL__REMAINDER_FP(NAME, T)                         \
    static inline T NAME(T a, T b) {                      \
        T mod = TL_UMATH2(fmod, a, b);                    \
        if (mod != 0 && (b < 0) != (mod < 0)) mod += b;   \
        return mod;                                       \
    }
TL__REMAINDER_FP(tl_ufunc_remainder_f, float)
TL__REMAINDER_FP(tl_ufunc_remainder_d, double)
#define tl_ufunc_remainder_fp(a, b) _Generic((a), double: tl_ufunc_remainder_d, default: tl_ufunc_remainder_f)((a), (b))
