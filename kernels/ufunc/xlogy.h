/* xlogy(self, other) = self * log(other); NaN where other is NaN, else 0
 * where self == 0 (PyTorch's xlogy kernel). Float inputs only: the meta
 * function promotes integers (build_borrowing_binary_float_op). */
#include "tl_umath.h"
#define TL_UFUNC_xlogy(self, other) \
    ((other) != (other) ? (other) : (self) == 0 ? TL_UCONST(self, 0) : (self) * TL_UMATH(log, (other)))
