/* CTC loss (Graves et al. 2006), PyTorch's CPU algorithm
 * (aten/src/ATen/native/LossCTC.cpp) with its checks and messages:
 *
 * _ctc_loss: per batch item, the log-space forward variables
 *   alpha[t][s] over the blank-augmented target l' (length 2L + 1):
 *   alpha[t][s] = logsumexp(alpha[t-1][s], alpha[t-1][s-1],
 *   alpha[t-1][s-2] when l'[s] != l'[s-2]) + log_probs[t][l'[s]];
 *   the loss is -logsumexp of the last two states (the last one when L = 0).
 *   Returns (neg_log_likelihood [N], log_alpha [N, T, 2 max L + 1]).
 * _ctc_loss_backward: the backward variables beta the same way from the
 *   end, alpha + beta collected per (t, label) in log space, and
 *   grad = (exp(lp) - exp(collected + nll - lp)) * grad_out for t below
 *   the item's input length, 0 after it (and for items whose loss is
 *   infinite under zero_infinity).
 * The .Tensor overloads convert the lengths; ctc_loss (the public
 * operator) adds the unbatched form, zero_infinity and the reduction.
 *
 * float32 computes in float (as PyTorch's float kernel), float64 in
 * double; targets are int32 or int64 read as int64. Batch items go to
 * threads. Unlike PyTorch, target labels outside [0, C) raise instead of
 * reading out of bounds, and log_alpha entries the recursion never
 * reaches are -inf instead of uninitialised. */
#include <math.h>
#include <string.h>

#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/_ctc_loss.h"
#include "ops/_ctc_loss_backward.h"
#include "ops/clamp_min.h"
#include "ops/ctc_loss.h"
#include "ops/div.h"
#include "ops/eq.h"
#include "ops/mean.h"
#include "ops/squeeze.h"
#include "ops/sum.h"
#include "ops/to.h"
#include "ops/unsqueeze.h"
#include "ops/where.h"
#include "tl_tensor.h"
#include "nn_common.h"

#define CTC_FROM " (while checking arguments for ctc_loss_allocate_outputs)"

typedef struct {
    int64_t T, N, C, S;           /* time, batch, labels, 2 * max target length + 1 */
    int64_t blank, tstride;       /* target stride inside an item */
    const int64_t *il, *tl, *off; /* input / target lengths, target offsets */
    const int64_t *tg;            /* targets, int64 contiguous */
    const void *lp;               /* log_probs [T, N, C] contiguous */
    void *alpha;                  /* [N, T, S] */
    void *beta;                   /* backward: [N, T, S] scratch */
    void *nll;                    /* [N] */
    const void *gout;             /* backward: grad of nll [N] */
    void *grad;                   /* backward: [T, N, C] */
    int zero_inf;
} ctc_ctx;

/* l'[s]: blank at even s, the target at odd s */
static inline int64_t prime(const ctc_ctx *c, int64_t b, int64_t s) {
    return (s % 2 == 0) ? c->blank : c->tg[c->off[b] + c->tstride * (s / 2)];
}

