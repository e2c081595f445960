/* special_laguerre_polynomial_l(x, n): the Laguerre polynomial L_n(x), n truncated to an integer
 * (tl_special_fns.h), in double
 * ufunc_error_name: laguerre_polynomial_l_cpu
 */
#include "tl_special_fns.h"
#define TL_UFUNC_special_laguerre_polynomial_l(x, n) (TL_USPECIAL2(laguerre_polynomial_l, x, n))
