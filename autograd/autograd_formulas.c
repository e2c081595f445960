/* Helpers of the derivative formulas (autograd/tl_autograd_formulas.h).
 *
 * Written once, called by the generated backward nodes. Each is a short
 * composition of torchlet's operator entry points (tl_ops_*), so under
 * create_graph the autograd kernels record them and higher-order gradients
 * follow. Tensors are borrowed; results are new references or NULL with the
 * thread-local error set; every temporary is released on every path.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tl_autograd.h"
#include "tl_autograd_formulas.h"
#include "tl_error.h"
#include "tl_internal.h"
#include "tl_nn.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/_to_copy.h"
#include "ops/add.h"
#include "ops/cat.h"
#include "ops/conj.h"
#include "ops/div.h"
#include "ops/eq.h"
#include "ops/expand.h"
#include "ops/full.h"
#include "ops/ge.h"
#include "ops/index_put.h"
#include "ops/index_select.h"
#include "ops/le.h"
#include "ops/logical_and.h"
#include "ops/masked_fill.h"
#include "ops/mm.h"
#include "ops/mul.h"
#include "ops/narrow.h"
#include "ops/neg.h"
#include "ops/permute.h"
#include "ops/real.h"
#include "ops/reciprocal.h"
#include "ops/reshape.h"
#include "ops/rsqrt.h"
#include "ops/rsub.h"
#include "ops/scatter.h"
#include "ops/select.h"
#include "ops/slice_backward.h"
#include "ops/stack.h"
#include "ops/sub.h"
#include "ops/sum.h"
#include "ops/t.h"
#include "ops/unsqueeze.h"
#include "ops/view.h"
#include "ops/where.h"
#include "ops/zeros.h"
#include "ops/zeros_like.h"

static tl_tensor *retained(tl_tensor *t) {
    tl_tensor_retain(t);
    return t;
}

static int64_t wrap_dim(int64_t d, int64_t ndim) {
    int64_t n = ndim > 0 ? ndim : 1;
    if (d < -n || d >= n) {
        tl_set_error(TL_ERR_INDEX, "Dimension out of range (expected to be in range of [%lld, %lld], but got %lld)",
                     (long long)-n, (long long)(n - 1), (long long)d);
        return -1;
    }
    return d < 0 ? d + n : d;
}

static bool scalar_is_one(tl_scalar s) {
    switch (s.kind) {
    case TL_SCALAR_DOUBLE: return s.d == 1.0;
    default: return s.i == 1;
    }
}

bool tl_ag_is_differentiable_type(tl_dtype dt) { return tl_dtype_is_floating(dt) || tl_dtype_is_complex(dt); }

/* the real part of a complex gradient of a real input */
tl_tensor *tl_ag_handle_r_to_c(tl_dtype self_st, tl_tensor *grad) {
    if (tl_dtype_is_complex(self_st) || !tl_dtype_is_complex(tl_tensor_dtype(grad))) return retained(grad);
    return tl_ops_real(grad);
}

/* x.conj() (a new reference; x itself for real dtypes) */
static tl_tensor *conj_of(tl_tensor *x) { return tl_dtype_is_complex(tl_tensor_dtype(x)) ? tl_ops_conj(x) : retained(x); }

tl_tensor *tl_ag_maybe_multiply(tl_tensor *t, tl_scalar s) {
    if (scalar_is_one(s)) return retained(t);
    return tl_ops_mul_Scalar(t, s);
}

tl_tensor *tl_ag_sum_to(tl_tensor *grad, const int64_t *sizes, int64_t ndim) {
    int64_t gnd = tl_tensor_ndim(grad);
    const int64_t *gs = tl_tensor_sizes(grad);
    if (ndim > gnd) {
        tl_set_error(TL_ERR_RUNTIME, "sum_to: the gradient has fewer dimensions (%lld) than the input (%lld)",
                     (long long)gnd, (long long)ndim);
        return NULL;
    }
    int64_t lead = gnd - ndim;
    int64_t dims[TL_MAX_DIMS];
    int64_t nd = 0;
    for (int64_t i = 0; i < lead; i++) dims[nd++] = i;
    for (int64_t i = 0; i < ndim; i++)
        if (sizes[i] == 1 && gs[lead + i] != 1) dims[nd++] = lead + i;
    if (nd == 0) return retained(grad);
    tl_tensor *s = tl_ops_sum_dim_IntList(grad, dims, nd, true, TL_DTYPE_UNDEFINED);
    if (!s || lead == 0) return s;
    tl_tensor *r = tl_ops_view(s, sizes, ndim);
    tl_tensor_release(s);
    return r;
}

tl_tensor *tl_ag_mul_tensor_backward(tl_tensor *grad, tl_tensor *other, tl_dtype self_st) {
    tl_tensor *oc = conj_of(other);
    tl_tensor *g = oc ? tl_ops_mul_Tensor(grad, oc) : NULL; /* grad * other.conj() */
    tl_tensor_release(oc);
    if (!g) return NULL;
    tl_tensor *r = tl_ag_handle_r_to_c(self_st, g);
    tl_tensor_release(g);
    return r;
}

tl_tensor *tl_ag_mul_tensor_backward_scalar(tl_tensor *grad, tl_scalar other, tl_dtype self_st) {
    tl_tensor *g = tl_ops_mul_Scalar(grad, other);
    if (!g) return NULL;
    tl_tensor *r = tl_ag_handle_r_to_c(self_st, g);
    tl_tensor_release(g);
    return r;
}

tl_tensor *tl_ag_div_tensor_self_backward(tl_tensor *grad, tl_tensor *other, tl_dtype self_st) {
    tl_tensor *oc = conj_of(other);
    tl_tensor *g = oc ? tl_ops_div_Tensor(grad, oc) : NULL; /* grad / other.conj() */
    tl_tensor_release(oc);
    if (!g) return NULL;
    tl_tensor *r = tl_ag_handle_r_to_c(self_st, g);
    tl_tensor_release(g);
    return r;
}

tl_tensor *tl_ag_div_tensor_self_backward_scalar(tl_tensor *grad, tl_scalar other, tl_dtype self_st) {
    tl_tensor *g = tl_ops_div_Scalar(grad, other);
    if (!g) return NULL;
    tl_tensor *r = tl_ag_handle_r_to_c(self_st, g);
    tl_tensor_release(g);
    return r;
}

