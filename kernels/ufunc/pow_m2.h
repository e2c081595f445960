/* pow(self, -2) fast path of pow.Tensor_Scalar_out for floats (PyTorch's too):
 * 1 / (self * self)
 *
 * ufunc_inner_loop: Generic: pow_m2 (Floating, BFloat16)
 * ufunc_inner_loop: CPUScalar: pow_m2_complex (Complex)   (complex_math.h)
 */
#define TL_UFUNC_pow_m2(self) (1 / ((self) * (self)))
