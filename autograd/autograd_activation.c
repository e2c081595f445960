/* Helpers of the activation derivative formulas, declared in
 * autograd/tl_autograd_formulas.h: PyTorch's
 * FunctionsManual.cpp functions gelu_double_backward, elu_double_backward,
 * softplus_double_backward, infinitely_differentiable_mish_backward and
 * infinitely_differentiable_silu_backward, log_sigmoid_double_backward, and
 * those of the pointwise losses (smooth_l1 / huber / soft_margin double
 * backward, binary_cross_entropy's target and double backward),
 * written as compositions of entry points (tl_ops_*) so that they are
 * recorded under create_graph and differentiate again.
 *
 * Each helper collects its temporaries in a small arena (`ag_tmp`): an
 * operation with a NULL operand yields NULL (the first error stays set), and
 * the arena is released once at the end, whatever happened.
 */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "tl_autograd_formulas.h"
#include "tl_error.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/abs.h"
#include "ops/add.h"
#include "ops/cat.h"
#include "ops/clamp_min.h"
#include "ops/div.h"
#include "ops/elu_backward.h"
#include "ops/exp.h"
#include "ops/glu_backward.h"
#include "ops/huber_loss_backward.h"
#include "ops/logit.h"
#include "ops/lt.h"
#include "ops/mish_backward.h"
#include "ops/mul.h"
#include "ops/narrow.h"
#include "ops/ones.h"
#include "ops/ones_like.h"
#include "ops/rsub.h"
#include "ops/sigmoid.h"
#include "ops/soft_margin_loss_backward.h"
#include "ops/softplus.h"
#include "ops/sub.h"
#include "ops/sum.h"
#include "ops/tanh.h"
#include "ops/to.h"
#include "ops/zeros_like.h"
#include "tl_tensor.h"

typedef tl_ag_tmp ag_tmp;

static tl_tensor *keep(ag_tmp *a, tl_tensor *t) { return tl_ag_tmp_keep(a, t); }

/* the result (a new reference) and the arena released */
static tl_tensor *finish(ag_tmp *a, tl_tensor *r) {
    if (r) tl_tensor_retain(r);
    tl_ag_tmp_release(a);
    return r;
}

static tl_scalar num(double v) { return tl_scalar_from_double(v); }

static tl_tensor *mul(ag_tmp *a, tl_tensor *x, tl_tensor *y) { return x && y ? keep(a, tl_ops_mul_Tensor(x, y)) : NULL; }
static tl_tensor *add(ag_tmp *a, tl_tensor *x, tl_tensor *y) {
    return x && y ? keep(a, tl_ops_add_Tensor(x, y, tl_scalar_from_int(1))) : NULL;
}
static tl_tensor *sub(ag_tmp *a, tl_tensor *x, tl_tensor *y) {
    return x && y ? keep(a, tl_ops_sub_Tensor(x, y, tl_scalar_from_int(1))) : NULL;
}
static tl_tensor *muls(ag_tmp *a, tl_tensor *x, tl_scalar c) { return x ? keep(a, tl_ops_mul_Scalar(x, c)) : NULL; }
/* c - x */
static tl_tensor *rsubs(ag_tmp *a, tl_tensor *x, double c) {
    return x ? keep(a, tl_ops_rsub_Scalar(x, num(c), tl_scalar_from_int(1))) : NULL;
}
static tl_tensor *adds(ag_tmp *a, tl_tensor *x, double c) {
    return x ? keep(a, tl_ops_add_Scalar(x, num(c), tl_scalar_from_int(1))) : NULL;
}
static tl_tensor *unary(ag_tmp *a, tl_tensor *(*fn)(tl_tensor *), tl_tensor *x) { return x ? keep(a, fn(x)) : NULL; }

