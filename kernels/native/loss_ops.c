/* Pointwise losses: l1_loss, smooth_l1_loss, huber_loss, soft_margin_loss,
 * binary_cross_entropy (+ their backward operators) and kl_div.
 * The elementwise terms are ufunc formulas (kernels/ufunc/smooth_l1.h,
 * huber.h, soft_margin.h, binary_cross_entropy.h and their _backward.h),
 * run over a TensorIterator of the operands; the reduction is
 * PyTorch's apply_loss_reduction (mean() / sum()). l1_loss and kl_div are
 * CompositeImplicitAutograd compositions, as in PyTorch. */
#include <stdint.h>

#include "tl_error.h"
#include "tl_iter.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/abs.h"
#include "ops/all.h"
#include "ops/binary_cross_entropy.h"
#include "ops/binary_cross_entropy_backward.h"
#include "ops/eq.h"
#include "ops/exp.h"
#include "ops/ge.h"
#include "ops/huber_loss.h"
#include "ops/huber_loss_backward.h"
#include "ops/kl_div.h"
#include "ops/l1_loss.h"
#include "ops/le.h"
#include "ops/log.h"
#include "ops/logical_and.h"
#include "ops/mean.h"
#include "ops/mul.h"
#include "ops/smooth_l1_loss.h"
#include "ops/smooth_l1_loss_backward.h"
#include "ops/soft_margin_loss.h"
#include "ops/soft_margin_loss_backward.h"
#include "ops/sub.h"
#include "ops/sum.h"
#include "ops/where.h"
#include "tl_tensor.h"
#include "ufunc_binary_cross_entropy.h"
#include "ufunc_binary_cross_entropy_backward.h"
#include "ufunc_huber.h"
#include "ufunc_huber_backward.h"
#include "ufunc_smooth_l1.h"
#include "ufunc_smooth_l1_backward.h"
#include "ufunc_soft_margin.h"
#include "ufunc_soft_margin_backward.h"

/* PyTorch's Reduction enum */
enum { RED_NONE = 0, RED_MEAN = 1, RED_SUM = 2 };

static int bad_reduction(int64_t r) {
    if (r < RED_NONE || r > RED_SUM)
        return tl_set_error(TL_ERR_VALUE, "%lld is not a valid value for reduction", (long long)r);
    return 0;
}

/* apply_loss_reduction: consumes `loss` (a new reference) */
static tl_tensor *reduce_loss(tl_tensor *loss, int64_t reduction) {
    if (!loss || reduction == RED_NONE) return loss;
    tl_tensor *r = reduction == RED_MEAN ? tl_ops_mean(loss, TL_DTYPE_UNDEFINED) : tl_ops_sum(loss, TL_DTYPE_UNDEFINED);
    tl_tensor_release(loss);
    return r;
}

/* the gradient's scale: 1 / numel under Mean (PyTorch's `norm`) */
static tl_scalar mean_norm(tl_tensor *self, int64_t reduction) {
    const int64_t n = tl_tensor_numel(self);
    return tl_scalar_from_double(reduction == RED_MEAN && n > 0 ? 1.0 / (double)n : 1.0);
}

typedef int (*run1_fn)(tl_iter *);
typedef int (*run2_fn)(tl_iter *, tl_scalar);
typedef int (*run3_fn)(tl_iter *, tl_scalar, tl_scalar);

/* an iterator over (out, a, b[, c]) with PyTorch's binary_op promotion;
 * NULL with the error set when it cannot be built */
static tl_iter *loss_iter(tl_tensor *a, tl_tensor *b, tl_tensor *c) {
    tl_iter *it = tl_iter_new(TL_ITER_BINARY_OP);
    if (!it) return NULL;
    if (tl_iter_add_output(it, NULL) == 0 && tl_iter_add_input(it, a) == 0 && tl_iter_add_input(it, b) == 0 &&
        (!c || tl_iter_add_input(it, c) == 0) && tl_iter_build(it) == 0)
        return it;
    tl_iter_free(it);
    return NULL;
}

/* the iterator's output after rc == 0 (a new reference), the iterator freed */
static tl_tensor *iter_done(tl_iter *it, int rc) {
    tl_tensor *r = rc == 0 ? tl_iter_output(it, 0) : NULL;
    tl_iter_free(it);
    return r;
}

