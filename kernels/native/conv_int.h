/* The three convolution products of conv_gemm.h for integer dtypes, on
 * contiguous int64 operands with wrapping (modulo 2^64) sums: exact, as
 * PyTorch's integer slow paths (kernels/native/conv_int.c). 0, or -1 with the
 * error set (out of memory). */
#ifndef TL_CONV_INT_H
#define TL_CONV_INT_H

#include <stdint.h>

#include "conv_gemm.h"

int tl_conv_int_cols_from_image(const tl_conv_geom *g, const int64_t *X, const int64_t *W, const int64_t *bias,
                                int64_t *Y);
int tl_conv_int_image_from_cols(const tl_conv_geom *g, const int64_t *Y, const int64_t *W, const int64_t *bias,
                                int64_t *X);
int tl_conv_int_weight_grad(const tl_conv_geom *g, const int64_t *X, const int64_t *Y, int64_t *dW);

#endif
