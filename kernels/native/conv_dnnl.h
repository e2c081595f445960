/* The convolution products of conv_gemm.h through oneDNN primitives
 * (kernels/native/conv_dnnl.c), for float32 where oneDNN is loaded, enabled
 * and measured faster (docs/NN.md "Convolution"). Each returns true when it
 * computed the product; false leaves nothing set and the caller runs the
 * im2col path (no library, a shape class kept on GEMM, a primitive oneDNN
 * would not create: that last one warns once). */
#ifndef TL_CONV_DNNL_H
#define TL_CONV_DNNL_H

#include <stdbool.h>

#include "conv_gemm.h"

bool tl_conv_dnnl_cols_from_image(const tl_conv_geom *g, const void *X, const void *W, const void *bias, void *Y);
bool tl_conv_dnnl_image_from_cols(const tl_conv_geom *g, const void *Y, const void *W, const void *bias, void *X);
bool tl_conv_dnnl_weight_grad(const tl_conv_geom *g, const void *X, const void *Y, void *dW);

#endif
