/* pow.Tensor_Scalar_out, any exponent: self ** exponent with the exponent
 * converted once per call to the compute type (PyTorch converts it to the
 * tensor's scalar type too). Standalone kernel: the impl
 * (kernels/native/pointwise_math.c) picks this one or a fast path
 * (pow_2, pow_3, pow_m2, sqrt, rsqrt, reciprocal) by the exponent's value.
 * Bool is included: pow(bool_tensor, True/False) keeps bool (x or 1).
 *
 * ufunc_inner_loop: Generic: pow_scalar (Floating, BFloat16, Half)
 * ufunc_inner_loop: ScalarOnly: pow_scalar_int (Integral, Bool)
 * ufunc_scalar_args: exponent
 */
#include "pow.h"
#define TL_UFUNC_pow_scalar(self, exponent) TL_UFUNC_pow(self, exponent)
#define TL_UFUNC_pow_scalar_int(self, exponent) TL_UFUNC_pow_int(self, exponent)
