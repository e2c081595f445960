/* isposinf: x == +inf; integers and bool never.
 * ufunc_result_dtype: Bool
 */
#include <math.h>
#define TL_UFUNC_isposinf(self) ((self) == INFINITY)
#define TL_UFUNC_isposinf_int(self) ((void)(self), 0)
