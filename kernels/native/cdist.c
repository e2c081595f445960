/* Pairwise distances (aten/src/ATen/native/Distance.cpp, DistanceOpsKernel.cpp):
 * cdist (CompositeImplicitAutograd) picks PyTorch's path: p = 2 with more than
 * 25 rows on either side (or compute_mode 1) goes through _euclidean_dist,
 * one matmul of [-2x, |x|^2, 1] with [y, 1, |y|^2] (autograd through its own
 * backward); otherwise _cdist_forward, a direct loop over row pairs (p = 0,
 * 1, 2, inf and general p) with _cdist_backward. pdist / _pdist_forward /
 * _pdist_backward: the same pair loop over the upper triangle of one
 * matrix. Sums accumulate in double. Messages are PyTorch's. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "tl_autograd_formulas.h"
#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/_cdist_backward.h"
#include "ops/_cdist_forward.h"
#include "ops/_euclidean_dist.h"
#include "ops/_pdist_backward.h"
#include "ops/_pdist_forward.h"
#include "ops/cat.h"
#include "ops/cdist.h"
#include "ops/clamp_min.h"
#include "ops/contiguous.h"
#include "ops/div.h"
#include "ops/eq.h"
#include "ops/expand.h"
#include "ops/masked_fill.h"
#include "ops/matmul.h"
#include "ops/mul.h"
#include "ops/ones_like.h"
#include "ops/pdist.h"
#include "ops/pow.h"
#include "ops/reshape.h"
#include "ops/sqrt.h"
#include "ops/sub.h"
#include "ops/sum.h"
#include "ops/to.h"
#include "ops/transpose.h"
#include "ops/unsqueeze.h"
#include "ops/view.h"
#include "ops/zeros_like.h"
#include "tl_runtime.h"
#include "tl_tensor.h"

/* replaces *t by r (NULL kept as the error) */
static int step(tl_tensor **t, tl_tensor *r) {
    tl_tensor_release(*t);
    *t = r;
    return r ? 0 : -1;
}

/* ------------------------------------------------------------ the pair loop */

/* distance between rows a and b of length m */
static double pair_dist(const double *a, const double *b, int64_t m, double p) {
    double acc = 0;
    if (p == 0) {
        for (int64_t k = 0; k < m; k++) acc += a[k] != b[k];
        return acc;
    }
    if (p == 1) {
        for (int64_t k = 0; k < m; k++) acc += fabs(a[k] - b[k]);
        return acc;
    }
    if (p == 2) {
        for (int64_t k = 0; k < m; k++) acc += (a[k] - b[k]) * (a[k] - b[k]);
        return sqrt(acc);
    }
    if (isinf(p)) {
        for (int64_t k = 0; k < m; k++) acc = fmax(acc, fabs(a[k] - b[k]));
        return acc;
    }
    for (int64_t k = 0; k < m; k++) acc += pow(fabs(a[k] - b[k]), p);
    return pow(acc, 1.0 / p);
}

static double sgn(double x) {
    return (double)((x > 0) - (x < 0));
}

/* d dist / d a_k times g, for diff = a_k - b_k (PyTorch's per-p backward) */
static double pair_grad(double diff, double g, double dist, double p) {
    if (p == 0) return 0;
    if (p == 1) return g * sgn(diff);
    if (p < 2) return (dist == 0 || (diff == 0 && p < 1)) ? 0 : sgn(diff) * pow(fabs(diff), p - 1) * g / pow(dist, p - 1);
    if (p == 2) return dist == 0 ? 0 : g * diff / dist;
    if (isinf(p)) return g * sgn(diff) * (fabs(diff) == dist);
    return dist == 0 ? 0 : diff * pow(fabs(diff), p - 2) * g / pow(dist, p - 1);
}