#define CTC_IMPL(T_, EXP, LOG)                                                                                        \
    /* log(exp(a - m) + exp(b - m) + exp(d - m)) + m, m = max (0 when all are -inf) */                                \
    static inline T_ lse3_##T_(T_ a, T_ b, T_ d) {                                                                    \
        T_ m = a;                                                                                                     \
        if (b > m) m = b;                                                                                             \
        if (d > m) m = d;                                                                                             \
        if (m == -INFINITY) m = 0;                                                                                    \
        return LOG(EXP(a - m) + EXP(b - m) + EXP(d - m)) + m;                                                         \
    }                                                                                                                 \
    static void fwd_##T_(int64_t b0, int64_t b1, void *ctx) {                                                         \
        const ctc_ctx *c = ctx;                                                                                       \
        const T_ *lp = c->lp;                                                                                         \
        T_ *nll = c->nll;                                                                                             \
        for (int64_t b = b0; b < b1; b++) {                                                                           \
            const int64_t il = c->il[b], L = c->tl[b];                                                                \
            T_ *la = (T_ *)c->alpha + b * c->T * c->S;                                                                \
            for (int64_t i = 0; i < c->T * c->S; i++) la[i] = -INFINITY;                                              \
            if (il == 0) {                                                                                            \
                nll[b] = L == 0 ? 0 : INFINITY;                                                                       \
                continue;                                                                                             \
            }                                                                                                         \
            const T_ *lp0 = lp + b * c->C; /* row t is lp0 + t * N * C */                                             \
            la[0] = lp0[c->blank];                                                                                    \
            if (L > 0) la[1] = lp0[prime(c, b, 1)];                                                                   \
            for (int64_t t = 1; t < il; t++) {                                                                        \
                const T_ *prev = la + (t - 1) * c->S, *row = lp0 + t * c->N * c->C;                                   \
                T_ *cur = la + t * c->S;                                                                              \
                for (int64_t s = 0; s < 2 * L + 1; s++) {                                                             \
                    const int64_t p = prime(c, b, s);                                                                 \
                    const T_ a2 = s > 0 ? prev[s - 1] : (T_)-INFINITY;                                                \
                    const T_ a3 = (s > 1 && prime(c, b, s - 2) != p) ? prev[s - 2] : (T_)-INFINITY;                   \
                    cur[s] = lse3_##T_(prev[s], a2, a3) + row[p];                                                     \
                }                                                                                                     \
            }                                                                                                         \
            const T_ *last = la + (il - 1) * c->S;                                                                    \
            if (L == 0) {                                                                                             \
                nll[b] = -last[0];                                                                                    \
            } else {                                                                                                  \
                const T_ l1 = last[2 * L], l2 = last[2 * L - 1];                                                      \
                T_ m = l1 > l2 ? l1 : l2;                                                                             \
                if (m == -INFINITY) m = 0;                                                                            \
                nll[b] = -(LOG(EXP(l1 - m) + EXP(l2 - m)) + m);                                                       \
            }                                                                                                         \
        }                                                                                                             \
    }                                                                                                                 \
    static void bwd_##T_(int64_t b0, int64_t b1, void *ctx) {                                                         \
        const ctc_ctx *c = ctx;                                                                                       \
        const T_ *lp = c->lp, *nllv = c->nll, *gout = c->gout;                                                        \
        T_ *grad = c->grad;                                                                                           \
        const int64_t NC = c->N * c->C;                                                                               \
        for (int64_t b = b0; b < b1; b++) {                                                                           \
            const T_ nll = nllv[b];                                                                                   \
            const int64_t il = c->il[b], L = c->tl[b];                                                                \
            const T_ *lp0 = lp + b * c->C;                                                                            \
            T_ *g0 = grad + b * c->C; /* row t is g0 + t * N * C, -inf (log of an empty sum) on entry */              \
            if (c->zero_inf && nll == INFINITY) {                                                                     \
                for (int64_t t = 0; t < c->T; t++) memset(g0 + t * NC, 0, (size_t)c->C * sizeof(T_));                \
                continue;                                                                                             \
            }                                                                                                         \
            const T_ *la = (const T_ *)c->alpha + b * c->T * c->S;                                                    \
            T_ *lb = (T_ *)c->beta + b * c->T * c->S;                                                                 \
            if (il > 0) {                                                                                             \
                T_ *lbl = lb + (il - 1) * c->S, *gl = g0 + (il - 1) * NC;                                             \
                const T_ *lal = la + (il - 1) * c->S, *lpl = lp0 + (il - 1) * NC;                                     \
                for (int64_t s = 0; s < c->S; s++) lbl[s] = -INFINITY;                                                \
                lbl[2 * L] = lpl[c->blank];                                                                           \
                gl[c->blank] = lal[2 * L] + lbl[2 * L];                                                               \
                if (L > 0) {                                                                                          \
                    const int64_t p = prime(c, b, 2 * L - 1);                                                         \
                    lbl[2 * L - 1] = lpl[p];                                                                          \
                    gl[p] = lal[2 * L - 1] + lbl[2 * L - 1]; /* a blank and a non-blank: no log-add */                \
                }                                                                                                     \
            }                                                                                                         \
            for (int64_t t = il - 2; t >= 0; t--) {                                                                   \
                const T_ *next = lb + (t + 1) * c->S, *row = lp0 + t * NC, *lat = la + t * c->S;                      \
                T_ *cur = lb + t * c->S, *gt = g0 + t * NC;                                                           \
                for (int64_t s = 2 * L; s >= 0; s--) {                                                                \
                    const int64_t p = prime(c, b, s);                                                                 \
                    const T_ b2 = s < 2 * L ? next[s + 1] : (T_)-INFINITY;                                            \
                    const T_ b3 = (s < 2 * L - 1 && prime(c, b, s + 2) != p) ? next[s + 2] : (T_)-INFINITY;           \
                    cur[s] = lse3_##T_(next[s], b2, b3) + row[p];                                                     \
                    const T_ ab = lat[s] + cur[s];                                                                    \
                    T_ *g = gt + p;                                                                                   \
                    if (*g == -INFINITY) {                                                                            \
                        *g = ab;                                                                                      \
                    } else {                                                                                          \
                        const T_ m = *g > ab ? *g : ab;                                                               \
                        *g = LOG(EXP(*g - m) + EXP(ab - m)) + m;                                                      \
                    }                                                                                                 \
                }                                                                                                     \
            }                                                                                                         \
            const T_ gr = gout[b];                                                                                    \
            for (int64_t t = 0; t < il; t++) {                                                                        \
                T_ *gt = g0 + t * NC;                                                                                 \
                const T_ *row = lp0 + t * NC;                                                                         \
                for (int64_t k = 0; k < c->C; k++) gt[k] = (EXP(row[k]) - EXP(gt[k] + nll - row[k])) * gr;           \
            }                                                                                                         \
            for (int64_t t = il; t < c->T; t++) memset(g0 + t * NC, 0, (size_t)c->C * sizeof(T_));                    \
        }                                                                                                             \
    }
