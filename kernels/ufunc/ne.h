/* ne: self != other  (ne.Tensor_out; ne.Scalar wraps the number and calls it).
 * Inputs are read in the iterator's common (promoted) dtype; the loop stores
 * a bool.
 * ufunc_result_dtype: Bool

 * ufunc_complex: yes (C99 complex arithmetic gives PyTorch's values)
 */
#define TL_UFUNC_ne(self, other) ((self) != (other))
