/* nextafter: the next representable value after self towards other (C's
 * nextafter / nextafterf). float16 / bfloat16 (whose loops hand the formula
 * float values) step on the storage type's own bits, as c10's nextafter for
 * the reduced floating types (musl's algorithm on 16-bit patterns): the float
 * neighbours are not the type's. Plain C bit handling, no tl_half.h: the
 * formula also compiles as CUDA C.
 * ufunc_error_name: nextafter_cpu
 */
#include <stdbool.h>
#include <stdint.h>

#include "tl_umath.h"
#define TL_UFUNC_nextafter(self, other) (TL_UMATH2(nextafter, (self), (other)))
#define TL_UFUNC_nextafter_half(self, other) tl_ufunc_nextafter16((self), (other), false)
#define TL_UFUNC_nextafter_bf16(self, other) tl_ufunc_nextafter16((self), (other), true)

typedef union { float f; uint32_t u; } tl_ufunc_f32_bits;

/* the 16-bit pattern of x, a value of the type (exact: no rounding) */
static inline uint16_t tl_ufunc_to_bits16(float x, bool bf16) {
    tl_ufunc_f32_bits c;
    c.f = x;
    if (bf16) return (uint16_t)(c.u >> 16);
    const uint32_t sign = (c.u >> 16) & 0x8000u, exp = (c.u >> 23) & 0xffu, mant = c.u & 0x7fffffu;
    if (exp == 0xffu) return (uint16_t)(sign | 0x7c00u);   /* inf (NaN never gets here) */
    if (exp == 0) return (uint16_t)sign;                   /* zero */
    if (exp >= 113) return (uint16_t)(sign | (exp - 112) << 10 | mant >> 13);
    return (uint16_t)(sign | (0x800000u | mant) >> (126 - exp));   /* a float16 subnormal */
}

static inline float tl_ufunc_from_bits16(uint16_t h, bool bf16) {
    tl_ufunc_f32_bits c;
    if (bf16) {
        c.u = (uint32_t)h << 16;
        return c.f;
    }
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (exp == 0) {
        const float v = (float)mant * 0x1p-24f;
        return sign ? -v : v;
    }
    c.u = sign | (exp == 31 ? 0xffu : exp + 112) << 23 | mant << 13;
    return c.f;
}

/* from and to hold values of the 16-bit type (bf16: bfloat16, else float16) */
static inline float tl_ufunc_nextafter16(float from, float to, bool bf16) {
    if (from != from || to != to) return from + to;
    const uint16_t f = tl_ufunc_to_bits16(from, bf16), t = tl_ufunc_to_bits16(to, bf16);
    if (f == t) return from;
    const uint16_t sign = 0x8000u, af = f & ~sign, at = t & ~sign;
    uint16_t r;
    if (af == 0) {
        if (at == 0) return to;
        r = (uint16_t)((t & sign) | 1u);   /* the smallest subnormal, to's sign */
    } else {
        r = (uint16_t)(af > at || ((f ^ t) & sign) ? f - 1u : f + 1u);
    }
    return tl_ufunc_from_bits16(r, bf16);
}
