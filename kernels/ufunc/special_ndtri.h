/* special_ndtri: the inverse of the standard normal CDF (tl_special_fns.h), in double for every dtype
 * ufunc_error_name: ndtri_cpu
 */
#include "tl_special_fns.h"
#define TL_UFUNC_special_ndtri(self) (TL_USPECIAL(ndtri, self))
