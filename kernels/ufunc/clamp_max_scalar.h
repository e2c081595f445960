/* clamp_max.out, and clamp.out with only `max` (tl_impl_clamp_max_out).
 *
 * ufunc_inner_loop: Generic: clamp_max (Floating, BFloat16, Half)
 * ufunc_inner_loop: ScalarOnly: clamp_max_int (Integral)
 * ufunc_scalar_args: max
 * ufunc_error_name: clamp_max_scalar_cpu
 */
