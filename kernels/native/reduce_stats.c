/* var / std / var_mean / std_mean (correction and unbiased overloads),
 * logsumexp, linalg_vector_norm.
 *
 * All over the rows layout in float64 (reduce_util.h): var is two-pass
 * (mean, then the sum of squared deviations), so float32 results are exact to
 * rounding; logsumexp subtracts the row max (0 when it is infinite, as
 * PyTorch); norms accumulate |x|^p in float64. The unbiased-bool overloads are
 * PyTorch's CompositeImplicitAutograd wrappers of the correction overloads.
 */
#include <math.h>
#include <stdio.h>

#include "reduce_util.h"
#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops.h"
#include "tl_structured.h"

static double scalar_to_double(tl_scalar s) { return s.kind == TL_SCALAR_DOUBLE ? s.d : (double)s.i; }

/* ---- var / std */

/* var (or std) and mean of each row of the rows layout */
static void var_rows(const double *p, int64_t O, int64_t R, double correction, int take_sqrt, double *var, double *mean) {
    const double dof = (double)R - correction;
    for (int64_t j = 0; j < O; j++) {
        const double *r = p + j * R;
        double s = 0;
        for (int64_t k = 0; k < R; k++) s += r[k];
        const double m = s / (double)R;
        double m2 = 0;
        for (int64_t k = 0; k < R; k++) {
            const double d = r[k] - m;
            m2 += d * d;
        }
        const double v = m2 / (dof > 0 ? dof : 0);
        if (var) var[j] = take_sqrt ? sqrt(v) : v;
        if (mean) mean[j] = m;
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
    /* PyTorch warns "<name>(): degrees of freedom is <= 0" here; torchlet's
     * functional bindings do not surface runtime warnings (only out= resizes
     * do), so a warning would pop up at some later out= call: none is set.
     * The value is PyTorch's: m2 / max(0, dof) -> inf or nan. */
    (void)name;
    tl_structured s;
    tl_structured_init(&s, var_out ? TL_STRUCTURED_OUT : TL_STRUCTURED_FUNCTIONAL, TL_CPU, 0);
    int rc = var_out ? tl_structured_propose(&s, 0, var_out) : 0;
    const tl_dtype dt = var_out ? tl_tensor_dtype(var_out) : tl_tensor_dtype(self);
    if (!rc) rc = tl_structured_set_output(&s, 0, k, shape, NULL, dt);
    if (!rc && with_mean) rc = tl_structured_set_output(&s, 1, k, shape, NULL, tl_tensor_dtype(self));
    if (!rc && O > 0) {
        tl_tensor *rows = tl_rd_rows(self, mask, TL_FLOAT64);
        tl_tensor *vt = rows ? tl_rd_target(s.outputs[0], TL_FLOAT64) : NULL;
        tl_tensor *mt = vt && with_mean ? tl_rd_target(s.outputs[1], TL_FLOAT64) : NULL;
        if (!vt || (with_mean && !mt)) {
            rc = -1;
            tl_tensor_release(vt);
        } else {
            var_rows(tl_tensor_data_ptr(rows), O, R, corr, take_sqrt, tl_tensor_data_ptr(vt),
                     mt ? tl_tensor_data_ptr(mt) : NULL);
            rc = tl_rd_commit(s.outputs[0], vt);
            if (mt) rc |= tl_rd_commit(s.outputs[1], mt);
            mt = NULL;
        }
        tl_tensor_release(mt);
        tl_tensor_release(rows);
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

static int logsumexp_into(tl_tensor *self, uint64_t mask, tl_tensor *out) {
    int64_t O, R;
    tl_rd_counts(self, mask, &O, &R);
    if (O == 0) return 0;
    tl_tensor *rows = tl_rd_rows(self, mask, TL_FLOAT64);
    if (!rows) return -1;
    tl_tensor *t = tl_rd_target(out, TL_FLOAT64);
    if (!t) {
        tl_tensor_release(rows);
        return -1;
    }
    const double *p = tl_tensor_data_ptr(rows);
    double *o = tl_tensor_data_ptr(t);
    for (int64_t j = 0; j < O; j++) {
        const double *r = p + j * R;
        double m = -INFINITY;
        for (int64_t k = 0; k < R; k++)
            if (r[k] > m || isnan(r[k])) m = r[k];
        if (isinf(m)) m = 0;
        double s = 0;
        for (int64_t k = 0; k < R; k++) s += exp(r[k] - m);
        o[j] = log(s) + m;
    }
    tl_tensor_release(rows);
    return tl_rd_commit(out, t);
}

static tl_tensor *logsumexp_impl(tl_tensor *self, const int64_t *dim, int64_t dim_len, bool keepdim, tl_tensor *out) {
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
    tl_structured_init(&s, out ? TL_STRUCTURED_OUT : TL_STRUCTURED_FUNCTIONAL, TL_CPU, 0);
    int rc = out ? tl_structured_propose(&s, 0, out) : 0;
    if (!rc) rc = tl_structured_set_output(&s, 0, k, shape, NULL, out ? tl_tensor_dtype(out) : dt);
    if (!rc) rc = logsumexp_into(self, mask, s.outputs[0]);
    if (rc) {
        tl_structured_cleanup(&s);
        return NULL;
    }
    return tl_structured_finish(&s);
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

int tl_impl_linalg_vector_norm_out(tl_structured *s, tl_tensor *self, tl_scalar ord, const int64_t *dim,
                                   int64_t dim_len, bool keepdim, tl_dtype dtype, tl_tensor *out) {
    (void)s; (void)keepdim; (void)dtype;
    uint64_t mask;
    if (tl_rd_mask(self, dim, dim_len, &mask)) return -1;
    int64_t O, R;
    tl_rd_counts(self, mask, &O, &R);
    if (O == 0) return 0;
    /* PyTorch converts to the result dtype first */
    tl_tensor *x = tl_to_dtype(self, tl_tensor_dtype(out), 0);
    tl_tensor *rows = x ? tl_rd_rows(x, mask, TL_FLOAT64) : NULL;
    tl_tensor_release(x);
    if (!rows) return -1;
    tl_tensor *t = tl_rd_target(out, TL_FLOAT64);
    if (!t) {
        tl_tensor_release(rows);
        return -1;
    }
    const double p = scalar_to_double(ord);
    const double *d = tl_tensor_data_ptr(rows);
    double *o = tl_tensor_data_ptr(t);
    for (int64_t j = 0; j < O; j++) {
        const double *r = d + j * R;
        double a = 0;
        if (p == INFINITY || p == -INFINITY) {
            a = R ? fabs(r[0]) : 0;
            for (int64_t k = 1; k < R; k++) {
                const double v = fabs(r[k]);
                if (isnan(v)) { a = v; break; }
                if (p > 0 ? v > a : v < a) a = v;
            }
        } else if (p == 0) {
            for (int64_t k = 0; k < R; k++) a += r[k] != 0;
        } else if (p == 1) {
            for (int64_t k = 0; k < R; k++) a += fabs(r[k]);
        } else if (p == 2) {
            for (int64_t k = 0; k < R; k++) a += r[k] * r[k];
            a = sqrt(a);
        } else {
            for (int64_t k = 0; k < R; k++) a += pow(fabs(r[k]), p);
            a = pow(a, 1.0 / p);
        }
        o[j] = a;
    }
    tl_tensor_release(rows);
    return tl_rd_commit(out, t);
}
