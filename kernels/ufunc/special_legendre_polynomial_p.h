/* special_legendre_polynomial_p(x, n): the Legendre polynomial P_n(x), n truncated to an integer
 * (tl_special_fns.h), in double
 * ufunc_error_name: legendre_polynomial_p_cpu
 */
#include "tl_special_fns.h"
#define TL_UFUNC_special_legendre_polynomial_p(x, n) (TL_USPECIAL2(legendre_polynomial_p, x, n))
