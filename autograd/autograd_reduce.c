/* Derivative helpers of the reductions, found by the formula compiler in tl_autograd_formulas.h: PyTorch's
 * FunctionsManual.cpp functions, built from tl_ops_* calls (so a backward
 * with create_graph records its own graph and differentiates again), except
 * cumprod_backward with zeros in the input (a direct float64 recurrence:
 * once-differentiable).
 *
 * Conventions: tensor arguments are borrowed, the result is a new reference,
 * NULL with the error set. */
#include <complex.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "tl_autograd_formulas.h"
#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/abs.h"
#include "ops/add.h"
#include "ops/cat.h"
#include "ops/conj.h"
#include "ops/cumprod.h"
#include "ops/cumsum.h"
#include "ops/div.h"
#include "ops/eq.h"
#include "ops/exp.h"
#include "ops/expand.h"
#include "ops/flip.h"
#include "ops/isnan.h"
#include "ops/logical_or.h"
#include "ops/mul.h"
#include "ops/narrow.h"
#include "ops/ne.h"
#include "ops/ones_like.h"
#include "ops/pow.h"
#include "ops/reshape.h"
#include "ops/sign.h"
#include "ops/sub.h"
#include "ops/sum.h"
#include "ops/unsqueeze.h"
#include "ops/zeros_like.h"

#define REL(x) tl_tensor_release(x)

static tl_tensor *keep(tl_tensor *t) {
    tl_tensor_retain(t);
    return t;
}

/* a op b, releasing both operands (NULL-safe: an error propagates) */
static tl_tensor *mul2(tl_tensor *a, tl_tensor *b) {
    tl_tensor *r = a && b ? tl_ops_mul_Tensor(a, b) : NULL;
    REL(a);
    REL(b);
    return r;
}
static tl_tensor *div2(tl_tensor *a, tl_tensor *b) {
    tl_tensor *r = a && b ? tl_ops_div_Tensor(a, b) : NULL;
    REL(a);
    REL(b);
    return r;
}

/* conj(a) of a complex tensor (PyTorch's .conj() in the formulas), a itself
 * otherwise; releases a */
static tl_tensor *cj(tl_tensor *a) {
    if (!a || !tl_dtype_is_complex(tl_tensor_dtype(a))) return a;
    tl_tensor *r = tl_ops_conj(a);
    REL(a);
    return r;
}

static int wrapd(int64_t d, int64_t nd, int64_t *out) {
    const int64_t lim = nd > 0 ? nd : 1;
    if (d < -lim || d >= lim) {   /* -1 spelled out: GCC then sees *out set on every 0 return */
        tl_set_error(TL_ERR_INDEX, "Dimension out of range (expected to be in range of [%lld, %lld], but got %lld)",
                     (long long)-lim, (long long)(lim - 1), (long long)d);
        return -1;
    }
    *out = d < 0 ? d + lim : d;
    return 0;
}

/* PyTorch's unsqueeze_multiple: t with size-1 dims put back at `dims` of an
 * nd-dim result (empty dims: t itself; it broadcasts) */
static tl_tensor *unsqueeze_multiple(tl_tensor *t, const int64_t *dims, int64_t ndims, int64_t nd) {
    bool at[TL_MAX_DIMS] = {false};
    for (int64_t i = 0; i < ndims; i++) {
        int64_t d;
        if (wrapd(dims[i], nd, &d)) return NULL;
        at[d] = true;
    }
    tl_tensor *cur = keep(t);
    for (int64_t i = 0; i < nd && ndims > 0; i++) {
        if (!at[i]) continue;
        tl_tensor *u = tl_ops_unsqueeze(cur, i);
        REL(cur);
        if (!u) return NULL;
        cur = u;
    }
    return cur;
}

/* number of elements equal to zero (-1 on error) */
static int64_t count_zeros(tl_tensor *t) {
    tl_tensor *z = tl_ops_eq_Scalar(t, tl_scalar_from_int(0));
    tl_tensor *c = z ? tl_ops_sum(z, TL_INT64) : NULL;
    REL(z);
    if (!c) return -1;
    tl_scalar s;
    const int rc = tl_tensor_item(c, &s);
    REL(c);
    return rc ? -1 : s.i;
}

