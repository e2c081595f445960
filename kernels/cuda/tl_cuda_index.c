/* Indexing on CUDA: index_select (yaml: CUDA: index_select_out_cuda /
 * index_select_cuda), index and _index_put_impl_ (CUDA: index_cuda /
 * _index_put_impl_cuda_), scatter (.src / .value: CPU, CUDA:
 * scatter_src_out / scatter_value_out), index_copy (CPU, CUDA:
 * index_copy_out), index_fill_ (CUDA: index_fill__scalar_cuda), gather and scatter_add (CPU, CUDA: gather_out /
 * scatter_add, the CPU's meta functions), index_add (CUDA:
 * index_add_cuda_out), masked_fill_ (CUDA: masked_fill__cuda),
 * embedding_dense_backward (CUDA: embedding_dense_backward_cuda) and
 * nll_loss's forward and backward (CUDA: nll_loss_forward_cuda /
 * nll_loss_backward_out_cuda). The kernels are in generated/cuda/index.cu
 * (kernels/cuda/tl_cuda_index.cuh); masked_fill_ runs where's pointwise
 * kernel in place.
 *
 * Indices stay on the device: the kernels check each one and record the
 * first bad value in a two-word flag, read back after the launch (a sync
 * point), so an out-of-range index raises the CPU kernel's error and never
 * touches memory. */
#include <stdlib.h>
#include <string.h>

#include "tl_cuda_index.h"
#include "tl_cuda_loops.h"
#include "tl_cuda_reduce.h"
#include "tl_error.h"
#include "tl_iter.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/_index_put_impl.h"
#include "ops/div.h"
#include "ops/embedding_dense_backward.h"
#include "ops/gather.h"
#include "ops/index.h"
#include "ops/index_add.h"
#include "ops/index_copy.h"
#include "ops/index_fill.h"
#include "ops/index_select.h"
#include "ops/masked_fill.h"
#include "ops/nll_loss_backward.h"
#include "ops/nll_loss_forward.h"
#include "ops/scatter.h"
#include "ops/scatter_add.h"
#include "ops/sum.h"
#include "tl_internal.h"
#include "tl_structured.h"
#include "../native/nn_common.h"
#include "../native/shape_index.h"

enum { INDEX_THREADS = 256, MAX_GRID = 65536 };
enum { RED_NONE = 0, RED_MEAN = 1 };

/* generated/cuda/ufunc_where_cuda.c: where's kernels over a built iterator */
int tl_ufunc_where_cuda_run(tl_iter *it);

static uint64_t ptr_of(const tl_tensor *t) { return t ? (uint64_t)(uintptr_t)tl__data(t) : 0; }

/* the iteration shape (sizes[nd], row-major) and three operands' byte
 * strides over it into p: size-1 dims dropped, innermost first, magic
 * divisors; offsets must fit 32 bits (as every CUDA kernel here) */
static int ix_layout(tl_cuda_index_params *p, int64_t nd, const int64_t *sizes, const int64_t *const st[3]) {
    int64_t n = 1, ext[3] = {0, 0, 0};
    uint32_t k = 0;
    for (int64_t d = 0; d < nd; d++) n *= sizes[d];
    for (int64_t d = nd - 1; d >= 0 && n > 0; d--) {   /* nothing to lay out when empty */
        if (sizes[d] == 1) continue;
        if (k == TL_CUDA_INDEX_MAX_DIMS)
            return tl_set_error(TL_ERR_RUNTIME, "indexing on CUDA: more than %d dims of size > 1 are not supported",
                                TL_CUDA_INDEX_MAX_DIMS);
        p->sizes[k] = (uint32_t)sizes[d];
        tl_cuda_int_divider((uint32_t)sizes[d], &p->div_magic[k], &p->div_shift[k]);
        for (int j = 0; j < 3; j++) {
            const int64_t s = st[j] ? st[j][d] : 0;
            ext[j] += (sizes[d] - 1) * (s < 0 ? -s : s);
            p->strides[k][j] = (int32_t)s;
        }
        k++;
    }
    if (n > INT32_MAX || ext[0] > INT32_MAX || ext[1] > INT32_MAX || ext[2] > INT32_MAX)
        return tl_set_error(TL_ERR_RUNTIME, "indexing on CUDA: more than 2^31 elements or bytes are not supported");
    p->n = (uint32_t)n;
    p->ndim = k;
    return 0;
}

/* byte strides of t over its dims (0 for `zero`, -1: none) */
static void byte_strides(const tl_tensor *t, int64_t zero, int64_t *out) {
    const int64_t isz = tl__itemsize(t->dtype);
    for (int64_t d = 0; d < t->ndim; d++) out[d] = d == zero ? 0 : t->strides[d] * isz;
}

static int index_type(tl_dtype dt) {
    return dt == TL_INT64 ? TL_CUDA_INDEX_I64 : dt == TL_INT32 ? TL_CUDA_INDEX_I32 : TL_CUDA_INDEX_U8;
}

/* launches f over p with a fresh flag on `like`'s device; *bad = 1 and *value
 * the first bad index when the kernel recorded one. Indices checked on the
 * host (dim_size INT64_MAX: advanced indexing's row starts) need no flag, so
 * no read-back either. */
