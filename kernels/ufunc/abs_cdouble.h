/* abs of complex128: |z|, a float64 result (see abs_cfloat.h).
 * ufunc_complex: yes  ufunc_result_dtype: Double */
#include <complex.h>
#define TL_UFUNC_abs_cdouble(self) (cabs(self))
