/* lerp.Tensor_out's kernel (tl_impl_lerp_Tensor, kernels/native/ternary_ops.c):
 * the lerp formula (lerp.h) with a tensor weight.
 *
 * ufunc_inner_loop: Generic: lerp (Floating, BFloat16, Half)
 * ufunc_error_name: lerp_kernel_tensor
 */