static int ix_launch(tl_cuda_function *f, tl_cuda_index_params *p, const tl_tensor *like, int *bad, int64_t *value) {
    *bad = 0;
    if (p->n == 0) return 0;
    const int64_t two = 2;
    const int checked = p->dim_size != INT64_MAX;
    tl_tensor *flag = checked ? tl_zeros(1, &two, TL_INT64, tl__device_of(like)) : NULL, *host = NULL;
    if (checked && !flag) return -1;
    p->flag = ptr_of(flag);
    const int64_t blocks = ((int64_t)p->n + INDEX_THREADS - 1) / INDEX_THREADS;
    const unsigned grid[3] = {(unsigned)(blocks < MAX_GRID ? blocks : MAX_GRID), 1, 1}, block[3] = {INDEX_THREADS, 1, 1};
    void *args[1] = {p};
    int rc = tl_cuda_launch(f, grid, block, 0, args);
    if (rc || !checked) {
        tl_tensor_release(flag);
        return rc;
    }
    if (!(host = tl_to_device(flag, TL_CPU, 0))) rc = -1;
    if (rc == 0) {
        const int64_t *v = (const int64_t *)tl__data(host);
        *bad = v[0] != 0;
        *value = v[1];
    }
    tl_tensor_release(host);
    tl_tensor_release(flag);
    return rc;
}

/* runs fn(a) with the device of `dev` current */
#define ON_DEVICE(dev, call)                                        \
    do {                                                            \
        int prev_;                                                  \
        if (tl_cuda_enter_device((dev), &prev_)) return -1;         \
        return tl_cuda_leave_device(prev_, (call));                 \
    } while (0)

static int not_implemented(const char *name, tl_dtype dt) {
    return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", name, tl_dtype_scalar_name(dt));
}

/* the move kernels' table slot of an element size (1, 2, 4, 8, 16 bytes) */
static int size_slot(int64_t isz) { return isz == 1 ? 0 : isz == 2 ? 1 : isz == 4 ? 2 : isz == 8 ? 3 : 4; }

/* the gather-type move of p's positions (elements of self's size) */
static int gather_launch(tl_cuda_index_params *p, const tl_tensor *self, int *bad, int64_t *value) {
    const int64_t isz = tl__itemsize(self->dtype);
    return ix_launch(tl_cuda_index_gather_table[size_slot(isz)], p, self, bad, value);
}

/* p over the positions of `iter` (its shape): `direct` (slot 0: out, 1:
 * src) is read or written at a position, x (the other slot) moves along dim
 * by the index read at si (the index's byte strides over those positions);
 * 0-dim operands have stride 0 */
static int move_params(tl_cuda_index_params *p, const tl_tensor *iter, const int64_t *si, tl_tensor *index,
                       tl_tensor *direct, tl_tensor *x, int64_t dim, int direct_slot) {
    memset(p, 0, sizeof *p);
    int64_t sd[TL_MAX_DIMS] = {0}, sx[TL_MAX_DIMS] = {0};
    byte_strides(direct, -1, sd);
    byte_strides(x, dim, sx);
    const int64_t *st[3];
    st[direct_slot] = sd;
    st[1 - direct_slot] = sx;
    st[2] = si;
    if (ix_layout(p, iter->ndim, iter->sizes, st)) return -1;
    p->out = ptr_of(direct_slot == 0 ? direct : x);
    p->src = ptr_of(direct_slot == 0 ? x : direct);
    p->index = ptr_of(index);
    p->index_type = index_type(index->dtype);
    p->dim_size = si_nonempty_size(x, dim);
    p->dim_stride = si_nonempty_stride(x, dim) * tl__itemsize(x->dtype);
    p->alpha = 1.0;
    p->alpha_int = 1;
    return 0;
}

/* a vector index's byte strides over the positions of iter: along dim only */
static void vector_index_strides(const tl_tensor *iter, const tl_tensor *index, int64_t dim, int64_t *si) {
    for (int64_t k = 0; k < iter->ndim; k++)
        si[k] = k == dim && index->ndim ? index->strides[0] * tl__itemsize(index->dtype) : 0;
}

/* ------------------------------------------------------------ index_select */

static int index_select_run(tl_tensor *self, int64_t dim, tl_tensor *index, tl_tensor *result) {
    int64_t d;
    const int go = si_index_select_prepare(self, dim, index, result, &d);
    if (go) return go < 0 ? -1 : 0;
    tl_cuda_index_params p;
    int64_t si[TL_MAX_DIMS] = {0};
    vector_index_strides(result, index, d, si);
    if (move_params(&p, result, si, index, result, self, d, 0)) return -1;
    int bad;
    int64_t v;
    if (gather_launch(&p, self, &bad, &v)) return -1;
    if (bad) return tl_set_error(TL_ERR_INDEX, "index out of range in self");
    return 0;
}

static int index_select_on(tl_tensor *self, int64_t dim, tl_tensor *index, tl_tensor *out) {
    tl_tensor *ts[3] = {self, index, out};
    if (tl_cuda_same_device(ts, 3)) return -1;
    ON_DEVICE(self, index_select_run(self, dim, index, out));
}

tl_tensor *tl_native_index_select_out_cuda(tl_keyset ks, tl_tensor *self, int64_t dim, tl_tensor *index,
                                           tl_tensor *out) {
    (void)ks;
    if (index_select_on(self, dim, index, out)) return NULL;
    tl_tensor_bump_version(out);
    tl_tensor_retain(out);
    return out;
}

tl_tensor *tl_native_index_select_cuda(tl_keyset ks, tl_tensor *self, int64_t dim, tl_tensor *index) {
    (void)ks;
    const int64_t zero = 0;
    tl_tensor *r = tl_empty(1, &zero, self->dtype, tl__device_of(self));
    if (r && index_select_on(self, dim, index, r)) {
        tl_tensor_release(r);
        return NULL;
    }
    return r;
}

