/* Second derivatives of batch and group normalization, declared in
 * autograd/tl_autograd_formulas.h.
 *
 * batchnorm_double_backward: the derivative of native_batch_norm_backward
 * (so batch_norm / instance_norm under create_graph). PyTorch's FunctionsManual.cpp formula,
 * term by term, over entry points (tl_ops_*) so that it differentiates
 * again. With mu, s = (var + eps)^-1/2 per channel (the saved statistics in
 * training, the running ones in evaluation), M the elements per channel and
 * sums over every dim but the channel one, given ggI / ggG / ggB (the
 * gradients flowing into the first backward's grad_input / grad_weight /
 * grad_bias):
 *   gI  = gamma * (terms of ggI, training only) + ggG * d(grad_input)/dx
 *   gG  = sum(ggI * first_backward(gO) with gamma = 1)
 *   ggO = first_backward(ggI) + ggG * (x - mu) * s + ggB
 * where first_backward(g) = gamma * s / M * (M g - sum(g) - (x - mu) s^2
 * sum(g (x - mu))), and in evaluation first_backward(g) = g * s * gamma.
 *
 * group_norm_double_backward: the derivative of native_group_norm_backward.
 * Without its affine part a group norm is a training batch norm of x viewed
 * [1, N * G, D * HxW] (one "channel" per sample and group, the saved mean /
 * rstd its statistics), and its backward is self-adjoint, so the terms are
 * batchnorm_double_backward's on that view, with gamma applied per channel
 * C around it:
 *   d grad_out = first_backward(ggI) * gamma + ggG * xhat + ggB
 *   d input    = (ggI term of the view, upstream gO * gamma)
 *                + first_backward(ggG * gO)
 *   d weight   = sum over (N, HxW) of gO * first_backward(ggI)
 * PyTorch differentiates group norm through its own
 * infinitely_differentiable_native_group_norm_backward instead: the same
 * values, other nodes. */
#include <stdbool.h>
#include <string.h>

#include "tl_ag_pool.h"
#include "tl_autograd_formulas.h"
#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/add.h"
#include "ops/expand.h"
#include "ops/mean.h"
#include "ops/mul.h"
#include "ops/pow.h"
#include "ops/reshape.h"
#include "ops/sum.h"
#include "ops/to.h"
#include "tl_tensor.h"

typedef struct {
    pool p;
    int64_t nd;
    int64_t dims[TL_MAX_DIMS]; /* every dim but 1 */
    double M;
} bn;

static tl_tensor *scal(bn *b, tl_tensor *x, double v) {
    return x ? keep(&b->p, tl_ops_mul_Scalar(x, tl_scalar_from_double(v))) : NULL;
}

/* sum over every dim but the channel dim: [1, C, 1, ..] (keepdim) or [C] */
static tl_tensor *sum_ex1(bn *b, tl_tensor *x, bool keepdim) {
    return x ? keep(&b->p, tl_ops_sum_dim_IntList(x, b->dims, b->nd - 1, keepdim, TL_DTYPE_UNDEFINED)) : NULL;
}

/* a [C] tensor shaped [1, C, 1, ..] against the input (PyTorch's unsqueeze_dim1) */
static tl_tensor *per_channel(bn *b, tl_tensor *c) {
    while (c && tl_tensor_ndim(c) < b->nd - 1) c = unsq(&b->p, c, 1);
    if (c && tl_tensor_ndim(c) == b->nd - 1) c = unsq(&b->p, c, 0);
    return c;
}

/* first backward's grad_input for upstream g (training) */
static tl_tensor *first_back(bn *b, tl_tensor *g, tl_tensor *gamma, tl_tensor *xmu, tl_tensor *s, tl_tensor *s2) {
    tl_tensor *h0 = scal(b, mul(&b->p, gamma, s), 1.0 / b->M);
    tl_tensor *h1 = sub(&b->p, scal(b, g, b->M), sum_ex1(b, g, true));
    h1 = sub(&b->p, h1, mul(&b->p, mul(&b->p, xmu, s2), sum_ex1(b, mul(&b->p, g, xmu), true)));
    return mul(&b->p, h0, h1);
}

static tl_tensor *add_opt(bn *b, tl_tensor *acc, tl_tensor *t) { return acc ? add(&b->p, acc, t) : t; }

