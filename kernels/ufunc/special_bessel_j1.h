/* special_bessel_j1: the Bessel function J1 (tl_special_fns.h), in double for every dtype
 * ufunc_error_name: bessel_j1_cpu
 */
#include "tl_special_fns.h"
#define TL_UFUNC_special_bessel_j1(self) (TL_USPECIAL(bessel_j1, self))