/* ----------------------------------------------------- gather, scatter_add */

/* over the positions of index (a 0-dim index: one) */
static int sg_params(tl_cuda_index_params *p, tl_tensor *index, tl_tensor *direct, tl_tensor *x, int64_t dim,
                     int direct_slot) {
    int64_t si[TL_MAX_DIMS] = {0};
    byte_strides(index, -1, si);
    return move_params(p, index, si, index, direct, x, dim, direct_slot);
}

static int bounds_error(int64_t v, int64_t dim, int64_t size) {
    return tl_set_error(TL_ERR_RUNTIME, "index %lld is out of bounds for dimension %lld with size %lld", (long long)v,
                        (long long)dim, (long long)size);
}

static int gather_run(tl_tensor *self, int64_t d, tl_tensor *index, tl_tensor *out) {
    tl_cuda_index_params p;
    if (index->numel == 0) return 0;
    if (sg_params(&p, index, out, self, d, 0)) return -1;
    int bad;
    int64_t v;
    if (gather_launch(&p, self, &bad, &v)) return -1;
    return bad ? bounds_error(v, d, p.dim_size) : 0;
}

int tl_impl_gather_out_cuda(tl_structured *s, tl_tensor *self, int64_t dim, tl_tensor *index, bool sparse_grad,
                            tl_tensor *out) {
    (void)s;
    (void)sparse_grad;
    tl_tensor *ts[3] = {self, index, out};
    if (tl_cuda_same_device(ts, 3) || si_check_no_internal_overlap(out) || si_check_no_overlap(out, self) ||
        si_check_no_overlap(out, index))
        return -1;
    ON_DEVICE(self, gather_run(self, tl__wrap_dim(dim, self->ndim, 1), index, out));
}

/* out[.., index[pos], ..] += src[pos] over index's positions (alpha: 1) */
static int scatter_add_run(tl_tensor *out, int64_t d, tl_tensor *index, tl_tensor *src) {
    tl_cuda_function *f = tl_cuda_index_scatter_add_table[out->dtype];
    if (!f) return not_implemented("scatter_add_cuda_", out->dtype);
    if (index->numel == 0) return 0;
    tl_cuda_index_params p;
    if (sg_params(&p, index, src, out, d, 1)) return -1;
    int bad;
    int64_t v;
    if (ix_launch(f, &p, out, &bad, &v)) return -1;
    return bad ? bounds_error(v, d, p.dim_size) : 0;
}

int tl_impl_scatter_add_cuda(tl_structured *s, tl_tensor *self, int64_t dim, tl_tensor *index, tl_tensor *src,
                             tl_tensor *out) {
    (void)s;
    tl_tensor *ts[4] = {self, index, src, out};
    if (tl_cuda_same_device(ts, 4) || (out != self && tl_copy_(out, self))) return -1;
    ON_DEVICE(self, scatter_add_run(out, tl__wrap_dim(dim, self->ndim, 1), index, src));
}

/* out[.., index[pos], ..] = src[pos] over index's positions (repeated
 * indices: one of the values wins, as PyTorch's CUDA scatter_) */
static int scatter_run(tl_tensor *out, int64_t d, tl_tensor *index, tl_tensor *src) {
    if (index->numel == 0) return 0;
    tl_cuda_index_params p;
    if (sg_params(&p, index, src, out, d, 1)) return -1;
    const int64_t isz = tl__itemsize(out->dtype);
    int bad;
    int64_t v;
    if (ix_launch(tl_cuda_index_scatter_table[size_slot(isz)], &p, out, &bad, &v)) return -1;
    return bad ? bounds_error(v, d, p.dim_size) : 0;
}

int tl_impl_scatter_src_out_cuda(tl_structured *s, tl_tensor *self, int64_t dim, tl_tensor *index, tl_tensor *src,
                                 tl_tensor *out) {
    (void)s;
    tl_tensor *ts[4] = {self, index, src, out};
    if (tl_cuda_same_device(ts, 4) || (out != self && tl_copy_(out, self))) return -1;
    ON_DEVICE(self, scatter_run(out, tl__wrap_dim(dim, self->ndim, 1), index, src));
}

/* the value as a device scalar broadcast over index's positions (stride 0) */
static int scatter_value_run(tl_tensor *out, int64_t d, tl_tensor *index, tl_scalar value) {
    tl_tensor *h = tl_scalar_tensor(value, out->dtype, TL_CPU);
    tl_tensor *v = h ? tl_to_device(h, tl__device_of(out), 0) : NULL;
    tl_tensor *e = v ? tl_expand(v, index->ndim, index->sizes) : NULL;
    const int rc = e ? scatter_run(out, d, index, e) : -1;
    tl_tensor_release(h);
    tl_tensor_release(v);
    tl_tensor_release(e);
    return rc;
}

int tl_impl_scatter_value_out_cuda(tl_structured *s, tl_tensor *self, int64_t dim, tl_tensor *index, tl_scalar value,
                                   tl_tensor *out) {
    (void)s;
    tl_tensor *ts[3] = {self, index, out};
    if (tl_cuda_same_device(ts, 3) || (out != self && tl_copy_(out, self))) return -1;
    ON_DEVICE(self, scatter_value_run(out, tl__wrap_dim(dim, self->ndim, 1), index, value));
}

