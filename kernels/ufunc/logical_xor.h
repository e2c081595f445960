/* logical_xor (logical_xor.out): exactly one side nonzero, stored as bool.
 * ufunc_result_dtype: Bool
 */
#define TL_UFUNC_logical_xor(self, other) (((self) != 0) != ((other) != 0))