/* -grad * ((self / other) / other).conj() */
tl_tensor *tl_ag_div_tensor_other_backward(tl_tensor *grad, tl_tensor *self, tl_tensor *other) {
    tl_tensor *q = NULL, *q2 = NULL, *q2c = NULL, *ng = NULL, *r = NULL;
    if (!(q = tl_ops_div_Tensor(self, other))) goto done;
    if (!(q2 = tl_ops_div_Tensor(q, other))) goto done;
    if (!(q2c = conj_of(q2))) goto done;
    if (!(ng = tl_ops_neg(grad))) goto done;
    r = tl_ops_mul_Tensor(ng, q2c);
    if (r) {
        tl_tensor *h = tl_ag_handle_r_to_c(tl_tensor_dtype(other), r);
        tl_tensor_release(r);
        r = h;
    }
done:
    tl_tensor_release(q);
    tl_tensor_release(q2);
    tl_tensor_release(q2c);
    tl_tensor_release(ng);
    return r;
}

tl_tensor *tl_ag_copysign_tensor_self_backward(tl_tensor *grad, tl_tensor *self, tl_tensor *result) {
    tl_tensor *ratio = NULL, *zero = NULL, *r = NULL;
    if (!(ratio = tl_ops_div_Tensor(result, self))) goto done;
    if (!(zero = tl_ops_eq_Scalar(self, tl_scalar_from_int(0)))) goto done;
    /* result / self is +-1, or nan at self == 0 where the gradient is 0 */
    if (!tl_ops_masked_fill__Scalar(ratio, zero, tl_scalar_from_int(0))) goto done;
    tl_tensor_release(ratio); /* masked_fill_ returned a new reference to ratio */
    r = tl_ops_mul_Tensor(grad, ratio);
done:
    tl_tensor_release(ratio);
    tl_tensor_release(zero);
    return r;
}

static tl_tensor *zeros_of(tl_tensor *grad, tl_dtype dt) {
    return tl_ops_zeros_like(grad, dt, -1, -1, false, false, -1);
}

tl_tensor *tl_ag_div_tensor_self_backward_mode(tl_tensor *grad, tl_tensor *other, tl_dtype self_st, const char *mode) {
    if (mode) return zeros_of(grad, self_st);
    return tl_ag_div_tensor_self_backward(grad, other, self_st);
}

tl_tensor *tl_ag_div_tensor_self_backward_scalar_mode(tl_tensor *grad, tl_scalar other, tl_dtype self_st,
                                                      const char *mode) {
    if (mode) return zeros_of(grad, self_st);
    return tl_ag_div_tensor_self_backward_scalar(grad, other, self_st);
}

tl_tensor *tl_ag_div_tensor_other_backward_mode(tl_tensor *grad, tl_tensor *self, tl_tensor *other, const char *mode) {
    if (mode) return zeros_of(grad, tl_tensor_dtype(other));
    return tl_ag_div_tensor_other_backward(grad, self, other);
}

tl_tensor *tl_ag_sum_backward(tl_tensor *grad, const int64_t *sizes, int64_t ndim, const int64_t *dims,
                              int64_t ndims, bool keepdim) {
    if (keepdim || ndim == 0 || dims == NULL || ndims == 0) return tl_ops_expand(grad, sizes, ndim, false);
    bool reduced[TL_MAX_DIMS] = {false};
    for (int64_t i = 0; i < ndims; i++) {
        int64_t d = wrap_dim(dims[i], ndim);
        if (d < 0) return NULL;
        reduced[d] = true;
    }
    tl_tensor *cur = retained(grad);
    for (int64_t i = 0; i < ndim; i++) {
        if (!reduced[i]) continue;
        tl_tensor *u = tl_ops_unsqueeze(cur, i);
        tl_tensor_release(cur);
        if (!u) return NULL;
        cur = u;
    }
    tl_tensor *r = tl_ops_expand(cur, sizes, ndim, false);
    tl_tensor_release(cur);
    return r;
}

/* PyTorch's mm_mat1_backward / mm_mat2_backward: the gradient of a
 * column-major input (strides [1, rows], e.g. weight.t() in nn.Linear) is
 * computed column-major too, as (y @ x)^T, so that the leaf's .grad (after
 * t()'s backward) is contiguous and stored without a layout copy */
static bool is_col_major(const int64_t *sizes, int64_t nsizes, const int64_t *strides, int64_t nstrides) {
    return nsizes == 2 && nstrides == 2 && strides[0] == 1 && strides[1] == sizes[0];
}

/* alpha * (a^T? @ b^T?), transposed at the end when result_t */
/* (a or a.t()) @ (b or b.t()), the operand that is not grad conjugated
 * (conj_b: b, else a), the result transposed when result_t */
static tl_tensor *mm_t(tl_tensor *a, bool at, tl_tensor *b, bool bt, bool result_t, tl_scalar alpha, bool conj_b) {
    tl_tensor *ta = at ? tl_ops_t(a) : retained(a), *tb = bt ? tl_ops_t(b) : retained(b);
    tl_tensor *cj = conj_b ? (tb ? conj_of(tb) : NULL) : (ta ? conj_of(ta) : NULL);
    if (conj_b) {
        tl_tensor_release(tb);
        tb = cj;
    } else {
        tl_tensor_release(ta);
        ta = cj;
    }
    tl_tensor *m = ta && tb ? tl_ops_mm(ta, tb) : NULL;
    tl_tensor_release(ta);
    tl_tensor_release(tb);
    if (m && result_t) {
        tl_tensor *t = tl_ops_t(m);
        tl_tensor_release(m);
        m = t;
    }
    if (!m) return NULL;
    tl_tensor *r = tl_ag_maybe_multiply(m, alpha);
    tl_tensor_release(m);
    return r;
}

tl_tensor *tl_ag_mm_mat1_backward(tl_tensor *grad, tl_tensor *mat2, const int64_t *sizes, int64_t nsizes,
                                  const int64_t *strides, int64_t nstrides, int layout, tl_scalar alpha) {
    (void)layout;
    if (is_col_major(sizes, nsizes, strides, nstrides)) return mm_t(mat2, false, grad, true, true, alpha, false);
    return mm_t(grad, false, mat2, true, false, alpha, true);
}

tl_tensor *tl_ag_mm_mat2_backward(tl_tensor *grad, tl_tensor *mat1, const int64_t *sizes, int64_t nsizes,
                                  const int64_t *strides, int64_t nstrides, int layout, tl_scalar alpha) {
    (void)layout;
    if (is_col_major(sizes, nsizes, strides, nstrides)) return mm_t(grad, true, mat1, false, true, alpha, true);
    return mm_t(mat1, true, grad, false, false, alpha, false);
}

tl_tensor *tl_ag_permute_backwards(tl_tensor *grad, const int64_t *dims, int64_t ndims) {
    int64_t inv[TL_MAX_DIMS];
    if (ndims > TL_MAX_DIMS) {
        tl_set_error(TL_ERR_RUNTIME, "permute: too many dimensions");
        return NULL;
    }
    for (int64_t i = 0; i < ndims; i++) {
        int64_t d = wrap_dim(dims[i], ndims);
        if (d < 0) return NULL;
        inv[d] = i;
    }
    return tl_ops_permute(grad, inv, ndims);
}

