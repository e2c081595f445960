/* silu_backward (silu_backward.grad_input): grad * s * (1 + x * (1 - s)) with
 * s = sigmoid(x), PyTorch's CPU formula (one exp: the compiler shares it;
 * float, AVX-512: tl_vexp.h's exp).
 * One fused loop instead of the seven pointwise ops the decomposed formula
 * costs (Linear+SiLU backward, docs/LINALG.md). */
#include "tl_umath.h"
#define TL_UFUNC_silu_backward(grad_output, self)                                                      \
    ((grad_output) * (1 / (1 + TL_UEXP(-(self)))) *                                                   \
     (1 + (self) * (1 - 1 / (1 + TL_UEXP(-(self))))))
