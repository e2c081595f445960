/* Per-ISA plane loops of the pooling operators (kernels/native/pool_ops.c
 * shapes the work and calls them through tl_pool_stub). One call handles one
 * contiguous input plane of ih x iw elements and its oh x ow output plane
 * (NCHW: planes are the N * C leading elements, handed to threads by the
 * caller). Table slot 0 is float32, 1 float64, 2 int64 (max pooling of
 * integer inputs, avg_pool2d of int64); float16 / bfloat16 are computed in
 * float32 by the caller.
 *
 * Windows and numerics as PyTorch's CPU kernels: a max window starts at its
 * first in-bounds element, a larger value or a NaN replaces the maximum (so a
 * NaN wins), indices are flat offsets ih * iw_size + iw within the plane;
 * avg windows are clamped to the padded extent for count_include_pad and to
 * the input for the rest; adaptive windows are [floor(o * in / out),
 * ceil((o + 1) * in / out)). */
#ifndef TL_POOL_KERNEL_H
#define TL_POOL_KERNEL_H

#include <stdbool.h>
#include <stdint.h>

#include "tl_kernel.h"

typedef struct {
    int64_t ih, iw, oh, ow;
    int64_t kh, kw, sh, sw, ph, pw, dh, dw;
    bool count_include_pad;
    int64_t divisor; /* avg: divisor_override, 0 when not given */
} tl_pool_geom;

/* max_pool2d: y = window maxima, ind = their flat plane offsets */
typedef void (*tl_max_pool_fn)(const void *x, void *y, int64_t *ind, const tl_pool_geom *g);
/* avg_pool2d forward: y = window sums / divisor; backward: gi (zeroed by the
 * callee) += g / divisor over each window */
typedef void (*tl_avg_pool_fn)(const void *x, void *y, const tl_pool_geom *g);
/* adaptive_avg_pool2d forward / backward (same shape as tl_avg_pool_fn) */
typedef void (*tl_adaptive_avg_fn)(const void *x, void *y, const tl_pool_geom *g);
typedef void (*tl_adaptive_max_fn)(const void *x, void *y, int64_t *ind, const tl_pool_geom *g);
/* max pooling backward of one plane: gi (n_in elements, zeroed by the
 * callee) += g at ind, for n_out gradients */
typedef void (*tl_max_pool_bwd_fn)(const void *g, const int64_t *ind, void *gi, int64_t n_out, int64_t n_in);

typedef struct {
    tl_max_pool_fn max_fwd;
    tl_max_pool_bwd_fn max_bwd;
    tl_avg_pool_fn avg_fwd, avg_bwd;
    tl_adaptive_avg_fn aavg_fwd, aavg_bwd;
    tl_adaptive_max_fn amax_fwd;
} tl_pool_kernels;

typedef tl_pool_kernels tl_pool_table_t[3];
extern const tl_pool_table_t tl_pool_table_DEFAULT, tl_pool_table_AVX2, tl_pool_table_AVX512;
extern tl_kernel_stub tl_pool_stub;

#endif
