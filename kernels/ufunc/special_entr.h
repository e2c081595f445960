/* special_entr: -x log x for x > 0, 0 at 0, -inf below, NaN stays NaN
 * (PyTorch's entr kernel) */
#include "tl_umath.h"
#define TL_UFUNC_special_entr(self)                                                        \
    ((self) != (self) ? (self)                                                            \
     : (self) > 0     ? -(self) * TL_UMATH(log, (self))                                   \
     : (self) == 0    ? TL_UCONST(self, 0)                                                \
                      : -TL_UCONST(self, INFINITY))
