/* sigmoid: 1 / (1 + e^-self) (float, AVX-512: tl_vexp.h's exp) */
#include "tl_umath.h"
#define TL_UFUNC_sigmoid(self) (1 / (1 + TL_UEXP(-(self))))
