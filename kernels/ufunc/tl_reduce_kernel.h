/* Per-ISA kernels of the max/min reductions (kernels/cpu/reduce_minmax_kernel.c),
 * used by kernels/native/reduce_minmax.c for float32 (amax/amin) and float32 /
 * float64 (argmax/argmin, max.dim/min.dim) data read in place.
 * NaN propagates (PyTorch's max/amax): a NaN anywhere in the reduced elements
 * gives NaN. Slot 0 of each table is max, slot 1 min. */
#ifndef TL_REDUCE_KERNEL_H
#define TL_REDUCE_KERNEL_H

#include <stdint.h>

#include "tl_kernel.h"

/* the max (min) of n >= 1 contiguous float32 elements */
typedef float (*tl_rowmax_f32_fn)(const float *p, int64_t n);
/* acc[k] = max(acc[k], p[k]) for n contiguous elements (a reduced outer dim) */
typedef void (*tl_colmax_f32_fn)(float *acc, const float *p, int64_t n);
typedef struct {
    tl_rowmax_f32_fn row[2];
    tl_colmax_f32_fn col[2];
} tl_minmax_f32_fns;
/* an array of one, so the table decays to a pointer in TL_DEFINE_STUB */
typedef tl_minmax_f32_fns tl_minmax_f32_table_t[1];
extern const tl_minmax_f32_table_t tl_minmax_f32_table_DEFAULT, tl_minmax_f32_table_AVX2, tl_minmax_f32_table_AVX512;
extern tl_kernel_stub tl_minmax_f32_stub;
#define TL_MINMAX_F32 ((*(const tl_minmax_f32_table_t *)tl_minmax_f32_stub.current)[0])

/* argmax / argmin, slot [0] float32, [1] float64; in each, [0] max, [1] min.
 * row: the index of the first best of n >= 1 contiguous elements (a NaN is
 * the best: the first NaN's index, PyTorch's rule for both). col: for each of
 * w columns (element i of column c at p[i * stride + c], n >= 1 rows) the
 * best value into best[c] (the element dtype) and its first index into idx[c]. */
typedef int64_t (*tl_argbest_row_fn)(const void *p, int64_t n);
typedef void (*tl_argbest_col_fn)(const void *p, int64_t n, int64_t stride, int64_t w, void *best, int64_t *idx);
typedef struct {
    tl_argbest_row_fn row[2];
    tl_argbest_col_fn col[2];
} tl_argbest_fns;
typedef tl_argbest_fns tl_argbest_table_t[2];
extern const tl_argbest_table_t tl_argbest_table_DEFAULT, tl_argbest_table_AVX2, tl_argbest_table_AVX512;
extern tl_kernel_stub tl_argbest_stub;
#define TL_ARGBEST(s) ((*(const tl_argbest_table_t *)tl_argbest_stub.current)[s])

#endif
