/* special_bessel_j0: the Bessel function J0 (tl_special_fns.h), in double for every dtype
 * ufunc_error_name: bessel_j0_cpu
 */
#include "tl_special_fns.h"
#define TL_UFUNC_special_bessel_j0(self) (TL_USPECIAL(bessel_j0, self))