CTC_IMPL(float, expf, logf)
CTC_IMPL(double, exp, log)

/* PyTorch's checkScalarType wording */
static int bad_targets_dtype(const tl_tensor *targets) {
    static const char *legacy[TL_NUM_DTYPES] = {"Bool", "Byte", "Char", "Short", "Int", "Long", "Half", "BFloat16",
                                                "Float", "Double", "ComplexFloat", "ComplexDouble"};
    return tl_set_error(TL_ERR_RUNTIME, "Expected tensor for argument #2 'targets' to have scalar type Int; but got "
                        "torch.%sTensor instead" CTC_FROM, legacy[tl_tensor_dtype(targets)]);
}

static int64_t off_bytes(const ctc_ctx *c) { return (c->N > 0 ? c->N : 1) * (int64_t)sizeof(int64_t); }

/* ctc_loss_allocate_outputs's checks; fills the per-item target offsets and
 * stride (of the int64 contiguous copy *tg) and the max target length */
static int ctc_setup(tl_tensor *log_probs, tl_tensor *targets, const int64_t *il, int64_t nil, const int64_t *tl,
                     int64_t ntl, int64_t blank, const char *name, ctc_ctx *c, tl_tensor **tg, int64_t **off) {
    const tl_dtype dt = tl_tensor_dtype(log_probs);
    if (dt != TL_FLOAT32 && dt != TL_FLOAT64)
        return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", name,
                            tl_dtype_scalar_name(dt));
    if (tl_tensor_numel(log_probs) == 0) return tl_set_error(TL_ERR_RUNTIME, "log_probs tensor must not be empty");
    const tl_dtype tdt = tl_tensor_dtype(targets);
    if (tdt != TL_INT64 && tdt != TL_INT32) return bad_targets_dtype(targets);
    if (tl_tensor_ndim(log_probs) != 3)
        return tl_set_error(TL_ERR_RUNTIME, "Expected 3-dimensional tensor, but got %lld-dimensional tensor for "
                            "argument #1 'log_probs'" CTC_FROM, (long long)tl_tensor_ndim(log_probs));
    const int64_t tnd = tl_tensor_ndim(targets);
    if (tnd < 1 || tnd > 2)
        return tl_set_error(TL_ERR_RUNTIME, "Expected 1 to 2 dimensions, but got %lld-dimensional tensor for "
                            "argument #2 'targets'" CTC_FROM, (long long)tnd);
    const int64_t *ls = tl_tensor_sizes(log_probs);
    c->T = ls[0];
    c->N = ls[1];
    c->C = ls[2];
    c->blank = blank;
    if (blank < 0 || blank >= c->C) return tl_set_error(TL_ERR_RUNTIME, "blank must be in label range");
    if (nil != c->N) return tl_set_error(TL_ERR_RUNTIME, "input_lengths must be of size batch_size");
    if (ntl != c->N) return tl_set_error(TL_ERR_RUNTIME, "target_lengths must be of size batch_size");
    int64_t *o = tl_alloc(off_bytes(c));
    if (!o) return -1;
    *off = o;
    const int64_t *ts = tl_tensor_sizes(targets);
    int64_t pos = 0, maxl = 0;
    for (int64_t i = 0; i < c->N; i++) {
        if (tl[i] < 0)
            return tl_set_error(TL_ERR_RUNTIME, "Expected target_lengths to have value at least 0, but got value "
                                "%lld" CTC_FROM, (long long)tl[i]);
        o[i] = tnd == 1 ? pos : i * ts[tnd - 1]; /* rows of the contiguous 2-d copy */
        pos += tl[i];
        if (tl[i] > maxl) maxl = tl[i];
    }
    if (tnd == 1) {
        if (ts[0] != pos)
            return tl_set_error(TL_ERR_RUNTIME, "Expected tensor to have size %lld at dimension 0, but got size %lld "
                                "for argument #2 'targets'" CTC_FROM, (long long)pos, (long long)ts[0]);
        c->tstride = 1;
    } else {
        if (ts[0] != c->N)
            return tl_set_error(TL_ERR_RUNTIME, "Expected tensor to have size %lld at dimension 0, but got size %lld "
                                "for argument #2 'targets'" CTC_FROM, (long long)c->N, (long long)ts[0]);
        if (ts[1] < maxl)
            return tl_set_error(TL_ERR_RUNTIME, "Expected tensor to have size at least %lld at dimension 1, but got "
                                "size %lld for argument #2 'targets'" CTC_FROM, (long long)maxl, (long long)ts[1]);
        c->tstride = 1;
    }
    for (int64_t b = 0; b < c->N; b++) {
        if (il[b] < 0)
            return tl_set_error(TL_ERR_RUNTIME, "Expected input_lengths to have value at least 0, but got value "
                                "%lld" CTC_FROM, (long long)il[b]);
        if (il[b] > c->T)
            return tl_set_error(TL_ERR_RUNTIME, "Expected input_lengths to have value at most %lld, but got value "
                                "%lld" CTC_FROM, (long long)c->T, (long long)il[b]);
    }
    c->S = 2 * maxl + 1;
    c->il = il;
    c->tl = tl;
    c->off = o;
    if (!(*tg = contig_as(targets, TL_INT64))) return -1;
    c->tg = tl_tensor_data_ptr(*tg);
    /* the labels the recursion reads must index log_probs' last dim */
    for (int64_t b = 0; b < c->N; b++)
        for (int64_t j = 0; j < tl[b]; j++) {
            const int64_t v = c->tg[o[b] + j];
            if (v < 0 || v >= c->C)
                return tl_set_error(TL_ERR_RUNTIME, "ctc_loss: target label %lld is out of range for %lld classes",
                                    (long long)v, (long long)c->C);
        }
    return 0;
}

