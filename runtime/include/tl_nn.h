/* NN operator helpers that are not operators themselves
 * (kernels/native/nn_ops.c; docs/NN.md). */
#ifndef TL_NN_H
#define TL_NN_H

#include <stdbool.h>
#include <stdint.h>

#include "tl_tensor.h"

/* native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd,
 * weight, bias, output_mask) -> (grad_input, grad_weight, grad_bias), with
 * PyTorch's semantics; the fused kernel behind the native_layer_norm_backward
 * operator (autograd/layer_norm_backward.c). Outputs whose
 * mask entry is false (or whose weight / bias is NULL) are NULL; the others
 * are new references. 0 / -1 with the error set. */
int tl_nn_layer_norm_backward(tl_tensor *grad_out, tl_tensor *input, const int64_t *normalized_shape,
                              int64_t normalized_shape_len, tl_tensor *mean, tl_tensor *rstd, tl_tensor *weight,
                              tl_tensor *bias, const bool *output_mask, tl_tensor **grad_input,
                              tl_tensor **grad_weight, tl_tensor **grad_bias);

#endif