tl_tensor *tl_ag_gelu_double_backward(tl_tensor *ggI, tl_tensor *gO, tl_tensor *input, const char *approximate) {
    ag_tmp a = {.n = 0};
    tl_tensor *d;
    if (approximate && strcmp(approximate, "tanh") == 0) {
        /* f = x/2, g = 1 - t^2 (t = tanh(inner)), h = b (1 + 3 k x^2):
         * d = 2 f'gh + g'fh + h'fg = g (h - x t h^2 + 3 k b x^2) */
        const double b = M_SQRT2 * M_2_SQRTPI * 0.5, k = 0.044715;
        tl_tensor *x2 = mul(&a, input, input);
        tl_tensor *x3 = mul(&a, x2, input);
        tl_tensor *inner = muls(&a, add(&a, input, muls(&a, x3, num(k))), num(b));
        tl_tensor *t = unary(&a, tl_ops_tanh, inner);
        tl_tensor *g = rsubs(&a, mul(&a, t, t), 1.0);
        tl_tensor *k3bx2 = muls(&a, x2, num(3 * k * b));
        tl_tensor *h = adds(&a, k3bx2, b);
        tl_tensor *xth2 = mul(&a, mul(&a, mul(&a, input, t), h), h);
        d = mul(&a, g, add(&a, sub(&a, h, xth2), k3bx2));
    } else {
        /* pdf = exp(-x^2/2) / sqrt(2 pi); d = 2 pdf - x^2 pdf */
        const double b = M_2_SQRTPI * M_SQRT1_2 * 0.5;
        tl_tensor *x2 = mul(&a, input, input);
        tl_tensor *e = unary(&a, tl_ops_exp, muls(&a, x2, num(-0.5)));
        tl_tensor *pdf = muls(&a, e, num(b));
        d = mul(&a, pdf, rsubs(&a, x2, 2.0));
    }
    return finish(&a, mul(&a, mul(&a, ggI, gO), d));
}

tl_tensor *tl_ag_elu_double_backward(tl_tensor *grad, tl_tensor *grad_output, tl_scalar alpha, tl_scalar scale,
                                     tl_scalar input_scale, bool is_result, tl_tensor *self_or_result) {
    ag_tmp a = {.n = 0};
    tl_tensor *neg = keep(&a, tl_ops_lt_Scalar(self_or_result, tl_scalar_from_int(0)));
    tl_tensor *gg = muls(&a, mul(&a, grad, grad_output), input_scale);
    if (!is_result && gg) gg = keep(&a, tl_ops_elu_backward(gg, alpha, scale, input_scale, false, self_or_result));
    /* the bool mask promotes to the gradient's dtype (PyTorch: .type_as(grad)) */
    return finish(&a, mul(&a, gg, neg));
}

tl_tensor *tl_ag_softplus_double_backward(tl_tensor *grad, tl_tensor *input, tl_scalar beta, tl_scalar threshold) {
    ag_tmp a = {.n = 0};
    tl_tensor *x = muls(&a, input, beta);
    tl_tensor *s = unary(&a, tl_ops_sigmoid, x);
    tl_tensor *below = x ? keep(&a, tl_ops_lt_Scalar(x, threshold)) : NULL;
    /* sigmoid_backward(grad, s) = grad * (1 - s) * s */
    tl_tensor *sb = mul(&a, mul(&a, grad, rsubs(&a, s, 1.0)), s);
    return finish(&a, muls(&a, mul(&a, sb, below), beta));
}

tl_tensor *tl_ag_infinitely_differentiable_mish_backward(tl_tensor *grad_output, tl_tensor *input) {
    ag_tmp a = {.n = 0};
    tl_tensor *sig = unary(&a, tl_ops_sigmoid, input);
    tl_tensor *sp = keep(&a, tl_ops_softplus(input, tl_scalar_from_int(1), tl_scalar_from_int(20)));
    tl_tensor *tsp = unary(&a, tl_ops_tanh, sp);
    /* grad * (tanh_sp + x * sigmoid * (1 - tanh_sp^2)) */
    tl_tensor *rest = mul(&a, mul(&a, input, sig), rsubs(&a, mul(&a, tsp, tsp), 1.0));
    return finish(&a, mul(&a, grad_output, add(&a, tsp, rest)));
}

/* silu under create_graph: grad * s * (1 + x * (1 - s)), s = sigmoid(x)
 * (without grad mode the fused silu_backward kernel runs instead) */
