/* Batch and group normalization: native_batch_norm, _native_batch_norm_legit
 * (+ .no_stats, _no_training), native_batch_norm_backward,
 * native_group_norm, native_group_norm_backward, and the
 * CompositeImplicitAutograd kernels PyTorch writes over them (batch_norm,
 * instance_norm, group_norm).
 *
 * Inputs are made contiguous (N, C, *) in the compute dtype (float32 for
 * float16 / bfloat16 / float32, float64); batch_norm's channels and
 * group_norm's (n, group) rows go to threads. Each unit walks its contiguous
 * runs (batch_norm: N runs of H*W per channel; group_norm: one run of
 * C/G*H*W, or per channel for the affine step) with the per-ISA primitives
 * of kernels/cpu/norm_kernel.c. Statistics are accumulated in double;
 * variances are two-pass (sum of squared deviations from the mean), as
 * PyTorch's CPU kernels. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tl_error.h"
#include "tl_internal.h"
#include "tl_kernel.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/_native_batch_norm_legit.h"
#include "ops/_native_batch_norm_legit_no_training.h"
#include "ops/add.h"
#include "ops/batch_norm.h"
#include "ops/clone.h"
#include "ops/contiguous.h"
#include "ops/group_norm.h"
#include "ops/instance_norm.h"
#include "ops/mean.h"
#include "ops/mul.h"
#include "ops/native_batch_norm.h"
#include "ops/native_batch_norm_backward.h"
#include "ops/native_group_norm.h"
#include "ops/native_group_norm_backward.h"
#include "ops/repeat.h"
#include "ops/select.h"
#include "ops/view.h"
#include "tl_runtime.h"
#include "tl_tensor.h"
#include "../cpu/norm_kernel.h"
#include "nn_common.h"

TL_DEFINE_STUB(tl_norm_stub, tl_norm_table)
#define NORM_K(ct) (&(*(const tl_norm_table_t *)tl_norm_stub.current)[(ct) == TL_FLOAT64 ? 1 : 0])

/* a contiguous double array of n values (the thread-shared statistics) */
static double *dalloc(int64_t n) {
    double *p = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
    if (!p) tl_set_error(TL_ERR_MEMORY, "out of memory");
    return p;
}

/* v (n doubles) as a 1-d or 2-d tensor of dtype dt */
static tl_tensor *doubles_tensor(const double *v, int64_t nd, const int64_t *shape, tl_dtype dt) {
    tl_tensor *t = tl_empty(nd, shape, TL_FLOAT64, TL_CPU);
    if (!t) return NULL;
    if (tl_tensor_numel(t)) memcpy(tl_tensor_data_ptr(t), v, (size_t)tl_tensor_numel(t) * sizeof(double));
    tl_tensor *r = tl_to_dtype(t, dt, 0);
    tl_tensor_release(t);
    return r;
}

/* t's values as n doubles (NULL t: fill); NULL + error on failure */
static double *read_doubles(tl_tensor *t, int64_t n, double fill) {
    double *p = dalloc(n);
    if (!p) return NULL;
    if (!t) {
        for (int64_t i = 0; i < n; i++) p[i] = fill;
        return p;
    }
    tl_tensor *c = contig_as(t, TL_FLOAT64);
    if (!c) {
        free(p);
        return NULL;
    }
    memcpy(p, tl_tensor_data_ptr(c), (size_t)n * sizeof(double));
    tl_tensor_release(c);
    return p;
}

/* copies n doubles into t (any dtype / strides) in place, without a version
 * bump: PyTorch's kernel writes the running statistics through their data
 * pointer, and autograd has saved them for this very call's backward */
static int write_doubles(tl_tensor *t, const double *v, int64_t n) {
    const int64_t shape[1] = {n};
    tl_tensor *s = tl_empty(1, shape, TL_FLOAT64, TL_CPU);
    if (!s) return -1;
    memcpy(tl_tensor_data_ptr(s), v, (size_t)n * sizeof(double));
    tl_tensor *view = tl_tensor_ndim(t) == 1 ? (tl_tensor_retain(t), t) : tl_ops_view(t, shape, 1);
    const int rc = view ? tl__copy_impl(view, s) : -1;
    tl_tensor_release(view);
    tl_tensor_release(s);
    return rc;
}

/* the three results of a normalization backward: grad_input (gi in the
 * compute dtype, or NULL) and the masked per-channel grad_weight / grad_bias
 * (C doubles), in dtype dt */