static tl_tensor *elementwise0(tl_tensor *a, tl_tensor *b, tl_tensor *c, run1_fn run) {
    tl_iter *it = loss_iter(a, b, c);
    return it ? iter_done(it, run(it)) : NULL;
}

static tl_tensor *elementwise1(tl_tensor *a, tl_tensor *b, tl_tensor *c, run2_fn run, tl_scalar s0) {
    tl_iter *it = loss_iter(a, b, c);
    return it ? iter_done(it, run(it, s0)) : NULL;
}

static tl_tensor *elementwise2(tl_tensor *a, tl_tensor *b, tl_tensor *c, run3_fn run, tl_scalar s0, tl_scalar s1) {
    tl_iter *it = loss_iter(a, b, c);
    return it ? iter_done(it, run(it, s0, s1)) : NULL;
}

/* ------------------------------------------------------------ l1_loss */

/* l1_loss = apply_loss_reduction((self - target).abs()) (CompositeImplicitAutograd) */
tl_tensor *tl_native_l1_loss(tl_keyset ks, tl_tensor *self, tl_tensor *target, int64_t reduction) {
    (void)ks;
    if (bad_reduction(reduction)) return NULL;
    tl_tensor *d = tl_ops_sub_Tensor(self, target, tl_scalar_from_int(1));
    if (!d) return NULL;
    tl_tensor *a = tl_ops_abs(d);
    tl_tensor_release(d);
    return reduce_loss(a, reduction);
}

/* ----------------------------------------------------- smooth_l1_loss */

tl_tensor *tl_native_smooth_l1_loss_cpu(tl_keyset ks, tl_tensor *self, tl_tensor *target, int64_t reduction,
                                        double beta) {
    (void)ks;
    if (bad_reduction(reduction)) return NULL;
    if (beta < 0) {
        tl_set_error(TL_ERR_RUNTIME, "smooth_l1_loss does not support negative values for beta.");
        return NULL;
    }
    return reduce_loss(elementwise1(self, target, NULL, tl_ufunc_smooth_l1_run, tl_scalar_from_double(beta)),
                       reduction);
}

tl_tensor *tl_native_smooth_l1_loss_backward_cpu(tl_keyset ks, tl_tensor *grad_output, tl_tensor *self,
                                                 tl_tensor *target, int64_t reduction, double beta) {
    (void)ks;
    if (bad_reduction(reduction)) return NULL;
    return elementwise2(self, target, grad_output, tl_ufunc_smooth_l1_backward_run, mean_norm(self, reduction),
                        tl_scalar_from_double(beta));
}

/* --------------------------------------------------------- huber_loss */

tl_tensor *tl_native_huber_loss(tl_keyset ks, tl_tensor *self, tl_tensor *target, int64_t reduction, double delta) {
    (void)ks;
    if (bad_reduction(reduction)) return NULL;
    if (!(delta > 0)) {
        tl_set_error(TL_ERR_RUNTIME, "huber_loss does not support non-positive values for delta.");
        return NULL;
    }
    return reduce_loss(elementwise1(self, target, NULL, tl_ufunc_huber_run, tl_scalar_from_double(delta)),
                       reduction);
}

tl_tensor *tl_native_huber_loss_backward(tl_keyset ks, tl_tensor *grad_output, tl_tensor *self, tl_tensor *target,
                                         int64_t reduction, double delta) {
    (void)ks;
    if (bad_reduction(reduction)) return NULL;
    return elementwise2(self, target, grad_output, tl_ufunc_huber_backward_run, mean_norm(self, reduction),
                        tl_scalar_from_double(delta));
}

/* --------------------------------------------------- soft_margin_loss */

tl_tensor *tl_native_soft_margin_loss(tl_keyset ks, tl_tensor *self, tl_tensor *target, int64_t reduction) {
    (void)ks;
    if (bad_reduction(reduction)) return NULL;
    return reduce_loss(elementwise0(self, target, NULL, tl_ufunc_soft_margin_run), reduction);
}

