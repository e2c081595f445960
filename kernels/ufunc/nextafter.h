/* nextafter: the next representable value after self towards other (C's
 * nextafter / nextafterf). float32 and float64 only: a float16 / bfloat16 loop
 * computes in float, whose neighbours are not the storage type's.
 * ufunc_error_name: nextafter_cpu
 */
#include "tl_umath.h"
#define TL_UFUNC_nextafter(self, other) (TL_UMATH2(nextafter, (self), (other)))
