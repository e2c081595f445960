/* hardtanh_backward (hardtanh_backward.grad_input): the gradient where
 * min_val < self < max_val (strictly), 0 elsewhere (NaN self: passes, as PyTorch). */
#define TL_UFUNC_hardtanh_backward(grad_output, self, min_val, max_val)                                \
    ((self) <= (min_val) || (self) >= (max_val) ? 0 : (grad_output))
