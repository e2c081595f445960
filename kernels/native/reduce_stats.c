/* var / std / var_mean / std_mean (correction and unbiased overloads),
 * logsumexp, linalg_vector_norm.
 *
 * float32 / float64 inputs are read in place (reduce_direct.h: an [A, R, B]
 * view, row kernels when the reduced elements are contiguous, column kernels
 * across a kept inner dim); other layouts and dtypes go through one
 * contiguous copy in float32 (float64 for float64) and the same row kernels
 * (kernels/cpu/reduce_stats_kernel.c). var accumulates in double (shifted
 * block sums per SIMD lane, Chan's merge across blocks, lanes and chunks), so
 * float32 results are the float64 ones rounded; logsumexp subtracts the row
 * max (0 when it is infinite, as PyTorch) and sums exp in double; norms
 * accumulate |x|^p (float32 ord 2 / 1 rows as float trees widened to double). The unbiased-bool
 * overloads are PyTorch's CompositeImplicitAutograd wrappers of the
 * correction overloads.
 */
#include <math.h>
#include <stdio.h>

#include <float.h>
#include <stdlib.h>

#include "reduce_direct.h"
#include "reduce_util.h"
#include "tl_cuda_guard.h"
#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/linalg_vector_norm.h"
#include "ops/logsumexp.h"
#include "ops/std.h"
#include "ops/std_mean.h"
#include "ops/var.h"
#include "ops/var_mean.h"
#include "tl_reduce_stats_kernel.h"
#include "tl_structured.h"

TL_DEFINE_STUB(tl_rstats_stub, tl_rstats_table)

static double scalar_to_double(tl_scalar s) { return s.kind == TL_SCALAR_DOUBLE ? s.d : (double)s.i; }

/* ---- var / std */

/* the compute dtype of the direct kernels for an input / result dtype */
static tl_dtype kernel_dtype(tl_dtype in, tl_dtype res) {
    return in == TL_FLOAT64 || res == TL_FLOAT64 ? TL_FLOAT64 : TL_FLOAT32;
}

typedef struct {
    const tl_rstats_fns *k;
    double *mean, *m2;   /* per output; per chunk for a chunked single output */
} mom_ctx;

static void mom_row(void *c_, const void *p, int64_t R, int64_t o) {
    const mom_ctx *c = c_;
    c->k->moments_row(p, R, c->mean + o, c->m2 + o);
}
static void mom_col(void *c_, const void *p, int64_t R, int64_t stride, int64_t w, int64_t o) {
    const mom_ctx *c = c_;
    c->k->moments_col(p, R, stride, w, c->mean + o, c->m2 + o);
}
static void mom_chunk(void *c_, const void *p, int64_t len, int64_t i) {
    const mom_ctx *c = c_;
    c->k->moments_row(p, len, c->mean + i, c->m2 + i);
}

/* mean and M2 of each output into mean[O], m2[O] */
static int moments(const tl_tensor *self, uint64_t mask, double *mean, double *m2) {
    tl_rd_view v;
    if (tl_rd_view_init(&v, self, mask, kernel_dtype(tl_tensor_dtype(self), tl_tensor_dtype(self)))) return -1;
    mom_ctx c = {&TL_RSTATS(v.slot), mean, m2};
    if (!tl_rd_view_chunked(&v)) {
        const tl_rd_work w = {mom_row, mom_col, &c};
        tl_rd_view_run(&v, &w);
        tl_rd_view_free(&v);
        return 0;
    }
    /* one long row: chunks merged in order with Chan's formula */
    const int64_t nch = tl_rd_chunk_count(&v);
    c.mean = malloc(2 * (size_t)nch * sizeof(double));
    if (!c.mean) {
        tl_rd_view_free(&v);
        return tl_set_error(TL_ERR_RUNTIME, "out of memory");
    }
    c.m2 = c.mean + nch;
    tl_rd_view_run_chunks(&v, mom_chunk, &c);
    double n = 0, mu = 0, q = 0;
    for (int64_t i = 0; i < nch; i++) {
        const double nb = (double)(i + 1 < nch ? TL_RD_CHUNK : v.R - i * (int64_t)TL_RD_CHUNK), tot = n + nb;
        const double d = c.mean[i] - mu;
        mu += d * (nb / tot);
        q += c.m2[i] + d * d * (n * nb / tot);
        n = tot;
    }
    *mean = mu;
    *m2 = q;
    free(c.mean);
    tl_rd_view_free(&v);
    return 0;
}