tl_tensor *tl_native_soft_margin_loss_backward(tl_keyset ks, tl_tensor *grad_output, tl_tensor *self,
                                               tl_tensor *target, int64_t reduction) {
    (void)ks;
    if (bad_reduction(reduction)) return NULL;
    return elementwise1(self, target, grad_output, tl_ufunc_soft_margin_backward_run, mean_norm(self, reduction));
}

/* ----------------------------------------------- binary_cross_entropy */

/* PyTorch's kernel check: every input element in [0, 1] (NaN fails) */
static int check_unit_interval(tl_tensor *self) {
    if (tl_tensor_device(self) == TL_META) return 0;
    tl_tensor *ge = NULL, *le = NULL, *both = NULL, *all = NULL;
    int rc = -1;
    if ((ge = tl_ops_ge_Scalar(self, tl_scalar_from_int(0))) && (le = tl_ops_le_Scalar(self, tl_scalar_from_int(1))) &&
        (both = tl_ops_logical_and(ge, le)) && (all = tl_ops_all(both)))
        rc = *(const uint8_t *)tl_tensor_data_ptr(all)
                 ? 0
                 : tl_set_error(TL_ERR_RUNTIME, "all elements of input should be between 0 and 1");
    tl_tensor_release(ge);
    tl_tensor_release(le);
    tl_tensor_release(both);
    tl_tensor_release(all);
    return rc;
}

/* x * weight when a weight is given; consumes x */
static tl_tensor *weighted(tl_tensor *x, tl_tensor *weight) {
    if (!x || !weight) return x;
    tl_tensor *r = tl_ops_mul_Tensor(x, weight);
    tl_tensor_release(x);
    return r;
}

tl_tensor *tl_native_binary_cross_entropy_cpu(tl_keyset ks, tl_tensor *self, tl_tensor *target, tl_tensor *weight,
                                              int64_t reduction) {
    (void)ks;
    if (bad_reduction(reduction) || check_unit_interval(self)) return NULL;
    tl_tensor *loss = elementwise0(self, target, NULL, tl_ufunc_binary_cross_entropy_run);
    return reduce_loss(weighted(loss, weight), reduction);
}

tl_tensor *tl_native_binary_cross_entropy_backward_cpu(tl_keyset ks, tl_tensor *grad_output, tl_tensor *self,
                                                       tl_tensor *target, tl_tensor *weight, int64_t reduction) {
    (void)ks;
    if (bad_reduction(reduction)) return NULL;
    tl_tensor *g = elementwise2(self, target, grad_output, tl_ufunc_binary_cross_entropy_backward_run,
                                mean_norm(self, reduction), tl_scalar_from_double(1e-12));
    return weighted(g, weight);
}

/* ------------------------------------------------------------- kl_div */

/* kl_div (CompositeImplicitAutograd): exp(t) * (t - x) for log targets,
 * xlogy(t, t) - t * x otherwise; xlogy(t, t) is t * log(t) with 0 at t == 0
 * (the log taken of 1 there, so no -inf enters the gradient) */
tl_tensor *tl_native_kl_div(tl_keyset ks, tl_tensor *self, tl_tensor *target, int64_t reduction, bool log_target) {
    (void)ks;
    if (bad_reduction(reduction)) return NULL;
    const tl_scalar one = tl_scalar_from_int(1);
    tl_tensor *a = NULL, *b = NULL, *z = NULL, *safe = NULL, *lg = NULL, *out = NULL;
    if (log_target) {
        if ((a = tl_ops_exp(target)) && (b = tl_ops_sub_Tensor(target, self, one))) out = tl_ops_mul_Tensor(a, b);
    } else if ((z = tl_ops_eq_Scalar(target, tl_scalar_from_int(0))) &&
               (safe = tl_ops_where_ScalarSelf(z, one, target)) && (lg = tl_ops_log(safe)) &&
               (a = tl_ops_mul_Tensor(target, lg)) && (b = tl_ops_mul_Tensor(target, self))) {
        out = tl_ops_sub_Tensor(a, b, one);
    }
    tl_tensor_release(a);
    tl_tensor_release(b);
    tl_tensor_release(z);
    tl_tensor_release(safe);
    tl_tensor_release(lg);
    return reduce_loss(out, reduction);
}
