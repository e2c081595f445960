/* quantile / nanquantile (aten/src/ATen/native/Sorting.cpp's quantile_impl),
 * CompositeImplicitAutograd as in PyTorch: sort, ranks q * (n - 1) (nanquantile:
 * over the non-NaN count; quantile: a row with a NaN ranks last, so its
 * quantile is NaN), adjusted by the interpolation mode, values gathered below
 * and above the rank and lerped. Every step is an operator, so gradients flow
 * through sort, gather and lerp. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "missing_ops.h"
#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/any.h"
#include "ops/broadcast_tensors.h"
#include "ops/ceil.h"
#include "ops/flatten.h"
#include "ops/floor.h"
#include "ops/full_like.h"
#include "ops/gather.h"
#include "ops/isnan.h"
#include "ops/lerp.h"
#include "ops/logical_not.h"
#include "ops/lt.h"
#include "ops/masked_fill.h"
#include "ops/mul.h"
#include "ops/nanquantile.h"
#include "ops/quantile.h"
#include "ops/round.h"
#include "ops/sort.h"
#include "ops/squeeze.h"
#include "ops/sub.h"
#include "ops/sum.h"
#include "ops/transpose.h"
#include "ops/unsqueeze.h"
#include "ops/view.h"
#include "tl_structured.h"
#include "tl_tensor.h"

typedef enum { Q_LINEAR, Q_LOWER, Q_HIGHER, Q_MIDPOINT, Q_NEAREST } q_mode;

/* temporaries released together */
typedef struct {
    tl_tensor *t[40];
    int n;
} q_scope;

static tl_tensor *keep(q_scope *s, tl_tensor *t) {
    if (t) s->t[s->n++] = t;
    return t;
}

static void scope_release(q_scope *s) {
    for (int i = 0; i < s->n; i++) tl_tensor_release(s->t[i]);
}

/* PyTorch's quantile_checks and interpolation parsing */
static int q_checks(tl_tensor *self, tl_tensor *q, const char *interpolation, q_mode *mode) {
    if (self->dtype != TL_FLOAT32 && self->dtype != TL_FLOAT64)
        return tl_set_error(TL_ERR_RUNTIME, "quantile() input tensor must be either float or double dtype");
    if (q->dtype != self->dtype)
        return tl_set_error(TL_ERR_RUNTIME, "quantile() q tensor must be same dtype as the input tensor");
    if (q->ndim > 1) return tl_set_error(TL_ERR_RUNTIME, "quantile() q must be a scalar or 1D tensor");
    if (self->numel == 0) return tl_set_error(TL_ERR_RUNTIME, "quantile() input tensor must be non-empty");
    static const char *names[] = {"linear", "lower", "higher", "midpoint", "nearest"};
    for (int i = 0; i < 5; i++)
        if (!strcmp(interpolation, names[i])) {
            *mode = (q_mode)i;
            return 0;
        }
    return tl_set_error(TL_ERR_RUNTIME,
                        "quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, but got %s",
                        interpolation);
}

