/* special_scaled_modified_bessel_k1: exp(x) K1(x) (tl_special_fns.h), in double for every dtype
 * ufunc_error_name: scaled_modified_bessel_k1_cpu
 */
#include "tl_special_fns.h"
#define TL_UFUNC_special_scaled_modified_bessel_k1(self) (TL_USPECIAL(scaled_modified_bessel_k1, self))
