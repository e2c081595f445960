/* special_log_ndtr: log of the standard normal CDF (tl_special_fns.h), in double for every dtype
 * ufunc_error_name: log_ndtr_cpu
 */
#include "tl_special_fns.h"
#define TL_UFUNC_special_log_ndtr(self) (TL_USPECIAL(log_ndtr, self))
