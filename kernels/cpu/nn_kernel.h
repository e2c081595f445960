/* Per-ISA inner kernels of the NN operators (kernels/native/nn_ops.c calls
 * them through the stubs below): softmax / log_softmax forward and backward,
 * layer_norm rows. Table slot 0 is float32, slot 1 float64; float16 and
 * bfloat16 inputs are computed in float32 by the caller (PyTorch's opmath).
 *
 * "row" kernels take one contiguous run of n elements (the reduced dim is
 * innermost); "col" kernels take `len` adjacent columns of n elements each,
 * element i of column c at p[i * stride + c] (the reduced dim is not
 * innermost: the loops vectorize along the columns). */
#ifndef TL_NN_KERNEL_H
#define TL_NN_KERNEL_H

#include <stdint.h>

#include "tl_kernel.h"

/* mode: 0 softmax, 1 log_softmax; scratch: 2 * len elements of the dtype */
typedef void (*tl_softmax_row_fn)(const void *x, void *y, int64_t n, int mode);
typedef void (*tl_softmax_col_fn)(const void *x, void *y, int64_t n, int64_t stride, int64_t len, int mode,
                                  void *scratch);
/* gi = softmax: y * (g - sum(g * y)); log_softmax: g - exp(y) * sum(g) */
typedef void (*tl_softmax_bwd_row_fn)(const void *g, const void *y, void *gi, int64_t n, int mode);
typedef void (*tl_softmax_bwd_col_fn)(const void *g, const void *y, void *gi, int64_t n, int64_t stride,
                                      int64_t len, int mode, void *scratch);
/* one layer_norm row of n elements: y = (x - mean) * rstd * w + b (w, b may
 * be NULL); mean and rstd returned in double */
typedef void (*tl_layer_norm_row_fn)(const void *x, const void *w, const void *b, void *y, int64_t n, double eps,
                                     double *mean, double *rstd);
/* the input gradient of one row: gx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)),
 * gw = g * w (w may be NULL) */
typedef void (*tl_layer_norm_bwd_row_fn)(const void *g, const void *x, const void *w, void *gx, int64_t n,
                                         double mean, double rstd);

typedef struct {
    tl_softmax_row_fn fwd_row;
    tl_softmax_col_fn fwd_col;
    tl_softmax_bwd_row_fn bwd_row;
    tl_softmax_bwd_col_fn bwd_col;
    tl_layer_norm_row_fn ln_row;
    tl_layer_norm_bwd_row_fn ln_bwd_row;
} tl_nn_kernels;

typedef tl_nn_kernels tl_nn_table_t[2];
extern const tl_nn_table_t tl_nn_table_DEFAULT, tl_nn_table_AVX2, tl_nn_table_AVX512;
extern tl_kernel_stub tl_nn_stub;

#endif
