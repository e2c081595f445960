/* special_erfcx: the scaled complementary error function exp(x^2) erfc(x) (tl_special_fns.h), in double for every dtype
 * ufunc_error_name: erfcx_cpu
 */
#include "tl_special_fns.h"
#define TL_UFUNC_special_erfcx(self) (TL_USPECIAL(erfcx, self))