tl_tensor *tl_ag_unsqueeze_to(tl_tensor *grad, const int64_t *sizes, int64_t ndim) {
    tl_tensor *cur = retained(grad);
    for (int64_t i = 0; i < ndim; i++) {
        if (sizes[i] != 1) continue;
        tl_tensor *u = tl_ops_unsqueeze(cur, i);
        tl_tensor_release(cur);
        if (!u) return NULL;
        cur = u;
    }
    return cur;
}

tl_tensor *tl_ag_unsqueeze_to_dim(tl_tensor *grad, int64_t dim, const int64_t *sizes, int64_t ndim) {
    if (ndim == 0) return retained(grad);
    int64_t d = wrap_dim(dim, ndim);
    if (d < 0) return NULL;
    if (sizes[d] == 1) return tl_ops_unsqueeze(grad, d);
    return retained(grad);
}

tl_tensor *tl_ag_unsqueeze_to_dims(tl_tensor *grad, const int64_t *dims, int64_t ndims, const int64_t *sizes,
                                   int64_t ndim) {
    if (ndim == 0) return retained(grad);
    bool flag[TL_MAX_DIMS] = {false};
    for (int64_t i = 0; i < ndims; i++) {
        int64_t d = wrap_dim(dims[i], ndim);
        if (d < 0) return NULL;
        flag[d] = true;
    }
    tl_tensor *cur = retained(grad);
    for (int64_t i = 0; i < ndim; i++) {
        if (!flag[i] || sizes[i] != 1) continue;
        tl_tensor *u = tl_ops_unsqueeze(cur, i);
        tl_tensor_release(cur);
        if (!u) return NULL;
        cur = u;
    }
    return cur;
}

tl_tensor *tl_ag_slice_backward_wrapper(tl_tensor *grad, const int64_t *sizes, int64_t ndim, int64_t dim,
                                        int64_t start, bool start_has, int64_t end, bool end_has,
                                        int64_t step) {
    return tl_ops_slice_backward(grad, sizes, ndim, dim, start_has ? start : 0, end_has ? end : INT64_MAX, step);
}

/* a real input's gradient takes the real part first (R -> C copies, without
 * the complex-to-real cast warning) */
tl_tensor *tl_ag_to_copy_backward(tl_tensor *grad, tl_dtype dtype, int device) {
    if (tl_tensor_dtype(grad) == dtype && (int)tl_tensor_device(grad) == device) return retained(grad);
    tl_tensor *g = tl_ag_handle_r_to_c(dtype, grad);
    if (!g) return NULL;
    tl_tensor *r = tl_tensor_dtype(g) == dtype && (int)tl_tensor_device(g) == device
                       ? retained(g) : tl_ops__to_copy(g, dtype, -1, device, false, false, false, -1);
    tl_tensor_release(g);
    return r;
}

tl_tensor *tl_ag_zeros_info(const int64_t *sizes, int64_t ndim, tl_dtype dtype, int device) {
    return tl_ops_zeros(sizes, ndim, dtype, -1, device, false, false);
}

/* storage positions [lo, hi] a geometry touches; 0 when it has no element */
static int geometry_extent(const int64_t *sizes, const int64_t *strides, int64_t nd, int64_t offset, int64_t *lo,
                           int64_t *hi) {
    *lo = *hi = offset;
    for (int64_t k = 0; k < nd; k++) {
        if (sizes[k] == 0) return 0;
        int64_t span = (sizes[k] - 1) * strides[k];
        if (span < 0) *lo += span;
        else *hi += span;
    }
    return 1;
}

/* calls fn(i, position) for every element i (row-major) of a geometry */
#define FOR_EACH_POSITION(sizes, strides, nd, offset, i, pos, body)                   \
    do {                                                                              \
        int64_t idx_[TL_MAX_DIMS] = {0};                                              \
        int64_t numel_ = 1;                                                           \
        for (int64_t k_ = 0; k_ < (nd); k_++) numel_ *= (sizes)[k_];                  \
        int64_t pos = (offset);                                                       \
        for (int64_t i = 0; i < numel_; i++) {                                        \
            body;                                                                     \
            for (int64_t k_ = (nd) - 1; k_ >= 0; k_--) {                              \
                if (++idx_[k_] < (sizes)[k_]) { pos += (strides)[k_]; break; }        \
                pos -= (strides)[k_] * ((sizes)[k_] - 1);                             \
                idx_[k_] = 0;                                                         \
            }                                                                         \
        }                                                                             \
    } while (0)

tl_tensor *tl_ag_as_strided_backward(tl_tensor *grad, const int64_t *in_sizes, int64_t in_nd,
                                     const int64_t *in_strides, int64_t in_ns, int64_t in_offset,
                                     const int64_t *sizes, int64_t nd, const int64_t *strides, int64_t ns,
                                     int64_t offset, bool offset_has) {
    if (in_nd != in_ns || nd != ns || nd > TL_MAX_DIMS || in_nd > TL_MAX_DIMS) {
        tl_set_error(TL_ERR_RUNTIME, "as_strided_backward: mismatch in length of strides and shape");
        return NULL;
    }
    if (tl_autograd_requires_grad(grad) && tl_grad_mode_is_enabled()) {
        tl_set_error(TL_ERR_NOT_IMPLEMENTED, "the derivative for 'as_strided_backward' is not implemented.");
        return NULL;
    }
    int64_t out_offset = offset_has ? offset : in_offset;
    int64_t ilo, ihi, olo, ohi;
    int in_any = geometry_extent(in_sizes, in_strides, in_nd, in_offset, &ilo, &ihi);
    int out_any = geometry_extent(sizes, strides, nd, out_offset, &olo, &ohi);
    tl_dtype dt = tl_tensor_dtype(grad);
    if (!in_any || !out_any) return tl_ops_zeros(in_sizes, in_nd, dt, -1, (int)tl__device_of(grad), false, false);
    int64_t lo = ilo < olo ? ilo : olo, hi = ihi > ohi ? ihi : ohi, n = hi - lo + 1;
    double *buf = calloc((size_t)n, sizeof(double));
    int64_t *count = calloc((size_t)n, sizeof(int64_t));
    tl_tensor *g64 = NULL, *gc = NULL, *r64 = NULL, *r = NULL;
    if (!buf || !count) {
        tl_set_error(TL_ERR_MEMORY, "as_strided_backward: out of memory");
        goto done;
    }
    if (!(g64 = tl_to_dtype(grad, TL_FLOAT64, 0)) || !(gc = tl_contiguous(g64))) goto done;
    const double *g = tl_tensor_data_ptr(gc);
    FOR_EACH_POSITION(sizes, strides, nd, out_offset, i, pos, buf[pos - lo] += g[i]);
    FOR_EACH_POSITION(in_sizes, in_strides, in_nd, in_offset, i, pos, count[pos - lo] += 1);
    if (!(r64 = tl_empty(in_nd, in_sizes, TL_FLOAT64, tl__device_of(grad)))) goto done;
    double *out = tl_tensor_data_ptr(r64);
    FOR_EACH_POSITION(in_sizes, in_strides, in_nd, in_offset, i, pos, out[i] = buf[pos - lo] / (double)count[pos - lo]);
    r = tl_to_dtype(r64, dt, 0);
done:
    free(buf);
    free(count);
    tl_tensor_release(g64);
    tl_tensor_release(gc);
    tl_tensor_release(r64);
    return r;
}

