/* mul: self * other (bool: `and`)
 * ufunc_complex: yes (C99 complex arithmetic gives PyTorch's values)
 */
#define TL_UFUNC_mul(self, other) ((self) * (other))
