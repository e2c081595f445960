/* special_i1e: exp(-|x|) I1(x) (tl_special_fns.h), in double for every dtype
 */
#include "tl_special_fns.h"
#define TL_UFUNC_special_i1e(self) (TL_USPECIAL(i1e, self))
