/* bitwise_xor (bitwise_xor.Tensor_out): integers and bool. */
#define TL_UFUNC_bitwise_xor(self, other) ((self) ^ (other))
