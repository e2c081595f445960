/* Shared plumbing of the reduction kernels (reduce_*.c): dim lists -> a mask
 * of reduced dims, the result shape, and the "rows" layout most reductions
 * compute over: the input permuted so that kept dims come first and reduced
 * dims last, converted to a compute dtype (float64 for floating inputs, int64
 * for integers and bool: exact for every value a max/min/index reduction
 * returns, and the accumulator PyTorch's CPU kernels use for the others), and
 * made contiguous, so output j reduces the R contiguous elements at j * R.
 * sum, mean and amax/amin keep their own strided fast paths. */
#ifndef TL_REDUCE_UTIL_H
#define TL_REDUCE_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "tl_dtype.h"
#include "tl_tensor.h"

enum { TL_RD_MAXD = 64 };

/* reduced-dims mask from an int[] dim list; NULL or an empty list means
 * every dim (PyTorch's sum/mean/amax convention). IndexError for a dim out
 * of range, RuntimeError for a repeated one. A 0-dim tensor accepts 0 / -1. */
int tl_rd_mask(const tl_tensor *self, const int64_t *dim, int64_t dim_len, uint64_t *mask);
/* one dim (wrapped; IndexError with PyTorch's text) */
int tl_rd_wrap_dim(const tl_tensor *self, int64_t dim, int64_t *out);
/* the result shape: reduced dims dropped, or kept as 1 with keepdim */
int64_t tl_rd_shape(const tl_tensor *self, uint64_t mask, bool keepdim, int64_t *shape);
/* product of the reduced (R) and kept (O) sizes */
void tl_rd_counts(const tl_tensor *self, uint64_t mask, int64_t *O, int64_t *R);
/* the compute dtype for dt: FLOAT64 for floating dtypes, INT64 otherwise */
tl_dtype tl_rd_compute_dtype(tl_dtype dt);
/* [O, R] rows of x (see above), a new reference; NULL on error */
tl_tensor *tl_rd_rows(const tl_tensor *x, uint64_t mask, tl_dtype cdt);
/* where a kernel writes O results of dtype cdt: out itself (retained) when it
 * is contiguous and of dtype cdt, else a contiguous temporary of out's shape;
 * tl_rd_commit copies a temporary into out and releases it */
tl_tensor *tl_rd_target(tl_tensor *out, tl_dtype cdt);
int tl_rd_commit(tl_tensor *out, tl_tensor *target);
/* PyTorch's "name(): Expected reduction dim ... to have non-zero size." check
 * for reductions without identity (max, amax, argmax ...) */
int tl_rd_check_nonempty(const tl_tensor *self, uint64_t mask, bool dim_given, const char *name, int index_error);

/* nansum with a floating result dtype: sum's walk, NaN read as 0
 * (reduce_ops.c) */
tl_tensor *tl_rd_nansum(tl_tensor *self, const int64_t *dim, int64_t dim_len, bool keepdim, tl_dtype dtype);

/* argmax / argmin's reduced dims: `dim` (wrapped) when given, else every dim
 * (the flattened index) */
int tl_rd_arg_mask(const tl_tensor *self, int64_t dim, bool dim_has, uint64_t *mask);

/* the device path of the reductions whose CPU kernels are not structured
 * (kernels/cuda/tl_cuda_reduce.c), over the dims in mask of self: var (std
 * when take_sqrt) with mean (NULL: none) of self converted to var's dtype;
 * logsumexp, prod and nansum (floating) of self converted to out's dtype; max / min values
 * (vals) and indices (idx), either NULL */
int tl_cuda_var_into(const tl_tensor *self, uint64_t mask, double correction, int take_sqrt, tl_tensor *var,
                     tl_tensor *mean);
int tl_cuda_logsumexp_into(const tl_tensor *self, uint64_t mask, tl_tensor *out);
int tl_cuda_prod_into(const tl_tensor *self, uint64_t mask, tl_tensor *out);
int tl_cuda_nansum_into(const tl_tensor *self, uint64_t mask, tl_tensor *out);
int tl_cuda_minmax_into(const tl_tensor *self, uint64_t mask, int is_max, tl_tensor *vals, tl_tensor *idx);

#endif