/* var (or std) and mean of each output from the moments (in place) */
static void var_finish(int64_t O, int64_t R, double correction, int take_sqrt, double *m2_var, double *mean) {
    const double dof = (double)R - correction;
    for (int64_t j = 0; j < O; j++) {
        const double v = m2_var[j] / (dof > 0 ? dof : 0);
        m2_var[j] = take_sqrt ? sqrt(v) : v;
        if (R == 0) mean[j] = NAN;
    }
}

/* outputs (functional when var_out is NULL, else out=) of var/std[_mean] */
static int var_impl(const char *name, tl_tensor *self, const int64_t *dim, int64_t dim_len, const tl_scalar *correction,
                    bool keepdim, int take_sqrt, int with_mean, tl_tensor *var_out, tl_tensor **ret0, tl_tensor **ret1) {
    if (!tl_dtype_is_floating(tl_tensor_dtype(self)))
        return tl_set_error(TL_ERR_RUNTIME, "std and var only support floating point and complex dtypes");
    uint64_t mask;
    if (tl_rd_mask(self, dim, dim_len, &mask)) return -1;
    const double corr = correction ? scalar_to_double(*correction) : 1.0;
    int64_t shape[TL_RD_MAXD];
    const int64_t k = tl_rd_shape(self, mask, keepdim, shape);
    int64_t O, R;
    tl_rd_counts(self, mask, &O, &R);
    /* PyTorch's warn_invalid_degrees_of_freedom (the bindings raise it as a
     * UserWarning); the value is PyTorch's: m2 / max(0, dof) -> inf or nan */
    if ((O == 0 ? 0 : R) - corr <= 0)
        tl__warn("%s(): degrees of freedom is <= 0. Correction should be strictly less than the reduction factor "
                 "(input numel divided by output numel).", name);
    tl_structured s;
    tl_structured_init(&s, var_out ? TL_STRUCTURED_OUT : TL_STRUCTURED_FUNCTIONAL, tl_tensor_device(self), 0);
    int rc = var_out ? tl_structured_propose(&s, 0, var_out) : 0;
    const tl_dtype dt = var_out ? tl_tensor_dtype(var_out) : tl_tensor_dtype(self);
    if (!rc) rc = tl_structured_set_output(&s, 0, k, shape, NULL, dt);
    if (!rc && with_mean) rc = tl_structured_set_output(&s, 1, k, shape, NULL, tl_tensor_dtype(self));
    if (!rc && O > 0 && tl_tensor_device(self) == TL_CUDA) {   /* Welford on the device */
        rc = tl_cuda_var_into(self, mask, corr, take_sqrt, s.outputs[0], with_mean ? s.outputs[1] : NULL);
    } else if (!rc && O > 0) {
        tl_tensor *vt = tl_rd_target(s.outputs[0], TL_FLOAT64);
        /* the means go into the mean output, or a scratch tensor */
        tl_tensor *mt = !vt ? NULL : with_mean ? tl_rd_target(s.outputs[1], TL_FLOAT64)
                                              : tl_empty(1, &O, TL_FLOAT64, TL_CPU);
        if (!vt || !mt || moments(self, mask, tl_tensor_data_ptr(mt), tl_tensor_data_ptr(vt))) {
            rc = -1;
            tl_tensor_release(vt);
        } else {
            var_finish(O, R, corr, take_sqrt, tl_tensor_data_ptr(vt), tl_tensor_data_ptr(mt));
            rc = tl_rd_commit(s.outputs[0], vt);
            if (with_mean) {
                rc |= tl_rd_commit(s.outputs[1], mt);
                mt = NULL;
            }
        }
        tl_tensor_release(mt);
    }
    if (!rc) {
        if (var_out) tl_tensor_bump_version(s.outputs[0]);
        *ret0 = s.outputs[0];
        s.outputs[0] = NULL;
        if (with_mean) {
            *ret1 = s.outputs[1];
            s.outputs[1] = NULL;
        }
    }
    tl_structured_cleanup(&s);
    return rc ? -1 : 0;
}

static tl_tensor *var_one(const char *name, tl_tensor *self, const int64_t *dim, int64_t dim_len,
                          const tl_scalar *correction, bool keepdim, int take_sqrt, tl_tensor *out) {
    tl_tensor *r = NULL;
    if (var_impl(name, self, dim, dim_len, correction, keepdim, take_sqrt, 0, out, &r, NULL)) return NULL;
    return r;
}

