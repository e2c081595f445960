/* signbit: the sign bit as a bool (-0.0 and NaNs with the bit set count),
 * read as the sign copysign gives 1 (C's signbit() vectorizes into an
 * instruction GCC 12 fails to match in some fused bfloat16 loops); integers:
 * x < 0 (through int64, so unsigned types are simply never negative); bool
 * never.
 * ufunc_result_dtype: Bool
 */
#include <stdint.h>
#include "tl_umath.h"
#ifndef TL_UFUNC_INT_NEGATIVE
#define TL_UFUNC_INT_NEGATIVE
static inline int tl_ufunc_int_negative(int64_t v) { return v < 0; }
#endif
#define TL_UFUNC_signbit(self) (TL_UMATH2(copysign, TL_UCONST(self, 1), (self)) < 0)
#define TL_UFUNC_signbit_int(self) (tl_ufunc_int_negative((int64_t)(self)))