static int64_t ctc_grain(const ctc_ctx *c) {
    const int64_t work = c->T * c->S + 1;
    return 65536 / work > 0 ? 65536 / work : 1;
}

static int ctc_forward(tl_tensor *log_probs, tl_tensor *targets, const int64_t *il, int64_t nil, const int64_t *tl,
                       int64_t ntl, int64_t blank, tl_tensor **ret0, tl_tensor **ret1) {
    ctc_ctx c;
    memset(&c, 0, sizeof c);
    tl_tensor *tg = NULL, *lp = NULL, *nll = NULL, *alpha = NULL;
    int64_t *off = NULL;
    int rc = -1;
    if (ctc_setup(log_probs, targets, il, nil, tl, ntl, blank, "ctc_loss_cpu", &c, &tg, &off)) goto done;
    const tl_dtype dt = tl_tensor_dtype(log_probs);
    const int64_t as[3] = {c.N, c.T, c.S};
    if (!(lp = contig_as(log_probs, dt)) || !(nll = tl_empty(1, &c.N, dt, TL_CPU)) ||
        !(alpha = tl_empty(3, as, dt, TL_CPU)))
        goto done;
    c.lp = tl_tensor_data_ptr(lp);
    c.nll = tl_tensor_data_ptr(nll);
    c.alpha = tl_tensor_data_ptr(alpha);
    tl_parallel_for(c.N, ctc_grain(&c), dt == TL_FLOAT64 ? fwd_double : fwd_float, &c);
    *ret0 = nll;
    *ret1 = alpha;
    nll = alpha = NULL;
    rc = 0;
done:
    if (off) tl_free(off, off_bytes(&c));
    tl_tensor_release(tg);
    tl_tensor_release(lp);
    tl_tensor_release(nll);
    tl_tensor_release(alpha);
    return rc;
}