static int backward_results(tl_tensor *gi, tl_dtype dt, const bool *mask, const double *gw, const double *gb,
                            int64_t C, tl_tensor **ret0, tl_tensor **ret1, tl_tensor **ret2) {
    const int64_t cs[1] = {C};
    tl_tensor *r0 = NULL, *r1 = NULL, *r2 = NULL;
    if ((gi && !(r0 = tl_tensor_dtype(gi) == dt ? (tl_tensor_retain(gi), gi) : tl_to_dtype(gi, dt, 0))) ||
        (mask[1] && !(r1 = doubles_tensor(gw, 1, cs, dt))) || (mask[2] && !(r2 = doubles_tensor(gb, 1, cs, dt)))) {
        tl_tensor_release(r0);
        tl_tensor_release(r1);
        return -1;
    }
    *ret0 = r0;
    *ret1 = r1;
    *ret2 = r2;
    return 0;
}

/* ------------------------------------------------------------ batch_norm */

static int check_features(const char *arg, int64_t expected, const tl_tensor *t) {
    if (!t || tl_tensor_numel(t) == expected) return 0;
    return tl_set_error(TL_ERR_RUNTIME, "%s should contain %lld elements not %lld", arg, (long long)expected,
                        (long long)tl_tensor_numel(t));
}

/* (N, C, HW) of an input with at least 2 dims */
static int bn_dims(const tl_tensor *input, int64_t *N, int64_t *C, int64_t *HW) {
    const int64_t nd = tl_tensor_ndim(input);
    if (nd < 2) {   /* input.size(1): PyTorch's IndexError */
        tl__wrap_dim(1, nd, 1);
        return -1;
    }
    *N = tl_tensor_sizes(input)[0];
    *C = tl_tensor_sizes(input)[1];
    *HW = 1;
    for (int64_t i = 2; i < nd; i++) *HW *= tl_tensor_sizes(input)[i];
    return 0;
}

/* floating input, parameters of its dtype (PyTorch's mixed-type rule for
 * float32 parameters with a reduced-precision input is not supported) */
static int bn_dtypes(const tl_tensor *input, tl_tensor *const *ps, int np, const char *name) {
    const tl_dtype dt = tl_tensor_dtype(input);
    if (!tl_dtype_is_floating(dt))
        return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", name, tl_dtype_scalar_name(dt));
    for (int i = 0; i < np; i++)
        if (ps[i] && tl_tensor_dtype(ps[i]) != dt)
            return tl_set_error(TL_ERR_RUNTIME, "mixed dtype (CPU): all inputs must share same datatype.");
    return 0;
}

typedef struct {
    const tl_norm_kernels *k;
    const char *x, *g;
    char *y;
    int64_t N, C, HW, isz;
    const double *w, *b;     /* per channel, NULL: 1 / 0 */
    double *mean, *invstd;   /* per channel: read (eval / backward) or written (train) */
    double *var;             /* train: biased variance per channel */
    double *sum_g, *dot;     /* backward */
    double eps;
    int train;
} bn_ctx;

#define RUN(c, n, ch) ((int64_t)(((n) * (c)->C + (ch)) * (c)->HW * (c)->isz))

/* training: the batch mean, biased variance and invstd of each channel */
static void bn_stats_channels(int64_t b, int64_t e, void *ctx) {
    const bn_ctx *c = ctx;
    const double M = (double)(c->N * c->HW);
    for (int64_t ch = b; ch < e; ch++) {
        double s = 0, q = 0;
        for (int64_t n = 0; n < c->N; n++) s += c->k->sum(c->x + RUN(c, n, ch), c->HW);
        const double mean = M > 0 ? s / M : NAN;
        for (int64_t n = 0; n < c->N; n++) q += c->k->sqdev(c->x + RUN(c, n, ch), c->HW, mean);
        const double var = M > 0 ? q / M : NAN;
        c->mean[ch] = mean;
        c->var[ch] = var;
        c->invstd[ch] = 1.0 / sqrt(var + c->eps);
    }
}

/* y = (x - mean) * invstd * w + b over the (n, c) planes in memory order */
static void bn_affine_planes(int64_t b, int64_t e, void *ctx) {
    const bn_ctx *c = ctx;
    for (int64_t p = b; p < e; p++) {
        const int64_t ch = p % c->C;
        const double a = c->invstd[ch] * (c->w ? c->w[ch] : 1.0), sh = c->b ? c->b[ch] : 0.0;
        c->k->affine(c->x + p * c->HW * c->isz, c->y + p * c->HW * c->isz, c->HW, c->mean[ch], a, sh);
    }
}

/* the batch_norm forward PyTorch's batch_norm_cpu computes (native_batch_norm
 * and _native_batch_norm_legit): training uses the batch statistics and
 * updates the running ones in place; evaluation uses the running ones and
 * returns empty save_mean / save_invstd */