tl_tensor *tl_native_var(tl_keyset ks, tl_tensor *self, const int64_t *dim, int64_t dim_len, const tl_scalar *correction,
                         bool keepdim) {
    (void)ks;
    return var_one("var", self, dim, dim_len, correction, keepdim, 0, NULL);
}
tl_tensor *tl_native_std(tl_keyset ks, tl_tensor *self, const int64_t *dim, int64_t dim_len, const tl_scalar *correction,
                         bool keepdim) {
    (void)ks;
    return var_one("std", self, dim, dim_len, correction, keepdim, 1, NULL);
}
tl_tensor *tl_native_var_out(tl_keyset ks, tl_tensor *self, const int64_t *dim, int64_t dim_len,
                             const tl_scalar *correction, bool keepdim, tl_tensor *out) {
    (void)ks;
    return var_one("var", self, dim, dim_len, correction, keepdim, 0, out);
}
tl_tensor *tl_native_std_out(tl_keyset ks, tl_tensor *self, const int64_t *dim, int64_t dim_len,
                             const tl_scalar *correction, bool keepdim, tl_tensor *out) {
    (void)ks;
    return var_one("std", self, dim, dim_len, correction, keepdim, 1, out);
}
int tl_native_var_mean(tl_keyset ks, tl_tensor *self, const int64_t *dim, int64_t dim_len, const tl_scalar *correction,
                       bool keepdim, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    return var_impl("var_mean", self, dim, dim_len, correction, keepdim, 0, 1, NULL, ret0, ret1);
}
int tl_native_std_mean(tl_keyset ks, tl_tensor *self, const int64_t *dim, int64_t dim_len, const tl_scalar *correction,
                       bool keepdim, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    return var_impl("std_mean", self, dim, dim_len, correction, keepdim, 1, 1, NULL, ret0, ret1);
}

/* the unbiased-bool overloads (CompositeImplicitAutograd: differentiated
 * through the correction overloads they call) */
static tl_scalar corr_of(bool unbiased) { return tl_scalar_from_int(unbiased ? 1 : 0); }

tl_tensor *tl_native_var_unbiased(tl_keyset ks, tl_tensor *self, bool unbiased) {
    (void)ks;
    const tl_scalar c = corr_of(unbiased);
    return tl_ops_var_correction(self, NULL, 0, &c, false);
}
tl_tensor *tl_native_std_unbiased(tl_keyset ks, tl_tensor *self, bool unbiased) {
    (void)ks;
    const tl_scalar c = corr_of(unbiased);
    return tl_ops_std_correction(self, NULL, 0, &c, false);
}
tl_tensor *tl_native_var_dim(tl_keyset ks, tl_tensor *self, const int64_t *dim, int64_t dim_len, bool unbiased,
                             bool keepdim) {
    (void)ks;
    const tl_scalar c = corr_of(unbiased);
    return tl_ops_var_correction(self, dim, dim_len, &c, keepdim);
}
tl_tensor *tl_native_std_dim(tl_keyset ks, tl_tensor *self, const int64_t *dim, int64_t dim_len, bool unbiased,
                             bool keepdim) {
    (void)ks;
    const tl_scalar c = corr_of(unbiased);
    return tl_ops_std_correction(self, dim, dim_len, &c, keepdim);
}
tl_tensor *tl_native_var_out_unbiased(tl_keyset ks, tl_tensor *self, const int64_t *dim, int64_t dim_len,
                                      bool unbiased, bool keepdim, tl_tensor *out) {
    (void)ks;
    const tl_scalar c = corr_of(unbiased);
    return tl_ops_var_correction_out(self, dim, dim_len, &c, keepdim, out);
}
tl_tensor *tl_native_std_out_unbiased(tl_keyset ks, tl_tensor *self, const int64_t *dim, int64_t dim_len,
                                      bool unbiased, bool keepdim, tl_tensor *out) {
    (void)ks;
    const tl_scalar c = corr_of(unbiased);
    return tl_ops_std_correction_out(self, dim, dim_len, &c, keepdim, out);
}
int tl_native_var_mean_unbiased(tl_keyset ks, tl_tensor *self, bool unbiased, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    const tl_scalar c = corr_of(unbiased);
    return tl_ops_var_mean_correction(self, NULL, 0, &c, false, ret0, ret1);
}
int tl_native_std_mean_unbiased(tl_keyset ks, tl_tensor *self, bool unbiased, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    const tl_scalar c = corr_of(unbiased);
    return tl_ops_std_mean_correction(self, NULL, 0, &c, false, ret0, ret1);
}
int tl_native_var_mean_dim(tl_keyset ks, tl_tensor *self, const int64_t *dim, int64_t dim_len, bool unbiased,
                           bool keepdim, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    const tl_scalar c = corr_of(unbiased);
    return tl_ops_var_mean_correction(self, dim, dim_len, &c, keepdim, ret0, ret1);
}
int tl_native_std_mean_dim(tl_keyset ks, tl_tensor *self, const int64_t *dim, int64_t dim_len, bool unbiased,
                           bool keepdim, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    const tl_scalar c = corr_of(unbiased);
    return tl_ops_std_mean_correction(self, dim, dim_len, &c, keepdim, ret0, ret1);
}

