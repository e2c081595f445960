/* lcm of integers: tl_ufunc_lcm_i64 in gcd.h
 * ufunc_error_name: lcm_cpu
 */
#include "gcd.h"
#define TL_UFUNC_lcm(self, other) (tl_ufunc_lcm_i64((int64_t)(self), (int64_t)(other)))
