/* softshrink_backward (softshrink_backward.grad_input): PyTorch's
 * shrink_backward_kernel, 0 on [-lambd, lambd], the gradient elsewhere. */
#define TL_UFUNC_softshrink_backward(grad_output, self, lambd)                                         \
    ((self) >= -(lambd) && (self) <= (lambd) ? 0 : (grad_output))
