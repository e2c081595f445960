/* sub: self - alpha * other  (sub.out, rsub swaps the operands)
 * ufunc_complex: yes (C99 complex arithmetic gives PyTorch's values)
 */
#define TL_UFUNC_sub(self, other, alpha) ((self) - (alpha) * (other))