/* ------------------------------------------------------ Tensor[] formulas */

static tl_tensor **new_list(int64_t n) {
    tl_tensor **l = calloc((size_t)(n > 0 ? n : 1), sizeof(tl_tensor *));
    if (!l) tl_set_error(TL_ERR_MEMORY, "out of memory for a list of gradients");
    return l;
}

int tl_ag_cat_tensors_backward(tl_tensor *grad, const int64_t *const *sizes, const int64_t *ndims, int64_t n,
                               const tl_dtype *dtypes, int64_t ndtypes, int64_t dim, tl_tensor ***ret,
                               int64_t *ret_len) {
    (void)dtypes; /* real dtypes only: no complex-to-real step */
    (void)ndtypes;
    tl_tensor **out = new_list(n);
    if (!out) return -1;
    /* legacy_cat_wrap_dim: the first input that is not a 1-D empty tensor */
    int64_t nd = -1;
    for (int64_t i = 0; i < n && nd < 0; i++)
        if (!(ndims[i] == 1 && sizes[i][0] == 0)) nd = ndims[i];
    if (nd >= 0) {
        dim = wrap_dim(dim, nd);
        if (dim < 0) goto fail;
    }
    int64_t at = 0;
    for (int64_t i = 0; i < n; i++) {
        if (ndims[i] == 1 && sizes[i][0] == 0) { /* skipped by cat: an empty gradient */
            int64_t zero = 0;
            out[i] = tl_ops_zeros(&zero, 1, tl_tensor_dtype(grad), -1, (int)tl__device_of(grad), false, false);
        } else {
            int64_t size = sizes[i][dim];
            out[i] = tl_ops_narrow(grad, dim, at, size);
            at += size;
        }
        if (!out[i]) goto fail;
    }
    *ret = out;
    *ret_len = n;
    return 0;
fail:
    tl_ag_tensor_list_release(out, n);
    return -1;
}

int tl_ag_stack_tensors_backward(tl_tensor *grad, int64_t dim, const tl_dtype *dtypes, int64_t n, tl_tensor ***ret,
                                 int64_t *ret_len) {
    (void)dtypes;
    tl_tensor **out = new_list(n);
    if (!out) return -1;
    for (int64_t i = 0; i < n; i++) {
        out[i] = tl_ops_select_int(grad, dim, i);
        if (!out[i]) {
            tl_ag_tensor_list_release(out, n);
            return -1;
        }
    }
    *ret = out;
    *ret_len = n;
    return 0;
}

/* Tensor[] outputs: grads[i] NULL (that output got no gradient) counts as zeros */
tl_tensor *tl_ag_split_with_sizes_backward(tl_tensor *const *grads, int64_t n, const int64_t *split_sizes,
                                           int64_t nsplit, int64_t dim, const int64_t *sizes, int64_t ndim,
                                           tl_dtype dtype, int device) {
    if (nsplit != n)
        return tl_set_error(TL_ERR_RUNTIME, "split_with_sizes_backward: %lld gradients for %lld sizes", (long long)n,
                            (long long)nsplit), NULL;
    if ((dim = wrap_dim(dim, ndim)) < 0 || ndim > TL_MAX_DIMS) return NULL;
    tl_tensor **all = new_list(n);
    if (!all) return NULL;
    tl_tensor *r = NULL;
    int64_t shape[TL_MAX_DIMS];
    for (int64_t i = 0; i < n; i++) {
        if (grads[i]) {
            all[i] = retained(grads[i]);
            continue;
        }
        memcpy(shape, sizes, (size_t)ndim * sizeof(int64_t));
        shape[dim] = split_sizes[i];
        if (!(all[i] = tl_ops_zeros(shape, ndim, dtype, -1, device, false, false))) goto done;
    }
    r = tl_ops_cat(all, n, dim);
done:
    tl_ag_tensor_list_release(all, n);
    return r;
}

tl_tensor *tl_ag_split_backward(tl_tensor *const *grads, int64_t n, int64_t split_size, int64_t dim,
                                const int64_t *sizes, int64_t ndim, tl_dtype dtype, int device) {
    int64_t d = wrap_dim(dim, ndim);
    if (d < 0 || n <= 0) return n <= 0 ? (tl_set_error(TL_ERR_RUNTIME, "split_backward: no gradients"), NULL) : NULL;
    int64_t *ss = malloc((size_t)n * sizeof(int64_t));
    if (!ss) return tl_set_error(TL_ERR_MEMORY, "out of memory"), NULL;
    for (int64_t i = 0; i < n; i++) ss[i] = split_size;
    ss[n - 1] = split_size - (split_size * n - sizes[d]); /* the last piece is the rest */
    tl_tensor *r = tl_ag_split_with_sizes_backward(grads, n, ss, n, d, sizes, ndim, dtype, device);
    free(ss);
    return r;
}

tl_tensor *tl_ag_unbind_backward(tl_tensor *const *grads, int64_t n, int64_t dim) {
    tl_tensor *like = NULL;
    for (int64_t i = 0; i < n && !like; i++) like = grads[i];
    if (!like) return tl_set_error(TL_ERR_RUNTIME, "unbind_backward: no gradient defined"), NULL;
    tl_tensor **all = new_list(n);
    if (!all) return NULL;
    tl_tensor *r = NULL;
    for (int64_t i = 0; i < n; i++)
        if (!(all[i] = grads[i] ? retained(grads[i]) : tl_ops_zeros_like(like, TL_DTYPE_UNDEFINED, -1, -1, false, false, -1)))
            goto done;
    r = tl_ops_stack(all, n, dim);
done:
    tl_ag_tensor_list_release(all, n);
    return r;
}

/* ------------------------------------------ reductions with several outputs */

/* x op y with both released (the chains below read as formulas) */
static tl_tensor *mul_rel(tl_tensor *a, tl_tensor *b) {
    tl_tensor *r = (a && b) ? tl_ops_mul_Tensor(a, b) : NULL;
    tl_tensor_release(a);
    tl_tensor_release(b);
    return r;
}

static tl_tensor *sub_rel(tl_tensor *a, tl_tensor *b) {
    tl_tensor *r = (a && b) ? tl_ops_sub_Tensor(a, b, tl_scalar_from_int(1)) : NULL;
    tl_tensor_release(a);
    tl_tensor_release(b);
    return r;
}

