/* clamp_min.out, and clamp.out with only `min` (tl_impl_clamp_min_out).
 *
 * ufunc_inner_loop: Generic: clamp_min (Floating, BFloat16, Half)
 * ufunc_inner_loop: ScalarOnly: clamp_min_int (Integral)
 * ufunc_scalar_args: min
 * ufunc_error_name: clamp_min_scalar_cpu
 */
