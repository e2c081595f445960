/* isnan: a bool per element; integers and bool are never NaN.
 * ufunc_result_dtype: Bool
 *
 * ufunc_inner_loop: Generic: isnan (Floating, BFloat16, Half)
 * ufunc_inner_loop: ScalarOnly: isnan_int (Integral, Bool)
 */
#define TL_UFUNC_isnan(self) ((self) != (self))
#define TL_UFUNC_isnan_int(self) ((void)(self), 0)