tl_tensor *tl_ag_infinitely_differentiable_silu_backward(tl_tensor *grad_output, tl_tensor *input) {
    ag_tmp a = {.n = 0};
    tl_tensor *sig = unary(&a, tl_ops_sigmoid, input);
    tl_tensor *inner = adds(&a, mul(&a, input, rsubs(&a, sig, 1.0)), 1.0);
    return finish(&a, mul(&a, mul(&a, grad_output, sig), inner));
}

/* mish_backward (CompositeImplicitAutograd, PyTorch's math_mish_backward):
 * grad * (tanh(softplus(x)) + x * sigmoid(x) * (1 - tanh(softplus(x))^2)),
 * through the entry points so it is differentiable again */
tl_tensor *tl_native_math_mish_backward(tl_keyset ks, tl_tensor *grad_output, tl_tensor *self) {
    (void)ks;
    return tl_ag_infinitely_differentiable_mish_backward(grad_output, self);
}

/* sigmoid(x) * (sigmoid(x) - 1) * grad */
tl_tensor *tl_ag_log_sigmoid_double_backward(tl_tensor *grad, tl_tensor *input) {
    ag_tmp a = {.n = 0};
    tl_tensor *z = unary(&a, tl_ops_sigmoid, input);
    return finish(&a, mul(&a, mul(&a, grad, adds(&a, z, -1.0)), z));
}

/* ---- pointwise losses (reduction: PyTorch's enum, 1 = Mean) */

static tl_tensor *mean_scaled(ag_tmp *a, tl_tensor *g, tl_tensor *input, int64_t reduction) {
    if (reduction != 1) return g;
    return g ? keep(a, tl_ops_div_Scalar(g, tl_scalar_from_int(tl_tensor_numel(input)))) : NULL;
}

/* grad * (|x - y| < bound) [/ beta] [/ numel] */
static tl_tensor *inside_band(ag_tmp *a, tl_tensor *grad, tl_tensor *input, tl_tensor *target, double bound) {
    tl_tensor *d = unary(a, tl_ops_abs, sub(a, input, target));
    tl_tensor *in = d ? keep(a, tl_ops_lt_Scalar(d, num(bound))) : NULL;
    tl_tensor *inf = in ? keep(a, tl_ops_to_dtype(in, tl_tensor_dtype(grad), false, false, -1)) : NULL;
    return mul(a, grad, inf);
}

tl_tensor *tl_ag_smooth_l1_loss_double_backward(tl_tensor *grad, tl_tensor *input, tl_tensor *target,
                                                int64_t reduction, double beta) {
    if (beta == 0) return tl_ops_zeros_like(grad, TL_DTYPE_UNDEFINED, -1, -1, false, false, -1);
    ag_tmp a = {.n = 0};
    tl_tensor *g = muls(&a, inside_band(&a, grad, input, target, beta), num(1.0 / beta));
    return finish(&a, mean_scaled(&a, g, input, reduction));
}

tl_tensor *tl_ag_huber_loss_double_backward(tl_tensor *grad, tl_tensor *input, tl_tensor *target, int64_t reduction,
                                            double delta) {
    ag_tmp a = {.n = 0};
    return finish(&a, mean_scaled(&a, inside_band(&a, grad, input, target, delta), input, reduction));
}

tl_tensor *tl_ag_huber_loss_double_backward_grad_output(tl_tensor *grad, tl_tensor *grad_output, tl_tensor *input,
                                                        tl_tensor *target, int64_t reduction, double delta) {
    if (reduction == 0) return tl_ops_huber_loss_backward(grad, input, target, reduction, delta);
    ag_tmp a = {.n = 0};
    tl_tensor *ones = keep(&a, tl_ops_ones_like(grad_output, TL_DTYPE_UNDEFINED, -1, -1, false, false, -1));
    tl_tensor *r = ones ? keep(&a, tl_ops_huber_loss_backward(ones, input, target, reduction, delta)) : NULL;
    tl_tensor *p = mul(&a, r, grad);
    return finish(&a, p ? keep(&a, tl_ops_sum(p, TL_DTYPE_UNDEFINED)) : NULL);
}

