/* softplus (softplus.out): log1p(exp(beta * x)) / beta, and x itself where
 * beta * x > threshold (PyTorch's linear regime). */
#include "tl_umath.h"
#define TL_UFUNC_softplus(self, beta, threshold)                                                       \
    ((self) * (beta) > (threshold) ? (self) : TL_UMATH(log1p, TL_UMATH(exp, (self) * (beta))) / (beta))
