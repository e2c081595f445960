/* trapezoid / trapz / cumulative_trapezoid: PyTorch's compositions
 * (aten/src/ATen/native/Integration.cpp), CompositeImplicitAutograd, so the
 * graph records the slices, differences and sums they are made of. */
#include <stdbool.h>
#include <stdlib.h>

#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/add.h"
#include "ops/cumsum.h"
#include "ops/cumulative_trapezoid.h"
#include "ops/div.h"
#include "ops/mul.h"
#include "ops/select.h"
#include "ops/slice.h"
#include "ops/sub.h"
#include "ops/sum.h"
#include "ops/trapezoid.h"
#include "ops/trapz.h"
#include "ops/view.h"
#include "ops/zeros.h"
#include "tl_structured.h"
#include "tl_tensor.h"

static tl_tensor *rel(tl_tensor *a, tl_tensor *b, tl_tensor *r) {
    tl_tensor_release(a);
    tl_tensor_release(b);
    return r;
}

/* y.slice(dim, 1) + y.slice(dim, 0, -1), the pairwise sums of neighbours */
static tl_tensor *pair_sums(tl_tensor *y, int64_t dim) {
    tl_tensor *r = tl_ops_slice_Tensor(y, dim, 1, true, 0, false, 1);
    tl_tensor *l = tl_ops_slice_Tensor(y, dim, 0, true, -1, true, 1);
    return rel(l, r, l && r ? tl_ops_add_Tensor(r, l, tl_scalar_from_int(1)) : NULL);
}

/* x viewed so that its differences broadcast against y's along dim, then
 * x_right - x_left (PyTorch does not broadcast x to y first, as numpy) */
static tl_tensor *x_diffs(tl_tensor *y, tl_tensor *x, int64_t dim, const char *name) {
    int64_t sizes[TL_MAX_DIMS];
    tl_tensor *xv;
    if (x->ndim == 1) {
        if (x->sizes[0] != y->sizes[dim]) {
            tl_set_error(TL_ERR_RUNTIME, "%s: There must be one `x` value for each sample point", name);
            return NULL;
        }
        for (int64_t i = 0; i < y->ndim; i++) sizes[i] = i == dim ? x->sizes[0] : 1;
        xv = tl_ops_view(x, sizes, y->ndim);
    } else if (x->ndim < y->ndim) {
        const int64_t pad = y->ndim - x->ndim;   /* leading ones */
        for (int64_t i = 0; i < y->ndim; i++) sizes[i] = i < pad ? 1 : x->sizes[i - pad];
        xv = tl_ops_view(x, sizes, y->ndim);
    } else {
        tl_tensor_retain(x);
        xv = x;
    }
    if (!xv) return NULL;
    tl_tensor *l = tl_ops_slice_Tensor(xv, dim, 0, true, -1, true, 1);
    tl_tensor *r = tl_ops_slice_Tensor(xv, dim, 1, true, 0, false, 1);
    tl_tensor_release(xv);
    return rel(l, r, l && r ? tl_ops_sub_Tensor(r, l, tl_scalar_from_int(1)) : NULL);
}

/* the integral of no samples is 0 (numpy): zeros of y's shape without dim */
static tl_tensor *zeros_except(tl_tensor *y, int64_t dim) {
    int64_t sizes[TL_MAX_DIMS], k = 0;
    for (int64_t i = 0; i < y->ndim; i++)
        if (i != dim) sizes[k++] = y->sizes[i];
    return tl_ops_zeros(sizes, k, y->dtype, -1, (int)tl__device_of(y), false, false);
}

static int check_dx(tl_scalar dx, const char *name) {
    if (dx.kind == TL_SCALAR_BOOL)
        return tl_set_error(TL_ERR_RUNTIME, "%s: Currently, we only support dx as a real number.", name);
    return 0;
}

static double to_double(tl_scalar s) { return s.kind == TL_SCALAR_DOUBLE ? s.d : (double)s.i; }

tl_tensor *tl_native_trapezoid(tl_keyset ks, tl_tensor *y, tl_tensor *x, int64_t dim) {
    (void)ks;
    const int64_t d = tl__wrap_dim(dim, y->ndim, 0);
    if (d < 0) return NULL;
    if (y->sizes[d] == 0) return zeros_except(y, d);
    if (y->dtype == TL_BOOL || x->dtype == TL_BOOL) {
        tl_set_error(TL_ERR_RUNTIME, "trapezoid: received a bool input for `x` or `y`, but bool is not supported");
        return NULL;
    }
    tl_tensor *dx = x_diffs(y, x, d, "trapezoid");
    if (!dx) return NULL;
    /* ((y[1:] + y[:-1]) * dx).sum(dim) / 2 */
    tl_tensor *s = pair_sums(y, d);
    tl_tensor *p = s ? tl_ops_mul_Tensor(s, dx) : NULL;
    rel(s, dx, NULL);
    tl_tensor *t = p ? tl_ops_sum_dim_IntList(p, &d, 1, false, TL_DTYPE_UNDEFINED) : NULL;
    tl_tensor_release(p);
    tl_tensor *r = t ? tl_ops_div_Scalar(t, tl_scalar_from_double(2.0)) : NULL;
    tl_tensor_release(t);
    return r;
}

