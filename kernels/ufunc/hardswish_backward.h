/* hardswish_backward: 0 below -3, grad * (x / 3 + 0.5) on [-3, 3], grad
 * above 3 (PyTorch's hardswish_backward_kernel; NaN self gives grad).
 *
 * ufunc_inner_loop: Generic: hardswish_backward (Floating, BFloat16, Half)
 * ufunc_error_name: hardswish_backward_cpu
 */
#define TL_UFUNC_hardswish_backward(grad_output, self)                                                 \
    ((self) < -3 ? 0 : ((self) <= 3 ? (grad_output) * ((self) / 3 + (float)0.5) : (grad_output)))