/* ---- logsumexp: floating results (integers -> the default dtype); dim=[]
 * reduces every dim */

typedef struct {
    const tl_rstats_fns *k;
    double *out;        /* per output */
    double *m, *s;      /* per chunk of a chunked single output */
} lse_ctx;

static double lse_value(double m, double s) { return log(s) + m; }

static void lse_row(void *c_, const void *p, int64_t R, int64_t o) {
    const lse_ctx *c = c_;
    double m, s;
    c->k->lse_row(p, R, &m, &s);
    c->out[o] = lse_value(m, s);
}
static void lse_col(void *c_, const void *p, int64_t R, int64_t stride, int64_t w, int64_t o) {
    const lse_ctx *c = c_;
    double mx[TL_RD_COLS];
    c->k->lse_col(p, R, stride, w, c->out + o, mx);
}
static void lse_chunk(void *c_, const void *p, int64_t len, int64_t i) {
    const lse_ctx *c = c_;
    c->k->lse_row(p, len, c->m + i, c->s + i);
}

/* one long row from its chunks' (m, s): NaN wins, then +inf (s = inf); the
 * others rescaled to the largest m among chunks with s > 0 (all -inf: -inf) */
static double lse_merge(const double *m, const double *s, int64_t n) {
    double M = -INFINITY, tot = 0;
    int inf = 0;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(s[i])) return s[i];
        if (isinf(s[i])) inf = 1;
        else if (s[i] > 0 && m[i] > M) M = m[i];
    }
    if (inf) return INFINITY;
    if (M == -INFINITY) return -INFINITY;
    for (int64_t i = 0; i < n; i++)
        if (s[i] > 0) tot += s[i] * exp(m[i] - M);
    return lse_value(M, tot);
}

static int logsumexp_into(tl_tensor *self, uint64_t mask, tl_tensor *out) {
    int64_t O, R;
    tl_rd_counts(self, mask, &O, &R);
    if (O == 0) return 0;
    tl_tensor *t = tl_rd_target(out, TL_FLOAT64);
    if (!t) return -1;
    tl_rd_view v;
    if (tl_rd_view_init(&v, self, mask, kernel_dtype(tl_tensor_dtype(self), tl_tensor_dtype(out)))) {
        tl_tensor_release(t);
        return -1;
    }
    lse_ctx c = {&TL_RSTATS(v.slot), tl_tensor_data_ptr(t), NULL, NULL};
    if (!tl_rd_view_chunked(&v)) {
        const tl_rd_work w = {lse_row, lse_col, &c};
        tl_rd_view_run(&v, &w);
    } else {
        const int64_t nch = tl_rd_chunk_count(&v);
        c.m = malloc(2 * (size_t)nch * sizeof(double));
        if (!c.m) {
            tl_rd_view_free(&v);
            tl_tensor_release(t);
            return tl_set_error(TL_ERR_RUNTIME, "out of memory");
        }
        c.s = c.m + nch;
        tl_rd_view_run_chunks(&v, lse_chunk, &c);
        c.out[0] = lse_merge(c.m, c.s, nch);
        free(c.m);
    }
    tl_rd_view_free(&v);
    return tl_rd_commit(out, t);
}

