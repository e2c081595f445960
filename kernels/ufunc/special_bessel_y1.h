/* special_bessel_y1: the Bessel function Y1 (tl_special_fns.h), in double for every dtype
 * ufunc_error_name: bessel_y1_cpu
 */
#include "tl_special_fns.h"
#define TL_UFUNC_special_bessel_y1(self) (TL_USPECIAL(bessel_y1, self))
