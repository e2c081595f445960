/* fmax / fmin: the larger / smaller value, the other input where one is NaN
 * (C's fmax / fmin; NaN only where both are). Integers and bool: plain
 * maximum / minimum (PyTorch's fmax kernel falls back to maximum's). */
#include "tl_umath.h"
#define TL_UFUNC_fmax(self, other) (TL_UMATH2(fmax, (self), (other)))
#define TL_UFUNC_fmin(self, other) (TL_UMATH2(fmin, (self), (other)))
#define TL_UFUNC_fmax_int(self, other) (((self) > (other)) ? (self) : (other))
#define TL_UFUNC_fmin_int(self, other) (((self) < (other)) ? (self) : (other))
