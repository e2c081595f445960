/* hardswish (hardswish.out): x * min(max(x + 3, 0), 6) / 6, PyTorch's
 * hardswish_kernel; NaN propagates (both comparisons fail on NaN). */
#define TL__HS_RELU6(v) ((v) < 0 ? 0 : ((v) > 6 ? 6 : (v)))
#define TL_UFUNC_hardswish(self) ((self) * TL__HS_RELU6((self) + 3) / 6)
