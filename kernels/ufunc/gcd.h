/* gcd / lcm of integers (Euclid on the absolute values, PyTorch's calc_gcd;
 * lcm = |a / gcd * b|, 0 when both are 0). Computed in int64 and stored
 * with C's conversion, which keeps the low bits as the narrower type's
 * wrapping arithmetic would (gcd(-128, 0) of int8 is -128, as PyTorch's).
 * ufunc_error_name: gcd_cpu
 */
#ifndef TL_UFUNC_GCD_H   /* lcm.h includes it too */
#define TL_UFUNC_GCD_H
#include <stdint.h>
static inline int64_t tl_ufunc_gcd_i64(int64_t a, int64_t b) {
    uint64_t x = a < 0 ? 0 - (uint64_t)a : (uint64_t)a, y = b < 0 ? 0 - (uint64_t)b : (uint64_t)b;
    while (x != 0) {
        const uint64_t c = x;
        x = y % x;
        y = c;
    }
    return (int64_t)y;
}
static inline int64_t tl_ufunc_lcm_i64(int64_t a, int64_t b) {
    const int64_t g = tl_ufunc_gcd_i64(a, b);
    if (g == 0) return 0;
    const int64_t r = (int64_t)((uint64_t)(a / g) * (uint64_t)b);
    return r < 0 ? (int64_t)(0 - (uint64_t)r) : r;
}
#define TL_UFUNC_gcd(self, other) (tl_ufunc_gcd_i64((int64_t)(self), (int64_t)(other)))
#endif
