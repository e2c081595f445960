/* bitwise_not (bitwise_not.out): ~x for integers, !x for bool (`~` of a C bool
 * would be nonzero either way). */
#define TL_UFUNC_bitwise_not(self) (~(self))
#define TL_UFUNC_bitwise_not_bool(self) (!(self))