static int bn_forward(tl_tensor *input, tl_tensor *weight, tl_tensor *bias, tl_tensor *running_mean,
                      tl_tensor *running_var, bool training, double momentum, double eps, tl_tensor **ret0,
                      tl_tensor **ret1, tl_tensor **ret2) {
    int64_t N, C, HW;
    tl_tensor *ps[4] = {weight, bias, running_mean, running_var};
    if (bn_dims(input, &N, &C, &HW) || bn_dtypes(input, ps, 4, "batch_norm") ||
        check_features("running_mean", C, running_mean) || check_features("running_var", C, running_var) ||
        check_features("weight", C, weight) || check_features("bias", C, bias))
        return -1;
    if (!training && (!running_mean || !running_var))
        return tl_set_error(TL_ERR_RUNTIME, "running_%s must be defined in evaluation mode",
                            running_mean ? "var" : "mean");
    const tl_dtype dt = tl_tensor_dtype(input), ct = compute_dtype(dt);
    double *w = NULL, *b = NULL, *mean = NULL, *invstd = NULL, *var = NULL;
    tl_tensor *x = NULL, *y = NULL, *out = NULL, *sm = NULL, *si = NULL;
    int rc = -1;
    if ((weight && !(w = read_doubles(weight, C, 1))) || (bias && !(b = read_doubles(bias, C, 0))) ||
        !(var = dalloc(C)) || !(mean = training ? dalloc(C) : read_doubles(running_mean, C, 0)) ||
        !(invstd = training ? dalloc(C) : read_doubles(running_var, C, 1)))
        goto done;
    if (!training)
        for (int64_t i = 0; i < C; i++) invstd[i] = 1.0 / sqrt(invstd[i] + eps);
    if (!(x = contig_as(input, ct)) || !(y = tl_empty(tl_tensor_ndim(input), tl_tensor_sizes(input), ct, TL_CPU)))
        goto done;
    {
        bn_ctx c = {NORM_K(ct), tl_tensor_data_ptr(x), NULL, tl_tensor_data_ptr(y), N, C, HW, tl__itemsize(ct), w, b,
                    mean, invstd, var, NULL, NULL, eps, training};
        const int64_t per = N * HW > 0 ? N * HW : 1;
        if (training) tl_parallel_for(C, 65536 / per > 0 ? 65536 / per : 1, bn_stats_channels, &c);
        if (HW > 0) tl_parallel_for(N * C, 32768 / HW > 0 ? 32768 / HW : 1, bn_affine_planes, &c);
    }
    if (training && N * HW > 0) {
        const double n = (double)(N * HW);
        for (int64_t i = 0; i < C; i++) {
            /* running stats: PyTorch's momentum update with the unbiased variance */
            var[i] = var[i] * n / (n - 1);
        }
        if (running_mean) {
            double *rm = read_doubles(running_mean, C, 0);
            if (!rm) goto done;
            for (int64_t i = 0; i < C; i++) rm[i] = momentum * mean[i] + (1 - momentum) * rm[i];
            rc = write_doubles(running_mean, rm, C);
            free(rm);
            if (rc) goto done;
            rc = -1;
        }
        if (running_var) {
            double *rv = read_doubles(running_var, C, 0);
            if (!rv) goto done;
            for (int64_t i = 0; i < C; i++) rv[i] = momentum * var[i] + (1 - momentum) * rv[i];
            rc = write_doubles(running_var, rv, C);
            free(rv);
            if (rc) goto done;
            rc = -1;
        }
    }
    const int64_t sshape[1] = {training ? C : 0};
    if (!(out = ct == dt ? (tl_tensor_retain(y), y) : tl_to_dtype(y, dt, 0)) ||
        !(sm = doubles_tensor(mean, 1, sshape, dt)) || !(si = doubles_tensor(invstd, 1, sshape, dt)))
        goto done;
    *ret0 = out;
    *ret1 = sm;
    *ret2 = si;
    out = sm = si = NULL;
    rc = 0;
done:
    free(w);
    free(b);
    free(mean);
    free(invstd);
    free(var);
    tl_tensor_release(x);
    tl_tensor_release(y);
    tl_tensor_release(out);
    tl_tensor_release(sm);
    tl_tensor_release(si);
    return rc;
}

int tl_native_batch_norm_cpu(tl_keyset ks, tl_tensor *input, tl_tensor *weight, tl_tensor *bias,
                             tl_tensor *running_mean, tl_tensor *running_var, bool training, double momentum,
                             double eps, tl_tensor **ret0, tl_tensor **ret1, tl_tensor **ret2) {
    (void)ks;
    return bn_forward(input, weight, bias, running_mean, running_var, training, momentum, eps, ret0, ret1, ret2);
}

int tl_native__batch_norm_legit_cpu(tl_keyset ks, tl_tensor *input, tl_tensor *weight, tl_tensor *bias,
                                    tl_tensor *running_mean, tl_tensor *running_var, bool training, double momentum,
                                    double eps, tl_tensor **ret0, tl_tensor **ret1, tl_tensor **ret2) {
    (void)ks;
    return bn_forward(input, weight, bias, running_mean, running_var, training, momentum, eps, ret0, ret1, ret2);
}