/* ----------------------------------------------------------- index_add */

/* out.select(dim, index[i]) += alpha * source.select(dim, i), over source's positions */
static int index_add_run(tl_tensor *out, int64_t d, tl_tensor *index, tl_tensor *source, tl_scalar alpha) {
    tl_cuda_function *f = tl_cuda_index_scatter_add_table[out->dtype];
    if (!f) return not_implemented("index_add_cuda_", out->dtype);
    if (source->numel == 0 || index->numel == 0) return 0;
    tl_cuda_index_params p;
    int64_t si[TL_MAX_DIMS] = {0};
    vector_index_strides(source, index, d, si);
    if (move_params(&p, source, si, index, source, out, d, 1)) return -1;
    p.alpha = alpha.kind == TL_SCALAR_DOUBLE ? alpha.d : (double)alpha.i;
    p.alpha_int = alpha.kind == TL_SCALAR_DOUBLE ? (int64_t)alpha.d : alpha.i;
    int bad;
    int64_t v;
    if (ix_launch(f, &p, out, &bad, &v)) return -1;
    return bad ? bounds_error(v, d, p.dim_size) : 0;
}

int tl_impl_index_add_cuda_out(tl_structured *s, tl_tensor *self, int64_t dim, tl_tensor *index, tl_tensor *source,
                               tl_scalar alpha, tl_tensor *out) {
    (void)s;
    tl_tensor *ts[4] = {self, index, source, out};
    if (tl_cuda_same_device(ts, 4) || (out != self && tl_copy_(out, self))) return -1;
    ON_DEVICE(self, index_add_run(out, tl__wrap_dim(dim, self->ndim, 1), index, source, alpha));
}

/* ------------------------------------------------ index, _index_put_impl_ */

/* The indices (bool masks through their nonzero positions) are copied to the
 * host, where the CPU path's checks and plan give each row of the [rows, A]
 * view of the result its start in self; the row starts go back to the
 * device as the kernels' index (a sync point, as PyTorch's nonzero). */
typedef struct {
    si_adv_plan plan;
    tl_tensor *rows;   /* the row starts on the device (int64) */
} adv_device;

static void adv_device_free(adv_device *a) {
    free(a->plan.rows);
    tl_tensor_release(a->rows);
}

static int adv_device_make(tl_tensor *self, tl_tensor *const *indices, int64_t n, adv_device *a) {
    tl_tensor *host[TL_MAX_DIMS] = {0};
    memset(a, 0, sizeof *a);
    if (n > TL_MAX_DIMS) return tl_set_error(TL_ERR_INDEX, "too many indices for tensor of dimension %lld (got %lld)",
                                             (long long)self->ndim, (long long)n);
    int rc = 0;
    for (int64_t i = 0; i < n && rc == 0; i++) {
        if (!indices[i]) continue;
        if (tl__device_of(indices[i]) != TL_CPU && tl__device_of(indices[i]) != tl__device_of(self)) {
            tl_tensor *ts[2] = {self, indices[i]};
            rc = tl_cuda_same_device(ts, 2);
        } else if (!(host[i] = tl_to_device(indices[i], TL_CPU, 0))) {
            rc = -1;
        }
    }
    if (rc == 0) rc = si_adv_plan_make(self, host, n, &a->plan);
    for (int64_t i = 0; i < n; i++) tl_tensor_release(host[i]);
    if (rc) return -1;
    tl_tensor *h = tl_empty(1, &a->plan.nrows, TL_INT64, TL_CPU);
    if (h && a->plan.nrows) memcpy(tl__data(h), a->plan.rows, sizeof(int64_t) * (size_t)a->plan.nrows);
    a->rows = h ? tl_to_device(h, tl__device_of(self), 0) : NULL;
    tl_tensor_release(h);
    if (!a->rows) {
        adv_device_free(a);
        return -1;
    }
    return 0;
}

/* p over the [rows, A dims] positions: `dense` (the contiguous result or
 * value) read or written at slot direct_slot, self at the other, moved to the
 * row's start (index: the row starts) */
static int adv_params(tl_cuda_index_params *p, const adv_device *a, tl_tensor *self, tl_tensor *dense,
                      int direct_slot) {
    memset(p, 0, sizeof *p);
    const int64_t isz = tl__itemsize(self->dtype), na = a->plan.na;
    int64_t sizes[TL_MAX_DIMS + 1], sd[TL_MAX_DIMS + 1], sx[TL_MAX_DIMS + 1], si[TL_MAX_DIMS + 1] = {8};
    int64_t A = 1;
    for (int64_t k = na - 1; k >= 0; k--) {
        const int64_t d = a->plan.adims[k];
        sizes[k + 1] = self->sizes[d];
        sx[k + 1] = self->strides[d] * isz;
        sd[k + 1] = A * isz;
        si[k + 1] = 0;
        A *= self->sizes[d];
    }
    sizes[0] = a->plan.nrows;
    sx[0] = 0;
    sd[0] = A * isz;
    const int64_t *st[3];
    st[direct_slot] = sd;
    st[1 - direct_slot] = sx;
    st[2] = si;
    if (ix_layout(p, na + 1, sizes, st)) return -1;
    p->out = ptr_of(direct_slot == 0 ? dense : self);
    p->src = ptr_of(direct_slot == 0 ? self : dense);
    p->index = ptr_of(a->rows);
    p->index_type = TL_CUDA_INDEX_I64;
    p->dim_size = INT64_MAX;   /* the row starts were checked on the host */
    p->dim_stride = isz;
    p->alpha = 1.0;
    p->alpha_int = 1;
    return 0;
}

