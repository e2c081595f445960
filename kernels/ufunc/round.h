/* round (round.out): to the nearest integer, halves to even (PyTorch's
 * std::nearbyint; rint is the same in the default rounding mode and inlines
 * to roundps); identity on integers; Bool has no loop, as in PyTorch
 * ufunc_error_name: round_vml_cpu */
#include "tl_umath.h"
#define TL_UFUNC_round(self) (TL_UMATH_INT(rint, self, self))
