/* special_shifted_chebyshev_polynomial_t(x, n): the shifted Chebyshev polynomial T*_n(x) = T_n(2x - 1), n truncated to an integer
 * (tl_special_fns.h), in double
 * ufunc_error_name: shifted_chebyshev_polynomial_t_cpu
 */
#include "tl_special_fns.h"
#define TL_UFUNC_special_shifted_chebyshev_polynomial_t(x, n) (TL_USPECIAL2(shifted_chebyshev_polynomial_t, x, n))