static int index_run(tl_tensor *self, tl_tensor *const *indices, int64_t n, tl_tensor **ret) {
    adv_device a;
    if (adv_device_make(self, indices, n, &a)) return -1;
    tl_tensor *r = tl_empty(a.plan.res_nd, a.plan.res, self->dtype, tl__device_of(self));
    tl_cuda_index_params p;
    int rc = r ? 0 : -1, bad;
    int64_t v;
    if (rc == 0 && r->numel) rc = adv_params(&p, &a, self, r, 0) || gather_launch(&p, self, &bad, &v) ? -1 : 0;
    adv_device_free(&a);
    if (rc) tl_tensor_release(r);
    else *ret = r;
    return rc;
}

tl_tensor *tl_native_index_cuda(tl_keyset ks, tl_tensor *self, tl_tensor *const *indices, int64_t indices_len) {
    (void)ks;
    tl_tensor *r = NULL;
    int prev;
    if (tl_cuda_enter_device(self, &prev) || tl_cuda_leave_device(prev, index_run(self, indices, indices_len, &r)))
        return NULL;
    return r;
}

/* values broadcast to the indexing result, made contiguous, then stored (or
 * added by atomics with accumulate) at the rows' positions in self */
static int index_put_run(tl_tensor *self, tl_tensor *const *indices, int64_t n, tl_tensor *values, bool accumulate) {
    char b1[256], b2[256];
    if (si_check_no_overlap(self, values)) return -1;
    adv_device a;
    if (adv_device_make(self, indices, n, &a)) return -1;
    const si_adv_plan *pl = &a.plan;
    int ok = values->ndim <= pl->res_nd, rc = 0, bad;
    int64_t v;
    for (int64_t j = 0; ok && j < values->ndim; j++) {
        const int64_t vs = values->sizes[values->ndim - 1 - j], r = pl->res[pl->res_nd - 1 - j];
        ok = vs == r || vs == 1;
    }
    if (!ok)
        rc = tl_set_error(TL_ERR_RUNTIME, "shape mismatch: value tensor of shape %s cannot be broadcast to indexing "
                                          "result of shape %s", si_shape_str(b1, sizeof b1, values->ndim, values->sizes),
                          si_shape_str(b2, sizeof b2, pl->res_nd, pl->res));
    else if (values->dtype != self->dtype)
        rc = tl_set_error(TL_ERR_RUNTIME, "Index put requires the source and destination dtypes match, got %s for the "
                                          "destination and %s for the source.",
                          tl_dtype_scalar_name(self->dtype), tl_dtype_scalar_name(values->dtype));
    tl_cuda_function *f = accumulate ? tl_cuda_index_scatter_add_table[self->dtype] : NULL;
    if (rc == 0 && accumulate && !f) rc = not_implemented("index_put_with_sort_kernel", self->dtype);
    tl_tensor *e = rc == 0 ? tl_expand(values, pl->res_nd, pl->res) : NULL, *c = e ? tl_contiguous(e) : NULL;
    if (rc == 0 && !c) rc = -1;
    tl_cuda_index_params p;
    if (rc == 0 && c->numel) {
        const int64_t isz = tl__itemsize(self->dtype);
        if (!f) f = tl_cuda_index_scatter_table[size_slot(isz)];
        rc = adv_params(&p, &a, self, c, 1) || ix_launch(f, &p, self, &bad, &v) ? -1 : 0;
    }
    tl_tensor_release(c);
    tl_tensor_release(e);
    adv_device_free(&a);
    return rc;
}

tl_tensor *tl_native__index_put_impl_cuda_(tl_keyset ks, tl_tensor *self, tl_tensor *const *indices,
                                           int64_t indices_len, tl_tensor *values, bool accumulate, bool unsafe) {
    (void)ks;
    (void)unsafe;
    tl_tensor *ts[2] = {self, values};
    int prev;
    if (tl_cuda_same_device(ts, 2) || tl_cuda_enter_device(self, &prev) ||
        tl_cuda_leave_device(prev, index_put_run(self, indices, indices_len, values, accumulate)))
        return NULL;
    tl_tensor_bump_version(self);
    tl_tensor_retain(self);
    return self;
}

/* ------------------------------------------------ index_copy, index_fill_ */

/* out.select(dim, index[i]) = source.select(dim, i), over source's positions */
static int index_copy_run(tl_tensor *out, int64_t d, tl_tensor *index, tl_tensor *source) {
    if (source->numel == 0 || index->numel == 0) return 0;
    tl_cuda_index_params p;
    int64_t si[TL_MAX_DIMS] = {0};
    vector_index_strides(source, index, d, si);
    if (move_params(&p, source, si, index, source, out, d, 1)) return -1;
    int bad;
    int64_t v;
    if (ix_launch(tl_cuda_index_scatter_table[size_slot(tl__itemsize(out->dtype))], &p, out, &bad, &v)) return -1;
    return bad ? tl_set_error(TL_ERR_INDEX, "index_copy_(): index %lld is out of bounds for dimension %lld with size "
                                            "%lld", (long long)v, (long long)d, (long long)p.dim_size)
               : 0;
}

