/* native_layer_norm_backward as an operator (yaml/native_functions.yaml, the
 * bool[N] block): PyTorch's schema, whose
 * `bool[3] output_mask` crosses the ABI as `const bool *, int64_t`.
 *
 * CompositeImplicitAutograd here (PyTorch: a CPU kernel plus a derivatives
 * entry over layer_norm_double_backward, not ported): while grad mode is on
 * (backward with create_graph, or a direct call that records) it is computed
 * from operators, so it differentiates again; otherwise by the NN
 * operators' fused kernel (tl_nn_layer_norm_backward). Both paths are the formula
 * helper tl_ag_native_layer_norm_backward (autograd/autograd_formulas.c). */
#include "tl_autograd_formulas.h"
#include "tl_error.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/native_layer_norm_backward.h"

int tl_native_native_layer_norm_backward(tl_keyset ks, tl_tensor *grad_out, tl_tensor *input,
                                         const int64_t *normalized_shape, int64_t normalized_shape_len,
                                         tl_tensor *mean, tl_tensor *rstd, tl_tensor *weight, tl_tensor *bias,
                                         const bool *output_mask, int64_t output_mask_len, tl_tensor **ret0,
                                         tl_tensor **ret1, tl_tensor **ret2) {
    (void)ks;
    if (output_mask_len != 3)
        return tl_set_error(TL_ERR_RUNTIME, "native_layer_norm_backward(): output_mask must have 3 elements, got %lld",
                            (long long)output_mask_len);
    return tl_ag_native_layer_norm_backward(grad_out, input, normalized_shape, normalized_shape_len, mean, rstd,
                                            weight, bias, output_mask, output_mask_len, ret0, ret1, ret2);
}
