/* where.self_out: condition ? self : other. The condition is read as bool in
 * every loop (a uint8 condition, deprecated in PyTorch, tests != 0 the same
 * way); self and other in their promoted dtype
 * (tl_structured_build_where_op).
 * ufunc_input_dtype: condition Bool
 * ufunc_error_name: where_cpu
 * ufunc_complex: yes (a selection: complex values pass through whole)
 */
#define TL_UFUNC_where(condition, self, other) ((condition) ? (self) : (other))
