/* special_bessel_y0: the Bessel function Y0 (tl_special_fns.h), in double for every dtype
 * ufunc_error_name: bessel_y0_cpu
 */
#include "tl_special_fns.h"
#define TL_UFUNC_special_bessel_y0(self) (TL_USPECIAL(bessel_y0, self))
