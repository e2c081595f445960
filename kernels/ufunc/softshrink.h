/* softshrink (softshrink.out): x - lambd above lambd, x + lambd below
 * -lambd, x * 0 between (PyTorch's softshrink_kernel: keeps NaN and -0). */
#define TL_UFUNC_softshrink(self, lambd)                                                               \
    ((self) > (lambd) ? (self) - (lambd) : ((self) < -(lambd) ? (self) + (lambd) : (self) * 0))
