/* Shared helpers of the nonzero, overload and matrix-norm kernels (nonzero.c,
 * out_overloads.c, linalg_norm.c, random_functional.c, fft.c; docs/OPS_MISSING.md). */
#ifndef TL_MISSING_OPS_H
#define TL_MISSING_OPS_H

#include <stdint.h>

#include "tl_tensor.h"

/* out= through a functional result: checks the dtype (PyTorch's "Expected out
 * tensor to have dtype ..."), resizes `out` (tl_structured_resize_out) and copies
 * `result` into it. Releases `result`; returns a new reference to out. */
tl_tensor *tl_missing_copy_to_out(tl_tensor *result, tl_tensor *out);
/* the same without the dtype check: copy_ casts (the autogen out= variants,
 * the FFT operators' .out) */
tl_tensor *tl_missing_cast_to_out(tl_tensor *result, tl_tensor *out);

#endif
