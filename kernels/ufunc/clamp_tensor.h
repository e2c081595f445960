/* clamp.Tensor_out with both bounds tensors (tl_impl_clamp_Tensor_out; with
 * one bound it runs maximum / minimum, as PyTorch runs maximum_stub /
 * minimum_stub). No Bool loop, as PyTorch's "clamp_cpu".
 *
 * ufunc_inner_loop: Generic: clamp (Floating, BFloat16, Half)
 * ufunc_inner_loop: ScalarOnly: clamp_int (Integral)
 * ufunc_error_name: clamp_cpu
 */
