/* special_spherical_bessel_j0: the spherical Bessel function j0 = sin(x) / x (tl_special_fns.h), in double for every dtype
 * ufunc_error_name: spherical_bessel_j0_cpu
 */
#include "tl_special_fns.h"
#define TL_UFUNC_special_spherical_bessel_j0(self) (TL_USPECIAL(spherical_bessel_j0, self))
