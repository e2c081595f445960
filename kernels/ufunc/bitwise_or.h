/* bitwise_or (bitwise_or.Tensor_out): integers and bool. */
#define TL_UFUNC_bitwise_or(self, other) ((self) | (other))