/* t as a contiguous float64 tensor (the loops read doubles) */
static tl_tensor *as_f64(tl_tensor *t) {
    tl_tensor *d = tl_ops_to_dtype(t, TL_FLOAT64, false, false, -1);
    if (d) step(&d, tl_ops_contiguous(d, TL_CONTIGUOUS_FORMAT));
    return d;
}

/* ------------------------------------------------------------ checks and batch shapes */

static int check_2d(tl_tensor *x1, tl_tensor *x2) {
    if (tl_tensor_ndim(x1) < 2)
        return tl_set_error(TL_ERR_RUNTIME, "cdist only supports at least 2D tensors, X1 got: %lldD",
                            (long long)tl_tensor_ndim(x1));
    if (tl_tensor_ndim(x2) < 2)
        return tl_set_error(TL_ERR_RUNTIME, "cdist only supports at least 2D tensors, X2 got: %lldD",
                            (long long)tl_tensor_ndim(x2));
    if (tl_tensor_size(x1, -1) != tl_tensor_size(x2, -1))
        return tl_set_error(TL_ERR_RUNTIME, "X1 and X2 must have the same number of columns. X1: %lld X2: %lld",
                            (long long)tl_tensor_size(x1, -1), (long long)tl_tensor_size(x2, -1));
    return 0;
}

/* the broadcast batch dims of x1 and x2 (all but the last two); their product */
static int batch_shape(tl_tensor *x1, tl_tensor *x2, int64_t *batch, int64_t *nb, int64_t *prod) {
    const int64_t d1 = tl_tensor_ndim(x1) - 2, d2 = tl_tensor_ndim(x2) - 2, n = d1 > d2 ? d1 : d2;
    *prod = 1;
    for (int64_t i = 0; i < n; i++) {
        const int64_t a = i - (n - d1) >= 0 ? tl_tensor_size(x1, i - (n - d1)) : 1;
        const int64_t b = i - (n - d2) >= 0 ? tl_tensor_size(x2, i - (n - d2)) : 1;
        if (a != b && a != 1 && b != 1)
            return tl_set_error(TL_ERR_RUNTIME,
                                "The size of tensor a (%lld) must match the size of tensor b (%lld) at non-singleton "
                                "dimension %lld",
                                (long long)a, (long long)b, (long long)i);
        batch[i] = a == 1 ? b : a;
        *prod *= batch[i];
    }
    *nb = n;
    return 0;
}

/* x expanded to batch + its last two dims, reshaped to [prod, r, c] */
static tl_tensor *flat_batches(tl_tensor *x, const int64_t *batch, int64_t nb, int64_t prod) {
    int64_t shape[TL_MAX_DIMS];
    memcpy(shape, batch, (size_t)nb * sizeof(int64_t));
    shape[nb] = tl_tensor_size(x, -2);
    shape[nb + 1] = tl_tensor_size(x, -1);
    const int64_t flat[3] = {prod, shape[nb], shape[nb + 1]};
    tl_tensor *e = tl_ops_expand(x, shape, nb + 2, false);
    if (e) step(&e, tl_ops_reshape(e, flat, 3));
    return e;
}

/* ------------------------------------------------------------ _euclidean_dist */