static tl_tensor *ctc_backward(tl_tensor *grad, tl_tensor *log_probs, tl_tensor *targets, const int64_t *il,
                               int64_t nil, const int64_t *tl, int64_t ntl, tl_tensor *nll, tl_tensor *log_alpha,
                               int64_t blank, bool zero_infinity) {
    ctc_ctx c;
    memset(&c, 0, sizeof c);
    tl_tensor *tg = NULL, *lp = NULL, *g = NULL, *n = NULL, *la = NULL, *beta = NULL, *out = NULL;
    int64_t *off = NULL;
    int ok = 0;
    if (ctc_setup(log_probs, targets, il, nil, tl, ntl, blank, "ctc_loss_backward_cpu", &c, &tg, &off)) goto done;
    const tl_dtype dt = tl_tensor_dtype(log_probs);
    const int64_t *las = tl_tensor_sizes(log_alpha);
    if (tl_tensor_numel(grad) != c.N || tl_tensor_numel(nll) != c.N || tl_tensor_ndim(log_alpha) != 3 ||
        las[0] != c.N || las[1] != c.T || las[2] < c.S) {
        tl_set_error(TL_ERR_RUNTIME, "_ctc_loss_backward: grad, neg_log_likelihood and log_alpha must have the "
                     "shapes _ctc_loss returns");
        goto done;
    }
    c.S = las[2];
    const int64_t bs[3] = {c.N, c.T, c.S};
    if (!(lp = contig_as(log_probs, dt)) || !(g = contig_as(grad, dt)) || !(n = contig_as(nll, dt)) ||
        !(la = contig_as(log_alpha, dt)) || !(beta = tl_empty(3, bs, dt, TL_CPU)) ||
        !(out = tl_full(3, tl_tensor_sizes(log_probs), tl_scalar_from_double(-INFINITY), dt, TL_CPU)))
        goto done;
    c.lp = tl_tensor_data_ptr(lp);
    c.gout = tl_tensor_data_ptr(g);
    c.nll = tl_tensor_data_ptr(n);
    c.alpha = tl_tensor_data_ptr(la);
    c.beta = tl_tensor_data_ptr(beta);
    c.grad = tl_tensor_data_ptr(out);
    c.zero_inf = zero_infinity;
    tl_parallel_for(c.N, ctc_grain(&c), dt == TL_FLOAT64 ? bwd_double : bwd_float, &c);
    ok = 1;
done:
    if (off) tl_free(off, off_bytes(&c));
    tl_tensor_release(tg);
    tl_tensor_release(lp);
    tl_tensor_release(g);
    tl_tensor_release(n);
    tl_tensor_release(la);
    tl_tensor_release(beta);
    if (!ok) {
        tl_tensor_release(out);
        return NULL;
    }
    return out;
}

