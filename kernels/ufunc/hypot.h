/* hypot: sqrt(self^2 + other^2) without undue overflow (libm's hypot).
 * Floating loops only and a plain binary meta (derived from the YAML): an
 * integral common dtype is refused, as PyTorch's hypot_cpu refuses it.
 * ufunc_error_name: hypot_cpu
 */
#include "tl_umath.h"
#define TL_UFUNC_hypot(self, other) (TL_UMATH2(hypot, (self), (other)))