static int terms(bn *b, tl_tensor *input, tl_tensor *gamma, tl_tensor *ggI, tl_tensor *ggG, tl_tensor *ggB,
                 tl_tensor *gO, tl_tensor *running_mean, tl_tensor *running_var, bool training, double eps,
                 tl_tensor *save_mean, tl_tensor *save_invstd, tl_tensor **gI_out, tl_tensor **gG_out,
                 tl_tensor **ggO_out) {
    pool *p = &b->p;
    const tl_dtype dt = tl_tensor_dtype(input);
    const int affine = gamma != NULL;
    tl_tensor *mean = training ? save_mean : running_mean, *var_or_invstd = training ? save_invstd : running_var;
    if (!mean || !var_or_invstd)
        return tl_set_error(TL_ERR_RUNTIME, "batchnorm_double_backward: the %s statistics are missing",
                            training ? "saved" : "running");
    tl_tensor *gamma_e = affine ? per_channel(b, gamma) : keep(p, tl_scalar_tensor(tl_scalar_from_int(1), dt, TL_CPU));
    tl_tensor *ggG_e = affine && ggG ? per_channel(b, ggG) : NULL;
    tl_tensor *ggB_e = affine && ggB ? per_channel(b, ggB) : NULL;
    tl_tensor *mu = per_channel(b, training ? keep(p, tl_ops_to_dtype(mean, dt, false, false, -1)) : mean);
    tl_tensor *s;
    if (training)
        s = keep(p, tl_ops_to_dtype(var_or_invstd, dt, false, false, -1));
    else {
        tl_tensor *ve = keep(p, tl_ops_add_Scalar(var_or_invstd, tl_scalar_from_double(eps), tl_scalar_from_int(1)));
        s = ve ? keep(p, tl_ops_pow_Tensor_Scalar(ve, tl_scalar_from_double(-0.5))) : NULL;
    }
    s = per_channel(b, s);
    tl_tensor *xmu = sub(p, input, mu);
    tl_tensor *s2 = mul(p, s, s), *s3 = mul(p, s2, s);
    tl_tensor *xmu_s3 = mul(p, xmu, s3);
    tl_tensor *gOxmu_sum = sum_ex1(b, mul(p, gO, xmu), true), *gO_sum = sum_ex1(b, gO, true);
    if (!gamma_e || !xmu || !xmu_s3 || !gOxmu_sum || !gO_sum) return -1;
    const double M = b->M;

    tl_tensor *gI = NULL;
    if (ggI && training) {
        tl_tensor *ggI_sum = sum_ex1(b, ggI, true), *ggIxmu_sum = sum_ex1(b, mul(p, ggI, xmu), true);
        tl_tensor *all = sub(p, scal(b, mul(p, ggI_sum, gO_sum), 1.0 / M), sum_ex1(b, mul(p, gO, ggI), true));
        all = add(p, all, scal(b, mul(p, mul(p, s2, gOxmu_sum), ggIxmu_sum), 3.0 / M));
        tl_tensor *t0 = scal(b, mul(p, xmu_s3, all), 1.0 / M);
        tl_tensor *t1 = mul(p, scal(b, mul(p, ggIxmu_sum, s3), 1.0 / M), sub(p, scal(b, gO_sum, 1.0 / M), gO));
        tl_tensor *t2 = mul(p, scal(b, mul(p, gOxmu_sum, s3), 1.0 / M), sub(p, scal(b, ggI_sum, 1.0 / M), ggI));
        if (!(gI = mul(p, gamma_e, add(p, add(p, t0, t1), t2)))) return -1;
    }
    if (affine && ggG) {
        tl_tensor *term;
        if (training) {
            tl_tensor *t0 = mul(p, gO, s), *t1 = scal(b, mul(p, s, gO_sum), -1.0 / M);
            tl_tensor *t2 = scal(b, mul(p, xmu_s3, gOxmu_sum), -1.0 / M);
            term = mul(p, ggG_e, add(p, add(p, t0, t1), t2));
        } else {
            term = mul(p, mul(p, ggG_e, s), gO);
        }
        if (!(gI = add_opt(b, gI, term))) return -1;
    }
    tl_tensor *gG = NULL;
    if (affine && ggI) {
        if (training) {
            tl_tensor *one = keep(p, tl_scalar_tensor(tl_scalar_from_int(1), dt, TL_CPU));
            gG = sum_ex1(b, mul(p, ggI, first_back(b, gO, one, xmu, s, s2)), false);
        } else {
            gG = sum_ex1(b, mul(p, mul(p, ggI, gO), s), false);
        }
        if (!gG) return -1;
    }
    tl_tensor *ggO = NULL;
    if (ggI && !(ggO = training ? first_back(b, ggI, gamma_e, xmu, s, s2) : mul(p, mul(p, ggI, s), gamma_e)))
        return -1;
    if (ggG_e && !(ggO = add_opt(b, ggO, mul(p, mul(p, ggG_e, xmu), s)))) return -1;
    /* ggB alone: the expanded bias gradient itself (PyTorch returns the expand) */
    if (ggB_e && !(ggO = ggO ? add(p, ggO, ggB_e)
                             : keep(p, tl_ops_expand(ggB_e, tl_tensor_sizes(input), b->nd, false))))
        return -1;
    *gI_out = pool_out(gI);
    *gG_out = pool_out(gG);
    *ggO_out = pool_out(ggO);
    return 0;
}