tl_tensor *tl_native__euclidean_dist(tl_keyset ks, tl_tensor *x1, tl_tensor *x2) {
    (void)ks;
    const int64_t last = -1;
    tl_tensor *n1 = NULL, *p1 = NULL, *n2 = NULL, *p2 = NULL, *m1 = NULL, *a = NULL, *b = NULL, *r = NULL;
    if ((n1 = tl_ops_pow_Tensor_Scalar(x1, tl_scalar_from_int(2))) &&
        !step(&n1, tl_ops_sum_dim_IntList(n1, &last, 1, true, TL_DTYPE_UNDEFINED)) &&
        (p1 = tl_ops_ones_like(n1, TL_DTYPE_UNDEFINED, -1, -1, false, false, -1)) &&
        (n2 = tl_ops_pow_Tensor_Scalar(x2, tl_scalar_from_int(2))) &&
        !step(&n2, tl_ops_sum_dim_IntList(n2, &last, 1, true, TL_DTYPE_UNDEFINED)) &&
        (p2 = tl_ops_ones_like(n2, TL_DTYPE_UNDEFINED, -1, -1, false, false, -1)) &&
        (m1 = tl_ops_mul_Scalar(x1, tl_scalar_from_int(-2)))) {
        tl_tensor *pa[3] = {m1, n1, p1}, *pb[3] = {x2, p2, n2};
        if ((a = tl_ops_cat(pa, 3, -1)) && (b = tl_ops_cat(pb, 3, -1)) && !step(&b, tl_ops_transpose_int(b, -2, -1)) &&
            (r = tl_ops_matmul(a, b))) {
            tl_tensor *c = tl_ops_clamp_min_(r, tl_scalar_from_double(1e-30)), *s = c ? tl_ops_sqrt_(r) : NULL;
            tl_tensor_release(c);
            tl_tensor_release(s);
            if (!s) step(&r, NULL);
        }
    }
    tl_tensor *all[7] = {n1, p1, n2, p2, m1, a, b};
    for (int i = 0; i < 7; i++) tl_tensor_release(all[i]);
    return r;
}

int tl_ag__euclidean_dist_backward(tl_tensor *grad, tl_tensor *x1, tl_tensor *x2, tl_tensor *res, tl_tensor **grad_x1,
                                   tl_tensor **grad_x2) {
    *grad_x1 = *grad_x2 = NULL;
    if (!grad) return 0;
    /* ratio = grad / res, 0 where res == 0 (a subgradient at coinciding points) */
    tl_tensor *ratio = tl_ops_div_Tensor(grad, res), *z = NULL, *s = NULL, *m = NULL, *t = NULL, *g1 = NULL, *g2 = NULL;
    const int64_t last = -1, rows = -2;
    int rc = -1;
    if (!ratio || !(z = tl_ops_eq_Scalar(res, tl_scalar_from_int(0))) ||
        step(&ratio, tl_ops_masked_fill_Scalar(ratio, z, tl_scalar_from_int(0))))
        goto done;
    /* x1 * ratio.sum(-1, true) - ratio @ x2 */
    if (!(s = tl_ops_sum_dim_IntList(ratio, &last, 1, true, TL_DTYPE_UNDEFINED)) || !(g1 = tl_ops_mul_Tensor(x1, s)) ||
        !(m = tl_ops_matmul(ratio, x2)) || step(&g1, tl_ops_sub_Tensor(g1, m, tl_scalar_from_int(1))))
        goto done;
    /* x2 * ratio.sum(-2).unsqueeze(-1) - ratio.mT() @ x1 */
    if (step(&s, tl_ops_sum_dim_IntList(ratio, &rows, 1, false, TL_DTYPE_UNDEFINED)) ||
        step(&s, tl_ops_unsqueeze(s, -1)) || !(g2 = tl_ops_mul_Tensor(x2, s)) ||
        !(t = tl_ops_transpose_int(ratio, -2, -1)) || step(&m, tl_ops_matmul(t, x1)) ||
        step(&g2, tl_ops_sub_Tensor(g2, m, tl_scalar_from_int(1))))
        goto done;
    *grad_x1 = g1;
    *grad_x2 = g2;
    g1 = g2 = NULL;
    rc = 0;
done:;
    tl_tensor *all[7] = {ratio, z, s, m, t, g1, g2};
    for (int i = 0; i < 7; i++) tl_tensor_release(all[i]);
    return rc;
}

/* ------------------------------------------------------------ _cdist_forward / cdist */

static bool euclidean_path(double p, int64_t mode, int64_t r1, int64_t r2) {
    return p == 2 && (mode == 1 || (mode == 0 && (r1 > 25 || r2 > 25)));
}

