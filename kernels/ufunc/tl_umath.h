/* Unary math for the ufunc formulas (kernels/ufunc/<op>.h, unary math slice).
 *
 * The compute type of a floating loop is float (float32, float16, bfloat16)
 * or double (float64); TL_UMATH(f, x) picks libm's `f##f` or `f` for it at
 * compile time, so float loops call expf/sinf/... and vectorize into glibc's
 * libmvec variants (tl_mvec.h re-declares them with the simd attribute) --
 * never a hand-written approximation. Integer compute types (abs, sign,
 * floor, ... keep integers) use the plain expression given to TL_UMATH_INT.
 */
#ifndef TL_UMATH_H
#define TL_UMATH_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "tl_mvec.h"

#define TL_UMATH(fn, x) _Generic((x), float: fn##f, default: fn)(x)
/* two-argument functions (pow, atan2, fmod), picked by the first argument */
#define TL_UMATH2(fn, x, y) _Generic((x), float: fn##f, default: fn)((x), (y))
/* a floating constant in the compute type of x (float32/16/bf16 loops: float,
 * float64: double), so constants keep float loops in float and lose nothing in
 * double ones (activations: gelu's 1/sqrt(2) ...) */
#define TL_UCONST(x, c) _Generic((x), double: (double)(c), default: (float)(c))
/* rounding functions: identity on integer compute types */
#define TL_UMATH_INT(fn, x, int_expr) _Generic((x), float: fn##f((float)(x)), double: fn((double)(x)), default: (int_expr))

/* sign per compute type, picked by _Generic as a function (an expression
 * per type would be type-checked for every type: `bool < 0` warns) */
static inline bool tl_umath_sign_b(bool x) { return x; }
static inline uint8_t tl_umath_sign_u8(uint8_t x) { return x != 0; }
static inline int64_t tl_umath_sign_i64(int64_t x) { return (x > 0) - (x < 0); }
static inline float tl_umath_sign_f(float x) { return (float)((x > 0) - (x < 0)); }   /* NaN: 0 */
static inline double tl_umath_sign_d(double x) { return (double)((x > 0) - (x < 0)); }
#define TL_UMATH_SIGN(x)                                                                           \
    _Generic((x), bool: tl_umath_sign_b, uint8_t: tl_umath_sign_u8, float: tl_umath_sign_f,      \
             double: tl_umath_sign_d, default: tl_umath_sign_i64)(x)

#endif
