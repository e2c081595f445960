/* atan2: the angle of (other, self); integers compute
 * in the default float dtype (atan2's meta is a binary float op) */
#include "tl_umath.h"
#define TL_UFUNC_atan2(self, other) (TL_UMATH2(atan2, (self), (other)))
