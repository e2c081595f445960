/* _prelu_kernel_backward's grad_weight (the broadcast shape; autograd sums
 * it to the weight's): 0 where x > 0, x * grad elsewhere (PyTorch's
 * prelu_backward_kernel, second output).
 *
 * ufunc_inner_loop: Generic: prelu_backward_weight (Floating, BFloat16, Half)
 * ufunc_error_name: prelu_backward_cpu
 */
#define TL_UFUNC_prelu_backward_weight(self, weight, grad_output) \
    ((void)(weight), (self) > 0 ? 0 : (self) * (grad_output))