int tl_native__batch_norm_legit_no_stats_cpu(tl_keyset ks, tl_tensor *input, tl_tensor *weight, tl_tensor *bias,
                                             bool training, double momentum, double eps, tl_tensor **ret0,
                                             tl_tensor **ret1, tl_tensor **ret2) {
    (void)ks;
    return bn_forward(input, weight, bias, NULL, NULL, training, momentum, eps, ret0, ret1, ret2);
}

/* _native_batch_norm_legit_no_training (CompositeExplicitAutograd, PyTorch's):
 * _native_batch_norm_legit with training=False */
int tl_native__batch_norm_legit_no_training(tl_keyset ks, tl_tensor *input, tl_tensor *weight, tl_tensor *bias,
                                            tl_tensor *running_mean, tl_tensor *running_var, double momentum,
                                            double eps, tl_tensor **ret0, tl_tensor **ret1, tl_tensor **ret2) {
    (void)ks;
    return tl_ops__native_batch_norm_legit(input, weight, bias, running_mean, running_var, false, momentum, eps, ret0,
                                           ret1, ret2);
}

static void bn_bwd_channels(int64_t b, int64_t e, void *ctx) {
    const bn_ctx *c = ctx;
    const double M = (double)(c->N * c->HW);
    for (int64_t ch = b; ch < e; ch++) {
        const double mean = c->mean[ch], invstd = c->invstd[ch];
        double sg = 0, dot = 0;
        for (int64_t n = 0; n < c->N; n++) c->k->gdot(c->g + RUN(c, n, ch), c->x + RUN(c, n, ch), c->HW, mean, &sg, &dot);
        c->sum_g[ch] = sg;
        c->dot[ch] = dot;
        if (!c->y) continue;
        const double w = c->w ? c->w[ch] : 1.0;
        double ga = invstd * w, xb = 0, cc = 0;
        if (c->train && M > 0) {
            /* gi = (g - sum_g / M - (x - mean) * invstd^2 * dot / M) * invstd * w */
            xb = -invstd * invstd * invstd * w * dot / M;
            cc = -invstd * w * sg / M - mean * xb;
        }
        for (int64_t n = 0; n < c->N; n++)
            c->k->bwd(c->g + RUN(c, n, ch), c->x + RUN(c, n, ch), c->y + RUN(c, n, ch), c->HW, ga, xb, cc);
    }
}

int tl_native_batch_norm_backward_cpu(tl_keyset ks, tl_tensor *grad_out, tl_tensor *input, tl_tensor *weight,
                                      tl_tensor *running_mean, tl_tensor *running_var, tl_tensor *save_mean,
                                      tl_tensor *save_invstd, bool train, double eps, const bool *output_mask,
                                      int64_t output_mask_len, tl_tensor **ret0, tl_tensor **ret1, tl_tensor **ret2) {
    (void)ks;
    int64_t N, C, HW;
    tl_tensor *ps[6] = {grad_out, weight, running_mean, running_var, save_mean, save_invstd};
    if (output_mask_len != 3)
        return tl_set_error(TL_ERR_RUNTIME, "native_batch_norm_backward(): output_mask must have 3 elements, got %lld",
                            (long long)output_mask_len);
    if (bn_dims(input, &N, &C, &HW) || bn_dtypes(input, ps, 6, "batch_norm_backward_cpu")) return -1;
    if (tl_tensor_ndim(grad_out) != tl_tensor_ndim(input) ||
        memcmp(tl_tensor_sizes(grad_out), tl_tensor_sizes(input), (size_t)tl_tensor_ndim(input) * sizeof(int64_t)))
        return tl_set_error(TL_ERR_RUNTIME, "native_batch_norm_backward(): grad_out must have the input's shape");
    tl_tensor *mt = train ? save_mean : running_mean, *vt = train ? save_invstd : running_var;
    if (!mt || !vt)
        return tl_set_error(TL_ERR_RUNTIME, "native_batch_norm_backward(): %s must be defined",
                            train ? "save_mean and save_invstd" : "running_mean and running_var");
    if (check_features(train ? "save_mean" : "running_mean", C, mt) ||
        check_features(train ? "save_invstd" : "running_var", C, vt) || check_features("weight", C, weight))
        return -1;
    const tl_dtype dt = tl_tensor_dtype(input), ct = compute_dtype(dt);
    double *w = NULL, *mean = NULL, *invstd = NULL, *sg = NULL, *dot = NULL;
    tl_tensor *x = NULL, *g = NULL, *gi = NULL;
    int rc = -1;
    if ((weight && !(w = read_doubles(weight, C, 1))) || !(mean = read_doubles(mt, C, 0)) ||
        !(invstd = read_doubles(vt, C, 1)) || !(sg = dalloc(C)) || !(dot = dalloc(C)))
        goto done;
    if (!train)
        for (int64_t i = 0; i < C; i++) invstd[i] = 1.0 / sqrt(invstd[i] + eps);
    if (!(x = contig_as(input, ct)) || !(g = contig_as(grad_out, ct)) ||
        (output_mask[0] && !(gi = tl_empty(tl_tensor_ndim(input), tl_tensor_sizes(input), ct, TL_CPU))))
        goto done;
    {
        bn_ctx c = {NORM_K(ct), tl_tensor_data_ptr(x), tl_tensor_data_ptr(g), gi ? tl_tensor_data_ptr(gi) : NULL,
                    N, C, HW, tl__itemsize(ct), w, NULL, mean, invstd, NULL, sg, dot, eps, train};
        const int64_t per = N * HW > 0 ? 2 * N * HW : 1;
        tl_parallel_for(C, 65536 / per > 0 ? 65536 / per : 1, bn_bwd_channels, &c);
    }
    for (int64_t i = 0; i < C; i++) dot[i] *= invstd[i];
    rc = backward_results(gi, dt, output_mask, dot, sg, C, ret0, ret1, ret2);
done:
    free(w);
    free(mean);
    free(invstd);
    free(sg);
    free(dot);
    tl_tensor_release(x);
    tl_tensor_release(g);
    tl_tensor_release(gi);
    return rc;
}

