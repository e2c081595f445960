/* abs of complex64: |z| (hypot of the parts, as PyTorch's Sleef hypot), a
 * float32 result; the meta function (kernels/native/unary_ops.c) makes
 * the output real. ufunc_complex: yes  ufunc_result_dtype: Float */
#include <complex.h>
#define TL_UFUNC_abs_cfloat(self) (cabsf(self))
