/* logical_not (logical_not.out): self == 0, stored as bool (the input keeps
 * its own dtype: the loop reads it as it is).
 * ufunc_result_dtype: Bool
 */
#define TL_UFUNC_logical_not(self) ((self) == 0)
