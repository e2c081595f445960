/* special_i0e: exp(-|x|) I0(x) (tl_special_fns.h), in double for every dtype
 */
#include "tl_special_fns.h"
#define TL_UFUNC_special_i0e(self) (TL_USPECIAL(i0e, self))
