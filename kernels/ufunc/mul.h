/* mul: self * other (bool: `and`) */
#define TL_UFUNC_mul(self, other) ((self) * (other))
