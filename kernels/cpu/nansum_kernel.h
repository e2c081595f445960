/* nansum's per-ISA tables (kernels/cpu/sum_kernel.c): sum's leaf and column
 * kernels (tl_ufunc.h has their types and sum's own tables) with NaN read as
 * 0, for the floating dtypes; kernels/native/reduce_ops.c picks them through
 * tl_nansum_leaf_stub / tl_nansum_cols_stub when a walk is nansum's. */
#ifndef TL_NANSUM_KERNEL_H
#define TL_NANSUM_KERNEL_H

#include "tl_kernel.h"
#include "tl_ufunc.h"

extern const tl_sum_leaf_table_t tl_nansum_leaf_table_DEFAULT, tl_nansum_leaf_table_AVX2, tl_nansum_leaf_table_AVX512;
extern tl_kernel_stub tl_nansum_leaf_stub;
extern const tl_sum_cols_table_t tl_nansum_cols_table_DEFAULT, tl_nansum_cols_table_AVX2, tl_nansum_cols_table_AVX512;
extern tl_kernel_stub tl_nansum_cols_stub;

#endif
