/* Helpers of the derivative formulas (runtime/include/tl_autograd_formulas.h).
 *
 * Written once, called by the generated backward nodes. Each is a short
 * composition of torchlet's operator entry points (tl_ops_*), so under
 * create_graph the autograd kernels record them and higher-order gradients
 * follow. Tensors are borrowed; results are new references or NULL with the
 * thread-local error set; every temporary is released on every path.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tl_autograd.h"
#include "tl_autograd_formulas.h"
#include "tl_error.h"
#include "tl_internal.h"
#include "tl_iter.h"
#include "tl_ops.h"

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

bool tl_ag_is_differentiable_type(tl_dtype dt) { return tl_dtype_is_floating(dt) != 0; }

tl_tensor *tl_ag_handle_r_to_c(tl_dtype self_st, tl_tensor *grad) {
    (void)self_st; /* torchlet has no complex dtypes: a real gradient stays as it is */
    return retained(grad);
}

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
    tl_tensor *g = tl_ops_mul_Tensor(grad, other); /* grad * other.conj() */
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
    tl_tensor *g = tl_ops_div_Tensor(grad, other);
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

/* -grad * ((self / other) / other) */
tl_tensor *tl_ag_div_tensor_other_backward(tl_tensor *grad, tl_tensor *self, tl_tensor *other) {
    tl_tensor *q = NULL, *q2 = NULL, *ng = NULL, *r = NULL;
    if (!(q = tl_ops_div_Tensor(self, other))) goto done;
    if (!(q2 = tl_ops_div_Tensor(q, other))) goto done;
    if (!(ng = tl_ops_neg(grad))) goto done;
    r = tl_ops_mul_Tensor(ng, q2);
    if (r) {
        tl_tensor *h = tl_ag_handle_r_to_c(tl_tensor_dtype(other), r);
        tl_tensor_release(r);
        r = h;
    }
done:
    tl_tensor_release(q);
    tl_tensor_release(q2);
    tl_tensor_release(ng);
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

tl_tensor *tl_ag_mm_mat1_backward(tl_tensor *grad, tl_tensor *mat2, const int64_t *sizes, int64_t nsizes,
                                  const int64_t *strides, int64_t nstrides, int layout, tl_scalar alpha) {
    (void)sizes; (void)nsizes; (void)strides; (void)nstrides; (void)layout;
    tl_tensor *t = tl_ops_t(mat2);
    if (!t) return NULL;
    tl_tensor *m = tl_ops_mm(grad, t);
    tl_tensor_release(t);
    if (!m) return NULL;
    tl_tensor *r = tl_ag_maybe_multiply(m, alpha);
    tl_tensor_release(m);
    return r;
}

tl_tensor *tl_ag_mm_mat2_backward(tl_tensor *grad, tl_tensor *mat1, const int64_t *sizes, int64_t nsizes,
                                  const int64_t *strides, int64_t nstrides, int layout, tl_scalar alpha) {
    (void)sizes; (void)nsizes; (void)strides; (void)nstrides; (void)layout;
    tl_tensor *t = tl_ops_t(mat1);
    if (!t) return NULL;
    tl_tensor *m = tl_ops_mm(t, grad);
    tl_tensor_release(t);
    if (!m) return NULL;
    tl_tensor *r = tl_ag_maybe_multiply(m, alpha);
    tl_tensor_release(m);
    return r;
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

tl_tensor *tl_ag_to_copy_backward(tl_tensor *grad, tl_dtype dtype, int device) {
    if (tl_tensor_dtype(grad) == dtype && (int)tl_tensor_device(grad) == device) return retained(grad);
    return tl_ops__to_copy(grad, dtype, -1, device, false, false, false, -1);
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
    if (!in_any || !out_any) return tl_ops_zeros(in_sizes, in_nd, dt, -1, (int)tl_tensor_device(grad), false, false);
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
    if (!(r64 = tl_empty(in_nd, in_sizes, TL_FLOAT64, tl_tensor_device(grad)))) goto done;
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

/* ------------------------------------------------------------------ kernels */

/* threshold_backward: grad_output where self > threshold, else 0 */
typedef struct {
    tl_scalar threshold;
    tl_dtype dt;
} thr_ctx;

static void thr_loop(char **data, const int64_t *strides, int64_t n, void *vctx) {
    const thr_ctx *c = vctx;
    char *out = data[0], *g = data[1], *x = data[2];
    if (c->dt == TL_FLOAT32) {
        float th = c->threshold.kind == TL_SCALAR_DOUBLE ? (float)c->threshold.d : (float)c->threshold.i;
        for (int64_t i = 0; i < n; i++) {
            float xv = *(const float *)(x + i * strides[2]);
            *(float *)(out + i * strides[0]) = xv <= th ? 0.0f : *(const float *)(g + i * strides[1]);
        }
        return;
    }
    if (c->dt == TL_FLOAT64) {
        double th = c->threshold.kind == TL_SCALAR_DOUBLE ? c->threshold.d : (double)c->threshold.i;
        for (int64_t i = 0; i < n; i++) {
            double xv = *(const double *)(x + i * strides[2]);
            *(double *)(out + i * strides[0]) = xv <= th ? 0.0 : *(const double *)(g + i * strides[1]);
        }
        return;
    }
    /* other dtypes through scalars (slow path, rare) */
    double th = c->threshold.kind == TL_SCALAR_DOUBLE ? c->threshold.d : (double)c->threshold.i;
    tl_scalar zero = tl_scalar_from_int(0);
    for (int64_t i = 0; i < n; i++) {
        tl_scalar xv, gv;
        tl_scalar_load(x + i * strides[2], c->dt, &xv);
        tl_scalar_load(g + i * strides[1], c->dt, &gv);
        double xd = xv.kind == TL_SCALAR_DOUBLE ? xv.d : (double)xv.i;
        tl_scalar_store(xd <= th ? zero : gv, c->dt, out + i * strides[0]);
    }
}

tl_tensor *tl_ag_threshold_backward_cpu(tl_tensor *grad_output, tl_tensor *self, tl_scalar threshold) {
    tl_iter *it = tl_iter_new(TL_ITER_BINARY_OP);
    if (!it) return NULL;
    tl_tensor *result = NULL;
    if (tl_iter_add_output(it, NULL) == 0 && tl_iter_add_input(it, grad_output) == 0 &&
        tl_iter_add_input(it, self) == 0 && tl_iter_build(it) == 0) {
        thr_ctx c = {threshold, tl_iter_common_dtype(it)};
        if (tl_iter_is_meta(it) || tl_iter_for_each(it, thr_loop, &c) == 0) result = tl_iter_output(it, 0);
    }
    tl_iter_free(it);
    return result;
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
