/* sub: self - alpha * other  (sub.out, rsub swaps the operands) */
#define TL_UFUNC_sub(self, other, alpha) ((self) - (alpha) * (other))