tl_tensor *tl_ag_soft_margin_loss_double_backward(tl_tensor *grad, tl_tensor *input, tl_tensor *target,
                                                  int64_t reduction) {
    ag_tmp a = {.n = 0};
    tl_tensor *z = unary(&a, tl_ops_exp, muls(&a, mul(&a, input, target), num(-1.0)));
    tl_tensor *zp1 = adds(&a, z, 1.0);
    tl_tensor *g = mul(&a, mul(&a, grad, mul(&a, target, target)), z);
    tl_tensor *zz = mul(&a, zp1, zp1);
    g = g && zz ? keep(&a, tl_ops_div_Tensor(g, zz)) : NULL;
    return finish(&a, mean_scaled(&a, g, input, reduction));
}

tl_tensor *tl_ag_soft_margin_loss_double_backward_grad_output(tl_tensor *grad, tl_tensor *grad_output,
                                                              tl_tensor *input, tl_tensor *target,
                                                              int64_t reduction) {
    if (reduction == 0) return tl_ops_soft_margin_loss_backward(grad, input, target, reduction);
    ag_tmp a = {.n = 0};
    tl_tensor *ones = keep(&a, tl_ops_ones_like(grad_output, TL_DTYPE_UNDEFINED, -1, -1, false, false, -1));
    tl_tensor *r = ones ? keep(&a, tl_ops_soft_margin_loss_backward(ones, input, target, reduction)) : NULL;
    tl_tensor *p = mul(&a, r, grad);
    return finish(&a, p ? keep(&a, tl_ops_sum(p, TL_DTYPE_UNDEFINED)) : NULL);
}

/* -logit(self) * grad [* weight] [/ numel] */
tl_tensor *tl_ag_binary_cross_entropy_target_backward(tl_tensor *grad, tl_tensor *self, tl_tensor *target,
                                                      tl_tensor *weight, int64_t reduction) {
    ag_tmp a = {.n = 0};
    tl_tensor *lg = self ? keep(&a, tl_ops_logit(self, 0.0, false)) : NULL;
    tl_tensor *g = mul(&a, muls(&a, lg, num(-1.0)), grad);
    if (weight) g = mul(&a, g, weight);
    return finish(&a, mean_scaled(&a, g, target, reduction));
}

/* (x^2 - 2 x y + y) / ((x + eps)^2 (1 - x + eps)^2) * grad * grad_output [* w] [/ numel] */
tl_tensor *tl_ag_binary_cross_entropy_double_backward(tl_tensor *grad_output, tl_tensor *grad, tl_tensor *input,
                                                      tl_tensor *target, tl_tensor *weight, int64_t reduction) {
    ag_tmp a = {.n = 0};
    const double eps = 1e-12;
    tl_tensor *p = adds(&a, input, eps), *q = adds(&a, rsubs(&a, input, 1.0), eps);
    tl_tensor *num_ = add(&a, sub(&a, mul(&a, input, input), muls(&a, mul(&a, input, target), num(2.0))), target);
    tl_tensor *den = mul(&a, mul(&a, p, p), mul(&a, q, q));
    tl_tensor *g = num_ && den ? keep(&a, tl_ops_div_Tensor(num_, den)) : NULL;
    g = mul(&a, g, mul(&a, grad, grad_output));
    if (weight) g = mul(&a, g, weight);
    return finish(&a, mean_scaled(&a, g, input, reduction));
}

/* (x - y) / ((x + eps)(1 - x + eps)) * grad [* w], summed [/ numel] when reduced */
tl_tensor *tl_ag_binary_cross_entropy_double_backward_grad_output(tl_tensor *grad, tl_tensor *input,
                                                                  tl_tensor *target, tl_tensor *weight,
                                                                  int64_t reduction) {
    ag_tmp a = {.n = 0};
    const double eps = 1e-12;
    tl_tensor *den = mul(&a, adds(&a, input, eps), adds(&a, rsubs(&a, input, 1.0), eps));
    tl_tensor *d = sub(&a, input, target);
    tl_tensor *g = d && den ? keep(&a, tl_ops_div_Tensor(d, den)) : NULL;
    g = mul(&a, g, grad);
    if (weight) g = mul(&a, g, weight);
    if (reduction != 0 && g) g = keep(&a, tl_ops_sum(g, TL_DTYPE_UNDEFINED));
    return finish(&a, mean_scaled(&a, g, input, reduction));
}

