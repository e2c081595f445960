/* special_chebyshev_polynomial_u(x, n): the Chebyshev polynomial of the second kind U_n(x), n truncated to an integer
 * (tl_special_fns.h), in double
 * ufunc_error_name: chebyshev_polynomial_u_cpu
 */
#include "tl_special_fns.h"
#define TL_UFUNC_special_chebyshev_polynomial_u(x, n) (TL_USPECIAL2(chebyshev_polynomial_u, x, n))
