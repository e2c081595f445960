/* div(..., rounding_mode="floor"): the quotient rounded toward -inf
 * (Python's //). Standalone kernel, like div_trunc.h:
 *
 * ufunc_inner_loop: Generic: div_floor (Floating, BFloat16, Half)
 * ufunc_inner_loop: ScalarOnly: div_floor_int (Char, Short, Int, Long)
 * ufunc_inner_loop: ScalarOnly: div_floor_uint (Byte)
 *
 * Floats follow PyTorch's div_floor_floating (fmod based, so the result is the
 * floor of the exact quotient, not of the rounded one); b == 0 gives a / b.
 */
#include <tgmath.h>

#define TL_UFUNC_div_floor(self, other) tl_ufunc_div_floor_fp((self), (other))
#define TL_UFUNC_div_floor_int(self, other)                                        \
    ((other) == -1 ? -(self)                                                       \
                   : (self) / (other) - (((self) % (other) != 0) & (((self) < 0) != ((other) < 0))))

#define TL__DIV_FLOOR_FP(NAME, T)                                   \
    static inline T NAME(T a, T b) {                                \
        if (b == 0) return a / b;                                   \
        T mod = fmod(a, b);                                         \
        T div = (a - mod) / b;                                      \
        if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;             \
        if (div == 0) return copysign((T)0, a / b);                 \
        T fl = floor(div);                                          \
        if (div - fl > (T)0.5) fl += 1;                             \
        return fl;                                                  \
    }
TL__DIV_FLOOR_FP(tl_ufunc_div_floor_f, float)
TL__DIV_FLOOR_FP(tl_ufunc_div_floor_d, double)
#define tl_ufunc_div_floor_fp(a, b) _Generic((a), double: tl_ufunc_div_floor_d, default: tl_ufunc_div_floor_f)((a), (b))
/* unsigned: rounding toward zero is the floor, and there is no -1 */
#define TL_UFUNC_div_floor_uint(self, other) ((self) / (other))
