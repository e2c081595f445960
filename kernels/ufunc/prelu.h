/* _prelu_kernel: x where x > 0, weight * x elsewhere (PyTorch's
 * prelu_kernel; the weight broadcast by the iterator).
 *
 * ufunc_inner_loop: Generic: prelu (Floating, BFloat16, Half)
 * ufunc_error_name: prelu_cpu
 */
#define TL_UFUNC_prelu(self, weight) ((self) > 0 ? (self) : (weight) * (self))