static tl_tensor *logsumexp_run(tl_tensor *self, const int64_t *dim, int64_t dim_len, bool keepdim, tl_tensor *out) {
    uint64_t mask;
    if (tl_rd_mask(self, dim, dim_len, &mask)) return NULL;
    if (out && !tl_dtype_is_floating(tl_tensor_dtype(out))) {
        tl_set_error(TL_ERR_RUNTIME, "logsumexp(): Expected floating point type for result tensor, but got: %s",
                     tl_dtype_scalar_name(tl_tensor_dtype(out)));
        return NULL;
    }
    int64_t shape[TL_RD_MAXD];
    const int64_t k = tl_rd_shape(self, mask, keepdim, shape);
    tl_dtype dt = tl_tensor_dtype(self);
    if (!tl_dtype_is_floating(dt)) dt = tl_get_default_dtype();
    tl_structured s;
    tl_structured_init(&s, out ? TL_STRUCTURED_OUT : TL_STRUCTURED_FUNCTIONAL, tl_tensor_device(self), 0);
    int rc = out ? tl_structured_propose(&s, 0, out) : 0;
    if (!rc) rc = tl_structured_set_output(&s, 0, k, shape, NULL, out ? tl_tensor_dtype(out) : dt);
    if (!rc && tl_tensor_device(self) == TL_CUDA) rc = tl_cuda_logsumexp_into(self, mask, s.outputs[0]);
    else if (!rc) rc = logsumexp_into(self, mask, s.outputs[0]);
    if (rc) {
        tl_structured_cleanup(&s);
        return NULL;
    }
    return tl_structured_finish(&s);
}

/* a CompositeExplicitAutograd kernel (no generated device guard) whose
 * set_output allocates on the current device: run it with self's current */
static tl_tensor *logsumexp_impl(tl_tensor *self, const int64_t *dim, int64_t dim_len, bool keepdim, tl_tensor *out) {
    tl_cuda_guard g;
    if (tl_cuda_guard_enter(&g, tl_cuda_device_of(self)) != 0) return NULL;
    tl_tensor *r = logsumexp_run(self, dim, dim_len, keepdim, out);
    tl_cuda_guard_exit(&g);
    return r;
}

tl_tensor *tl_native_logsumexp(tl_keyset ks, tl_tensor *self, const int64_t *dim, int64_t dim_len, bool keepdim) {
    (void)ks;
    return logsumexp_impl(self, dim, dim_len, keepdim, NULL);
}
tl_tensor *tl_native_logsumexp_out(tl_keyset ks, tl_tensor *self, const int64_t *dim, int64_t dim_len, bool keepdim,
                                   tl_tensor *out) {
    (void)ks;
    return logsumexp_impl(self, dim, dim_len, keepdim, out);
}

/* ---- linalg_vector_norm (structured): ord 0 (count of non-zeros), inf
 * (max |x|), -inf (min |x|), 1, 2, any other p: (sum |x|^p)^(1/p) */

static void fmt_ord(char *buf, size_t n, double ord) {
    if (isinf(ord)) snprintf(buf, n, "%sinf", ord < 0 ? "-" : "");
    else snprintf(buf, n, "%g", ord);
}

int tl_meta_linalg_vector_norm(tl_structured *s, tl_tensor *self, tl_scalar ord, const int64_t *dim, int64_t dim_len,
                               bool keepdim, tl_dtype dtype) {
    if (!tl_dtype_is_floating(tl_tensor_dtype(self)))
        return tl_set_error(TL_ERR_RUNTIME, "linalg.vector_norm: Expected a floating point or complex tensor as input. Got %s",
                            tl_dtype_scalar_name(tl_tensor_dtype(self)));
    if (dtype != TL_DTYPE_UNDEFINED && !tl_dtype_is_floating(dtype))
        return tl_set_error(TL_ERR_RUNTIME, "linalg.vector_norm: dtype should be floating point or complex, but got %s",
                            tl_dtype_scalar_name(dtype));
    uint64_t mask;
    if (tl_rd_mask(self, dim, dim_len, &mask)) return -1;
    const double p = scalar_to_double(ord);
    if (tl_tensor_numel(self) == 0 && (p < 0 || isinf(p))) {
        char b[32];
        fmt_ord(b, sizeof b, p);
        if (!dim || dim_len == 0)
            return tl_set_error(TL_ERR_RUNTIME, "linalg.vector_norm cannot compute the %s norm on an empty tensor because "
                                "the operation does not have an identity", b);
        const int64_t *sz = tl_tensor_sizes(self);
        for (int64_t i = 0; i < tl_tensor_ndim(self); i++)
            if ((mask & (1ull << i)) && sz[i] == 0)   /* PyTorch's text, missing space included */
                return tl_set_error(TL_ERR_RUNTIME, "linalg.vector_norm cannot compute the %s norm on the dimension "
                                    "%lldbecause this dimension is empty and the operation does not have an identity",
                                    b, (long long)i);
    }
    int64_t shape[TL_RD_MAXD];
    const int64_t k = tl_rd_shape(self, mask, keepdim, shape);
    return tl_structured_set_output(s, 0, k, shape, NULL, dtype != TL_DTYPE_UNDEFINED ? dtype : tl_tensor_dtype(self));
}