int tl_ag_batchnorm_double_backward(tl_tensor *input, tl_tensor *gamma, tl_tensor *ggI, tl_tensor *ggG,
                                    tl_tensor *ggB, tl_tensor *gO, tl_tensor *running_mean, tl_tensor *running_var,
                                    bool training, double eps, tl_tensor *save_mean, tl_tensor *save_invstd,
                                    const bool *output_mask, int64_t nmask, tl_tensor **grad_input,
                                    tl_tensor **grad_weight, tl_tensor **grad_grad_out) {
    (void)output_mask;
    (void)nmask;
    *grad_input = *grad_weight = *grad_grad_out = NULL;
    bn b;
    memset(&b, 0, sizeof b);
    b.nd = tl_tensor_ndim(input);
    if (b.nd < 2) return tl_set_error(TL_ERR_RUNTIME, "batchnorm_double_backward: expected at least 2-d input");
    b.M = (double)tl_tensor_sizes(input)[0];
    for (int64_t i = 0, k = 0; i < b.nd; i++) {
        if (i == 1) continue;
        b.dims[k++] = i;
        if (i >= 2) b.M *= (double)tl_tensor_sizes(input)[i];
    }
    int rc = terms(&b, input, gamma, ggI, ggG, ggB, gO, running_mean, running_var, training, eps, save_mean,
                   save_invstd, grad_input, grad_weight, grad_grad_out);
    pool_release(&b.p);
    return rc;
}

/* x reshaped to `n` sizes (pooled) */
static tl_tensor *reshaped(pool *p, tl_tensor *x, const int64_t *sizes, int64_t n) {
    return x ? keep(p, tl_ops_reshape(x, sizes, n)) : NULL;
}

/* batchnorm_double_backward on the group view, its three results pooled */
static int view_terms(pool *p, tl_tensor *xv, tl_tensor *ggIv, tl_tensor *gOv, tl_tensor *mean, tl_tensor *rstd,
                      tl_tensor **gI, tl_tensor **ggO) {
    const bool all[3] = {true, true, true};
    tl_tensor *gG = NULL;
    if (tl_ag_batchnorm_double_backward(xv, NULL, ggIv, NULL, NULL, gOv, NULL, NULL, true, 0.0, mean, rstd, all, 3,
                                        gI, &gG, ggO))
        return -1;
    keep(p, *gI);
    keep(p, gG);
    keep(p, *ggO);
    return 0;
}

