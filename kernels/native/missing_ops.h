/* Shared helpers of the issue-6 "missing ops" kernels (nonzero.c,
 * out_overloads.c, linalg_norm.c). */
#ifndef TL_MISSING_OPS_H
#define TL_MISSING_OPS_H

#include <stdint.h>

#include "tl_tensor.h"

/* PyTorch's at::native::resize_output: an out= tensor of another shape is
 * resized, with the deprecation warning when it had elements. */
int tl_missing_resize_output(tl_tensor *out, int64_t ndim, const int64_t *sizes);

/* out= through a functional result: checks the dtype (PyTorch's "Expected out
 * tensor to have dtype ..."), resizes `out` like resize_output and copies
 * `result` into it. Releases `result`; returns a new reference to out. */
tl_tensor *tl_missing_copy_to_out(tl_tensor *result, tl_tensor *out);

#endif
