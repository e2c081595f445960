/* Unary math for the ufunc formulas (kernels/ufunc/<op>.h).
 *
 * The compute type of a floating loop is float (float32, float16, bfloat16)
 * or double (float64); TL_UMATH(f, x) picks libm's `f##f` or `f` for it at
 * compile time, so float loops call expf/sinf/... and vectorize into glibc's
 * libmvec variants (tl_mvec.h re-declares them with the simd attribute).
 * The exception is float exp and erf in the AVX-512 loops (TL_UEXP, TL_UERF:
 * tl_vexp.h's in-house tl_expf / tl_erff, inlined into the loop; float64
 * keeps libm), which the exp-heavy formulas (exp, sigmoid, silu, gelu, ...)
 * use. Integer compute
 * types (abs, sign, floor, ... keep integers) use the plain expression given
 * to TL_UMATH_INT.
 */
#ifndef TL_UMATH_H
#define TL_UMATH_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "tl_mvec.h"
#include "tl_vexp.h"
#include "tl_vtanh.h"

#define TL_UMATH(fn, x) _Generic((x), float: fn##f, default: fn)(x)
/* e^x and erf(x) for the exp-heavy formulas: in the AVX-512 loops, the
 * in-house float ones (as fast as libmvec's expf on ordinary data, ~20x
 * faster on -inf / overflowing / underflowing lanes; erf 1.8x libmvec's
 * erff); the baseline and AVX2 loops keep libmvec, whose expf / erff are
 * 3-17% faster there than the in-house code (measured per formula,
 * docs/UFUNC.md). double: libm's. */
#if defined(__AVX512F__)
#define TL_UEXP(x) _Generic((x), float: tl_expf, default: exp)(x)
#define TL_UERF(x) _Generic((x), float: tl_erff, default: erf)(x)
#else
#define TL_UEXP(x) TL_UMATH(exp, x)
#define TL_UERF(x) TL_UMATH(erf, x)
#endif
/* tanh: the in-house float one (tl_vtanh.h) in the AVX2 loops, where it is
 * 1.2-1.3x libmvec's tanhf; the AVX-512 loops keep libmvec's (table-driven,
 * 1.05-1.6x the in-house code there), the baseline libm's (1.3-1.5x) */
#if defined(__AVX2__) && !defined(__AVX512F__)
#define TL_UTANH(x) _Generic((x), float: tl_tanhf, default: tanh)(x)
#else
#define TL_UTANH(x) TL_UMATH(tanh, x)
#endif
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

/* fmod without libm's per-element loop (fmod.h, remainder.h; PyTorch's
 * vectorized fmod is SLEEF's exact fmodf/fmod, so the result must be exact).
 * TL_UMATH_FMOD(a, b) is exact wherever TL_UMATH_FMOD_SLOW(a, b) is false; the
 * generated loops (`ufunc_fallback:` in the formula's header) take libm's fmod
 * for the elements where it is true: zero divisors, infinite dividends and
 * quotients too large for one step (rare), checked chunk by chunk.
 *
 * float (float32/16/bf16): in double, |a/b| < 2^29. The double quotient can
 * only round up to the next integer n when a/b is within 2^-24 of it, which
 * takes n >= 2^29 (a - n*b is a multiple of the smaller ulp, and b has 24
 * bits), so its truncation is exact; q*b has at most 29 + 24 bits, so a - q*b
 * is exact too.
 * double: with a fused multiply-add, |a/b| < 2^51: q = trunc(a/b) is the
 * true quotient or one more; fma(-q, b, a) is then exactly the remainder
 * (representable) or a negative value, and then fma(-(q - 1), b, a) is exact.
 * Without a hardware FMA (the baseline ISA) double takes libm's fmod.
 * Both: b = +-inf gives a (q is 0; 0 * inf would be NaN), NaN stays NaN, and
 * the result takes a's sign (-4 % 2 is -0.0) like fmod's. */

/* trunc(q) for |q| < 2^30 (NaN and larger values: anything): SSE2 has no
 * vector rounding (trunc is a libm call there), a conversion through int32 is
 * vectorized; with SSE4.1 the conversion's select is not, trunc is */
#if defined(__SSE4_1__) || !defined(__x86_64__)
#define TL_UMATH_TRUNC30(q) trunc(q)
#else
#define TL_UMATH_TRUNC30(q) ((double)(int32_t)((q) < 0x1p30 ? (q) : 0.0))
#endif
static inline float tl_umath_fmod_f(float a, float b) {
    const double x = fabs((double)a), y = fabs((double)b);
    const double q = TL_UMATH_TRUNC30(x / y);
    double r = x - q * y;
    r = y == INFINITY ? x : r;
    return copysignf((float)r, a);
}
static inline int tl_umath_fmod_slow_f(float a, float b) { return fabs((double)a) >= 0x1p29 * fabs((double)b); }
#ifdef FP_FAST_FMA
static inline double tl_umath_fmod_d(double a, double b) {
    const double x = fabs(a), y = fabs(b);
    const double q = trunc(x / y);
    double r = fma(-q, y, x);
    r = r < 0 ? fma(-(q - 1), y, x) : r;
    r = y == INFINITY ? x : r;
    return copysign(r, a);
}
static inline int tl_umath_fmod_slow_d(double a, double b) { return fabs(a) >= 0x1p51 * fabs(b); }
#else
static inline double tl_umath_fmod_d(double a, double b) { return fmod(a, b); }
static inline int tl_umath_fmod_slow_d(double a, double b) { (void)a, (void)b; return 0; }
#endif
#define TL_UMATH_FMOD(a, b) _Generic((a), float: tl_umath_fmod_f, default: tl_umath_fmod_d)((a), (b))
#define TL_UMATH_FMOD_SLOW(a, b) _Generic((a), float: tl_umath_fmod_slow_f, default: tl_umath_fmod_slow_d)((a), (b))

/* pow for floats (pow.h). glibc's vector powf / pow (libmvec) hand every lane
 * with a negative base to the scalar libm, which made pow 4-5x slower than
 * PyTorch's on data of mixed signs. libm computes a negative base as
 * +-pow(|x|, y) for an integer y (minus for an odd one) and NaN for any other
 * finite y (x = -0.0 and -inf: +-0 / +-inf, no NaN), so the vector call gets
 * |x| and the sign is put back here: the same values. An integer float y is
 * odd when y / 2 is not an integer (|y| >= 2^24 is always even; inf is even).
 * The baseline ISA has no vector trunc: libm's pow there. */
#if defined(__SSE4_1__) || !defined(__x86_64__)
#define TL__UMATH_POW(NAME, T, SFX)                                                         \
    static inline T NAME(T x, T y) {                                                       \
        const T r = pow##SFX(fabs##SFX(x), y), h = y * (T)0.5;                             \
        const int yint = trunc##SFX(y) == y, odd = yint && trunc##SFX(h) != h;             \
        const T s = copysign##SFX(r, odd ? x : (T)1);                                      \
        return x < 0 && x > -(T)INFINITY && !yint ? (T)NAN : s;                             \
    }
TL__UMATH_POW(tl_umath_pow_f, float, f)
TL__UMATH_POW(tl_umath_pow_d, double, )
#define TL_UMATH_POW(x, y) _Generic((x), float: tl_umath_pow_f, default: tl_umath_pow_d)((x), (y))
#else
#define TL_UMATH_POW(x, y) TL_UMATH2(pow, (x), (y))
#endif

#endif