static int group_terms(pool *p, tl_tensor *ggI, tl_tensor *ggG, tl_tensor *ggB, tl_tensor *gO, tl_tensor *input,
                       tl_tensor *mean, tl_tensor *rstd, tl_tensor *weight, int64_t N, int64_t C, int64_t group,
                       tl_tensor **d_gO, tl_tensor **d_input, tl_tensor **d_weight) {
    const int64_t nd = tl_tensor_ndim(input), *sh = tl_tensor_sizes(input);
    const int64_t NG = N * group, numel = tl_tensor_numel(input);
    const int64_t vs[3] = {1, NG, NG > 0 ? numel / NG : 0}, flat[1] = {NG}, stat[3] = {1, NG, 1};
    int64_t cs[TL_MAX_DIMS], dims[TL_MAX_DIMS];
    for (int64_t i = 0, k = 0; i < nd; i++) {
        cs[i] = i == 1 ? C : 1;
        if (i != 1) dims[k++] = i;
    }
    tl_tensor *gamma = weight ? reshaped(p, weight, cs, nd) : NULL;
    tl_tensor *mf = reshaped(p, mean, flat, 1), *rf = reshaped(p, rstd, flat, 1);
    tl_tensor *xv = reshaped(p, input, vs, 3);
    tl_tensor *gp = gamma ? mul(p, gO, gamma) : gO;
    tl_tensor *gpv = reshaped(p, gp, vs, 3);
    if (!mf || !rf || !xv || !gpv || (weight && !gamma)) return -1;
    tl_tensor *dg = NULL, *dx = NULL, *dw = NULL;
    if (ggI) {
        tl_tensor *gI, *fb;
        if (view_terms(p, xv, reshaped(p, ggI, vs, 3), gpv, mf, rf, &gI, &fb)) return -1;
        fb = reshaped(p, fb, sh, nd);
        if (!(dx = reshaped(p, gI, sh, nd)) || !fb) return -1;
        if (!(dg = gamma ? mul(p, fb, gamma) : fb)) return -1;
        tl_tensor *gfb = weight ? mul(p, gO, fb) : NULL;
        if (weight && !(gfb && (dw = keep(p, tl_ops_sum_dim_IntList(gfb, dims, nd - 1, false, TL_DTYPE_UNDEFINED)))))
            return -1;
    }
    if (ggG && weight) {
        tl_tensor *ggG_e = reshaped(p, ggG, cs, nd), *gI, *fb;
        if (!ggG_e || view_terms(p, xv, reshaped(p, mul(p, ggG_e, gO), vs, 3), gpv, mf, rf, &gI, &fb)) return -1;
        tl_tensor *xhat = reshaped(p, mul(p, sub(p, xv, reshaped(p, mean, stat, 3)), reshaped(p, rstd, stat, 3)), sh,
                                   nd);
        tl_tensor *t = mul(p, ggG_e, xhat), *u = reshaped(p, fb, sh, nd);
        if (!(dx = dx ? add(p, dx, u) : u) || !(dg = dg ? add(p, dg, t) : t)) return -1;
    }
    if (ggB && weight) {
        tl_tensor *b = reshaped(p, ggB, cs, nd);
        if (!(dg = dg ? add(p, dg, b) : (b ? keep(p, tl_ops_expand(b, sh, nd, false)) : NULL))) return -1;
    }
    *d_gO = pool_out(dg);
    *d_input = pool_out(dx);
    *d_weight = pool_out(dw);
    return 0;
}

int tl_ag_group_norm_double_backward(tl_tensor *ggI, tl_tensor *ggG, tl_tensor *ggB, tl_tensor *gO, tl_tensor *input,
                                     tl_tensor *mean, tl_tensor *rstd, tl_tensor *weight, int64_t N, int64_t C,
                                     int64_t HxW, int64_t group, const bool *output_mask, int64_t nmask,
                                     tl_tensor **grad_grad_out, tl_tensor **grad_input, tl_tensor **grad_weight) {
    (void)HxW;
    (void)output_mask;
    (void)nmask;
    *grad_grad_out = *grad_input = *grad_weight = NULL;
    if (tl_tensor_ndim(input) < 2)
        return tl_set_error(TL_ERR_RUNTIME, "group_norm_double_backward: expected at least 2-d input");
    pool p;
    memset(&p, 0, sizeof p);
    int rc = group_terms(&p, ggI, ggG, ggB, gO, input, mean, rstd, weight, N, C, group, grad_grad_out, grad_input,
                         grad_weight);
    pool_release(&p);
    return rc;
}

/* PyTorch's infinitely_differentiable_native_group_norm_backward: the input,
 * weight and bias gradients from all three outputs' gradients (group norm's
 * mean and rstd are differentiable outputs), composed of operators so that it
 * differentiates again. With x viewed [N, G, D] (D = C / G * HxW),
 * xhat = (x - mean) * rstd and g = dY * gamma viewed the same way:
 *   dx     = rstd * (g - mean_D(g) - xhat * mean_D(g * xhat))      (with dY)
 *            + dmean / D - drstd * rstd^3 * (x - mean) / D      (with both dmean and drstd:
 *                                                                PyTorch drops either alone)
 *   dgamma = sum over (N, HxW) of dY * xhat,  dbeta = sum over (N, HxW) of dY
 * (rstd = (var + eps)^-1/2 with the biased variance, whose derivative in x_i
 * is 2 (x_i - mean) / D). */
static tl_tensor *viewed3(pool *p, tl_tensor *x, int64_t a, int64_t b, int64_t c) {
    const int64_t s[3] = {a, b, c};
    return x ? keep(p, tl_ops_reshape(x, s, 3)) : NULL;
}

static tl_tensor *mean_last(pool *p, tl_tensor *x) {
    const int64_t d = 2;
    return x ? keep(p, tl_ops_mean_dim(x, &d, 1, true, TL_DTYPE_UNDEFINED)) : NULL;
}

