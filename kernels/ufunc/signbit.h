/* signbit: the sign bit as a bool (-0.0 and NaNs with the bit set count),
 * read from the bits (C's signbit() vectorizes into an instruction GCC 12
 * fails to match in some fused loops); integers: x < 0 (through int64, so
 * unsigned types are simply never negative); bool never.
 * ufunc_result_dtype: Bool
 */
#include <stdint.h>
#include "tl_half.h"
#ifndef TL_UFUNC_SIGNBIT_HELPERS
#define TL_UFUNC_SIGNBIT_HELPERS
static inline int tl_ufunc_signbit_f(float x) { return (int)(tl_f32_bits(x) >> 31); }
static inline int tl_ufunc_signbit_d(double x) { return (int)(tl_f64_bits(x) >> 63); }
static inline int tl_ufunc_int_negative(int64_t v) { return v < 0; }
#endif
#define TL_UFUNC_signbit(self) (_Generic((self), float: tl_ufunc_signbit_f, default: tl_ufunc_signbit_d)(self))
#define TL_UFUNC_signbit_int(self) (tl_ufunc_int_negative((int64_t)(self)))
