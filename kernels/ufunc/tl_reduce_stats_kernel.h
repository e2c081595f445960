/* Per-ISA kernels of var/std, linalg_vector_norm and logsumexp
 * (kernels/cpu/reduce_stats_kernel.c), called by kernels/native/reduce_stats.c
 * on float32 / float64 data read in place (kernels/native/reduce_direct.h).
 * Slot 0 of each table is float32, slot 1 float64. All accumulate in double.
 *
 * "row" kernels reduce n contiguous elements; "col" kernels reduce w adjacent
 * columns of n elements each, element i of column c at p[i * stride + c] (a
 * reduced dim that is not innermost: the loops vectorize along the columns),
 * one result per column into out[c]. */
#ifndef TL_REDUCE_STATS_KERNEL_H
#define TL_REDUCE_STATS_KERNEL_H

#include <stdint.h>

#include "tl_kernel.h"

/* what a norm kernel accumulates (the caller takes the root): sum x^2,
 * sum |x|, max |x|, min |x|, count of x != 0, sum |x|^p. max/min propagate NaN. */
enum { TL_NORM_L2, TL_NORM_L1, TL_NORM_INF, TL_NORM_NEGINF, TL_NORM_L0, TL_NORM_P, TL_NORM_KINDS };

/* mean and M2 (sum of squared deviations) of n >= 0 elements (Welford per lane) */
typedef void (*tl_moments_row_fn)(const void *p, int64_t n, double *mean, double *m2);
typedef void (*tl_moments_col_fn)(const void *p, int64_t n, int64_t stride, int64_t w, double *mean, double *m2);
/* the accumulated norm quantity (kind above; ord is p for TL_NORM_P) */
typedef double (*tl_norm_row_fn)(const void *p, int64_t n, double ord);
typedef void (*tl_norm_col_fn)(const void *p, int64_t n, int64_t stride, int64_t w, double ord, double *out);
/* logsumexp = log(s) + m: m the row max (0 when infinite, PyTorch's masked
 * max), s = sum exp(x - m) (NaN when a NaN is in the row) */
typedef void (*tl_lse_row_fn)(const void *p, int64_t n, double *m, double *s);
/* logsumexp of each column into out; scratch: w doubles */
typedef void (*tl_lse_col_fn)(const void *p, int64_t n, int64_t stride, int64_t w, double *out, double *scratch);

typedef struct {
    tl_moments_row_fn moments_row;
    tl_moments_col_fn moments_col;
    tl_norm_row_fn norm_row[TL_NORM_KINDS];
    tl_norm_col_fn norm_col[TL_NORM_KINDS];
    tl_lse_row_fn lse_row;
    tl_lse_col_fn lse_col;
} tl_rstats_fns;
typedef tl_rstats_fns tl_rstats_table_t[2];
extern const tl_rstats_table_t tl_rstats_table_DEFAULT, tl_rstats_table_AVX2, tl_rstats_table_AVX512;
extern tl_kernel_stub tl_rstats_stub;
/* the kernels for dtype slot s (0 float32, 1 float64) */
#define TL_RSTATS(s) ((*(const tl_rstats_table_t *)tl_rstats_stub.current)[s])

#endif
