/* mish (mish.out): x * tanh(softplus(x)) = x * tanh(log1p(exp(x))), PyTorch's formula. */
#include "tl_umath.h"
#define TL_UFUNC_mish(self) ((self) * TL_UMATH(tanh, TL_UMATH(log1p, TL_UMATH(exp, (self)))))
