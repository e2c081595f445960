/* nan_to_num.out for floats: NaN -> nan, +inf -> posinf, -inf -> neginf
 * (kernels/native/pointwise_math.c fills in the defaults: 0 and the dtype's
 * largest / lowest finite value). Integer and bool inputs are copied there.
 *
 * ufunc_inner_loop: Generic: nan_to_num (Floating, BFloat16, Half)
 * ufunc_scalar_args: nan_v, posinf_v, neginf_v
 */
#include <math.h>
#define TL_UFUNC_nan_to_num(self, nan_v, posinf_v, neginf_v) \
    ((self) != (self) ? (nan_v) : (self) == INFINITY ? (posinf_v) : (self) == -INFINITY ? (neginf_v) : (self))
