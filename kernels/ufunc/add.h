/* add: self + alpha * other  (add.out; sub reuses it with -alpha in PyTorch,
 * torchlet gives sub its own formula). bool: `or` (C's bool arithmetic,
 * stored as != 0). ufunc_complex: yes (C99 complex arithmetic) */
#define TL_UFUNC_add(self, other, alpha) ((self) + (alpha) * (other))
