/* isinf: a bool per element; integers and bool are never infinite.
 * ufunc_result_dtype: Bool
 *
 * ufunc_inner_loop: Generic: isinf (Floating, BFloat16, Half)
 * ufunc_inner_loop: ScalarOnly: isinf_int (Integral, Bool)
 */
#include "tl_umath.h"
#define TL_UFUNC_isinf(self) (TL_UMATH(fabs, self) == INFINITY)
#define TL_UFUNC_isinf_int(self) ((void)(self), 0)
