/* special_zeta(x, q): the Hurwitz zeta function (tl_special.h, polygamma's), in double
 * ufunc_error_name: zeta_cpu
 */
#include "tl_special.h"
#define TL_UFUNC_special_zeta(self, other) (TL_USPECIAL2(zeta, self, other))
