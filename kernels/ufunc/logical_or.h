/* logical_or (logical_or.out): nonzero || nonzero, stored as bool.
 * ufunc_result_dtype: Bool
 */
#define TL_UFUNC_logical_or(self, other) (((self) != 0) || ((other) != 0))