static tl_tensor *add_rel(tl_tensor *a, tl_tensor *b) {
    tl_tensor *r = (a && b) ? tl_ops_add_Tensor(a, b, tl_scalar_from_int(1)) : NULL;
    tl_tensor_release(a);
    tl_tensor_release(b);
    return r;
}

static tl_tensor *scale_rel(tl_tensor *a, double s) {
    tl_tensor *r = a ? tl_ops_mul_Scalar(a, tl_scalar_from_double(s)) : NULL;
    tl_tensor_release(a);
    return r;
}

/* wrapped, sorted, duplicate-free dims (NULL / empty: every dim); count or -1 */
static int64_t reduced_dims(const int64_t *dims, int64_t ndims, int64_t nd, int64_t out[TL_MAX_DIMS]) {
    bool seen[TL_MAX_DIMS] = {false};
    if (!dims || ndims == 0) {
        for (int64_t i = 0; i < nd; i++) out[i] = i;
        return nd;
    }
    for (int64_t i = 0; i < ndims; i++) {
        int64_t d = wrap_dim(dims[i], nd);
        if (d < 0) return -1;
        seen[d] = true;
    }
    int64_t k = 0;
    for (int64_t i = 0; i < (nd > 0 ? nd : 1); i++)
        if (seen[i]) out[k++] = i;
    return k;
}

/* sum over dims (keepdim) / n, from operators */
static tl_tensor *mean_over(tl_tensor *t, const int64_t *dims, int64_t nd, double n, bool keepdim) {
    return scale_rel(nd > 0 ? tl_ops_sum_dim_IntList(t, dims, nd, keepdim, TL_DTYPE_UNDEFINED) : retained(t), 1.0 / n);
}

tl_tensor *tl_ag_value_selecting_reduction_backward(tl_tensor *grad, int64_t dim, tl_tensor *indices,
                                                    const int64_t *sizes, int64_t ndim, bool keepdim) {
    tl_tensor *zeros = tl_ops_zeros(sizes, ndim, tl_tensor_dtype(grad), -1, (int)tl__device_of(grad), false, false);
    if (!zeros) return NULL;
    tl_tensor *r;
    if (!keepdim && ndim > 0) {
        tl_tensor *g = tl_ops_unsqueeze(grad, dim);
        tl_tensor *ix = g ? tl_ops_unsqueeze(indices, dim) : NULL;
        r = ix ? tl_ops_scatter_src(zeros, dim, ix, g) : NULL;
        tl_tensor_release(g);
        tl_tensor_release(ix);
    } else {
        r = tl_ops_scatter_src(zeros, dim, indices, grad);
    }
    tl_tensor_release(zeros);
    return r;
}

tl_tensor *tl_ag_mean_backward(tl_tensor *grad, const int64_t *sizes, int64_t ndim, const int64_t *dims,
                               int64_t ndims, int64_t numel, bool keepdim) {
    int64_t rd[TL_MAX_DIMS];
    int64_t k = reduced_dims(dims, ndims, ndim, rd);
    if (k < 0) return NULL;
    int64_t n = 1;
    if (!dims || ndims == 0) {
        n = numel;
    } else {
        for (int64_t i = 0; i < k; i++) n *= ndim > 0 ? sizes[rd[i]] : 1;
    }
    tl_tensor *s = tl_ag_sum_backward(grad, sizes, ndim, dims, ndims, keepdim);
    tl_tensor *r = s ? tl_ops_div_Scalar(s, tl_scalar_from_int(n)) : NULL;
    tl_tensor_release(s);
    return r;
}

tl_tensor *tl_ag_var_backward(tl_tensor *grad, tl_tensor *self, const int64_t *dims, int64_t ndims,
                              const tl_scalar *correction, bool keepdim) {
    double corr = correction ? tl_ag_scalar_to_double(*correction) : 1.0;
    int64_t nd = tl_tensor_ndim(self);
    if (nd == 0 || !dims) {
        double dof = (double)tl_tensor_numel(self) - corr;
        tl_tensor *mean = scale_rel(tl_ops_sum(self, TL_DTYPE_UNDEFINED), 1.0 / (double)tl_tensor_numel(self));
        tl_tensor *centered = mean ? tl_ops_sub_Tensor(self, mean, tl_scalar_from_int(1)) : NULL;
        tl_tensor_release(mean);
        if (!centered) return NULL;
        if (dof <= 0) { /* 2 / 0: NaN where self equals its mean, inf elsewhere (PyTorch's) */
            tl_tensor *z = tl_ops_eq_Scalar(centered, tl_scalar_from_int(0));
            tl_tensor_release(centered);
            tl_tensor *w = z ? tl_ops_where_Scalar(z, tl_scalar_from_double(NAN), tl_scalar_from_double(INFINITY)) : NULL;
            tl_tensor_release(z);
            return w ? mul_rel(retained(grad), w) : NULL;
        }
        return scale_rel(mul_rel(retained(grad), centered), 2.0 / dof);
    }
    int64_t rd[TL_MAX_DIMS];
    int64_t k = reduced_dims(dims, ndims, nd, rd);
    if (k < 0) return NULL;
    double n = 1;
    for (int64_t i = 0; i < k; i++) n *= (double)tl_tensor_sizes(self)[rd[i]];
    tl_tensor *g = retained(grad);
    if (!keepdim && nd > 1) { /* unsqueeze_multiple */
        for (int64_t i = 0; i < k && g; i++) {
            tl_tensor *u = tl_ops_unsqueeze(g, rd[i]);
            tl_tensor_release(g);
            g = u;
        }
        if (!g) return NULL;
    }
    tl_tensor *mean = mean_over(self, rd, k, n, true);
    tl_tensor *centered = mean ? tl_ops_sub_Tensor(self, mean, tl_scalar_from_int(1)) : NULL;
    tl_tensor_release(mean);
    if (!centered) {
        tl_tensor_release(g);
        return NULL;
    }
    return scale_rel(mul_rel(g, centered), 2.0 / (n - corr));
}

tl_tensor *tl_ag_std_backward(tl_tensor *result, tl_tensor *grad, tl_tensor *self, const int64_t *dims,
                              int64_t ndims, const tl_scalar *correction, bool keepdim) {
    /* (grad / (2 * std)).masked_fill(std == 0, 0), then var's backward */
    tl_tensor *two_std = tl_ops_mul_Scalar(result, tl_scalar_from_int(2));
    tl_tensor *q = two_std ? tl_ops_div_Tensor(grad, two_std) : NULL;
    tl_tensor_release(two_std);
    tl_tensor *zero = q ? tl_ops_eq_Scalar(result, tl_scalar_from_int(0)) : NULL;
    tl_tensor *gv = zero ? tl_ops_masked_fill_Scalar(q, zero, tl_scalar_from_int(0)) : NULL;
    tl_tensor_release(q);
    tl_tensor_release(zero);
    if (!gv) return NULL;
    tl_tensor *r = tl_ag_var_backward(gv, self, dims, ndims, correction, keepdim);
    tl_tensor_release(gv);
    return r;
}

