/* special_shifted_chebyshev_polynomial_w(x, n): the shifted Chebyshev polynomial W*_n(x) = W_n(2x - 1), n truncated to an integer
 * (tl_special_fns.h), in double
 * ufunc_error_name: shifted_chebyshev_polynomial_w_cpu
 */
#include "tl_special_fns.h"
#define TL_UFUNC_special_shifted_chebyshev_polynomial_w(x, n) (TL_USPECIAL2(shifted_chebyshev_polynomial_w, x, n))
