/* svd_backward (issue 6, missing ops: the derivative of _linalg_svd, so of
 * linalg_svdvals and the 'nuc' / 2 / -2 matrix norms), declared in
 * runtime/include/tl_autograd_formulas.h. Built from entry points (tl_ops_*)
 * so that it is recorded under create_graph and differentiates again.
 *
 * Only the singular values' gradient is implemented (PyTorch's
 * FunctionsManual.cpp svd_backward, its gS-only branch):
 *     gA = (U * gS.unsqueeze(-2)) @ Vh
 * with the reduced U [.., m, k] and Vh [.., k, n]. Gradients flowing into U or
 * Vh (linalg_svd's U / Vh used downstream) raise NotImplementedError. */
#include "tl_autograd_formulas.h"
#include "tl_error.h"
#include "tl_ops.h"
#include "tl_tensor.h"

tl_tensor *tl_ag_svd_backward(tl_tensor *gU, tl_tensor *gS, tl_tensor *gVh, tl_tensor *U, tl_tensor *S,
                              tl_tensor *Vh) {
    (void)S;
    if (gU || gVh) {
        tl_set_error(TL_ERR_NOT_IMPLEMENTED, "svd_backward: the gradients of U and Vh are not implemented in torchlet "
                                             "(only those of the singular values: linalg.svdvals, matrix norms)");
        return NULL;
    }
    if (!gS) {
        tl_set_error(TL_ERR_RUNTIME, "svd_backward: no gradient given");
        return NULL;
    }
    tl_tensor *g = tl_ops_unsqueeze(gS, -2);
    if (!g) return NULL;
    tl_tensor *ug = tl_ops_mul_Tensor(U, g);
    tl_tensor_release(g);
    if (!ug) return NULL;
    tl_tensor *r = tl_ops_matmul(ug, Vh);
    tl_tensor_release(ug);
    return r;
}