static int check_float(tl_tensor *x1, tl_tensor *x2) {
    if (!tl_dtype_is_floating(tl_tensor_dtype(x1)))
        return tl_set_error(TL_ERR_RUNTIME, "cdist only supports floating-point dtypes, X1 got: %s",
                            tl_dtype_scalar_name(tl_tensor_dtype(x1)));
    if (!tl_dtype_is_floating(tl_tensor_dtype(x2)))
        return tl_set_error(TL_ERR_RUNTIME, "cdist only supports floating-point dtypes, X2 got: %s",
                            tl_dtype_scalar_name(tl_tensor_dtype(x2)));
    return 0;
}

/* PyTorch's cdist_impl */
static tl_tensor *cdist_impl(tl_tensor *x1, tl_tensor *x2, double p, int64_t mode) {
    if (check_float(x1, x2)) return NULL;
    if (p < 0) {
        tl_set_error(TL_ERR_RUNTIME, "cdist only supports non-negative p values");
        return NULL;
    }
    int64_t batch[TL_MAX_DIMS], nb, prod;
    if (batch_shape(x1, x2, batch, &nb, &prod)) return NULL;
    if (mode < 0 || mode > 2) {
        tl_set_error(TL_ERR_RUNTIME, "possible modes: 0, 1, 2, but was: %lld", (long long)mode);
        return NULL;
    }
    const int64_t r1 = tl_tensor_size(x1, -2), r2 = tl_tensor_size(x2, -2), c = tl_tensor_size(x1, -1);
    int64_t out_shape[TL_MAX_DIMS];
    memcpy(out_shape, batch, (size_t)nb * sizeof(int64_t));
    out_shape[nb] = r1;
    out_shape[nb + 1] = r2;
    const tl_dtype dt = tl_tensor_dtype(x1);
    if (r1 == 0 || r2 == 0 || prod == 0) return tl_empty(nb + 2, out_shape, dt, TL_CPU);
    if (c == 0) return tl_zeros(nb + 2, out_shape, dt, TL_CPU);
    tl_tensor *a = flat_batches(x1, batch, nb, prod), *b = a ? flat_batches(x2, batch, nb, prod) : NULL, *r = NULL;
    if (!b) goto done;
    if (euclidean_path(p, mode, r1, r2)) {
        if ((r = tl_ops__euclidean_dist(a, b))) step(&r, tl_ops_view(r, out_shape, nb + 2));
        goto done;
    }
    /* the pair loop, in double, cast back to x1's dtype */
    if (step(&a, as_f64(a)) || step(&b, as_f64(b))) goto done;
    const int64_t flat[3] = {prod, r1, r2};
    tl_tensor *d = tl_empty(3, flat, TL_FLOAT64, TL_CPU);
    if (!d) goto done;
    const double *pa = tl_tensor_data_ptr(a), *pb = tl_tensor_data_ptr(b);
    double *pd = tl_tensor_data_ptr(d);
    for (int64_t k = 0; k < prod; k++)
        for (int64_t i = 0; i < r1; i++)
            for (int64_t j = 0; j < r2; j++)
                pd[(k * r1 + i) * r2 + j] = pair_dist(pa + (k * r1 + i) * c, pb + (k * r2 + j) * c, c, p);
    r = d;
    if (step(&r, tl_ops_view(r, out_shape, nb + 2)) == 0 && dt != TL_FLOAT64)
        step(&r, tl_ops_to_dtype(r, dt, false, false, -1));
done:
    tl_tensor_release(a);
    tl_tensor_release(b);
    return r;
}

tl_tensor *tl_native__cdist_forward(tl_keyset ks, tl_tensor *x1, tl_tensor *x2, double p, int64_t compute_mode,
                                    bool compute_mode_has) {
    (void)ks;
    if (check_2d(x1, x2)) return NULL;
    return cdist_impl(x1, x2, p, compute_mode_has ? compute_mode : 0);
}

