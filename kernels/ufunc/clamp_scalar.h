/* clamp.out with both bounds Scalars (tl_impl_clamp_out). No Bool loop, as
 * PyTorch's "clamp_scalar_cpu".
 *
 * ufunc_inner_loop: Generic: clamp (Floating, BFloat16, Half)
 * ufunc_inner_loop: ScalarOnly: clamp_int (Integral)
 * ufunc_scalar_args: min, max
 * ufunc_error_name: clamp_scalar_cpu
 */
