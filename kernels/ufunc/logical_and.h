/* logical_and (logical_and.out): nonzero && nonzero.
 * Inputs are read in the iterator's common (promoted) dtype (NaN counts as
 * true, as in PyTorch); the loop stores a bool.
 * ufunc_result_dtype: Bool
 */
#define TL_UFUNC_logical_and(self, other) (((self) != 0) && ((other) != 0))
