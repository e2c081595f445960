/* hardsigmoid_backward (hardsigmoid_backward.grad_input): grad * (1.0f / 6.0f)
 * (PyTorch's float one_sixth, also for double) strictly
 * inside (-3, 3), 0 elsewhere (PyTorch's hardsigmoid_backward_kernel). */
#define TL_UFUNC_hardsigmoid_backward(grad_output, self)                                               \
    ((self) > -3 && (self) < 3 ? (grad_output) * (1.0f / 6.0f) : 0)
