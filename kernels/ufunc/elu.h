/* elu (elu.out): x <= 0 ? expm1(x * input_scale) * alpha * scale : x * scale
 * (PyTorch's vectorized CPU path uses expm1 too). */
#include "tl_umath.h"
#define TL_UFUNC_elu(self, alpha, scale, input_scale)                                                   \
    ((self) <= 0 ? TL_UMATH(expm1, (self) * (input_scale)) * ((alpha) * (scale)) : (self) * (scale))