/* batch_norm (CompositeImplicitAutograd): PyTorch's _batch_norm_impl_index
 * checks, then native_batch_norm's output (its CPU path); an empty input gives
 * input * weight[0] + bias[0] (a new tensor, so the gradient chain holds) */
tl_tensor *tl_native_batch_norm(tl_keyset ks, tl_tensor *input, tl_tensor *weight, tl_tensor *bias,
                                tl_tensor *running_mean, tl_tensor *running_var, bool training, double momentum,
                                double eps, bool cudnn_enabled) {
    (void)ks; (void)cudnn_enabled;
    int64_t N, C, HW;
    /* an empty input returns before any size is read (PyTorch's
     * _batch_norm_impl_index): a 1-d empty input is fine */
    if (tl_tensor_numel(input) == 0) {
        tl_tensor *out = tl_ops_clone(input, -1), *t = NULL;
        if (out && weight) {
            tl_tensor *w0 = tl_ops_select_int(weight, 0, 0);
            t = w0 ? tl_ops_mul_Tensor(out, w0) : NULL;
            tl_tensor_release(w0);
            tl_tensor_release(out);
            out = t;
        }
        if (out && bias) {
            tl_tensor *b0 = tl_ops_select_int(bias, 0, 0);
            t = b0 ? tl_ops_add_Tensor(out, b0, tl_scalar_from_int(1)) : NULL;
            tl_tensor_release(b0);
            tl_tensor_release(out);
            out = t;
        }
        return out;
    }
    if (bn_dims(input, &N, &C, &HW)) return NULL;
    if (running_mean ? check_features("running_mean", C, running_mean)
                     : (!training && tl_set_error(TL_ERR_RUNTIME, "running_mean must be defined in evaluation mode")))
        return NULL;
    if (running_var ? check_features("running_var", C, running_var)
                    : (!training && tl_set_error(TL_ERR_RUNTIME, "running_var must be defined in evaluation mode")))
        return NULL;
    if (check_features("weight", C, weight) || check_features("bias", C, bias)) return NULL;
    tl_tensor *out = NULL, *sm = NULL, *si = NULL;
    if (tl_ops_native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, &out, &sm,
                                 &si))
        return NULL;
    tl_tensor_release(sm);
    tl_tensor_release(si);
    return out;
}

/* t repeated b times along dim 0 (PyTorch's repeat_if_defined), or NULL */
static int repeat_if_defined(tl_tensor *t, int64_t b, tl_tensor **out) {
    *out = NULL;
    if (!t) return 0;
    const int64_t reps[1] = {b};
    *out = tl_ops_repeat(t, reps, 1);
    return *out ? 0 : -1;
}

/* instance_norm (CompositeImplicitAutograd, PyTorch's): batch_norm over the
 * input viewed as (1, N * C, *), with the parameters and running statistics
 * repeated N times; the running statistics are written back as the mean
 * over the batch */