static tl_tensor *quantile_impl(tl_tensor *self, tl_tensor *q, int64_t dim, bool dim_has, bool keepdim,
                                const char *interpolation, bool ignore_nan) {
    q_mode mode;
    if (q_checks(self, q, interpolation, &mode)) return NULL;
    {   /* q in [0, 1] (CPU: checked eagerly, as PyTorch) */
        tl_tensor *qd = tl_to_dtype(q, TL_FLOAT64, 1);
        if (!qd) return NULL;
        const double *p = tl_tensor_data_ptr(qd);
        bool ok = true;
        for (int64_t i = 0; i < qd->numel; i++) ok = ok && p[i] >= 0 && p[i] <= 1;
        tl_tensor_release(qd);
        if (!ok) return tl_set_error(TL_ERR_RUNTIME, "quantile() q values must be in the range [0, 1]"), NULL;
    }
    /* output shape (quantile_output_shape), then q's dim in front */
    int64_t out_shape[TL_MAX_DIMS + 1], on = 0, wd = 0;
    if (dim_has) {
        wd = tl__wrap_dim(dim, self->ndim, 1);
        if (wd < 0) return NULL;
    }
    if (dim_has && self->ndim > 0) {
        for (int64_t i = 0; i < self->ndim; i++)
            if (i != wd) out_shape[on++] = self->sizes[i];
            else if (keepdim) out_shape[on++] = 1;
    } else if (keepdim) {
        for (int64_t i = 0; i < self->ndim; i++) out_shape[on++] = 1;
    }
    q_scope s = {{0}, 0};
    tl_tensor *res = NULL, *sorted = NULL, *idx = NULL;
    tl_tensor *src = dim_has ? keep(&s, tl_ops_transpose_int(keep(&s, tl_ops_unsqueeze(self, -1)), wd, -1))
                             : keep(&s, tl_ops_flatten_using_ints(self, 0, -1));
    if (!src || tl_ops_sort(src, -1, false, &sorted, &idx)) goto done;
    keep(&s, sorted);
    keep(&s, idx);
    const int64_t n = sorted->ndim ? sorted->sizes[sorted->ndim - 1] : 1;
    int64_t in_shape[TL_MAX_DIMS + 1];
    for (int64_t i = 0; i < on; i++) in_shape[i] = out_shape[i];
    in_shape[on] = n;
    tl_tensor *sv = keep(&s, tl_ops_view(sorted, in_shape, on + 1));
    if (!sv) goto done;
    if (n > (1 << 24)) {
        tl_set_error(TL_ERR_RUNTIME, "quantile() input tensor is too large");
        goto done;
    }
    tl_tensor *nan = keep(&s, tl_ops_isnan(sv)), *ranks = NULL;
    if (!nan) goto done;
    if (ignore_nan) {
        tl_tensor *cnt = keep(&s, tl_ops_sum_dim_IntList(keep(&s, tl_ops_logical_not(nan)), (int64_t[]){-1}, 1, true,
                                                          TL_DTYPE_UNDEFINED));
        tl_tensor *m1 = cnt ? keep(&s, tl_ops_sub_Scalar(cnt, tl_scalar_from_int(1), tl_scalar_from_int(1))) : NULL;
        tl_tensor *r = m1 ? keep(&s, tl_ops_mul_Tensor(q, m1)) : NULL;
        tl_tensor *neg = r ? keep(&s, tl_ops_lt_Scalar(r, tl_scalar_from_int(0))) : NULL;
        ranks = neg ? keep(&s, tl_ops_masked_fill_Scalar(r, neg, tl_scalar_from_int(0))) : NULL;
    } else {
        tl_tensor *r = keep(&s, tl_ops_mul_Scalar(q, tl_scalar_from_int(n - 1)));
        tl_tensor *any = r ? keep(&s, tl_ops_any_dim(nan, -1, true)) : NULL;
        tl_tensor *in[2] = {r, any}, **bt = NULL;
        int64_t nb = 0;
        if (!any || tl_ops_broadcast_tensors(in, 2, &bt, &nb)) goto done;
        ranks = keep(&s, tl_ops_masked_fill_Scalar(bt[0], bt[1], tl_scalar_from_int(n - 1)));
        tl_tensor_list_free(bt, nb);
    }
    if (!ranks) goto done;
    if (mode == Q_LOWER) ranks = keep(&s, tl_ops_floor(ranks));
    else if (mode == Q_HIGHER) ranks = keep(&s, tl_ops_ceil(ranks));
    else if (mode == Q_NEAREST) ranks = keep(&s, tl_ops_round(ranks));
    tl_tensor *below_i = ranks ? keep(&s, tl_to_dtype(ranks, TL_INT64, 0)) : NULL;
    tl_tensor *vals = below_i ? keep(&s, tl_ops_gather(sv, -1, below_i, false)) : NULL;
    if (vals && (mode == Q_LINEAR || mode == Q_MIDPOINT)) {
        tl_tensor *w = NULL;
        if (mode == Q_MIDPOINT) {
            w = keep(&s, tl_ops_full_like(ranks, tl_scalar_from_double(0.5), TL_DTYPE_UNDEFINED, -1, -1, false, false,
                                          -1));
        } else {
            tl_tensor *bf = keep(&s, tl_to_dtype(below_i, ranks->dtype, 0));
            w = bf ? keep(&s, tl_ops_sub_Tensor(ranks, bf, tl_scalar_from_int(1))) : NULL;
        }
        tl_tensor *above_r = w ? keep(&s, tl_ops_ceil(ranks)) : NULL;
        tl_tensor *above_i = above_r ? keep(&s, tl_to_dtype(above_r, TL_INT64, 0)) : NULL;
        tl_tensor *above = above_i ? keep(&s, tl_ops_gather(sv, -1, above_i, false)) : NULL;
        vals = above ? keep(&s, tl_ops_lerp_Tensor(vals, above, w)) : NULL;
    }
    if (!vals) goto done;
    if (q->ndim == 0) {
        res = tl_ops_squeeze_dim(vals, -1);
    } else {
        tl_tensor *u = keep(&s, tl_ops_unsqueeze(vals, 0));
        tl_tensor *t = u ? keep(&s, tl_ops_transpose_int(u, 0, -1)) : NULL;
        res = t ? tl_ops_squeeze_dim(t, -1) : NULL;
    }
done:
    scope_release(&s);
    return res;
}

