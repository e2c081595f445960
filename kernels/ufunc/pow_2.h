/* pow(self, 2) fast path of pow.Tensor_Scalar_out (PyTorch's too): self * self
 * (float16 takes the general pow_scalar loop, as in PyTorch: no Half loop here)
 *
 * ufunc_inner_loop: Generic: pow_2 (All, BFloat16)
 * ufunc_inner_loop: CPUScalar: pow_2_complex (Complex)   (complex_math.h)
 */
#define TL_UFUNC_pow_2(self) ((self) * (self))
