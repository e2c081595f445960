/* hardsigmoid (hardsigmoid.out): min(max(x + 3, 0), 6) / 6, PyTorch's
 * hardsigmoid_kernel; NaN propagates. */
#define TL_UFUNC_hardsigmoid(self) (((self) + 3 < 0 ? 0 : ((self) + 3 > 6 ? 6 : (self) + 3)) / 6)
