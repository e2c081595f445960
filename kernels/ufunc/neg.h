/* neg: -self (bool is refused by the meta function)
 * ufunc_complex: yes (C99 complex arithmetic gives PyTorch's values)
 */
#define TL_UFUNC_neg(self) (-(self))