/* n where n != 0, 1 where n == 0: a divisor that turns x / 0 into x (= 0 where
 * PyTorch masks the quotient to 0: the numerators are 0 there) */
static tl_tensor *safe_divisor(tl_tensor *n) {
    tl_tensor *z = tl_ops_eq_Scalar(n, tl_scalar_from_int(0));
    tl_tensor *r = z ? tl_ops_add_Tensor(n, z, tl_scalar_from_int(1)) : NULL;
    REL(z);
    return r;
}

static tl_tensor *flip1(tl_tensor *t, int64_t d) { return tl_ops_flip(t, &d, 1); }

/* ---- max() / min(): grad split evenly among the elements equal to the
 * result (or the NaNs when the result is NaN) */
tl_tensor *tl_ag_evenly_distribute_backward(tl_tensor *grad, tl_tensor *input, tl_tensor *value) {
    tl_scalar v;
    if (tl_tensor_item(value, &v)) return NULL;
    const bool vnan = v.kind == TL_SCALAR_DOUBLE && isnan(v.d);
    tl_tensor *mask = vnan ? tl_ops_ne_Tensor(input, input) : tl_ops_eq_Tensor(input, value);
    if (!mask) return NULL;
    tl_tensor *cnt = tl_ops_sum(mask, TL_DTYPE_UNDEFINED);
    tl_tensor *q = div2(keep(grad), cnt);
    return mul2(mask, q);
}

/* ---- amax / amin: restore_reduced_dims + scale_grad_by_count */
tl_tensor *tl_ag_restore_reduced_dims(tl_tensor *output, const int64_t *dims, int64_t ndims, bool keepdim) {
    if (keepdim) return keep(output);
    const int64_t ond = tl_tensor_ndim(output), total = ond + ndims;
    if (total > TL_MAX_DIMS) return tl_set_error(TL_ERR_RUNTIME, "restore_reduced_dims: too many dims"), NULL;
    int64_t shape[TL_MAX_DIMS] = {0};
    for (int64_t i = 0; i < ndims; i++) {
        int64_t d = dims[i] < 0 ? dims[i] + total : dims[i];
        if (d < 0 || d >= total) return tl_set_error(TL_ERR_INDEX, "restore_reduced_dims: dim out of range"), NULL;
        shape[d] = 1;
    }
    const int64_t *sz = tl_tensor_sizes(output);
    int64_t j = 0;
    for (int64_t i = 0; i < ond; i++) {
        while (shape[j] > 0) j++;
        shape[j++] = sz[i];
    }
    return tl_ops_reshape(output, shape, total);
}

tl_tensor *tl_ag_scale_grad_by_count(tl_tensor *grad, tl_tensor *mask, const int64_t *dims, int64_t ndims) {
    tl_tensor *cnt = tl_ops_sum_dim_IntList(mask, dims, ndims, true, TL_DTYPE_UNDEFINED);
    tl_tensor *q = div2(keep(grad), cnt);
    return mul2(q, keep(mask));
}

/* ---- prod: grad * result / input without zeros; with zeros the products of
 * all other elements, from exclusive cumulative products both ways
 * (PyTorch's prod_safe_zeros_backward) */
static tl_tensor *prod_safe_zeros_backward(tl_tensor *grad, tl_tensor *inp, int64_t dim) {
    const int64_t n = tl_tensor_size(inp, dim);
    if (tl_tensor_numel(inp) == 0) return tl_ops_expand(grad, tl_tensor_sizes(inp), tl_tensor_ndim(inp), false);
    tl_tensor *first = tl_ops_narrow(inp, dim, 0, 1);
    tl_tensor *ones = first ? tl_ops_ones_like(first, TL_DTYPE_UNDEFINED, -1, -1, false, false, -1) : NULL;
    REL(first);
    if (!ones) return NULL;
    tl_tensor *head = tl_ops_narrow(inp, dim, 0, n - 1);
    tl_tensor *l1[2] = {ones, head};
    tl_tensor *c1 = head ? tl_ops_cat(l1, 2, dim) : NULL;
    REL(head);
    tl_tensor *excl_normal = c1 ? tl_ops_cumprod(c1, dim, TL_DTYPE_UNDEFINED) : NULL;
    REL(c1);
    tl_tensor *tail = tl_ops_narrow(inp, dim, 1, n - 1);
    tl_tensor *ftail = tail ? flip1(tail, dim) : NULL;
    REL(tail);
    tl_tensor *l2[2] = {ones, ftail};
    tl_tensor *c2 = ftail ? tl_ops_cat(l2, 2, dim) : NULL;
    REL(ftail);
    REL(ones);
    tl_tensor *cp = c2 ? tl_ops_cumprod(c2, dim, TL_DTYPE_UNDEFINED) : NULL;
    REL(c2);
    tl_tensor *excl_reverse = cp ? flip1(cp, dim) : NULL;
    REL(cp);
    return mul2(keep(grad), cj(mul2(excl_normal, excl_reverse)));
}

