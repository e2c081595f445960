/* clamp formulas, shared by the standalone kernels clamp_scalar,
 * clamp_min_scalar, clamp_max_scalar and clamp_tensor (kernels/native/ternary_ops.c
 * picks one per call, as PyTorch's clamp impls pick a stub).
 *
 * Floats: a NaN in self or in a bound gives NaN (PyTorch 2.13's CPU results:
 * clamp(x, nan) and clamp(nan, 0, 1) are NaN); a NaN self is kept by the
 * `x != x` test, a NaN bound fails the comparison and is taken. min > max
 * gives max, like std::min(std::max(x, min), max). Integers: plain compares.
 */
#define TL_UFUNC_clamp_min(self, min) ((((self) != (self)) || ((self) > (min))) ? (self) : (min))
#define TL_UFUNC_clamp_max(self, max) ((((self) != (self)) || ((self) < (max))) ? (self) : (max))
/* both bounds written out, not as clamp_max(clamp_min(..)): a nested formula
 * repeats its inner expression and GCC then does not vectorize the loop (7x
 * slower on 2^24 float32). A NaN bound gives lo + hi (NaN). */
#define TL_UFUNC_clamp(self, min, max)                                              \
    (((min) != (min) || (max) != (max)) ? (min) + (max)                            \
     : ((self) < (min)) ? (((min) < (max)) ? (min) : (max))                         \
     : ((self) > (max)) ? (max) : (self))
#define TL_UFUNC_clamp_min_int(self, min) (((self) > (min)) ? (self) : (min))
#define TL_UFUNC_clamp_max_int(self, max) (((self) < (max)) ? (self) : (max))
#define TL_UFUNC_clamp_int(self, min, max) \
    (((self) < (min)) ? (((min) < (max)) ? (min) : (max)) : ((self) > (max)) ? (max) : (self))
