/* pow (pow.Tensor_Tensor_out): self ** exponent in the common dtype.
 * Floats call libm's pow/powf through TL_UMATH_POW (tl_umath.h: libmvec's vector
 * pow on |x|, the sign of a negative base put back); integers use exact
 * repeated squaring with PyTorch's powi rules for a negative exponent
 * (1 -> 1, -1 -> +-1 by parity, anything else -> 0), wrapping like PyTorch.
 * Bool has no loop ("pow" is not implemented for Bool in PyTorch either).
 * ufunc_error_name: pow
 * pow.Tensor_Scalar's loops are in pow_scalar.h / pow_2.h / pow_3.h / pow_m2.h.
 */
#ifndef TL_UFUNC_POW_H
#define TL_UFUNC_POW_H
#include <stdint.h>

#include "tl_umath.h"

/* computed in 64 bits: the low bits of a wrapping product do not depend on the
 * width, so narrower integers get the same bits as PyTorch's per-type powi */
static inline int64_t tl_ufunc_powi(int64_t base, int64_t e) {
    if (e < 0) return base == 1 ? 1 : base == -1 ? ((e & 1) ? -1 : 1) : 0;
    uint64_t r = 1, x = (uint64_t)base;
    while (e) {
        if (e & 1) r *= x;
        x *= x;
        e >>= 1;
    }
    return (int64_t)r;
}

#define TL_UFUNC_pow(self, exponent) (TL_UMATH_POW((self), (exponent)))
#define TL_UFUNC_pow_int(self, exponent) tl_ufunc_powi((int64_t)(self), (int64_t)(exponent))
#endif
