/* heaviside(self, values): values where self == 0, else self > 0 (NaN: 0),
 * PyTorch's kernel; every dtype (the meta function requires equal dtypes) */
#define TL_UFUNC_heaviside(self, values) ((self) == 0 ? (values) : ((self) > 0))
