/* hardshrink (hardshrink.out): 0 on [-lambd, lambd], x elsewhere (NaN
 * stays NaN), PyTorch's hardshrink_kernel. */
#define TL_UFUNC_hardshrink(self, lambd) ((self) >= -(lambd) && (self) <= (lambd) ? 0 : (self))