/* gvar / gstd and gmean may be NULL (that output got no gradient) */
static tl_tensor *plus_mean_part(tl_tensor *gself, tl_tensor *gmean, tl_tensor *self, const int64_t *dims,
                                 int64_t ndims, bool keepdim) {
    if (!gmean) return gself;
    tl_tensor *aux = tl_ag_mean_backward(gmean, tl_tensor_sizes(self), tl_tensor_ndim(self), dims ? dims : NULL,
                                         dims ? ndims : 0, tl_tensor_numel(self), keepdim);
    if (!aux) {
        tl_tensor_release(gself);
        return NULL;
    }
    return gself ? add_rel(gself, aux) : aux;
}

tl_tensor *tl_ag_var_mean_backward(tl_tensor *gvar, tl_tensor *gmean, tl_tensor *self, const int64_t *dims,
                                   int64_t ndims, const tl_scalar *correction, bool keepdim) {
    tl_tensor *gself = NULL;
    if (gvar && !(gself = tl_ag_var_backward(gvar, self, dims, ndims, correction, keepdim))) return NULL;
    return plus_mean_part(gself, gmean, self, dims, ndims, keepdim);
}

tl_tensor *tl_ag_std_mean_backward(tl_tensor *gstd, tl_tensor *gmean, tl_tensor *self, tl_tensor *std,
                                   const int64_t *dims, int64_t ndims, const tl_scalar *correction, bool keepdim) {
    tl_tensor *gself = NULL;
    if (gstd && !(gself = tl_ag_std_backward(std, gstd, self, dims, ndims, correction, keepdim))) return NULL;
    return plus_mean_part(gself, gmean, self, dims, ndims, keepdim);
}

/* --------------------------------------------------------------- NN */

/* layer norm's backward from operators (differentiable again). mean and rstd
 * are recomputed from input so that their dependence on it is recorded (the
 * saved ones are outputs of the node being differentiated): mean = mean_n(x),
 * rstd = (var_n(x) + eps)^-1/2 with eps = (rstd_saved^-2 - var_n(x)) detached.
 * With xhat = (x - mean) * rstd and g = grad * weight:
 * dx = rstd * (g - mean_n(g) - xhat * mean_n(g * xhat)), dw = sum_o(grad * xhat),
 * db = sum_o(grad) (n: the normalized dims, o: the others) */
static int layer_norm_backward_ops(tl_tensor *grad, tl_tensor *input, int64_t k, tl_tensor *rstd_saved,
                                   tl_tensor *weight, const bool *mask, bool has_bias, tl_tensor **gi,
                                   tl_tensor **gw, tl_tensor **gb) {
    int64_t nd = tl_tensor_ndim(input), nn[TL_MAX_DIMS], no[TL_MAX_DIMS];
    double N = 1;
    for (int64_t i = 0; i < nd - k; i++) no[i] = i;
    for (int64_t i = 0; i < k; i++) {
        nn[i] = nd - k + i;
        N *= (double)tl_tensor_sizes(input)[nd - k + i];
    }
    tl_tensor *xc = sub_rel(retained(input), mean_over(input, nn, k, N, true));
    tl_tensor *sq = xc ? mul_rel(retained(xc), retained(xc)) : NULL;
    tl_tensor *var = sq ? mean_over(sq, nn, k, N, true) : NULL;
    tl_tensor_release(sq);
    tl_tensor *var_d = var ? tl_autograd_detach(var) : NULL;
    tl_tensor *rs_d = var_d ? tl_autograd_detach(rstd_saved) : NULL;
    tl_tensor *r2 = rs_d ? mul_rel(retained(rs_d), retained(rs_d)) : NULL;
    tl_tensor *eps = r2 ? sub_rel(tl_ops_reciprocal(r2), retained(var_d)) : NULL;
    tl_tensor_release(r2);
    tl_tensor_release(rs_d);
    tl_tensor_release(var_d);
    tl_tensor *ve = eps ? add_rel(var, eps) : NULL;
    if (!eps) tl_tensor_release(var);
    tl_tensor *rstd = ve ? tl_ops_rsqrt(ve) : NULL;
    tl_tensor_release(ve);
    tl_tensor *xhat = rstd ? mul_rel(xc, retained(rstd)) : NULL;
    if (!rstd) tl_tensor_release(xc);
    if (!xhat) goto fail;
    if (mask[0]) {
        tl_tensor *g = weight ? tl_ops_mul_Tensor(grad, weight) : retained(grad);
        tl_tensor *gx = g ? tl_ops_mul_Tensor(g, xhat) : NULL;
        tl_tensor *m1 = g ? mean_over(g, nn, k, N, true) : NULL;
        tl_tensor *m2 = gx ? mean_over(gx, nn, k, N, true) : NULL;
        tl_tensor_release(gx);
        tl_tensor *inner = sub_rel(sub_rel(g, m1), mul_rel(retained(xhat), m2));
        if (!(*gi = mul_rel(retained(rstd), inner))) goto fail;
    }
    if (mask[1] && weight) {
        tl_tensor *p = tl_ops_mul_Tensor(grad, xhat);
        *gw = (p && nd > k) ? tl_ops_sum_dim_IntList(p, no, nd - k, false, TL_DTYPE_UNDEFINED) : retained(p);
        tl_tensor_release(p);
        if (!*gw) goto fail;
    }
    if (mask[2] && has_bias) {
        *gb = nd > k ? tl_ops_sum_dim_IntList(grad, no, nd - k, false, TL_DTYPE_UNDEFINED) : retained(grad);
        if (!*gb) goto fail;
    }
    tl_tensor_release(xhat);
    tl_tensor_release(rstd);
    return 0;
fail:
    tl_tensor_release(xhat);
    tl_tensor_release(rstd);
    return -1;
}

int tl_ag_native_layer_norm_backward(tl_tensor *grad, tl_tensor *input, const int64_t *normalized_shape,
                                     int64_t nshape, tl_tensor *mean, tl_tensor *rstd, tl_tensor *weight,
                                     tl_tensor *bias, const bool *output_mask, int64_t nmask, tl_tensor **grad_input,
                                     tl_tensor **grad_weight, tl_tensor **grad_bias) {
    *grad_input = *grad_weight = *grad_bias = NULL;
    if (nmask != 3) return tl_set_error(TL_ERR_RUNTIME, "native_layer_norm_backward: output_mask must have 3 entries");
    int rc;
    if (tl_grad_mode_is_enabled()) /* create_graph: from operators, so it differentiates again */
        rc = layer_norm_backward_ops(grad, input, nshape, rstd, weight, output_mask, bias != NULL, grad_input,
                                     grad_weight, grad_bias);
    else
        rc = tl_nn_layer_norm_backward(grad, input, normalized_shape, nshape, mean, rstd, weight, bias, output_mask,
                                       grad_input, grad_weight, grad_bias);
    if (rc < 0) {
        tl_tensor_release(*grad_input);
        tl_tensor_release(*grad_weight);
        tl_tensor_release(*grad_bias);
        *grad_input = *grad_weight = *grad_bias = NULL;
    }
    return rc;
}