/* a lengths tensor as an int64 contiguous copy (PyTorch's "must be integral" check) */
static tl_tensor *lengths_of(tl_tensor *t, const char *name) {
    if (!tl_dtype_is_integral(tl_tensor_dtype(t), 0))
        return tl_set_error(TL_ERR_RUNTIME, "%s must be integral", name), NULL;
    return contig_as(t, TL_INT64);
}

int tl_native_ctc_loss_cpu(tl_keyset ks, tl_tensor *log_probs, tl_tensor *targets, const int64_t *input_lengths,
                           int64_t input_lengths_len, const int64_t *target_lengths, int64_t target_lengths_len,
                           int64_t blank, bool zero_infinity, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    (void)zero_infinity; /* only the backward reads it */
    return ctc_forward(log_probs, targets, input_lengths, input_lengths_len, target_lengths, target_lengths_len,
                       blank, ret0, ret1);
}

int tl_native_ctc_loss_tensor(tl_keyset ks, tl_tensor *log_probs, tl_tensor *targets, tl_tensor *input_lengths,
                              tl_tensor *target_lengths, int64_t blank, bool zero_infinity, tl_tensor **ret0,
                              tl_tensor **ret1) {
    (void)ks;
    (void)zero_infinity;
    tl_tensor *il = lengths_of(input_lengths, "input_lengths");
    tl_tensor *tl = il ? lengths_of(target_lengths, "target_lengths") : NULL;
    int rc = tl ? ctc_forward(log_probs, targets, tl_tensor_data_ptr(il), tl_tensor_numel(il),
                              tl_tensor_data_ptr(tl), tl_tensor_numel(tl), blank, ret0, ret1)
                : -1;
    tl_tensor_release(il);
    tl_tensor_release(tl);
    return rc;
}

tl_tensor *tl_native_ctc_loss_backward_cpu(tl_keyset ks, tl_tensor *grad, tl_tensor *log_probs, tl_tensor *targets,
                                           const int64_t *input_lengths, int64_t input_lengths_len,
                                           const int64_t *target_lengths, int64_t target_lengths_len,
                                           tl_tensor *neg_log_likelihood, tl_tensor *log_alpha, int64_t blank,
                                           bool zero_infinity) {
    (void)ks;
    return ctc_backward(grad, log_probs, targets, input_lengths, input_lengths_len, target_lengths,
                        target_lengths_len, neg_log_likelihood, log_alpha, blank, zero_infinity);
}

tl_tensor *tl_native_ctc_loss_backward_tensor(tl_keyset ks, tl_tensor *grad, tl_tensor *log_probs,
                                              tl_tensor *targets, tl_tensor *input_lengths, tl_tensor *target_lengths,
                                              tl_tensor *neg_log_likelihood, tl_tensor *log_alpha, int64_t blank,
                                              bool zero_infinity) {
    (void)ks;
    tl_tensor *il = lengths_of(input_lengths, "input_lengths");
    tl_tensor *tl = il ? lengths_of(target_lengths, "target_lengths") : NULL;
    tl_tensor *r = tl ? ctc_backward(grad, log_probs, targets, tl_tensor_data_ptr(il), tl_tensor_numel(il),
                                     tl_tensor_data_ptr(tl), tl_tensor_numel(tl), neg_log_likelihood, log_alpha,
                                     blank, zero_infinity)
                      : NULL;
    tl_tensor_release(il);
    tl_tensor_release(tl);
    return r;
}

