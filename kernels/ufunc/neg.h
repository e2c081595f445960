/* neg: -self (bool is refused by the meta function) */
#define TL_UFUNC_neg(self) (-(self))