tl_tensor *tl_ag_prod_backward(tl_tensor *grad, tl_tensor *input, tl_tensor *result) {
    if (tl_tensor_ndim(input) == 0) return keep(grad);
    const int64_t zeros = count_zeros(input);
    if (zeros < 0) return NULL;
    if (zeros == 0) return mul2(keep(grad), cj(div2(keep(result), keep(input))));
    int64_t m1 = -1;
    tl_tensor *flat = tl_ops_reshape(input, &m1, 1);
    tl_tensor *g = flat ? prod_safe_zeros_backward(grad, flat, 0) : NULL;
    REL(flat);
    tl_tensor *r = g ? tl_ops_reshape(g, tl_tensor_sizes(input), tl_tensor_ndim(input)) : NULL;
    REL(g);
    return r;
}

/* prod.dim_int (PyTorch's prod_backward overload with dim, keepdim: one C
 * name per helper) */
tl_tensor *tl_ag_prod_dim_backward(tl_tensor *grad, tl_tensor *input, tl_tensor *result, int64_t dim, bool dim_has,
                                   bool keepdim) {
    (void)dim_has;
    if (tl_tensor_ndim(input) == 0) return keep(grad);
    int64_t d;
    if (wrapd(dim, tl_tensor_ndim(input), &d)) return NULL;
    tl_tensor *g = keepdim ? keep(grad) : tl_ops_unsqueeze(grad, d);
    tl_tensor *res = keepdim ? keep(result) : tl_ops_unsqueeze(result, d);
    tl_tensor *r = NULL;
    if (g && res) {
        const int64_t zeros = count_zeros(input);
        if (zeros == 0) r = mul2(keep(g), cj(div2(keep(res), keep(input))));
        else if (zeros > 0) r = prod_safe_zeros_backward(g, input, d);
    }
    REL(g);
    REL(res);
    return r;
}

/* ---- logsumexp: grad * exp(self - result) */
tl_tensor *tl_ag_logsumexp_backward(tl_tensor *grad, tl_tensor *self, tl_tensor *result, const int64_t *dims,
                                    int64_t ndims, bool keepdim) {
    const int64_t nd = tl_tensor_ndim(self);
    const bool un = !keepdim && nd != 0;
    tl_tensor *g = un ? unsqueeze_multiple(grad, dims, ndims, nd) : keep(grad);
    tl_tensor *res = un ? unsqueeze_multiple(result, dims, ndims, nd) : keep(result);
    tl_tensor *d = res ? tl_ops_sub_Tensor(self, res, tl_scalar_from_int(1)) : NULL;
    REL(res);
    tl_tensor *e = d ? tl_ops_exp(d) : NULL;
    REL(d);
    return mul2(g, e);
}

