/* binary_cross_entropy_backward, PyTorch's CPU loop:
 * norm * grad * (x - y) / max((1 - x) * x, eps) (norm = 1 / numel for Mean,
 * eps = 1e-12 converted to the loop's type as PyTorch's scalar_t(EPSILON);
 * the weight is applied by the caller).
 *
 * ufunc_inner_loop: Generic: binary_cross_entropy_backward (Floating, BFloat16, Half)
 * ufunc_scalar_args: norm, eps
 * ufunc_error_name: binary_cross_entropy_backward
 */
#define TL__BCEB_D(x, eps) ((1 - (x)) * (x) < (eps) ? (eps) : (1 - (x)) * (x))
#define TL_UFUNC_binary_cross_entropy_backward(self, target, grad_output, norm, eps)                  \
    ((norm) * (grad_output) * ((self) - (target)) / TL__BCEB_D(self, eps))
