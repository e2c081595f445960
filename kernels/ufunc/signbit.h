/* signbit: the sign bit as a bool (-0.0 and NaNs with the bit set count);
 * integers: x < 0 (through int64, so unsigned types are simply never
 * negative); bool never.
 * ufunc_result_dtype: Bool
 */
#include <math.h>
#include <stdint.h>
#define TL_UFUNC_signbit(self) (signbit(self) != 0)
#define TL_UFUNC_signbit_int(self) (tl_ufunc_int_negative((int64_t)(self)))
#ifndef TL_UFUNC_INT_NEGATIVE
#define TL_UFUNC_INT_NEGATIVE
static inline int tl_ufunc_int_negative(int64_t v) { return v < 0; }
#endif
