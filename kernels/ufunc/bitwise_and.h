/* bitwise_and (bitwise_and.Tensor_out): integers and bool (where it is `and`);
 * floating dtypes are refused by the meta function with PyTorch's message. */
#define TL_UFUNC_bitwise_and(self, other) ((self) & (other))
