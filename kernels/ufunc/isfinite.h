/* isfinite: a bool per element (NaN and +-inf are not finite); integers and
 * bool always are.
 * ufunc_result_dtype: Bool
 *
 * ufunc_inner_loop: Generic: isfinite (Floating, BFloat16, Half)
 * ufunc_inner_loop: ScalarOnly: isfinite_int (Integral, Bool)
 */
#include "tl_umath.h"
#define TL_UFUNC_isfinite(self) (TL_UMATH(fabs, self) < INFINITY)
#define TL_UFUNC_isfinite_int(self) ((void)(self), 1)
