/* silu (unary math slice): self * sigmoid(self) */
#include "tl_umath.h"
#define TL_UFUNC_silu(self) ((self) / (1 + TL_UMATH(exp, -(self))))