tl_tensor *tl_native_cdist(tl_keyset ks, tl_tensor *x1, tl_tensor *x2, double p, int64_t compute_mode,
                           bool compute_mode_has) {
    (void)ks;
    if (check_2d(x1, x2)) return NULL;
    const int64_t mode = compute_mode_has ? compute_mode : 0;
    /* the Euclidean path is composed of operators (autograd records them);
     * every other case, and empty inputs, go through _cdist_forward */
    if (tl_tensor_numel(x1) != 0 && tl_tensor_numel(x2) != 0 &&
        euclidean_path(p, mode, tl_tensor_size(x1, -2), tl_tensor_size(x2, -2)))
        return cdist_impl(x1, x2, p, mode);
    return tl_ops__cdist_forward(x1, x2, p, mode, compute_mode_has);
}

tl_tensor *tl_native__cdist_backward(tl_keyset ks, tl_tensor *grad, tl_tensor *x1, tl_tensor *x2, double p,
                                     tl_tensor *cdist) {
    (void)ks;
    int64_t batch[TL_MAX_DIMS], nb, prod;
    if (batch_shape(x1, x2, batch, &nb, &prod)) return NULL;
    const int64_t r1 = tl_tensor_size(x1, -2), r2 = tl_tensor_size(x2, -2), c = tl_tensor_size(x1, -1);
    if (r1 == 0 || r2 == 0 || c == 0 || prod == 0)
        return tl_ops_zeros_like(x1, TL_DTYPE_UNDEFINED, -1, -1, false, false, -1);
    const int64_t gshape[3] = {prod, r1, r2};
    tl_tensor *a = flat_batches(x1, batch, nb, prod), *b = a ? flat_batches(x2, batch, nb, prod) : NULL;
    tl_tensor *g = NULL, *d = NULL, *r = NULL;
    if (!b || step(&a, as_f64(a)) || step(&b, as_f64(b)) || !(g = tl_ops_reshape(grad, gshape, 3)) ||
        step(&g, as_f64(g)) || !(d = tl_ops_reshape(cdist, gshape, 3)) || step(&d, as_f64(d)))
        goto done;
    const int64_t fshape[3] = {prod, r1, c};
    if (!(r = tl_zeros(3, fshape, TL_FLOAT64, TL_CPU))) goto done;
    const double *pa = tl_tensor_data_ptr(a), *pb = tl_tensor_data_ptr(b), *pg = tl_tensor_data_ptr(g),
                 *pd = tl_tensor_data_ptr(d);
    double *pr = tl_tensor_data_ptr(r);
    for (int64_t k = 0; k < prod; k++)
        for (int64_t i = 0; i < r1; i++) {
            const double *ai = pa + (k * r1 + i) * c;
            double *ri = pr + (k * r1 + i) * c;
            for (int64_t j = 0; j < r2; j++) {
                const double gij = pg[(k * r1 + i) * r2 + j], dij = pd[(k * r1 + i) * r2 + j];
                const double *bj = pb + (k * r2 + j) * c;
                for (int64_t q = 0; q < c; q++) ri[q] += pair_grad(ai[q] - bj[q], gij, dij, p);
            }
        }
    /* x1's expanded shape: the engine sums a broadcast batch back */
    int64_t shape[TL_MAX_DIMS];
    memcpy(shape, batch, (size_t)nb * sizeof(int64_t));
    shape[nb] = r1;
    shape[nb + 1] = c;
    if (!step(&r, tl_ops_view(r, shape, nb + 2)) && tl_tensor_dtype(x1) != TL_FLOAT64)
        step(&r, tl_ops_to_dtype(r, tl_tensor_dtype(x1), false, false, -1));
done:
    tl_tensor_release(a);
    tl_tensor_release(b);
    tl_tensor_release(g);
    tl_tensor_release(d);
    return r;
}