static tl_tensor *quantile_scalar(tl_tensor *self, double q, int64_t dim, bool dim_has, bool keepdim,
                                  const char *interpolation, bool ignore_nan) {
    if (!(q >= 0 && q <= 1))
        return tl_set_error(TL_ERR_RUNTIME, "quantile() q must be in the range [0, 1] but got %g", q), NULL;
    tl_tensor *qt = tl_full(0, NULL, tl_scalar_from_double(q), self->dtype, TL_CPU);
    tl_tensor *r = qt ? quantile_impl(self, qt, dim, dim_has, keepdim, interpolation, ignore_nan) : NULL;
    tl_tensor_release(qt);
    return r;
}

tl_tensor *tl_native_quantile(tl_keyset ks, tl_tensor *self, tl_tensor *q, int64_t dim, bool dim_has, bool keepdim,
                              const char *interpolation) {
    (void)ks;
    return quantile_impl(self, q, dim, dim_has, keepdim, interpolation, false);
}

tl_tensor *tl_native_quantile_out(tl_keyset ks, tl_tensor *self, tl_tensor *q, int64_t dim, bool dim_has,
                                  bool keepdim, const char *interpolation, tl_tensor *out) {
    (void)ks;
    return tl_missing_copy_to_out(quantile_impl(self, q, dim, dim_has, keepdim, interpolation, false), out);
}

tl_tensor *tl_native_quantile__quantile_scalar(tl_keyset ks, tl_tensor *self, double q, int64_t dim, bool dim_has,
                                               bool keepdim, const char *interpolation) {
    (void)ks;
    return quantile_scalar(self, q, dim, dim_has, keepdim, interpolation, false);
}

tl_tensor *tl_native_quantile_out__quantile_scalar_out(tl_keyset ks, tl_tensor *self, double q, int64_t dim,
                                                       bool dim_has, bool keepdim, const char *interpolation,
                                                       tl_tensor *out) {
    (void)ks;
    return tl_missing_copy_to_out(quantile_scalar(self, q, dim, dim_has, keepdim, interpolation, false), out);
}

tl_tensor *tl_native_nanquantile(tl_keyset ks, tl_tensor *self, tl_tensor *q, int64_t dim, bool dim_has,
                                 bool keepdim, const char *interpolation) {
    (void)ks;
    return quantile_impl(self, q, dim, dim_has, keepdim, interpolation, true);
}

tl_tensor *tl_native_nanquantile_out(tl_keyset ks, tl_tensor *self, tl_tensor *q, int64_t dim, bool dim_has,
                                     bool keepdim, const char *interpolation, tl_tensor *out) {
    (void)ks;
    return tl_missing_copy_to_out(quantile_impl(self, q, dim, dim_has, keepdim, interpolation, true), out);
}

tl_tensor *tl_native_nanquantile__nanquantile_scalar(tl_keyset ks, tl_tensor *self, double q, int64_t dim,
                                                     bool dim_has, bool keepdim, const char *interpolation) {
    (void)ks;
    return quantile_scalar(self, q, dim, dim_has, keepdim, interpolation, true);
}

tl_tensor *tl_native_nanquantile_out__nanquantile_scalar_out(tl_keyset ks, tl_tensor *self, double q, int64_t dim,
                                                             bool dim_has, bool keepdim, const char *interpolation,
                                                             tl_tensor *out) {
    (void)ks;
    return tl_missing_copy_to_out(quantile_scalar(self, q, dim, dim_has, keepdim, interpolation, true), out);
}