/* ctc_loss (CompositeImplicitAutograd, PyTorch's ctc_loss_impl): a 2-d
 * log_probs is one unbatched item; targets go in as int64; zero_infinity
 * zeroes infinite losses; mean divides each loss by its target length
 * (at least 1) before averaging. Every step an operator, so autograd
 * records _ctc_loss and the reduction. */
tl_tensor *tl_native_ctc_loss(tl_keyset ks, tl_tensor *log_probs, tl_tensor *targets,
                                      const int64_t *input_lengths, int64_t input_lengths_len,
                                      const int64_t *target_lengths, int64_t target_lengths_len, int64_t blank,
                                      int64_t reduction, bool zero_infinity) {
    (void)ks;
    const int batched = tl_tensor_ndim(log_probs) == 3;
    tl_tensor *lp = batched ? (tl_tensor_retain(log_probs), log_probs) : tl_ops_unsqueeze(log_probs, 1);
    tl_tensor *tg = lp ? tl_ops_to_dtype(targets, TL_INT64, false, false, -1) : NULL;
    tl_tensor *res = NULL, *alpha = NULL, *r = NULL;
    if (tg && tl_ops__ctc_loss(lp, tg, input_lengths, input_lengths_len, target_lengths, target_lengths_len, blank,
                               zero_infinity, &res, &alpha) == 0) {
        tl_tensor_release(alpha);
        if (zero_infinity) {
            tl_tensor *inf = tl_ops_eq_Scalar(res, tl_scalar_from_double(INFINITY));
            tl_tensor *zero = inf ? tl_zeros(0, NULL, tl_tensor_dtype(res), TL_CPU) : NULL;
            tl_tensor *w = zero ? tl_ops_where_self(inf, zero, res) : NULL;
            tl_tensor_release(inf);
            tl_tensor_release(zero);
            tl_tensor_release(res);
            res = w;
        }
        if (res && reduction == 1) { /* Mean */
            const int64_t n = target_lengths_len;
            tl_tensor *lens = tl_empty(1, &n, TL_INT64, TL_CPU);
            if (lens && n) memcpy(tl_tensor_data_ptr(lens), target_lengths, (size_t)n * sizeof(int64_t));
            tl_tensor *lf = lens ? tl_ops_to_dtype(lens, tl_tensor_dtype(res), false, false, -1) : NULL;
            tl_tensor *lc = lf ? tl_ops_clamp_min(lf, tl_scalar_from_int(1)) : NULL;
            tl_tensor *q = lc ? tl_ops_div_Tensor(res, lc) : NULL;
            r = q ? tl_ops_mean(q, TL_DTYPE_UNDEFINED) : NULL;
            tl_tensor_release(lens);
            tl_tensor_release(lf);
            tl_tensor_release(lc);
            tl_tensor_release(q);
        } else if (res && reduction == 2) { /* Sum */
            r = tl_ops_sum(res, TL_DTYPE_UNDEFINED);
        } else if (res) {
            r = batched ? (tl_tensor_retain(res), res) : tl_ops_squeeze_dim(res, 0);
        }
    }
    tl_tensor_release(lp);
    tl_tensor_release(tg);
    tl_tensor_release(res);
    return r;
}

tl_tensor *tl_native_ctc_loss__ctc_loss_Tensor(tl_keyset ks, tl_tensor *log_probs, tl_tensor *targets,
                                     tl_tensor *input_lengths, tl_tensor *target_lengths, int64_t blank,
                                     int64_t reduction, bool zero_infinity) {
    tl_tensor *il = lengths_of(input_lengths, "input_lengths");
    tl_tensor *tl = il ? lengths_of(target_lengths, "target_lengths") : NULL;
    tl_tensor *r = tl ? tl_native_ctc_loss(ks, log_probs, targets, tl_tensor_data_ptr(il),
                                                   tl_tensor_numel(il), tl_tensor_data_ptr(tl), tl_tensor_numel(tl),
                                                   blank, reduction, zero_infinity)
                      : NULL;
    tl_tensor_release(il);
    tl_tensor_release(tl);
    return r;
}
