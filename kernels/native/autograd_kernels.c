/* Kernels of the backward operators declared for derivative formulas
 * (yaml/native_functions.yaml: threshold_backward). The loops live with the
 * formula helpers in runtime/src/autograd_formulas.c. */
#include "tl_autograd_formulas.h"
#include "tl_ops.h"

/* relu's gradient: grad_output where self > threshold, else 0 (CPU and Meta) */
tl_tensor *tl_native_threshold_backward(tl_keyset ks, tl_tensor *grad_output, tl_tensor *self, tl_scalar threshold) {
    (void)ks;
    return tl_ag_threshold_backward_cpu(grad_output, self, threshold);
}
