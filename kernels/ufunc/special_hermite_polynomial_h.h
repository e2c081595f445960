/* special_hermite_polynomial_h(x, n): the physicists' Hermite polynomial H_n(x), n truncated to an integer
 * (tl_special_fns.h), in double
 * ufunc_error_name: hermite_polynomial_h_cpu
 */
#include "tl_special_fns.h"
#define TL_UFUNC_special_hermite_polynomial_h(x, n) (TL_USPECIAL2(hermite_polynomial_h, x, n))
