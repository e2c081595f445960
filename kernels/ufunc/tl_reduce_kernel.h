/* Per-ISA kernels of the max/min reductions (kernels/cpu/reduce_minmax_kernel.c),
 * used by kernels/native/reduce_minmax.c for float32 contiguous layouts.
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

#endif
