/* pow(self, 3) fast path of pow.Tensor_Scalar_out (PyTorch's too): self * self * self
 *
 * ufunc_inner_loop: Generic: pow_3 (All, BFloat16)
 * ufunc_inner_loop: CPUScalar: pow_3_complex (Complex)   (complex_math.h)
 */
#define TL_UFUNC_pow_3(self) ((self) * (self) * (self))