tl_tensor *tl_ag_infinitely_differentiable_native_dropout_backward(tl_tensor *grad, tl_tensor *mask, double scale) {
    /* grad * (mask.type_as(grad) * scale) */
    tl_tensor *m = tl_ops__to_copy(mask, tl_tensor_dtype(grad), -1, -1, false, false, false, -1);
    return mul_rel(retained(grad), scale_rel(m, scale));
}

tl_tensor *tl_ag_native_dropout_double_backward(tl_tensor *ggI, tl_tensor *grad, tl_tensor *mask, double scale) {
    tl_dtype dt = tl_tensor_dtype(grad);
    tl_tensor *g = tl_tensor_dtype(ggI) == dt ? retained(ggI) : tl_ops__to_copy(ggI, dt, -1, -1, false, false, false, -1);
    if (!g) return NULL;
    tl_tensor *m = tl_ops__to_copy(mask, dt, -1, -1, false, false, false, -1);
    return mul_rel(g, scale_rel(m, scale));
}

/* where(lo <= self <= hi, grad / (self * (1 - self)), fill): inside the range
 * the derivative of logit, outside it 0 (eps given: logit clamps there) or NaN */
tl_tensor *tl_ag_infinitely_differentiable_logit_backward(tl_tensor *grad, tl_tensor *self, double eps, bool eps_has) {
    const double lo = eps_has ? eps : 0.0, hi = eps_has ? 1.0 - eps : 1.0;
    tl_tensor *ge = NULL, *le = NULL, *in = NULL, *one_minus = NULL, *den = NULL, *val = NULL, *fill = NULL, *r = NULL;
    if (!(ge = tl_ops_ge_Scalar(self, tl_scalar_from_double(lo)))) goto done;
    if (!(le = tl_ops_le_Scalar(self, tl_scalar_from_double(hi)))) goto done;
    if (!(in = tl_ops_logical_and(ge, le))) goto done;
    if (!(one_minus = tl_ops_rsub_Scalar(self, tl_scalar_from_int(1), tl_scalar_from_int(1)))) goto done;
    if (!(den = tl_ops_mul_Tensor(self, one_minus))) goto done;
    if (!(val = tl_ops_div_Tensor(grad, den))) goto done;
    static const int64_t no_dims = 0; /* a 0-dim fill value */
    if (!(fill = tl_ops_full(&no_dims, 0, tl_scalar_from_double(eps_has ? 0.0 : NAN), tl_tensor_dtype(self), -1,
                             (int)tl__device_of(self), false, false)))
        goto done;
    r = tl_ops_where_self(in, val, fill);
done:
    tl_tensor_release(ge);
    tl_tensor_release(le);
    tl_tensor_release(in);
    tl_tensor_release(one_minus);
    tl_tensor_release(den);
    tl_tensor_release(val);
    tl_tensor_release(fill);
    return r;
}

/* ------------------------------------------------------ node plumbing */

int tl_ag_int_list_set(tl_ag_int_list *l, const int64_t *v, int64_t n) {
    tl_ag_int_list_free(l);
    if (!v) {
        l->has = 0;
        l->len = 0;
        l->data = l->inline_;
        return 0;
    }
    l->has = 1;
    l->len = n;
    if (n <= (int64_t)(sizeof l->inline_ / sizeof l->inline_[0])) {
        l->data = l->inline_;
    } else {
        l->data = malloc((size_t)n * sizeof(int64_t));
        if (!l->data) {
            l->data = l->inline_;
            l->len = 0;
            return tl_set_error(TL_ERR_MEMORY, "out of memory saving a list for autograd");
        }
    }
    if (n > 0) memcpy(l->data, v, (size_t)n * sizeof(int64_t));
    return 0;
}

void tl_ag_int_list_free(tl_ag_int_list *l) {
    if (l->data && l->data != l->inline_) free(l->data);
    l->data = l->inline_;
    l->len = 0;
}

tl_tensor *tl_ag_tmp_keep(tl_ag_tmp *a, tl_tensor *t) {
    if (t) {
        if (a->n < (int)(sizeof a->t / sizeof a->t[0])) {
            a->t[a->n++] = t;
        } else {
            tl_tensor_release(t);
            tl_set_error(TL_ERR_RUNTIME, "autograd helper: too many temporaries");
            return NULL;
        }
    }
    return t;
}

void tl_ag_tmp_release(tl_ag_tmp *a) {
    for (int i = 0; i < a->n; i++) tl_tensor_release(a->t[i]);
    a->n = 0;
}

/* sizes of every tensor of a Tensor[] (to_args_sizes): one block, ndims and
 * sizes pointers into it */
int tl_ag_sizes_list_set(tl_ag_sizes_list *l, tl_tensor *const *ts, int64_t n) {
    tl_ag_sizes_list_free(l);
    int64_t total = 0;
    for (int64_t i = 0; i < n; i++) total += ts[i] ? tl_tensor_ndim(ts[i]) : 0;
    size_t bytes = (size_t)(n + total) * sizeof(int64_t) + (size_t)n * sizeof(int64_t *) + 1;
    char *mem = malloc(bytes);
    if (!mem) return tl_set_error(TL_ERR_MEMORY, "out of memory saving a list for autograd");
    l->sizes = (int64_t **)mem;
    l->ndims = (int64_t *)(mem + (size_t)n * sizeof(int64_t *));
    int64_t *data = l->ndims + n;
    for (int64_t i = 0; i < n; i++) {
        int64_t nd = ts[i] ? tl_tensor_ndim(ts[i]) : 0;
        l->ndims[i] = nd;
        l->sizes[i] = data;
        if (nd > 0) memcpy(data, tl_tensor_sizes(ts[i]), (size_t)nd * sizeof(int64_t));
        data += nd;
    }
    l->n = n;
    return 0;
}

void tl_ag_sizes_list_free(tl_ag_sizes_list *l) {
    free(l->sizes); /* the one block */
    l->sizes = NULL;
    l->ndims = NULL;
    l->n = 0;
}