typedef struct {
    tl_norm_row_fn row;
    tl_norm_col_fn col;
    double ord;
    double *out;   /* per output, or per chunk of a chunked single output */
} norm_ctx;

static void norm_row(void *c_, const void *p, int64_t R, int64_t o) {
    const norm_ctx *c = c_;
    c->out[o] = c->row(p, R, c->ord);
}
static void norm_col(void *c_, const void *p, int64_t R, int64_t stride, int64_t w, int64_t o) {
    const norm_ctx *c = c_;
    c->col(p, R, stride, w, c->ord, c->out + o);
}
static void norm_chunk(void *c_, const void *p, int64_t len, int64_t i) {
    const norm_ctx *c = c_;
    c->out[i] = c->row(p, len, c->ord);
}

static int norm_kind(double p) {
    if (p == 2) return TL_NORM_L2;
    if (p == 1) return TL_NORM_L1;
    if (p == INFINITY) return TL_NORM_INF;
    if (p == -INFINITY) return TL_NORM_NEGINF;
    if (p == 0) return TL_NORM_L0;
    return TL_NORM_P;
}

/* chunk partials of one output, in order (max/min keep NaN) */
static double norm_merge(int kind, const double *a, int64_t n) {
    double r = a[0];
    for (int64_t i = 1; i < n; i++) {
        if (kind == TL_NORM_INF) r = a[i] > r || isnan(a[i]) ? a[i] : r;
        else if (kind == TL_NORM_NEGINF) r = a[i] < r || isnan(a[i]) ? a[i] : r;
        else r += a[i];
    }
    return r;
}

int tl_impl_linalg_vector_norm_out(tl_structured *s, tl_tensor *self, tl_scalar ord, const int64_t *dim,
                                   int64_t dim_len, bool keepdim, tl_dtype dtype, tl_tensor *out) {
    (void)s; (void)keepdim; (void)dtype;
    uint64_t mask;
    if (tl_rd_mask(self, dim, dim_len, &mask)) return -1;
    int64_t O, R;
    tl_rd_counts(self, mask, &O, &R);
    if (O == 0) return 0;
    /* PyTorch converts to the result dtype first */
    const tl_dtype rdt = tl_tensor_dtype(out);
    tl_tensor *x = tl_to_dtype(self, rdt, 0);
    if (!x) return -1;
    tl_tensor *t = tl_rd_target(out, TL_FLOAT64);
    tl_rd_view v;
    if (!t || tl_rd_view_init(&v, x, mask, kernel_dtype(rdt, rdt))) {
        tl_tensor_release(t);
        tl_tensor_release(x);
        return -1;
    }
    const double p = scalar_to_double(ord);
    const int kind = norm_kind(p);
    norm_ctx c = {TL_RSTATS(v.slot).norm_row[kind], TL_RSTATS(v.slot).norm_col[kind], p, tl_tensor_data_ptr(t)};
    double *o = c.out;
    int rc = 0;
    if (!tl_rd_view_chunked(&v)) {
        const tl_rd_work w = {norm_row, norm_col, &c};
        tl_rd_view_run(&v, &w);
    } else {
        const int64_t nch = tl_rd_chunk_count(&v);
        c.out = malloc((size_t)nch * sizeof(double));
        if (!c.out) {
            rc = tl_set_error(TL_ERR_RUNTIME, "out of memory");
        } else {
            tl_rd_view_run_chunks(&v, norm_chunk, &c);
            o[0] = norm_merge(kind, c.out, nch);
            free(c.out);
        }
    }
    /* PyTorch accumulates float32 (and half) norms in float32: a sum of
     * powers beyond FLT_MAX is inf there (norm of [1e20, 1e20] is inf) */
    const int f32acc = rdt != TL_FLOAT64;
    for (int64_t j = 0; !rc && j < O; j++) {
        double a = o[j];
        if (f32acc && (kind == TL_NORM_L2 || kind == TL_NORM_P || kind == TL_NORM_L1) && a > FLT_MAX) a = INFINITY;
        if (kind == TL_NORM_L2) a = sqrt(a);
        else if (kind == TL_NORM_P) a = pow(a, 1.0 / p);
        o[j] = a;
    }
    tl_rd_view_free(&v);
    tl_tensor_release(x);
    if (rc) {
        tl_tensor_release(t);
        return -1;
    }
    return tl_rd_commit(out, t);
}