/* ------------------------------------------------------------ pdist */

tl_tensor *tl_native_pdist(tl_keyset ks, tl_tensor *self, double p) {
    (void)ks;
    if (tl_tensor_ndim(self) != 2) {
        tl_set_error(TL_ERR_RUNTIME, "pdist only supports 2D tensors, got: %lldD", (long long)tl_tensor_ndim(self));
        return NULL;
    }
    if (!tl_dtype_is_floating(tl_tensor_dtype(self))) {
        tl_set_error(TL_ERR_RUNTIME, "pdist only supports floating-point dtypes");
        return NULL;
    }
    if (p < 0) {
        tl_set_error(TL_ERR_RUNTIME, "pdist only supports non-negative p values");
        return NULL;
    }
    tl_tensor *c = tl_ops_contiguous(self, -1), *r = NULL;
    if (c) r = tl_ops__pdist_forward(c, p);
    tl_tensor_release(c);
    return r;
}

tl_tensor *tl_native__pdist_forward(tl_keyset ks, tl_tensor *self, double p) {
    (void)ks;
    if (tl_tensor_ndim(self) != 2) {
        tl_set_error(TL_ERR_RUNTIME, "pdist only supports 2D tensors, got: %lldD", (long long)tl_tensor_ndim(self));
        return NULL;
    }
    const int64_t n = tl_tensor_size(self, 0), m = tl_tensor_size(self, 1);
    const int64_t np = n > 1 ? n * (n - 1) / 2 : 0;
    const tl_dtype dt = tl_tensor_dtype(self);
    if (np == 0 || m == 0) return tl_zeros(1, &np, dt, TL_CPU);
    tl_tensor *a = as_f64(self), *d = a ? tl_empty(1, &np, TL_FLOAT64, TL_CPU) : NULL, *r = d;
    if (d) {
        const double *pa = tl_tensor_data_ptr(a);
        double *pd = tl_tensor_data_ptr(d);
        int64_t k = 0;
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = i + 1; j < n; j++) pd[k++] = pair_dist(pa + i * m, pa + j * m, m, p);
        if (dt != TL_FLOAT64) step(&r, tl_ops_to_dtype(r, dt, false, false, -1));
    }
    tl_tensor_release(a);
    return r;
}

tl_tensor *tl_native__pdist_backward(tl_keyset ks, tl_tensor *grad, tl_tensor *self, double p, tl_tensor *pdist) {
    (void)ks;
    const int64_t n = tl_tensor_size(self, 0), m = tl_tensor_size(self, 1);
    if (n <= 1 || m == 0) return tl_ops_zeros_like(self, TL_DTYPE_UNDEFINED, -1, -1, false, false, -1);
    tl_tensor *a = as_f64(self), *g = a ? as_f64(grad) : NULL, *d = g ? as_f64(pdist) : NULL, *r = NULL;
    const int64_t shape[2] = {n, m};
    if (d && (r = tl_zeros(2, shape, TL_FLOAT64, TL_CPU))) {
        const double *pa = tl_tensor_data_ptr(a), *pg = tl_tensor_data_ptr(g), *pd = tl_tensor_data_ptr(d);
        double *pr = tl_tensor_data_ptr(r);
        int64_t k = 0;
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = i + 1; j < n; j++, k++)
                for (int64_t q = 0; q < m; q++) { /* row i gets the pair's gradient, row j its negation */
                    const double v = pair_grad(pa[i * m + q] - pa[j * m + q], pg[k], pd[k], p);
                    pr[i * m + q] += v;
                    pr[j * m + q] -= v;
                }
        if (tl_tensor_dtype(self) != TL_FLOAT64) step(&r, tl_ops_to_dtype(r, tl_tensor_dtype(self), false, false, -1));
    }
    tl_tensor_release(a);
    tl_tensor_release(g);
    tl_tensor_release(d);
    return r;
}