tl_tensor *tl_native_instance_norm(tl_keyset ks, tl_tensor *input, tl_tensor *weight, tl_tensor *bias,
                                   tl_tensor *running_mean, tl_tensor *running_var, bool use_input_stats,
                                   double momentum, double eps, bool cudnn_enabled) {
    (void)ks;
    if (!use_input_stats && (!running_mean || !running_var)) {
        tl_set_error(TL_ERR_RUNTIME, "Expected running_mean and running_var to be defined when use_input_stats is "
                                     "false");
        return NULL;
    }
    const int64_t nd = tl_tensor_ndim(input);
    if (nd < 2) {
        tl__wrap_dim(1, nd, 1);   /* input.size(1): PyTorch's IndexError */
        return NULL;
    }
    int64_t shape[64];
    const int64_t b = tl_tensor_sizes(input)[0], c = tl_tensor_sizes(input)[1];
    memcpy(shape, tl_tensor_sizes(input), (size_t)nd * sizeof(int64_t));
    shape[1] = b * c;
    shape[0] = 1;
    tl_tensor *w = NULL, *bi = NULL, *rm = NULL, *rv = NULL, *xc = NULL, *xr = NULL, *out = NULL, *res = NULL;
    if (repeat_if_defined(weight, b, &w) || repeat_if_defined(bias, b, &bi) ||
        repeat_if_defined(running_mean, b, &rm) || repeat_if_defined(running_var, b, &rv) ||
        !(xc = tl_ops_contiguous(input, 0)) || !(xr = tl_ops_view(xc, shape, nd)) ||
        !(out = tl_ops_batch_norm(xr, w, bi, rm, rv, use_input_stats, momentum, eps, cudnn_enabled)))
        goto done;
    {
        const int64_t bc[2] = {b, c}, d0[1] = {0};
        tl_tensor *pairs[2][2] = {{running_mean, rm}, {running_var, rv}};
        for (int i = 0; i < 2; i++) {
            if (!pairs[i][0]) continue;
            tl_tensor *v = tl_ops_view(pairs[i][1], bc, 2), *m = v ? tl_ops_mean_dim(v, d0, 1, false, TL_DTYPE_UNDEFINED) : NULL;
            const int rc = m ? tl_copy_(pairs[i][0], m) : -1;
            tl_tensor_release(v);
            tl_tensor_release(m);
            if (rc) goto done;
        }
    }
    res = tl_ops_view(out, tl_tensor_sizes(input), nd);
done:
    tl_tensor_release(w);
    tl_tensor_release(bi);
    tl_tensor_release(rm);
    tl_tensor_release(rv);
    tl_tensor_release(xc);
    tl_tensor_release(xr);
    tl_tensor_release(out);
    return res;
}

/* ------------------------------------------------------------ group_norm */

/* PyTorch's check_group_norm_inputs */
static int check_group_norm(const tl_tensor *input, const tl_tensor *weight, const tl_tensor *bias, int64_t C,
                            int64_t groups) {
    char a[256], b[256];
    fmt_shape(b, sizeof b, tl_tensor_sizes(input), tl_tensor_ndim(input));
    if (groups <= 0)
        return tl_set_error(TL_ERR_RUNTIME, "Expected num groups to be greater than 0, got %lld", (long long)groups);
    if (C % groups != 0)
        return tl_set_error(TL_ERR_RUNTIME, "Expected number of channels in input to be divisible by num_groups, but "
                                            "got input of shape %s and num_groups=%lld", b, (long long)groups);
    const tl_tensor *ps[2] = {weight, bias};
    const char *names[2] = {"weight", "bias"};
    for (int i = 0; i < 2; i++)
        if (ps[i] && !(tl_tensor_ndim(ps[i]) == 1 && tl_tensor_numel(ps[i]) == C)) {
            fmt_shape(a, sizeof a, tl_tensor_sizes(ps[i]), tl_tensor_ndim(ps[i]));
            return tl_set_error(TL_ERR_RUNTIME, "Expected %s to be a vector of size equal to the number of channels in "
                                                "input, but got %s of shape %s and input of shape %s", names[i],
                                names[i], a, b);
        }
    return 0;
}

typedef struct {
    const tl_norm_kernels *k;
    const char *x, *g;
    char *y;
    int64_t C, HW, G, D, isz;
    const double *w, *b;
    double *mean, *rstd; /* per (n, group) */
    double *ds, *db;     /* backward: per (n, c) */
    double eps;
} gn_ctx;

static void gn_fwd_rows(int64_t b, int64_t e, void *ctx) {
    const gn_ctx *c = ctx;
    const int64_t L = c->D * c->HW;
    for (int64_t r = b; r < e; r++) {
        const char *x = c->x + r * L * c->isz;
        const double mean = L ? c->k->sum(x, L) / (double)L : NAN;
        const double var = L ? c->k->sqdev(x, L, mean) / (double)L : NAN;
        const double rstd = 1.0 / sqrt((var > 0 ? var : 0) + c->eps);
        c->mean[r] = mean;
        c->rstd[r] = rstd;
        const int64_t c0 = (r % c->G) * c->D;
        for (int64_t d = 0; d < c->D; d++) {
            const double a = rstd * (c->w ? c->w[c0 + d] : 1.0), sh = c->b ? c->b[c0 + d] : 0.0;
            c->k->affine(x + d * c->HW * c->isz, c->y + (r * L + d * c->HW) * c->isz, c->HW, mean, a, sh);
        }
    }
}

