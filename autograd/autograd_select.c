/* Derivative helpers of the selection operators (yaml/derivatives.yaml,
 * `# ---- selection` block): PyTorch's aminmax_backward, nansum_backward and
 * take_backward (FunctionsManual.cpp), over torchlet's operators so they
 * are differentiable again. */
#include <float.h>
#include <stdbool.h>
#include <stdint.h>

#include "tl_autograd_formulas.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/abs.h"
#include "ops/add.h"
#include "ops/eq.h"
#include "ops/exp.h"
#include "ops/flip.h"
#include "ops/gt.h"
#include "ops/index_put.h"
#include "ops/isnan.h"
#include "ops/log.h"
#include "ops/logcumsumexp.h"
#include "ops/logical_not.h"
#include "ops/lt.h"
#include "ops/mul.h"
#include "ops/reshape.h"
#include "ops/sub.h"
#include "ops/where.h"
#include "tl_tensor.h"

/* amax / amin's gradient for each defined output grad, summed */
tl_tensor *tl_ag_aminmax_backward(tl_tensor *self, int64_t dim, bool dim_has, bool keepdim, tl_tensor *grad_min,
                                  tl_tensor *grad_max, tl_tensor *min, tl_tensor *max) {
    const int64_t *dims = dim_has ? &dim : NULL;
    const int64_t nd = dim_has ? 1 : 0;
    tl_tensor *acc = tl_zeros(self->ndim, self->sizes, self->dtype, TL_CPU);
    tl_tensor *grads[2] = {grad_min, grad_max}, *vals[2] = {min, max};
    for (int i = 0; i < 2 && acc; i++) {
        if (!grads[i]) continue;
        tl_tensor *rv = tl_ag_restore_reduced_dims(vals[i], dims, nd, keepdim);
        tl_tensor *mask = rv ? tl_ops_eq_Tensor(rv, self) : NULL;
        tl_tensor *rg = mask ? tl_ag_restore_reduced_dims(grads[i], dims, nd, keepdim) : NULL;
        tl_tensor *g = rg ? tl_ag_scale_grad_by_count(rg, mask, dims, nd) : NULL;
        tl_tensor *sum = g ? tl_ops_add_Tensor(acc, g, tl_scalar_from_int(1)) : NULL;
        tl_tensor_release(rv);
        tl_tensor_release(mask);
        tl_tensor_release(rg);
        tl_tensor_release(g);
        tl_tensor_release(acc);
        acc = sum;
    }
    return acc;
}

/* sum_backward masked to the non-NaN elements */
tl_tensor *tl_ag_nansum_backward(tl_tensor *grad, tl_tensor *self, const int64_t *dims, int64_t ndims, bool keepdim) {
    tl_tensor *g = tl_ag_sum_backward(grad, self->sizes, self->ndim, dims, ndims, keepdim);
    tl_tensor *nan = g ? tl_ops_isnan(self) : NULL;
    tl_tensor *keep = nan ? tl_ops_logical_not(nan) : NULL;
    tl_tensor *r = keep ? tl_ops_mul_Tensor(g, keep) : NULL;
    tl_tensor_release(g);
    tl_tensor_release(nan);
    tl_tensor_release(keep);
    return r;
}

/* zeros_like(self).put_(index, grad, accumulate=true) */
tl_tensor *tl_ag_take_backward(tl_tensor *grad, tl_tensor *self, tl_tensor *index) {
    const int64_t n = self->numel, m = index->numel;
    tl_tensor *z = tl_zeros(1, &n, grad->dtype, TL_CPU);
    tl_tensor *fi = z ? tl_reshape(index, 1, &m) : NULL;
    tl_tensor *fg = fi ? tl_ops_reshape(grad, &m, 1) : NULL;
    tl_tensor *put = fg ? tl_ops_index_put(z, &fi, 1, fg, true) : NULL;
    tl_tensor *r = put ? tl_ops_reshape(put, self->sizes, self->ndim) : NULL;
    tl_tensor_release(z);
    tl_tensor_release(fi);
    tl_tensor_release(fg);
    tl_tensor_release(put);
    return r;
}

/* flip(logcumsumexp(flip(x, dim), dim), dim) */
static tl_tensor *reverse_logcumsumexp(tl_tensor *x, int64_t dim) {
    tl_tensor *f = tl_ops_flip(x, &dim, 1);
    tl_tensor *l = f ? tl_ops_logcumsumexp(f, dim) : NULL;
    tl_tensor *r = l ? tl_ops_flip(l, &dim, 1) : NULL;
    tl_tensor_release(f);
    tl_tensor_release(l);
    return r;
}

/* exp(reverse_logcumsumexp(log_grad_part - result) + self) */
static tl_tensor *lcse_part(tl_tensor *log_part, tl_tensor *self, tl_tensor *result, int64_t dim) {
    tl_tensor *a = tl_ops_sub_Tensor(log_part, result, tl_scalar_from_int(1));
    tl_tensor *b = a ? reverse_logcumsumexp(a, dim) : NULL;
    tl_tensor *c = b ? tl_ops_add_Tensor(b, self, tl_scalar_from_int(1)) : NULL;
    tl_tensor *r = c ? tl_ops_exp(c) : NULL;
    tl_tensor_release(a);
    tl_tensor_release(b);
    tl_tensor_release(c);
    return r;
}

/* PyTorch's logcumsumexp_backward (real dtypes): the positive and negative
 * parts of grad in log space, each through a reversed logcumsumexp */
tl_tensor *tl_ag_logcumsumexp_backward(tl_tensor *grad, tl_tensor *self, tl_tensor *result, int64_t dim) {
    if (grad->ndim == 0 || grad->numel == 0) return tl_tensor_retain(grad), grad;
    const double lowest = grad->dtype == TL_FLOAT64 ? -DBL_MAX : grad->dtype == TL_FLOAT32 ? -FLT_MAX
                        : grad->dtype == TL_BFLOAT16 ? -3.38953139e38 : -65504.0;
    tl_tensor *gmin = tl_full(0, NULL, tl_scalar_from_double(lowest), grad->dtype, TL_CPU);
    tl_tensor *ab = gmin ? tl_ops_abs(grad) : NULL;
    tl_tensor *lg = ab ? tl_ops_log(ab) : NULL;
    tl_tensor *pos = lg ? tl_ops_gt_Scalar(grad, tl_scalar_from_int(0)) : NULL;
    tl_tensor *neg = pos ? tl_ops_lt_Scalar(grad, tl_scalar_from_int(0)) : NULL;
    tl_tensor *lp = neg ? tl_ops_where_self(pos, lg, gmin) : NULL;
    tl_tensor *ln = lp ? tl_ops_where_self(neg, lg, gmin) : NULL;
    tl_tensor *op = ln ? lcse_part(lp, self, result, dim) : NULL;
    tl_tensor *on = op ? lcse_part(ln, self, result, dim) : NULL;
    tl_tensor *r = on ? tl_ops_sub_Tensor(op, on, tl_scalar_from_int(1)) : NULL;
    tl_tensor *list[] = {gmin, ab, lg, pos, neg, lp, ln, op, on};
    for (size_t i = 0; i < sizeof list / sizeof *list; i++) tl_tensor_release(list[i]);
    return r;
}
