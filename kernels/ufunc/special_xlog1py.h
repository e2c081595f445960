/* special_xlog1py(self, other) = self * log1p(other); NaN where other is NaN,
 * else 0 where self == 0 (PyTorch's xlog1py kernel). Float inputs only: the
 * meta function promotes integers (build_borrowing_binary_float_op). */
#include "tl_umath.h"
#define TL_UFUNC_special_xlog1py(self, other) \
    ((other) != (other) ? (other) : (self) == 0 ? TL_UCONST(self, 0) : (self) * TL_UMATH(log1p, (other)))