static int gn_args(tl_tensor *input, tl_tensor *weight, tl_tensor *bias, int64_t N, int64_t C, int64_t HxW,
                   int64_t group) {
    if (check_group_norm(input, weight, bias, C, group)) return -1;
    if (N * C * HxW != tl_tensor_numel(input))
        return tl_set_error(TL_ERR_RUNTIME, "Expected the input to have N * C * HxW = %lld elements, but got %lld",
                            (long long)(N * C * HxW), (long long)tl_tensor_numel(input));
    tl_tensor *ps[2] = {weight, bias};
    return bn_dtypes(input, ps, 2, "native_group_norm");
}

int tl_native_native_group_norm(tl_keyset ks, tl_tensor *input, tl_tensor *weight, tl_tensor *bias, int64_t N,
                                int64_t C, int64_t HxW, int64_t group, double eps, tl_tensor **ret0,
                                tl_tensor **ret1, tl_tensor **ret2) {
    (void)ks;
    if (gn_args(input, weight, bias, N, C, HxW, group)) return -1;
    const tl_dtype dt = tl_tensor_dtype(input), ct = compute_dtype(dt);
    const int64_t NG = N * group, D = C / group;
    double *w = NULL, *b = NULL, *mean = NULL, *rstd = NULL;
    tl_tensor *x = NULL, *y = NULL, *out = NULL, *mt = NULL, *rt = NULL;
    int rc = -1;
    if ((weight && !(w = read_doubles(weight, C, 1))) || (bias && !(b = read_doubles(bias, C, 0))) ||
        !(mean = dalloc(NG)) || !(rstd = dalloc(NG)) || !(x = contig_as(input, ct)) ||
        !(y = tl_empty(tl_tensor_ndim(input), tl_tensor_sizes(input), ct, TL_CPU)))
        goto done;
    {
        gn_ctx c = {NORM_K(ct), tl_tensor_data_ptr(x), NULL, tl_tensor_data_ptr(y), C, HxW, group, D,
                    tl__itemsize(ct), w, b, mean, rstd, NULL, NULL, eps};
        const int64_t per = D * HxW > 0 ? D * HxW : 1;
        tl_parallel_for(NG, 65536 / per > 0 ? 65536 / per : 1, gn_fwd_rows, &c);
    }
    const int64_t ss[2] = {N, group};
    if (!(out = ct == dt ? (tl_tensor_retain(y), y) : tl_to_dtype(y, dt, 0)) ||
        !(mt = doubles_tensor(mean, 2, ss, dt)) || !(rt = doubles_tensor(rstd, 2, ss, dt)))
        goto done;
    *ret0 = out;
    *ret1 = mt;
    *ret2 = rt;
    out = mt = rt = NULL;
    rc = 0;
done:
    free(w);
    free(b);
    free(mean);
    free(rstd);
    tl_tensor_release(x);
    tl_tensor_release(y);
    tl_tensor_release(out);
    tl_tensor_release(mt);
    tl_tensor_release(rt);
    return rc;
}

/* per (n, group) row: ds / db per channel, then PyTorch's
 * GroupNormBackward coefficients
 *   dx = rstd * w * g + c2 * x + c3,
 *   c2 = (db_g * mean - ds_g) * rstd^3 / (D * HW),  c3 = -c2 * mean - db_g * rstd / (D * HW)
 * with ds_g = sum_c ds[c] * w[c], db_g = sum_c db[c] * w[c] */
static void gn_bwd_rows(int64_t b, int64_t e, void *ctx) {
    const gn_ctx *c = ctx;
    const int64_t L = c->D * c->HW;
    for (int64_t r = b; r < e; r++) {
        const int64_t n = r / c->G, c0 = (r % c->G) * c->D;
        const double mean = c->mean[r], rstd = c->rstd[r];
        double dsg = 0, dbg = 0;
        for (int64_t d = 0; d < c->D; d++) {
            double sg = 0, dot = 0;
            const int64_t off = (r * L + d * c->HW) * c->isz;
            c->k->gdot(c->g + off, c->x + off, c->HW, 0.0, &sg, &dot);
            c->ds[n * c->C + c0 + d] = dot;
            c->db[n * c->C + c0 + d] = sg;
            const double w = c->w ? c->w[c0 + d] : 1.0;
            dsg += dot * w;
            dbg += sg * w;
        }
        if (!c->y) continue;
        const double s = 1.0 / (double)(L ? L : 1);
        const double c2 = (dbg * mean - dsg) * rstd * rstd * rstd * s, c3 = -c2 * mean - dbg * rstd * s;
        for (int64_t d = 0; d < c->D; d++) {
            const int64_t off = (r * L + d * c->HW) * c->isz;
            c->k->bwd(c->g + off, c->x + off, c->y + off, c->HW, rstd * (c->w ? c->w[c0 + d] : 1.0), c2, c3);
        }
    }
}