static tl_tensor *times(pool *p, tl_tensor *x, double v) {
    return x ? keep(p, tl_ops_mul_Scalar(x, tl_scalar_from_double(v))) : NULL;
}

static int group_norm_grads(pool *p, tl_tensor *dY, tl_tensor *dmean, tl_tensor *drstd, tl_tensor *input,
                            tl_tensor *mean, tl_tensor *rstd, tl_tensor *weight, int64_t N, int64_t C, int64_t HxW,
                            int64_t G, const bool *mask, tl_tensor **d_input, tl_tensor **d_weight,
                            tl_tensor **d_bias) {
    const int64_t D = C / G * HxW;
    tl_tensor *x = viewed3(p, input, N, G, D);
    tl_tensor *mu = viewed3(p, mean, N, G, 1), *rs = viewed3(p, rstd, N, G, 1);
    tl_tensor *xmu = sub(p, x, mu);
    tl_tensor *xhat = mul(p, xmu, rs);
    tl_tensor *dY3 = dY ? viewed3(p, dY, N, C, HxW) : NULL;
    if (!xhat || (dY && !dY3)) return -1;
    if (mask[0]) {
        tl_tensor *gi = NULL;
        if (dY) {
            tl_tensor *g = weight ? mul(p, dY3, viewed3(p, weight, 1, C, 1)) : dY3;
            g = viewed3(p, g, N, G, D);
            gi = mul(p, rs, sub(p, sub(p, g, mean_last(p, g)), mul(p, xhat, mean_last(p, mul(p, g, xhat)))));
        }
        if (dmean && drstd) {  /* PyTorch adds the statistics' terms only when both are given */
            tl_tensor *rs3 = mul(p, mul(p, rs, rs), rs);
            tl_tensor *t = times(p, mul(p, mul(p, viewed3(p, drstd, N, G, 1), rs3), xmu), -1.0 / (double)D);
            t = add(p, t, times(p, viewed3(p, dmean, N, G, 1), 1.0 / (double)D));
            gi = gi ? add(p, gi, t) : t;
        }
        if (gi) gi = keep(p, tl_ops_reshape(gi, tl_tensor_sizes(input), tl_tensor_ndim(input)));
        if (!gi && (dY || (dmean && drstd))) return -1;
        *d_input = pool_out(gi);
    }
    const int64_t dims[2] = {0, 2};
    if (mask[1] && dY && weight) {
        tl_tensor *gw = keep(p, tl_ops_sum_dim_IntList(mul(p, dY3, viewed3(p, xhat, N, C, HxW)), dims, 2, false,
                                                       TL_DTYPE_UNDEFINED));
        if (!gw) return -1;
        *d_weight = pool_out(gw);
    }
    if (mask[2] && dY) {
        tl_tensor *gb = keep(p, tl_ops_sum_dim_IntList(dY3, dims, 2, false, TL_DTYPE_UNDEFINED));
        if (!gb) return -1;
        *d_bias = pool_out(gb);
    }
    return 0;
}

int tl_ag_infinitely_differentiable_native_group_norm_backward(
    tl_tensor *dY, tl_tensor *dmean, tl_tensor *drstd, tl_tensor *input, tl_tensor *mean, tl_tensor *rstd,
    tl_tensor *weight, int64_t N, int64_t C, int64_t HxW, int64_t group, double eps, const bool *output_mask,
    int64_t nmask, tl_tensor **d_input, tl_tensor **d_weight, tl_tensor **d_bias) {
    (void)eps;  /* rstd is saved; PyTorch's helper takes eps too */
    *d_input = *d_weight = *d_bias = NULL;
    const bool all[3] = {true, true, true};
    const bool *mask = nmask >= 3 ? output_mask : all;
    if (group <= 0 || C % group != 0 || tl_tensor_numel(input) != N * C * HxW)
        return tl_set_error(TL_ERR_RUNTIME, "infinitely_differentiable_native_group_norm_backward: input of %lld "
                            "elements is not N * C * HxW = %lld * %lld * %lld in %lld groups",
                            (long long)tl_tensor_numel(input), (long long)N, (long long)C, (long long)HxW,
                            (long long)group);
    pool p;
    memset(&p, 0, sizeof p);
    int rc = group_norm_grads(&p, dY, dmean, drstd, input, mean, rstd, weight, N, C, HxW, group, mask, d_input,
                              d_weight, d_bias);
    pool_release(&p);
    if (rc) {
        tl_tensor_release(*d_input);
        tl_tensor_release(*d_weight);
        tl_tensor_release(*d_bias);
        *d_input = *d_weight = *d_bias = NULL;
    }
    return rc;
}
