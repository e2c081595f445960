/* huber_loss_backward, PyTorch's huber_backward_cpu_kernel: with
 * x = self - target, -norm * grad * delta at or below -delta,
 * norm * grad * delta at or above delta, norm * x * grad between.
 *
 * ufunc_inner_loop: Generic: huber_backward (Floating, BFloat16, Half)
 * ufunc_scalar_args: norm, delta
 * ufunc_error_name: huber_backward_cpu_out
 */
#define TL_UFUNC_huber_backward(self, target, grad_output, norm, delta)                               \
    ((self) - (target) <= -(delta)  ? -(norm) * (grad_output) * (delta)                               \
     : (self) - (target) >= (delta) ? (norm) * (grad_output) * (delta)                                \
                                    : (norm) * ((self) - (target)) * (grad_output))
