/* smooth_l1_loss_backward, PyTorch's smooth_l1_backward_cpu_kernel: with
 * x = self - target, -norm * grad at or below -beta, norm * grad at or
 * above beta, norm * x * grad / beta between (norm = 1 / numel for Mean).
 *
 * ufunc_inner_loop: Generic: smooth_l1_backward (Floating, BFloat16, Half)
 * ufunc_scalar_args: norm, beta
 * ufunc_error_name: smooth_l1_backward_cpu_out
 */
#define TL_UFUNC_smooth_l1_backward(self, target, grad_output, norm, beta)                            \
    ((self) - (target) <= -(beta)  ? -(norm) * (grad_output)                                          \
     : (self) - (target) >= (beta) ? (norm) * (grad_output)                                           \
                                   : (norm) * ((self) - (target)) * (grad_output) / (beta))
