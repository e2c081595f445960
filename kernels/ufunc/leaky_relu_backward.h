/* leaky_relu_backward (leaky_relu_backward.grad_input): the gradient passes where
 * self > 0 and is scaled by negative_slope elsewhere. self_is_result only
 * matters to the meta function's check (an in-place forward with a negative
 * slope cannot be inverted); for a slope >= 0, result > 0 iff input > 0. */
#define TL_UFUNC_leaky_relu_backward(grad_output, self, negative_slope, self_is_result) \
    ((void)(self_is_result), (self) > 0 ? (grad_output) : (grad_output) * (negative_slope))
