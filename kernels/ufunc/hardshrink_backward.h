/* hardshrink_backward (hardshrink_backward.grad_input): the same rule as
 * softshrink_backward (PyTorch's shrink_backward_kernel). */
#define TL_UFUNC_hardshrink_backward(grad_out, self, lambd)                                            \
    ((self) >= -(lambd) && (self) <= (lambd) ? 0 : (grad_out))
