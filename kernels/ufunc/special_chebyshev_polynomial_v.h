/* special_chebyshev_polynomial_v(x, n): the Chebyshev polynomial of the third kind V_n(x), n truncated to an integer
 * (tl_special_fns.h), in double
 * ufunc_error_name: chebyshev_polynomial_v_cpu
 */
#include "tl_special_fns.h"
#define TL_UFUNC_special_chebyshev_polynomial_v(x, n) (TL_USPECIAL2(chebyshev_polynomial_v, x, n))
