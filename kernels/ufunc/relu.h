/* relu: max(self, 0); NaN propagates (PyTorch: relu(nan) = nan).
 *
 * relu has no out= variant in PyTorch's schema, so it cannot be a structured
 * ufunc_inner_loop operator; its hand-written kernel (kernels/native/
 * activation.c) runs the loops generated from this formula. The dtypes are
 * declared here, in the ufunc_inner_loop syntax, for such standalone formulas:
 *
 * ufunc_inner_loop: Generic: relu (All, BFloat16, Half)
 */
#define TL_UFUNC_relu(self) ((((self) > 0) || ((self) != (self))) ? (self) : 0)