int tl_impl_index_copy_out_cuda(tl_structured *s, tl_tensor *self, int64_t dim, tl_tensor *index, tl_tensor *source,
                                tl_tensor *out) {
    (void)s;
    tl_tensor *ts[4] = {self, index, source, out};
    if (tl_cuda_same_device(ts, 4) || (out != self && tl_copy_(out, self))) return -1;
    ON_DEVICE(self, index_copy_run(out, tl__wrap_dim(dim, self->ndim, 1), index, source));
}

/* self.select(dim, index[i]) = value: the value as a device scalar broadcast
 * (stride 0) over self's positions with dim d replaced by the index's;
 * negative indices count from the end */
static int index_fill_run(tl_tensor *self, int64_t d, tl_tensor *index, tl_scalar value) {
    if (index->numel == 0 || self->numel == 0) return 0;
    int64_t shape[TL_MAX_DIMS];
    memcpy(shape, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
    if (self->ndim) shape[d] = index->numel;
    tl_tensor *h = tl_scalar_tensor(value, self->dtype, TL_CPU);
    tl_tensor *v = h ? tl_to_device(h, tl__device_of(self), 0) : NULL;
    tl_tensor *e = v ? tl_expand(v, self->ndim, shape) : NULL;
    tl_cuda_index_params p;
    int64_t si[TL_MAX_DIMS] = {0};
    int rc = e ? 0 : -1, bad;
    int64_t bv;
    if (rc == 0) {
        vector_index_strides(e, index, d, si);
        rc = move_params(&p, e, si, index, e, self, d, 1);
    }
    if (rc == 0) {
        p.mode = TL_CUDA_INDEX_WRAP;
        rc = ix_launch(tl_cuda_index_scatter_table[size_slot(tl__itemsize(self->dtype))], &p, self, &bad, &bv);
        if (rc == 0 && bad)   /* the CPU kernel's IndexError */
            rc = tl_set_error(TL_ERR_INDEX, "index %lld is out of bounds for dimension %lld with size %lld",
                              (long long)bv, (long long)d, (long long)p.dim_size);
    }
    tl_tensor_release(h);
    tl_tensor_release(v);
    tl_tensor_release(e);
    return rc;
}

tl_tensor *tl_native_index_fill__scalar_cuda(tl_keyset ks, tl_tensor *self, int64_t dim, tl_tensor *index,
                                             tl_scalar value) {
    (void)ks;
    const int64_t d = si_index_fill_check(self, dim, index);
    int prev;
    if (d < 0 || tl_cuda_enter_device(self, &prev) ||
        tl_cuda_leave_device(prev, index_fill_run(self, d, index, value)))
        return NULL;
    tl_tensor_bump_version(self);
    tl_tensor_retain(self);
    return self;
}

/* --------------------------------------------------------- masked_fill_ */

/* self = where(mask, value, self) in place: where's kernel over an iterator
 * whose output is self (the mask broadcasts to it, never the other way) */
static int masked_fill_run(tl_tensor *self, tl_tensor *mask, tl_scalar value) {
    if (mask->dtype != TL_BOOL)
        return tl_set_error(TL_ERR_RUNTIME, "masked_fill_ only supports boolean masks, but got mask with dtype %s",
                            tl_dtype_caffe2_name(mask->dtype));
    tl_tensor *v = tl_scalar_tensor(value, self->dtype, TL_CPU);
    tl_iter *it = v ? tl_iter_new(TL_ITER_NO_BROADCAST_OUTPUT) : NULL;
    int rc = it ? 0 : -1;
    if (!rc) rc = tl_iter_add_output(it, self);
    if (!rc) rc = tl_iter_add_input(it, mask);
    if (!rc) rc = tl_iter_add_input(it, v);
    if (!rc) rc = tl_iter_add_input(it, self);
    if (!rc) rc = tl_iter_set_common_dtype(it, self->dtype);   /* where's loop of self's dtype; nothing cast */
    if (!rc) rc = tl_iter_build(it);
    if (!rc && !tl_iter_is_meta(it)) rc = tl_ufunc_where_cuda_run(it);
    tl_iter_free(it);
    tl_tensor_release(v);
    if (!rc) tl_tensor_bump_version(self);
    return rc;
}

static tl_tensor *masked_fill_on(tl_tensor *self, tl_tensor *mask, tl_scalar value) {
    int prev;
    if (tl_cuda_enter_device(self, &prev) || tl_cuda_leave_device(prev, masked_fill_run(self, mask, value)))
        return NULL;
    tl_tensor_retain(self);
    return self;
}

tl_tensor *tl_native_masked_fill__scalar_cuda(tl_keyset ks, tl_tensor *self, tl_tensor *mask, tl_scalar value) {
    (void)ks;
    return masked_fill_on(self, mask, value);
}

tl_tensor *tl_native_masked_fill__tensor_cuda(tl_keyset ks, tl_tensor *self, tl_tensor *mask, tl_tensor *value) {
    (void)ks;
    tl_scalar v;
    return si_masked_fill_value(value, &v) ? NULL : masked_fill_on(self, mask, v);
}

/* ---------------------------------------------------- embedding backward */

/* grad rows [n, D] summed into a zeroed [num_weights, D] accumulator (float,
 * double for float64) by atomics; padding_idx's row skipped; with
 * scale_grad_by_freq each row scaled by 1 / (the count of its index), the
 * counts from a first kernel */
static int embedding_bwd_run(tl_tensor *grad, tl_tensor *indices, int64_t num_weights, int64_t padding_idx,
                             bool scale_grad_by_freq, tl_tensor **ret) {
    const tl_dtype dt = grad->dtype, at = dt == TL_FLOAT64 ? TL_FLOAT64 : TL_FLOAT32;
    const tl_device_type dev = tl__device_of(grad);
    const int64_t n = indices->numel, D = grad->ndim ? grad->sizes[grad->ndim - 1] : 1;
    const int64_t wshape[2] = {num_weights, D}, gshape[2] = {n, D};
    tl_tensor *g = tl_contiguous(grad), *ix = tl_contiguous(indices), *acc = tl_zeros(2, wshape, at, dev);
    tl_tensor *counts = NULL;
    int rc = -1, bad = 0;
    int64_t v;
    if (!g || !ix || !acc) goto done;
    tl_cuda_index_params p;
    memset(&p, 0, sizeof p);
    const int64_t asz = tl__itemsize(at), gsz = tl__itemsize(dt), isz = tl__itemsize(ix->dtype);
    const int64_t so[2] = {0, asz}, sg[2] = {D * gsz, gsz}, si[2] = {isz, 0};
    const int64_t *st[3] = {so, sg, si};
    if (ix_layout(&p, 2, gshape, st)) goto done;
    p.out = ptr_of(acc);
    p.src = ptr_of(g);
    p.index = ptr_of(ix);
    p.index_type = index_type(ix->dtype);
    p.dim_size = num_weights;
    p.dim_stride = D * asz;
    p.alpha = 1.0;
    p.alpha_int = 1;
    if (padding_idx >= 0) {
        p.mode |= TL_CUDA_INDEX_SKIP;
        p.skip = padding_idx;
    }
    if (scale_grad_by_freq && n > 0) {
        tl_cuda_index_params c = p;
        const int64_t one[1] = {n}, sc[1] = {isz};
        const int64_t *cst[3] = {NULL, NULL, sc};
        if (!(counts = tl_zeros(1, &num_weights, TL_INT32, dev)) || ix_layout(&c, 1, one, cst)) goto done;
        c.aux = ptr_of(counts);
        if (ix_launch(tl_cuda_index_count_table[0], &c, g, &bad, &v)) goto done;
        p.aux = c.aux;
        p.mode |= TL_CUDA_INDEX_FREQ;
    }
    if (!bad && ix_launch(tl_cuda_index_embedding_backward_table[dt], &p, g, &bad, &v)) goto done;
    if (bad) {
        tl_set_error(TL_ERR_INDEX, "index out of range in self");
        goto done;
    }
    rc = (*ret = tl_to_dtype(acc, dt, 0)) ? 0 : -1;
done:
    tl_tensor_release(g);
    tl_tensor_release(ix);
    tl_tensor_release(acc);
    tl_tensor_release(counts);
    return rc;
}

tl_tensor *tl_native_embedding_dense_backward_cuda(tl_keyset ks, tl_tensor *grad_output, tl_tensor *indices,
                                                   int64_t num_weights, int64_t padding_idx, bool scale_grad_by_freq) {
    (void)ks;
    tl_tensor *ts[2] = {grad_output, indices}, *r = NULL;
    if (tl_cuda_same_device(ts, 2) || si_check_embedding_indices(indices, "embedding_backward")) return NULL;
    if (!tl_cuda_index_embedding_backward_table[grad_output->dtype]) {
        not_implemented("embedding_dense_backward", grad_output->dtype);
        return NULL;
    }
    if (num_weights < 0) {
        tl_set_error(TL_ERR_RUNTIME, "embedding_dense_backward: num_weights must be non-negative");
        return NULL;
    }
    const int64_t D = grad_output->ndim ? grad_output->sizes[grad_output->ndim - 1] : 1;
    if (grad_output->numel != indices->numel * D) {
        tl_set_error(TL_ERR_RUNTIME, "embedding_dense_backward: grad_output has %lld elements, expected %lld x %lld",
                     (long long)grad_output->numel, (long long)indices->numel, (long long)D);
        return NULL;
    }
    int prev;
    if (tl_cuda_enter_device(grad_output, &prev) ||
        tl_cuda_leave_device(prev, embedding_bwd_run(grad_output, indices, num_weights, padding_idx,
                                                     scale_grad_by_freq, &r)))
        return NULL;
    return r;
}

/* ------------------------------------------------------------- nll_loss */

/* a launch over the B rows of self (1-D: one row) with target t: offsets [0]
 * out (stride out_row bytes), [1] src (src_row), [2] the target */
static int nll_params(tl_cuda_index_params *p, tl_tensor *self, tl_tensor *target, tl_tensor *weight, int64_t B,
                      int64_t C, int64_t ignore_index, int64_t out_row, int64_t src_row) {
    memset(p, 0, sizeof *p);
    const int64_t rows[1] = {B}, so[1] = {out_row}, ss[1] = {src_row};
    const int64_t sti[1] = {target->ndim ? target->strides[0] * tl__itemsize(target->dtype) : 0};
    const int64_t *st[3] = {so, ss, sti};
    if (ix_layout(p, 1, rows, st)) return -1;
    p->index = ptr_of(target);
    p->index_type = index_type(target->dtype);
    p->weight = ptr_of(weight);
    p->dim_size = C;
    p->skip = ignore_index;
    p->dim_stride = tl_tensor_stride(self, -1) * tl__itemsize(self->dtype);
    return 0;
}

static int target_error(int64_t t) { return tl_set_error(TL_ERR_INDEX, "Target %lld is out of bounds.", (long long)t); }

/* per-row losses and weights (accumulator dtype), then the reduction by sum
 * on the device: output / total_weight of the CPU kernel's shapes */
static int nll_fwd_run(tl_tensor *self, tl_tensor *target, tl_tensor *weight, int64_t reduction, int64_t ignore_index,
                       int64_t B, int64_t C, tl_tensor **ret0, tl_tensor **ret1) {
    const tl_dtype dt = self->dtype, at = dt == TL_FLOAT64 ? TL_FLOAT64 : TL_FLOAT32;
    const tl_device_type dev = tl__device_of(self);
    tl_tensor *w = weight ? tl_contiguous(weight) : NULL, *loss = tl_empty(1, &B, at, dev);
    tl_tensor *wrow = tl_empty(1, &B, at, dev), *o = NULL, *tw = NULL, *lsum = NULL, *wsum = NULL;
    int rc = -1, bad;
    int64_t v;
    tl_cuda_index_params p;
    if ((weight && !w) || !loss || !wrow ||
        nll_params(&p, self, target, w, B, C, ignore_index, tl__itemsize(at),
                   self->ndim == 2 ? self->strides[0] * tl__itemsize(dt) : 0))
        goto done;
    p.out = ptr_of(loss);
    p.src = ptr_of(self);
    p.aux = ptr_of(wrow);
    if (ix_launch(tl_cuda_index_nll_loss_forward_table[dt], &p, self, &bad, &v)) goto done;
    if (bad) {
        target_error(v);
        goto done;
    }
    if (reduction == RED_NONE && self->ndim == 2) {
        o = tl_to_dtype(loss, dt, 0);
        tw = tl_zeros(0, NULL, dt, dev);
    } else {
        if (!(lsum = tl_ops_sum(loss, TL_DTYPE_UNDEFINED)) || !(wsum = tl_ops_sum(wrow, TL_DTYPE_UNDEFINED))) goto done;
        tl_tensor *val = reduction == RED_MEAN ? tl_ops_div_Tensor(lsum, wsum) : lsum;
        if (val == lsum) tl_tensor_retain(val);
        o = val ? tl_to_dtype(val, dt, 0) : NULL;
        tl_tensor_release(val);
        tw = reduction == RED_NONE ? tl_zeros(0, NULL, dt, dev) : tl_to_dtype(wsum, dt, 0);
    }
    if (o && tw) {
        *ret0 = o;
        *ret1 = tw;
        o = tw = NULL;
        rc = 0;
    }
done:
    tl_tensor_release(w);
    tl_tensor_release(loss);
    tl_tensor_release(wrow);
    tl_tensor_release(lsum);
    tl_tensor_release(wsum);
    tl_tensor_release(o);
    tl_tensor_release(tw);
    return rc;
}

int tl_native_nll_loss_forward_cuda(tl_keyset ks, tl_tensor *self, tl_tensor *target, tl_tensor *weight,
                                    int64_t reduction, int64_t ignore_index, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    int64_t B, C;
    tl_tensor *ts[3] = {self, target, weight};
    if (tl_cuda_same_device(ts, 3) || tl_nn_nll_check(self, target, weight, reduction, &B, &C)) return -1;
    ON_DEVICE(self, nll_fwd_run(self, target, weight, reduction, ignore_index, B, C, ret0, ret1));
}

/* grad_input zeroed, then a thread per row writes its target's entry */
static int nll_bwd_run(tl_tensor *grad_output, tl_tensor *self, tl_tensor *target, tl_tensor *weight,
                       int64_t reduction, int64_t ignore_index, tl_tensor *total_weight, tl_tensor *grad_input) {
    const tl_dtype dt = self->dtype;
    const int64_t B = self->ndim == 2 ? self->sizes[0] : 1, C = tl_tensor_size(self, -1), isz = tl__itemsize(dt);
    const int per_row = reduction == RED_NONE && self->ndim == 2;
    tl_tensor *w = weight ? tl_contiguous(weight) : NULL, *g = tl_to_dtype(grad_output, dt, 0);
    tl_tensor *tw = tl_to_dtype(total_weight, dt, 0);
    int rc = -1, bad;
    int64_t v;
    tl_cuda_index_params p;
    if ((weight && !w) || !g || !tw || tl_zero_(grad_input) ||
        nll_params(&p, grad_input, target, w, B, C, ignore_index,
                   grad_input->ndim == 2 ? grad_input->strides[0] * isz : 0,
                   per_row ? g->strides[0] * isz : 0))
        goto done;
    p.out = ptr_of(grad_input);
    p.src = ptr_of(g);
    p.aux = ptr_of(tw);
    p.mode = reduction == RED_MEAN ? TL_CUDA_INDEX_MEAN : 0;
    if (ix_launch(tl_cuda_index_nll_loss_backward_table[dt], &p, self, &bad, &v)) goto done;
    rc = bad ? target_error(v) : 0;
done:
    tl_tensor_release(w);
    tl_tensor_release(g);
    tl_tensor_release(tw);
    return rc;
}

int tl_impl_nll_loss_backward_out_cuda(tl_structured *s, tl_tensor *grad_output, tl_tensor *self, tl_tensor *target,
                                       tl_tensor *weight, int64_t reduction, int64_t ignore_index,
                                       tl_tensor *total_weight, tl_tensor *grad_input) {
    (void)s;
    tl_tensor *ts[5] = {self, grad_output, target, weight, total_weight};
    if (tl_cuda_same_device(ts, 5)) return -1;
    ON_DEVICE(self, nll_bwd_run(grad_output, self, target, weight, reduction, ignore_index, total_weight, grad_input));
}
