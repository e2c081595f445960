/* gt: self > other  (gt.Tensor_out; gt.Scalar wraps the number and calls it).
 * Inputs are read in the iterator's common (promoted) dtype; the loop stores
 * a bool.
 * ufunc_result_dtype: Bool
 */
#define TL_UFUNC_gt(self, other) ((self) > (other))
