/* special_hermite_polynomial_he(x, n): the probabilists' Hermite polynomial He_n(x), n truncated to an integer
 * (tl_special_fns.h), in double
 * ufunc_error_name: hermite_polynomial_he_cpu
 */
#include "tl_special_fns.h"
#define TL_UFUNC_special_hermite_polynomial_he(x, n) (TL_USPECIAL2(hermite_polynomial_he, x, n))
