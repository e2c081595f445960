/* leaky_relu (leaky_relu.out): x > 0 ? x : x * negative_slope
 * (NaN stays NaN). Floating dtypes only, like PyTorch's "leaky_relu_cpu". */
#define TL_UFUNC_leaky_relu(self, negative_slope) ((self) > 0 ? (self) : (self) * (negative_slope))
