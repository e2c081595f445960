/* _prelu_kernel_backward's grad_input: grad where x > 0, weight * grad
 * elsewhere (PyTorch's prelu_backward_kernel, first output).
 *
 * ufunc_inner_loop: Generic: prelu_backward_input (Floating, BFloat16, Half)
 * ufunc_error_name: prelu_backward_cpu
 */
#define TL_UFUNC_prelu_backward_input(self, weight, grad_output) \
    ((self) > 0 ? (grad_output) : (weight) * (grad_output))