/* ---- linalg_vector_norm (PyTorch's norm_backward) */
tl_tensor *tl_ag_linalg_vector_norm_backward(tl_tensor *grad, tl_tensor *self, tl_scalar ord, tl_tensor *result,
                                             const int64_t *dims, int64_t ndims, bool keepdim) {
    const double p = ord.kind == TL_SCALAR_DOUBLE ? ord.d : (double)ord.i;
    const int64_t nd = tl_tensor_ndim(self);
    if (p == 0.0) return tl_ops_zeros_like(self, TL_DTYPE_UNDEFINED, -1, -1, false, false, -1);
    const bool un = !keepdim && nd != 0 && dims;
    tl_tensor *g = un ? unsqueeze_multiple(grad, dims, ndims, nd) : keep(grad);
    tl_tensor *norm = un ? unsqueeze_multiple(result, dims, ndims, nd) : keep(result);
    tl_tensor *r = NULL;
    if (!g || !norm) goto done;
    if (p == 1.0) {
        r = mul2(tl_ops_sign(self), keep(g));
    } else if (p == 2.0) {
        r = mul2(keep(g), div2(keep(self), safe_divisor(norm)));
    } else if (isinf(p)) {
        /* the elements where |self| equals the norm (or is NaN) share grad */
        tl_tensor *a = tl_ops_abs(self);
        tl_tensor *eq = a ? tl_ops_eq_Tensor(a, norm) : NULL;
        tl_tensor *nan = a ? tl_ops_isnan(a) : NULL;
        REL(a);
        tl_tensor *mask = eq && nan ? tl_ops_logical_or(eq, nan) : NULL;
        REL(eq);
        REL(nan);
        if (!mask) goto done;
        tl_tensor *cnt = tl_ops_sum_dim_IntList(mask, dims, dims ? ndims : 0, true, TL_DTYPE_UNDEFINED);
        tl_tensor *share = mul2(div2(keep(g), cnt), mask);
        r = mul2(tl_ops_sign(self), share);
    } else if (p < 1.0) {
        /* sgn(x) |x|^(p-1), 0 where x == 0 (|x| + (x == 0) keeps it finite) */
        tl_tensor *a = tl_ops_abs(self);
        tl_tensor *z = tl_ops_eq_Scalar(self, tl_scalar_from_int(0));
        tl_tensor *az = a && z ? tl_ops_add_Tensor(a, z, tl_scalar_from_int(1)) : NULL;
        REL(a);
        REL(z);
        tl_tensor *pw = az ? tl_ops_pow_Tensor_Scalar(az, tl_scalar_from_double(p - 1)) : NULL;
        REL(az);
        tl_tensor *scaled = mul2(tl_ops_sign(self), pw);
        tl_tensor *np = tl_ops_pow_Tensor_Scalar(norm, tl_scalar_from_double(1 - p));
        r = mul2(mul2(scaled, keep(g)), np);
    } else {
        /* p < 2: sgn(x) |x|^(p-1); p > 2: x |x|^(p-2); times grad / norm^(p-1) */
        tl_tensor *a = tl_ops_abs(self);
        tl_tensor *pw = a ? tl_ops_pow_Tensor_Scalar(a, tl_scalar_from_double(p < 2.0 ? p - 1 : p - 2)) : NULL;
        REL(a);
        tl_tensor *scaled = mul2(p < 2.0 ? tl_ops_sign(self) : keep(self), pw);
        tl_tensor *np = tl_ops_pow_Tensor_Scalar(norm, tl_scalar_from_double(p - 1));
        tl_tensor *sv = np ? div2(keep(g), safe_divisor(np)) : NULL;
        REL(np);
        r = mul2(scaled, sv);
    }
done:
    REL(g);
    REL(norm);
    return r;
}

/* ---- cumsum: the reversed cumulative sum of grad */
tl_tensor *tl_ag_cumsum_backward(tl_tensor *grad, int64_t dim) {
    int64_t d;
    if (wrapd(dim, tl_tensor_ndim(grad), &d)) return NULL;
    if (tl_tensor_numel(grad) <= 1 || tl_tensor_ndim(grad) == 0 || tl_tensor_size(grad, d) == 1) return keep(grad);
    tl_tensor *f = flip1(grad, d);
    tl_tensor *c = f ? tl_ops_cumsum(f, d, TL_DTYPE_UNDEFINED) : NULL;
    REL(f);
    tl_tensor *r = c ? flip1(c, d) : NULL;
    REL(c);
    return r;
}

/* ---- cumprod: without zeros reversed_cumsum(grad * output) / input (from
 * operators); with zeros, per row of the scanned dim, d out_k / d x_i =
 * prod_{j<i} x_j * prod_{i<j<=k} x_j, i.e. grad_i = E_i * S_i with the
 * exclusive prefix product E and S_i = g_i + x_{i+1} S_{i+1} (float64, no
 * division, once-differentiable) */
