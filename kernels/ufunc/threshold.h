/* threshold (threshold.out): value where x <= threshold, x elsewhere (NaN
 * stays NaN); the scalars are converted to the loop's type, as PyTorch's
 * threshold_kernel does.
 * ufunc_error_name: threshold_cpu */
#define TL_UFUNC_threshold(self, threshold, value) ((self) <= (threshold) ? (value) : (self))