/* -grad * grad_output [* w] / max((1 - x) x, 1e-12) [/ numel] */
tl_tensor *tl_ag_binary_cross_entropy_double_backward_target(tl_tensor *grad, tl_tensor *grad_output,
                                                             tl_tensor *self, tl_tensor *target, tl_tensor *weight,
                                                             int64_t reduction) {
    ag_tmp a = {.n = 0};
    tl_tensor *r = muls(&a, mul(&a, grad, grad_output), num(-1.0));
    if (weight) r = mul(&a, r, weight);
    tl_tensor *den = mul(&a, rsubs(&a, self, 1.0), self);
    den = den ? keep(&a, tl_ops_clamp_min(den, num(1e-12))) : NULL;
    tl_tensor *g = r && den ? keep(&a, tl_ops_div_Tensor(r, den)) : NULL;
    return finish(&a, mean_scaled(&a, g, target, reduction));
}

/* ---- glu (PyTorch's glu_double_backward, glu_double_backward_grad_output) */

static tl_tensor *half(ag_tmp *a, tl_tensor *x, int64_t dim, int64_t k, int64_t n) {
    return x ? keep(a, tl_ops_narrow(x, dim, k * n, n)) : NULL;
}

tl_tensor *tl_ag_glu_double_backward(tl_tensor *grad, tl_tensor *grad_output, tl_tensor *input, int64_t dim) {
    ag_tmp a = {.n = 0};
    if (dim < 0) dim += tl_tensor_ndim(input);
    const int64_t n = tl_tensor_size(input, dim) / 2;
    tl_tensor *first = half(&a, input, dim, 0, n), *second = half(&a, input, dim, 1, n);
    tl_tensor *sig = unary(&a, tl_ops_sigmoid, second);
    tl_tensor *one_m = rsubs(&a, sig, 1.0);
    tl_tensor *sos = mul(&a, sig, one_m);
    tl_tensor *gg1 = half(&a, grad, dim, 0, n), *gg2 = half(&a, grad, dim, 1, n);
    tl_tensor *gi1 = mul(&a, mul(&a, gg2, grad_output), sos);
    tl_tensor *second_order = sub(&a, mul(&a, sos, one_m), mul(&a, sig, sos));
    tl_tensor *gi2 = add(&a, mul(&a, mul(&a, mul(&a, gg2, first), grad_output), second_order),
                         mul(&a, mul(&a, gg1, grad_output), sos));
    tl_tensor *r = NULL;
    if (gi1 && gi2) {
        tl_tensor *parts[2] = {gi1, gi2};
        r = keep(&a, tl_ops_cat(parts, 2, dim));
    }
    return finish(&a, r);
}

tl_tensor *tl_ag_glu_double_backward_grad_output(tl_tensor *grad, tl_tensor *input, int64_t dim) {
    ag_tmp a = {.n = 0};
    const int64_t nd = tl_tensor_ndim(input);
    if (dim < 0) dim += nd;
    int64_t sizes[64];
    for (int64_t i = 0; i < nd && i < 64; i++) sizes[i] = tl_tensor_size(input, i);
    sizes[dim] /= 2;
    tl_tensor *ones = keep(&a, tl_ops_ones(sizes, nd, tl_tensor_dtype(input), -1, (int)tl_tensor_device(input), false,
                                           false));
    tl_tensor *gb = ones ? keep(&a, tl_ops_glu_backward(ones, input, dim)) : NULL;
    tl_tensor *tmp = mul(&a, grad, gb);
    return finish(&a, add(&a, half(&a, tmp, dim, 0, sizes[dim]), half(&a, tmp, dim, 1, sizes[dim])));
}