/* (y.sum(dim) - (y[0] + y[-1]) * 0.5) * dx, d wrapped */
static tl_tensor *trapezoid_dx(tl_tensor *y, double dx, int64_t d) {
    tl_tensor *first = tl_ops_select_int(y, d, 0), *last = tl_ops_select_int(y, d, -1);
    tl_tensor *ends = first && last ? tl_ops_add_Tensor(first, last, tl_scalar_from_int(1)) : NULL;
    rel(first, last, NULL);
    tl_tensor *half = ends ? tl_ops_mul_Scalar(ends, tl_scalar_from_double(0.5)) : NULL;
    tl_tensor_release(ends);
    tl_tensor *sum = half ? tl_ops_sum_dim_IntList(y, &d, 1, false, TL_DTYPE_UNDEFINED) : NULL;
    tl_tensor *diff = sum ? tl_ops_sub_Tensor(sum, half, tl_scalar_from_int(1)) : NULL;
    rel(sum, half, NULL);
    tl_tensor *r = diff ? tl_ops_mul_Scalar(diff, tl_scalar_from_double(dx)) : NULL;
    tl_tensor_release(diff);
    return r;
}

tl_tensor *tl_native_trapezoid__trapezoid_dx(tl_keyset ks, tl_tensor *y, tl_scalar dx, int64_t dim) {
    (void)ks;
    const int64_t d = tl__wrap_dim(dim, y->ndim, 0);
    if (d < 0) return NULL;
    if (y->sizes[d] == 0) return zeros_except(y, d);
    if (y->dtype == TL_BOOL) {
        tl_set_error(TL_ERR_RUNTIME, "trapezoid: received a bool input for `y`, but bool is not supported");
        return NULL;
    }
    if (check_dx(dx, "trapezoid")) return NULL;
    return trapezoid_dx(y, to_double(dx), d);
}

tl_tensor *tl_native_trapz(tl_keyset ks, tl_tensor *y, tl_tensor *x, int64_t dim) {
    (void)ks;
    return tl_ops_trapezoid_x(y, x, dim);
}

tl_tensor *tl_native_trapz__trapz_dx(tl_keyset ks, tl_tensor *y, double dx, int64_t dim) {
    (void)ks;
    return tl_ops_trapezoid_dx(y, tl_scalar_from_double(dx), dim);
}

/* (dx * (y[:-1] + y[1:]) * 0.5).cumsum(dim); dx a tensor (x's differences) or a number */
static tl_tensor *cumulative(tl_tensor *y, tl_tensor *dxt, double dx, int64_t d) {
    tl_tensor *s = pair_sums(y, d), *p;
    if (!s) return NULL;
    if (dxt) {
        tl_tensor *m = tl_ops_mul_Tensor(dxt, s);
        p = m ? tl_ops_mul_Scalar(m, tl_scalar_from_double(0.5)) : NULL;
        tl_tensor_release(m);
    } else {
        p = tl_ops_mul_Scalar(s, tl_scalar_from_double(dx / 2.));
    }
    tl_tensor_release(s);
    tl_tensor *r = p ? tl_ops_cumsum(p, d, TL_DTYPE_UNDEFINED) : NULL;
    tl_tensor_release(p);
    return r;
}

tl_tensor *tl_native_cumulative_trapezoid(tl_keyset ks, tl_tensor *y, tl_tensor *x, int64_t dim) {
    (void)ks;
    const int64_t d = tl__wrap_dim(dim, y->ndim, 0);
    if (d < 0) return NULL;
    if (y->dtype == TL_BOOL || x->dtype == TL_BOOL) {
        tl_set_error(TL_ERR_RUNTIME,
                     "cumulative_trapezoid: received a bool input for `x` or `y`, but bool is not supported");
        return NULL;
    }
    tl_tensor *dx = x_diffs(y, x, d, "cumulative_trapezoid");
    if (!dx) return NULL;
    tl_tensor *r = cumulative(y, dx, 0, d);
    tl_tensor_release(dx);
    return r;
}

tl_tensor *tl_native_cumulative_trapezoid__cumulative_trapezoid_dx(tl_keyset ks, tl_tensor *y, tl_scalar dx,
                                                                   int64_t dim) {
    (void)ks;
    if (y->dtype == TL_BOOL) {
        tl_set_error(TL_ERR_RUNTIME, "cumulative_trapezoid: received a bool input for `y`, but bool is not supported");
        return NULL;
    }
    if (check_dx(dx, "cumulative_trapezoid")) return NULL;
    const int64_t d = tl__wrap_dim(dim, y->ndim, 0);
    if (d < 0) return NULL;
    return cumulative(y, NULL, to_double(dx), d);
}
