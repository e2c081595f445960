/* glu's elementwise product over the two halves a, b of the input:
 * a * sigmoid(b) (PyTorch's glu_kernel).
 *
 * ufunc_inner_loop: Generic: glu (Floating, BFloat16, Half)
 * ufunc_error_name: glu_cpu
 */
#include "tl_umath.h"
#define TL_UFUNC_glu(a, b) ((a) / (1 + TL_UEXP(-(b))))
