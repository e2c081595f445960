/* fmax / fmin: the larger / smaller value, the other input where one is NaN
 * (C's fmax / fmin; NaN only where both are), written as comparisons: GCC
 * keeps fmaxf / fminf calls, which do not vectorize. Integers and bool: plain
 * maximum / minimum (PyTorch's fmax kernel falls back to maximum's). */
#define TL_UFUNC_fmax(self, other) \
    (((self) != (self)) ? (other) : (((other) != (other)) || ((self) > (other))) ? (self) : (other))
#define TL_UFUNC_fmin(self, other) \
    (((self) != (self)) ? (other) : (((other) != (other)) || ((self) < (other))) ? (self) : (other))
#define TL_UFUNC_fmax_int(self, other) (((self) > (other)) ? (self) : (other))
#define TL_UFUNC_fmin_int(self, other) (((self) < (other)) ? (self) : (other))
