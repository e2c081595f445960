/* special_modified_bessel_k0: the modified Bessel function K0 (tl_special_fns.h), in double for every dtype
 * ufunc_error_name: modified_bessel_k0_cpu
 */
#include "tl_special_fns.h"
#define TL_UFUNC_special_modified_bessel_k0(self) (TL_USPECIAL(modified_bessel_k0, self))
