/* Helpers of clamp's derivative formulas (three-input pointwise), declared
 * in autograd/tl_autograd_formulas.h: PyTorch's
 * FunctionsManual.cpp clamp_backward (Scalar? and Tensor? bounds) and
 * clamp_backward_min_max, composed of entry points (tl_ops_*) so that they
 * are recorded under create_graph and differentiate again.
 *
 * Each is "grad where a bool mask holds, else 0": where(mask, grad, 0), the
 * zero a wrapped number so the result keeps grad's dtype (PyTorch's
 * at::scalar_tensor(0., grad.options())).
 */
#include "tl_autograd_formulas.h"
#include "tl_error.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/add.h"
#include "ops/ge.h"
#include "ops/gt.h"
#include "ops/le.h"
#include "ops/lt.h"
#include "ops/mul.h"
#include "ops/where.h"
#include "tl_tensor.h"

/* where(mask, grad, 0); consumes mask (NULL propagates) */
static tl_tensor *grad_where(tl_tensor *mask, tl_tensor *grad) {
    if (!mask) return NULL;
    tl_tensor *r = tl_ops_where_ScalarOther(mask, grad, tl_scalar_from_int(0));
    tl_tensor_release(mask);
    return r;
}

/* a AND b of two bool masks (mul of bools); consumes both */
static tl_tensor *mask_and(tl_tensor *a, tl_tensor *b) {
    tl_tensor *r = a && b ? tl_ops_mul_Tensor(a, b) : NULL;
    tl_tensor_release(a);
    tl_tensor_release(b);
    return r;
}

/* a OR b of two bool masks (add of bools); consumes both */
static tl_tensor *mask_or(tl_tensor *a, tl_tensor *b) {
    tl_tensor *r = a && b ? tl_ops_add_Tensor(a, b, tl_scalar_from_int(1)) : NULL;
    tl_tensor_release(a);
    tl_tensor_release(b);
    return r;
}

/* clamp(self, min, max): the gradient passes where min <= self <= max (the
 * bounds given; a bound itself counts as inside: subgradient 1) */
tl_tensor *tl_ag_clamp_backward(tl_tensor *grad, tl_tensor *self, const tl_scalar *min, const tl_scalar *max) {
    if (min && max) return grad_where(mask_and(tl_ops_ge_Scalar(self, *min), tl_ops_le_Scalar(self, *max)), grad);
    if (min) return grad_where(tl_ops_ge_Scalar(self, *min), grad);
    if (max) return grad_where(tl_ops_le_Scalar(self, *max), grad);
    tl_tensor_retain(grad);
    return grad;
}

/* clamp.Tensor, self: the same with tensor bounds (NULL: None) */
tl_tensor *tl_ag_clamp_backward_tensor(tl_tensor *grad, tl_tensor *self, tl_tensor *min, tl_tensor *max) {
    if (min && max) return grad_where(mask_and(tl_ops_ge_Tensor(self, min), tl_ops_le_Tensor(self, max)), grad);
    if (min) return grad_where(tl_ops_ge_Tensor(self, min), grad);
    if (max) return grad_where(tl_ops_le_Tensor(self, max), grad);
    tl_tensor_retain(grad);
    return grad;
}

/* clamp.Tensor, min and max: the gradient goes to the bound that was taken;
 * with min > max the result is max, so max gets it and min none */
int tl_ag_clamp_backward_min_max(tl_tensor *grad, tl_tensor *self, tl_tensor *min, tl_tensor *max,
                                 const bool *grad_input_mask, int64_t n, tl_tensor **grad_min, tl_tensor **grad_max) {
    *grad_min = *grad_max = NULL;
    if (n != 2) return tl_set_error(TL_ERR_RUNTIME, "clamp_backward_min_max: expected a mask of 2, got %lld", (long long)n);
    if (!grad) return 0;
    if (min && max) {
        if (grad_input_mask[0]) {
            *grad_min = grad_where(mask_and(tl_ops_lt_Tensor(self, min), tl_ops_lt_Tensor(min, max)), grad);
            if (!*grad_min) return -1;
        }
        if (grad_input_mask[1]) {
            *grad_max = grad_where(mask_or(tl_ops_gt_Tensor(self, max), tl_ops_lt_Tensor(max, min)), grad);
            if (!*grad_max) {
                tl_tensor_release(*grad_min);
                *grad_min = NULL;
                return -1;
            }
        }
    } else if (min && grad_input_mask[0]) {
        *grad_min = grad_where(tl_ops_lt_Tensor(self, min), grad);
        if (!*grad_min) return -1;
    } else if (max && grad_input_mask[1]) {
        *grad_max = grad_where(tl_ops_gt_Tensor(self, max), grad);
        if (!*grad_max) return -1;
    }
    return 0;
}
