/* pow(self, 2) fast path of pow.Tensor_Scalar_out (PyTorch's too): self * self
 * (float16 takes the general pow_scalar loop, as in PyTorch: no Half loop here)
 *
 * ufunc_inner_loop: Generic: pow_2 (All, BFloat16)
 */
#define TL_UFUNC_pow_2(self) ((self) * (self))
