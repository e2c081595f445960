/* maximum / minimum (maximum.out, minimum.out): elementwise, NaN propagates
 * from either side like PyTorch's (a NaN `self` is kept; a NaN `other` fails
 * the comparison and is taken). The integer/bool formulas skip the NaN test. */
#define TL_UFUNC_maximum(self, other) ((((self) != (self)) || ((self) > (other))) ? (self) : (other))
#define TL_UFUNC_minimum(self, other) ((((self) != (self)) || ((self) < (other))) ? (self) : (other))
#define TL_UFUNC_maximum_int(self, other) (((self) > (other)) ? (self) : (other))
#define TL_UFUNC_minimum_int(self, other) (((self) < (other)) ? (self) : (other))