static tl_tensor *cumprod_backward_zeros(tl_tensor *grad, tl_tensor *input, int64_t d) {
    const int64_t nd = tl_tensor_ndim(input);
    int64_t perm[TL_MAX_DIMS], inv[TL_MAX_DIMS], k = 0;
    for (int64_t i = 0; i < nd; i++)
        if (i != d) perm[k++] = i;
    perm[k++] = d;
    for (int64_t i = 0; i < nd; i++) inv[perm[i]] = i;
    const bool cplx = tl_dtype_is_complex(tl_tensor_dtype(input)) || tl_dtype_is_complex(tl_tensor_dtype(grad));
    tl_tensor *xs[2] = {input, grad}, *rows[2] = {NULL, NULL};
    for (int i = 0; i < 2; i++) {
        tl_tensor *e = tl_expand(xs[i], nd, tl_tensor_sizes(input));
        tl_tensor *p = e ? tl_permute(e, nd, perm) : NULL;
        REL(e);
        tl_tensor *c = p ? tl_to_dtype(p, cplx ? TL_COMPLEX128 : TL_FLOAT64, 0) : NULL;
        REL(p);
        rows[i] = c ? tl_contiguous(c) : NULL;
        REL(c);
    }
    tl_tensor *out = NULL;
    if (rows[0] && rows[1]) {
        const int64_t R = tl_tensor_size(input, d), O = R ? tl_tensor_numel(input) / R : 0;
        tl_tensor *res = tl_empty(nd, tl_tensor_sizes(rows[0]), cplx ? TL_COMPLEX128 : TL_FLOAT64, TL_CPU);
        if (res && cplx) {   /* the same with conj(x): grad_i = conj(E_i) S_i, S_i = g_i + conj(x_i+1) S_i+1 */
            const double _Complex *x = tl_tensor_data_ptr(rows[0]), *g = tl_tensor_data_ptr(rows[1]);
            double _Complex *o = tl_tensor_data_ptr(res);
            for (int64_t j = 0; j < O; j++) {
                const double _Complex *xr = x + j * R, *gr = g + j * R;
                double _Complex *orow = o + j * R, sum = 0, e = 1;
                for (int64_t i = R - 1; i >= 0; i--) {
                    sum = gr[i] + (i + 1 < R ? conj(xr[i + 1]) * sum : 0);
                    orow[i] = sum;
                }
                for (int64_t i = 0; i < R; i++) {
                    orow[i] *= conj(e);
                    e *= xr[i];
                }
            }
        } else if (res) {
            const double *x = tl_tensor_data_ptr(rows[0]), *g = tl_tensor_data_ptr(rows[1]);
            double *o = tl_tensor_data_ptr(res);
            for (int64_t j = 0; j < O; j++) {
                const double *xr = x + j * R, *gr = g + j * R;
                double *orow = o + j * R;
                double s = 0;
                for (int64_t i = R - 1; i >= 0; i--) {   /* S_i, stored, then scaled by E_i */
                    s = gr[i] + (i + 1 < R ? xr[i + 1] * s : 0);
                    orow[i] = s;
                }
                double e = 1;
                for (int64_t i = 0; i < R; i++) {
                    orow[i] *= e;
                    e *= xr[i];
                }
            }
        }
        if (res) {
            tl_tensor *back = tl_permute(res, nd, inv);
            if (back) {
                out = tl_to_dtype(back, tl_tensor_dtype(grad), 1);
                REL(back);
            }
            REL(res);
        }
    }
    REL(rows[0]);
    REL(rows[1]);
    return out;
}

tl_tensor *tl_ag_cumprod_backward(tl_tensor *grad, tl_tensor *input, int64_t dim, tl_tensor *output) {
    if (tl_tensor_numel(input) <= 1) return keep(grad);
    int64_t d;
    if (wrapd(dim, tl_tensor_ndim(input), &d)) return NULL;
    const int64_t zeros = count_zeros(input);
    if (zeros < 0) return NULL;
    if (zeros > 0) return cumprod_backward_zeros(grad, input, d);
    tl_tensor *go = mul2(keep(grad), cj(keep(output)));
    tl_tensor *rc = go ? tl_ag_cumsum_backward(go, d) : NULL;
    REL(go);
    return div2(rc, cj(keep(input)));
}