int tl_ag_dtype_list_set(tl_ag_dtype_list *l, tl_tensor *const *ts, int64_t n) {
    tl_ag_dtype_list_free(l);
    l->data = malloc((size_t)n * sizeof(tl_dtype) + 1);
    if (!l->data) return tl_set_error(TL_ERR_MEMORY, "out of memory saving a list for autograd");
    for (int64_t i = 0; i < n; i++) l->data[i] = ts[i] ? tl_tensor_dtype(ts[i]) : TL_DTYPE_UNDEFINED;
    l->n = n;
    return 0;
}

void tl_ag_dtype_list_free(tl_ag_dtype_list *l) {
    free(l->data);
    l->data = NULL;
    l->n = 0;
}

void tl_ag_tensor_list_release(tl_tensor **list, int64_t n) {
    if (!list) return;
    for (int64_t i = 0; i < n; i++) tl_tensor_release(list[i]);
    free(list);
}

int tl_ag_saved_tensors_set(tl_ag_saved_tensors *l, tl_tensor *const *ts, int64_t n) {
    tl_ag_saved_tensors_free(l);
    l->data = calloc((size_t)n + 1, sizeof(tl_tensor *));
    if (!l->data) return tl_set_error(TL_ERR_MEMORY, "out of memory saving a list for autograd");
    for (int64_t i = 0; i < n; i++) {
        if (ts[i]) tl_tensor_retain(ts[i]);
        l->data[i] = ts[i];
    }
    l->n = n;
    return 0;
}

void tl_ag_saved_tensors_free(tl_ag_saved_tensors *l) {
    for (int64_t i = 0; l->data && i < l->n; i++) tl_tensor_release(l->data[i]);
    free(l->data);
    l->data = NULL;
    l->n = 0;
}

tl_tensor *tl_ag_index_backward(tl_tensor *zeros_like_self, tl_tensor *const *indices, int64_t n, tl_tensor *grad) {
    return tl_ops_index_put(zeros_like_self, indices, n, grad, true);
}

bool tl_ag_any_edge(const tl_node *node, int32_t start, int32_t n) {
    for (int32_t i = 0; i < n; i++)
        if (tl_node_next_edge(node, start + i).node) return true;
    return false;
}

bool tl_ag_any_should_compute(const tl_node *node, int32_t start, int32_t n) {
    for (int32_t i = 0; i < n; i++)
        if (tl_node_should_compute_output(node, start + i)) return true;
    return false;
}

double tl_ag_scalar_to_double(tl_scalar s) { return s.kind == TL_SCALAR_DOUBLE ? s.d : (double)s.i; }

/* shape and dtype the gradient of edge i must have */
static int64_t edge_shape(tl_node *node, int32_t i, const int64_t **sizes, tl_dtype *dtype, tl_tensor **hold) {
    *hold = NULL;
    tl_edge e = tl_node_next_edge(node, i);
    if (!e.node) return -1;
    int64_t nd = tl_node_input_shape(e.node, e.input_nr, sizes, dtype);
    if (nd >= 0) return nd;
    tl_tensor *leaf = tl_node_variable(e.node); /* AccumulateGrad: the leaf itself */
    if (!leaf) return -1;
    *hold = leaf;
    *sizes = tl_tensor_sizes(leaf);
    *dtype = tl_tensor_dtype(leaf);
    return tl_tensor_ndim(leaf);
}

int tl_ag_set_grad_input(tl_node *node, int32_t i, tl_tensor *g, tl_tensor **slot) {
    if (!g) return 0; /* an undefined gradient (Tensor()): the slot stays empty */
    const int64_t *sizes = NULL;
    tl_dtype dt = TL_DTYPE_UNDEFINED;
    tl_tensor *hold = NULL;
    int64_t nd = edge_shape(node, i, &sizes, &dt, &hold);
    if (nd >= 0) {
        int64_t gnd = tl_tensor_ndim(g);
        bool same = gnd == nd && (nd == 0 || memcmp(tl_tensor_sizes(g), sizes, (size_t)nd * sizeof(int64_t)) == 0);
        if (!same) {
            tl_tensor *r = tl_ag_sum_to(g, sizes, nd);
            tl_tensor_release(g);
            g = r;
            if (!g) goto fail;
        }
        if (dt != TL_DTYPE_UNDEFINED && tl_tensor_dtype(g) != dt) {
            tl_tensor *r = tl_ops__to_copy(g, dt, -1, -1, false, false, false, -1);
            tl_tensor_release(g);
            g = r;
            if (!g) goto fail;
        }
    }
    tl_tensor_release(hold);
    *slot = g;
    return 0;
fail:
    tl_tensor_release(hold);
    return -1;
}

/* ---- indexing */

/* masked_fill.Tensor's value gradient: the sum of grad where mask is set,
 * written as grad - grad.masked_fill(mask, 0) so that it stays differentiable */
tl_tensor *tl_ag_masked_fill_backward(tl_tensor *grad, tl_tensor *mask) {
    tl_tensor *kept = tl_ops_masked_fill_Scalar(grad, mask, tl_scalar_from_int(0));
    tl_tensor *d = kept ? tl_ops_sub_Tensor(grad, kept, tl_scalar_from_int(1)) : NULL;
    tl_tensor_release(kept);
    tl_tensor *r = d ? tl_ops_sum(d, TL_DTYPE_UNDEFINED) : NULL;
    tl_tensor_release(d);
    return r;
}

/* embedding_dense_backward's own gradient: the rows of grad that the indices
 * select, zero for padding_idx, shaped [*indices.shape, -1] */
tl_tensor *tl_ag_embedding_dense_double_backward(tl_tensor *grad, tl_tensor *indices, int64_t padding_idx) {
    const int64_t flat = -1, col[2] = {-1, 1};
    int64_t shape[65];
    const int64_t nd = tl_tensor_ndim(indices);
    if (nd > 63) {
        tl_set_error(TL_ERR_RUNTIME, "embedding_dense_double_backward: too many dimensions");
        return NULL;
    }
    memcpy(shape, tl_tensor_sizes(indices), sizeof(int64_t) * (size_t)nd);
    shape[nd] = -1;
    tl_tensor *iv = tl_ops_reshape(indices, &flat, 1);
    tl_tensor *g = iv ? tl_ops_index_select(grad, 0, iv) : NULL;
    tl_tensor_release(iv);
    if (g && padding_idx >= 0) {
        tl_tensor *eq = tl_ops_eq_Scalar(indices, tl_scalar_from_int(padding_idx));
        tl_tensor *m = eq ? tl_ops_reshape(eq, col, 2) : NULL;
        tl_tensor *f = m ? tl_ops_masked_fill_Scalar(g, m, tl_scalar_from_int(0)) : NULL;
        tl_tensor_release(eq);
        tl_tensor_release(m);
        tl_tensor_release(g);
        g = f;
    }
    tl_tensor *r = g ? tl_ops_view(g, shape, nd + 1) : NULL;
    tl_tensor_release(g);
    return r;
}
