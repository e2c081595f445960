/* remainder (remainder.Tensor_out): Python's %, the result takes the divisor's
 * sign. Floats as PyTorch: fmod, then + other when the signs differ (x % 0 is
 * NaN). Integers: a zero divisor is refused by the meta function
 * (ZeroDivisionError); x % -1 is 0 without the division that would trap for
 * the most negative value.
 * Floats: the fmod is TL_UMATH_FMOD (tl_umath.h, vectorized and exact); the
 * elements it cannot do in one step take libm's fmod (remainder_exact).
 * ufunc_error_name: remainder_cpu
 * ufunc_fallback: remainder -> remainder_exact if remainder_slow
 */
#include "tl_umath.h"
#define TL_UFUNC_remainder(self, other) tl_ufunc_remainder_fp((self), (other))
#define TL_UFUNC_remainder_exact(self, other) tl_ufunc_remainder_libm((self), (other))
#define TL_UFUNC_remainder_slow(self, other) TL_UMATH_FMOD_SLOW((self), (other))
#define TL_UFUNC_remainder_int(self, other)                                                  \
    ((other) == -1 ? 0                                                                       \
                   : (self) % (other) + (((self) % (other) != 0) & (((self) % (other) < 0) != ((other) < 0))) * (other))
/* unsigned: C's % already is the floor remainder */
#define TL_UFUNC_remainder_uint(self, other) ((self) % (other))

/* PyTorch's float remainder: fmod, then + b when the signs differ */
#define TL__REMAINDER_FP(NAME, T, FMOD)                   \
    static inline T NAME(T a, T b) {                      \
        T mod = FMOD(a, b);                               \
        mod = mod != 0 && (b < 0) != (mod < 0) ? mod + b : mod; \
        return mod;                                       \
    }
#define TL__REMAINDER_LIBM(a, b) TL_UMATH2(fmod, a, b)
TL__REMAINDER_FP(tl_ufunc_remainder_f, float, TL_UMATH_FMOD)
TL__REMAINDER_FP(tl_ufunc_remainder_d, double, TL_UMATH_FMOD)
TL__REMAINDER_FP(tl_ufunc_remainder_libm_f, float, TL__REMAINDER_LIBM)
TL__REMAINDER_FP(tl_ufunc_remainder_libm_d, double, TL__REMAINDER_LIBM)
#define tl_ufunc_remainder_fp(a, b) _Generic((a), double: tl_ufunc_remainder_d, default: tl_ufunc_remainder_f)((a), (b))
#define tl_ufunc_remainder_libm(a, b) \
    _Generic((a), double: tl_ufunc_remainder_libm_d, default: tl_ufunc_remainder_libm_f)((a), (b))
