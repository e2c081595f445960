/* special_airy_ai: the Airy function Ai (tl_special_fns.h), in double for every dtype
 * ufunc_error_name: airy_ai_cpu
 */
#include "tl_special_fns.h"
#define TL_UFUNC_special_airy_ai(self) (TL_USPECIAL(airy_ai, self))
