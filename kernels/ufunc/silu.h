/* silu: self * sigmoid(self) (float, AVX-512: tl_vexp.h's exp) */
#include "tl_umath.h"
#define TL_UFUNC_silu(self) ((self) / (1 + TL_UEXP(-(self))))