int tl_native_native_group_norm_backward(tl_keyset ks, tl_tensor *grad_out, tl_tensor *input, tl_tensor *mean,
                                         tl_tensor *rstd, tl_tensor *weight, int64_t N, int64_t C, int64_t HxW,
                                         int64_t group, const bool *output_mask, int64_t output_mask_len,
                                         tl_tensor **ret0, tl_tensor **ret1, tl_tensor **ret2) {
    (void)ks;
    if (output_mask_len != 3)
        return tl_set_error(TL_ERR_RUNTIME, "native_group_norm_backward(): output_mask must have 3 elements, got %lld",
                            (long long)output_mask_len);
    if (gn_args(input, weight, NULL, N, C, HxW, group)) return -1;
    tl_tensor *ps[3] = {grad_out, mean, rstd};
    if (bn_dtypes(input, ps, 3, "native_group_norm_backward")) return -1;
    if (tl_tensor_numel(grad_out) != tl_tensor_numel(input) || tl_tensor_numel(mean) != N * group ||
        tl_tensor_numel(rstd) != N * group)
        return tl_set_error(TL_ERR_RUNTIME, "native_group_norm_backward(): expected grad_out with the input's %lld "
                                            "elements and mean / rstd with N * group = %lld", (long long)
                            tl_tensor_numel(input), (long long)(N * group));
    const tl_dtype dt = tl_tensor_dtype(input), ct = compute_dtype(dt);
    const int64_t NG = N * group;
    double *w = NULL, *mv = NULL, *rv = NULL, *ds = NULL, *db = NULL;
    tl_tensor *x = NULL, *g = NULL, *gi = NULL;
    int rc = -1;
    if ((weight && !(w = read_doubles(weight, C, 1))) || !(mv = read_doubles(mean, NG, 0)) ||
        !(rv = read_doubles(rstd, NG, 1)) || !(ds = dalloc(N * C)) || !(db = dalloc(N * C)) ||
        !(x = contig_as(input, ct)) || !(g = contig_as(grad_out, ct)) ||
        (output_mask[0] && !(gi = tl_empty(tl_tensor_ndim(input), tl_tensor_sizes(input), ct, TL_CPU))))
        goto done;
    {
        gn_ctx c = {NORM_K(ct), tl_tensor_data_ptr(x), tl_tensor_data_ptr(g), gi ? tl_tensor_data_ptr(gi) : NULL, C,
                    HxW, group, C / group, tl__itemsize(ct), w, NULL, mv, rv, ds, db, 0.0};
        const int64_t per = C / group * HxW > 0 ? 2 * C / group * HxW : 1;
        tl_parallel_for(NG, 65536 / per > 0 ? 65536 / per : 1, gn_bwd_rows, &c);
    }
    /* dgamma[c] = sum_n (ds - db * mean) * rstd, dbeta[c] = sum_n db */
    for (int64_t ch = 0; ch < C; ch++) {
        double gw = 0, gb = 0;
        for (int64_t n = 0; n < N; n++) {
            const int64_t r = n * group + ch / (C / group);
            gw += (ds[n * C + ch] - db[n * C + ch] * mv[r]) * rv[r];
            gb += db[n * C + ch];
        }
        ds[ch] = gw;
        db[ch] = gb;
    }
    rc = backward_results(gi, dt, output_mask, ds, db, C, ret0, ret1, ret2);
done:
    free(w);
    free(mv);
    free(rv);
    free(ds);
    free(db);
    tl_tensor_release(x);
    tl_tensor_release(g);
    tl_tensor_release(gi);
    return rc;
}

/* group_norm (CompositeImplicitAutograd, PyTorch's): checks, then
 * native_group_norm's output over (N, C, prod(rest)) */
tl_tensor *tl_native_group_norm(tl_keyset ks, tl_tensor *input, int64_t num_groups, tl_tensor *weight,
                                tl_tensor *bias, double eps, bool cudnn_enabled) {
    (void)ks; (void)cudnn_enabled;
    const int64_t nd = tl_tensor_ndim(input);
    if (nd < 2) {
        tl__wrap_dim(1, nd, 1);   /* input.size(1): PyTorch's IndexError */
        return NULL;
    }
    const int64_t N = tl_tensor_sizes(input)[0], C = tl_tensor_sizes(input)[1];
    if (check_group_norm(input, weight, bias, C, num_groups)) return NULL;
    int64_t HxW = 1;
    for (int64_t i = 2; i < nd; i++) HxW *= tl_tensor_sizes(input)[i];
    tl_tensor *x = tl_ops_contiguous(input, 0), *out = NULL, *m = NULL, *r = NULL;
    if (!x) return NULL;
    const int rc = tl_ops_native_group_norm(x, weight, bias, N, C, HxW, num_groups, eps, &out, &m, &r);
    tl_tensor_release(x);
    if (rc) return NULL;
    tl_tensor_release(m);
    tl_tensor_release(r);
    return out;
}
