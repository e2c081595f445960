/* lerp.Scalar_out's kernel (tl_impl_lerp_Scalar, kernels/native/ternary_ops.c):
 * the lerp formula (lerp.h) with a Scalar weight converted once per call.
 *
 * ufunc_inner_loop: Generic: lerp (Floating, BFloat16, Half)
 * ufunc_scalar_args: weight
 * ufunc_error_name: lerp_kernel_scalar
 */
