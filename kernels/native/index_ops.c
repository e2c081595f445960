/* Indexing operators (yaml/native_functions.yaml, block "shape and
 * indexing operators"): index_select (+ out, backward), index_add, gather
 * (+ backward), scatter (src / value / reduce), scatter_add, index_copy (all
 * structured but index_select), index_fill (Scalar value: in-place kernel and
 * functional composite), masked_fill (Scalar / Tensor value, in-place kernels
 * and functional composites), embedding (+ embedding_dense_backward), tril /
 * triu (structured).
 *
 * These operators move elements without converting them, so the inner loops
 * copy by item size. Every index read from user data is bounds-checked before
 * it is used (PyTorch's errors and wording). */
#include <stdlib.h>

#include "shape_index.h"
#include "tl_half.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/add.h"
#include "ops/clone.h"
#include "ops/embedding.h"
#include "ops/embedding_backward.h"
#include "ops/embedding_dense_backward.h"
#include "ops/embedding_renorm.h"
#include "ops/expand.h"
#include "ops/gather.h"
#include "ops/gather_backward.h"
#include "ops/index_add.h"
#include "ops/index_copy.h"
#include "ops/index_fill.h"
#include "ops/index_select.h"
#include "ops/index_select_backward.h"
#include "ops/linalg_vector_norm.h"
#include "ops/masked_fill.h"
#include "ops/mul.h"
#include "ops/reshape.h"
#include "ops/scatter.h"
#include "ops/scatter_add.h"
#include "ops/select.h"
#include "ops/tril.h"
#include "ops/triu.h"
#include "ops/view.h"
#include "ops/zeros.h"
#include "tl_structured.h"

/* int32/int64 index as a contiguous int64 tensor (new reference; with copy,
 * never index itself, so the caller may change it) */
static tl_tensor *index_as_i64_copy(tl_tensor *index, int copy) {
    tl_tensor *a = tl_to_dtype(index, TL_INT64, copy);
    if (!a) return NULL;
    tl_tensor *c = tl_contiguous(a);
    tl_tensor_release(a);
    return c;
}

static tl_tensor *index_as_i64(tl_tensor *index) { return index_as_i64_copy(index, 0); }

/* ------------------------------------------------------------ index_select */

typedef struct {
    const char *src;
    char *dst;
    const int64_t *idx;
    int64_t nidx, dimsize, inner_bytes, isz, inner;
} isel_ctx;

/* rows r = (o, j) of the [outer, nidx, inner] output */
static void isel_rows(int64_t b, int64_t e, void *p) {
    const isel_ctx *c = p;
    for (int64_t r = b; r < e; r++) {
        const int64_t o = r / c->nidx, j = r % c->nidx;
        memcpy(c->dst + r * c->inner_bytes, c->src + (o * c->dimsize + c->idx[j]) * c->inner_bytes,
               (size_t)c->inner_bytes);
    }
}

/* inner == 1: gather single elements of each outer row */
#define ISEL_ELEMS(T)                                                         \
    static void isel_elems_##T(int64_t b, int64_t e, void *p) {               \
        const isel_ctx *c = p;                                                \
        for (int64_t o = b; o < e; o++) {                                     \
            const T *s = (const T *)c->src + o * c->dimsize;                  \
            T *d = (T *)c->dst + o * c->nidx;                                 \
            for (int64_t j = 0; j < c->nidx; j++) d[j] = s[c->idx[j]];        \
        }                                                                     \
    }
ISEL_ELEMS(uint8_t)
ISEL_ELEMS(uint16_t)
ISEL_ELEMS(uint32_t)
ISEL_ELEMS(uint64_t)

/* index_select's checks in PyTorch's order and result's resize (shared with
 * the CUDA kernel, kernels/cuda/tl_cuda_index.c): -1 error, 1 nothing to
 * compute (meta or empty), 0 go on with *dim_out the wrapped dim */
int si_index_select_prepare(tl_tensor *self, int64_t dim, tl_tensor *index, tl_tensor *result, int64_t *dim_out) {
    char b1[256], b2[256];
    const int64_t d = tl__wrap_dim(dim, self->ndim, 1);
    if (d < 0) return -1;
    *dim_out = d;
    const int64_t numel = index->numel;
    if (index->ndim > 1) return tl_set_error(TL_ERR_INDEX, "index_select(): Index is supposed to be a vector");
    if (self->ndim == 0 && numel != 1)
        return tl_set_error(TL_ERR_INDEX, "index_select(): Index to scalar can have only 1 value, got %lld value(s)",
                            (long long)numel);
    if (!si_is_index_dtype(index->dtype))
        return tl_set_error(TL_ERR_RUNTIME, "index_select(): Expected dtype int32 or int64 for index");
    if (self->dtype != result->dtype)
        return tl_set_error(TL_ERR_RUNTIME, "index_select(): self and result must have the same scalar type");
    if (si_check_no_internal_overlap(result) || si_check_no_overlap(result, self) || si_check_no_overlap(result, index))
        return -1;
    int64_t shape[TL_MAX_DIMS];
    memcpy(shape, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
    if (self->ndim > 0) shape[d] = numel;
    if (result->ndim != self->ndim || memcmp(result->sizes, shape, sizeof(int64_t) * (size_t)self->ndim) != 0) {
        if (result->numel != 0)
            tl__warn("An output with one or more elements was resized since it had shape %s, which does not match the "
                     "required output shape %s. This behavior is deprecated, and in a future PyTorch release outputs "
                     "will not be resized unless they have zero elements. You can explicitly reuse an out tensor t by "
                     "resizing it, inplace, to zero elements with t.resize_(0).",
                     si_shape_str(b1, sizeof b1, result->ndim, result->sizes), si_shape_str(b2, sizeof b2, self->ndim, shape));
        if (tl_resize_(result, self->ndim, shape)) return -1;
    }
    if (result->device == TL_META || numel == 0) return 1;
    if (self->ndim > 1 && self->sizes[d] == 0)
        return tl_set_error(TL_ERR_RUNTIME, "index_select(): self indexing axis dim should be positive");
    return result->numel == 0;   /* another dim of size 0: nothing to move */
}

static int index_select_into(tl_tensor *self, int64_t dim, tl_tensor *index, tl_tensor *result) {
    int64_t d;
    const int go = si_index_select_prepare(self, dim, index, result, &d);
    if (go) return go < 0 ? -1 : 0;
    const int64_t numel = index->numel;
    const int64_t dimsize = self->ndim ? self->sizes[d] : 1;
    tl_tensor *ix = index_as_i64(index);
    if (!ix) return -1;
    const int64_t *idx = (const int64_t *)tl__data(ix);
    for (int64_t j = 0; j < numel; j++)
        if (idx[j] < 0 || idx[j] >= dimsize) {
            tl_tensor_release(ix);
            return tl_set_error(TL_ERR_INDEX, "index out of range in self");
        }
    /* contiguous source and destination (a temporary when out= is strided) */
    tl_tensor *src = tl_contiguous(self), *dst = NULL;
    if (tl_tensor_is_contiguous(result)) {
        tl_tensor_retain(result);
        dst = result;
    } else {
        dst = tl_empty(result->ndim, result->sizes, result->dtype, TL_CPU);
    }
    int rc = -1;
    if (src && dst) {
        int64_t outer = 1, inner = 1;
        for (int64_t k = 0; k < d; k++) outer *= self->sizes[k];
        for (int64_t k = d + 1; k < self->ndim; k++) inner *= self->sizes[k];
        const int64_t isz = tl__itemsize(self->dtype);
        isel_ctx c = {tl__data(src), tl__data(dst), idx, numel, dimsize, inner * isz, isz, inner};
        if (inner == 1 && isz <= 8) {   /* (complex128: the row copy) */
            tl_range_fn fn = isz == 1 ? isel_elems_uint8_t : isz == 2 ? isel_elems_uint16_t
                           : isz == 4 ? isel_elems_uint32_t : isel_elems_uint64_t;
            const int64_t grain = (1 << 16) / numel;
            tl_parallel_for(outer, grain > 0 ? grain : 1, fn, &c);
        } else {
            const int64_t grain = (1 << 16) / c.inner_bytes;
            tl_parallel_for(outer * numel, grain > 0 ? grain : 1, isel_rows, &c);
        }
        rc = dst == result ? 0 : tl_copy_(result, dst);
    }
    tl_tensor_release(dst);
    tl_tensor_release(src);
    tl_tensor_release(ix);
    return rc;
}

tl_tensor *tl_native_index_select_out_cpu(tl_keyset ks, tl_tensor *self, int64_t dim, tl_tensor *index, tl_tensor *out) {
    (void)ks;
    if (index_select_into(self, dim, index, out)) return NULL;
    tl_tensor_bump_version(out);
    tl_tensor_retain(out);
    return out;
}

tl_tensor *tl_native_index_select_cpu(tl_keyset ks, tl_tensor *self, int64_t dim, tl_tensor *index) {
    (void)ks;
    const int64_t zero = 0;
    tl_tensor *r = tl_empty(1, &zero, self->dtype, tl__device_of(self));
    if (r && index_select_into(self, dim, index, r)) {
        tl_tensor_release(r);
        return NULL;
    }
    return r;
}

/* index_select's gradient: zeros of self's shape, grad added at the selected
 * positions (scatter_add with the index broadcast along dim, so that it is
 * differentiable again: scatter_add's formula is gather) */
tl_tensor *tl_native_index_select_backward(tl_keyset ks, tl_tensor *grad, const int64_t *self_sizes, int64_t self_sizes_len,
                                           int64_t dim, tl_tensor *index) {
    (void)ks;
    const int64_t d = tl__wrap_dim(dim, self_sizes_len, 1);
    if (d < 0) return NULL;
    tl_tensor *z = tl_ops_zeros(self_sizes, self_sizes_len, grad->dtype, -1, (int)grad->device, false, false);
    if (!z) return NULL;
    if (self_sizes_len == 0) { /* 0-dim self: the one selected element */
        tl_tensor *r = tl_ops_add_Tensor(z, grad, tl_scalar_from_int(1));
        tl_tensor_release(z);
        return r;
    }
    int64_t shape[TL_MAX_DIMS];
    for (int64_t k = 0; k < self_sizes_len; k++) shape[k] = k == d ? -1 : 1;
    tl_tensor *iv = tl_ops_reshape(index, shape, self_sizes_len);
    tl_tensor *ie = iv ? tl_ops_expand(iv, grad->sizes, grad->ndim, false) : NULL;
    tl_tensor *r = ie ? tl_ops_scatter_add(z, d, ie, grad) : NULL;
    tl_tensor_release(iv);
    tl_tensor_release(ie);
    tl_tensor_release(z);
    return r;
}

/* --------------------------------------------------------------- index_add */

/* PyTorch's index_func_meta_impl checks (messages name `func`_: index_add_,
 * index_reduce_) */
int si_index_func_meta(tl_structured *s, tl_tensor *self, int64_t dim, tl_tensor *index, tl_tensor *source,
                       const char *func) {
    char b1[256], b2[256];
    const int64_t d = tl__wrap_dim(dim, self->ndim, 1);
    if (d < 0) return -1;
    const int64_t numel = index->numel;
    if (index->ndim > 1)
        return tl_set_error(TL_ERR_INDEX, "%s_(): Index is supposed to be a vector, but got dim: %lld with type: "
                                          "%s and size: %s", func, (long long)index->ndim, tl_dtype_scalar_name(index->dtype),
                            si_shape_str(b1, sizeof b1, index->ndim, index->sizes));
    if (!si_is_index_dtype(index->dtype))
        return tl_set_error(TL_ERR_RUNTIME, "%s_(): Expected dtype int32/int64 for index but got: %s", func,
                            tl_dtype_scalar_name(index->dtype));
    if (self->dtype != source->dtype)
        return tl_set_error(TL_ERR_RUNTIME, "%s_(): self (%s) and source (%s) must have the same scalar type", func,
                            tl_dtype_scalar_name(self->dtype), tl_dtype_scalar_name(source->dtype));
    if (d != 0 && d >= source->ndim)
        return tl_set_error(TL_ERR_RUNTIME, "%s_(): Indexing dim %lld is out of bounds of the source tensor with "
                                            "dim %lld", func, (long long)d, (long long)source->ndim);
    const int64_t ssize = source->ndim ? source->sizes[d] : 1;
    if (numel != ssize)
        return tl_set_error(TL_ERR_RUNTIME, "%s_(): Number of indices (%lld) should be equal to source.size(dim): "
                                            "(%lld), for dim: %lld", func, (long long)numel, (long long)ssize, (long long)d);
    int match = si_nonempty_dim(self) == si_nonempty_dim(source);
    for (int64_t k = 0; match && k < self->ndim; k++)
        if (k != d && self->sizes[k] != source->sizes[k]) match = 0;
    if (!match)
        return tl_set_error(TL_ERR_RUNTIME, "source tensor shape must match self tensor shape, excluding the specified "
                                            "dimension. Got self.shape = %s source.shape = %s",
                            si_shape_str(b1, sizeof b1, self->ndim, self->sizes),
                            si_shape_str(b2, sizeof b2, source->ndim, source->sizes));
    if (tl_structured_set_output(s, 0, self->ndim, self->sizes, NULL, self->dtype)) return -1;
    if (s->kind != TL_STRUCTURED_FUNCTIONAL &&
        (si_check_no_overlap(s->outputs[0], index) || si_check_no_overlap(s->outputs[0], source)))
        return -1;
    return 0;
}

int tl_meta_index_add(tl_structured *s, tl_tensor *self, int64_t dim, tl_tensor *index, tl_tensor *source,
                      tl_scalar alpha) {
    (void)alpha;
    return si_index_func_meta(s, self, dim, index, source, "index_add");
}

/* out <- self, then out.select(dim, index[i]) += alpha * source.select(dim, i),
 * one in-place add per index (indices checked first) */
int tl_impl_index_add_cpu_out(tl_structured *s, tl_tensor *self, int64_t dim, tl_tensor *index, tl_tensor *source,
                              tl_scalar alpha, tl_tensor *out) {
    (void)s;
    if (out != self && tl_copy_(out, self)) return -1;
    const int64_t d = tl__wrap_dim(dim, self->ndim, 1), n = index->numel, size = self->ndim ? self->sizes[d] : 1;
    tl_tensor *ix = index_as_i64(index);
    if (!ix) return -1;
    const int64_t *idx = (const int64_t *)tl__data(ix);
    int rc = 0;
    for (int64_t i = 0; i < n && !rc; i++)
        if (idx[i] < 0 || idx[i] >= size)
            rc = tl_set_error(TL_ERR_RUNTIME, "index %lld is out of bounds for dimension %lld with size %lld",
                              (long long)idx[i], (long long)d, (long long)size);
    for (int64_t i = 0; i < n && !rc; i++) {
        tl_tensor *o = self->ndim ? tl_select(out, d, idx[i]) : tl_alias(out);
        tl_tensor *v = source->ndim ? tl_select(source, d, i) : tl_alias(source);
        tl_tensor *r = o && v ? tl_ops_add__Tensor(o, v, alpha) : NULL;
        rc = r ? 0 : -1;
        tl_tensor_release(r);
        tl_tensor_release(o);
        tl_tensor_release(v);
    }
    tl_tensor_release(ix);
    return rc;
}

/* ----------------------------------------------------- gather and scatter */

/* one pass over index's positions p: `direct` is read/written at p, `indexed`
 * at p with p[dim] replaced by index[p] (the element function decides which
 * way data flows) */
typedef void (*sg_elem_fn)(char *direct, char *indexed, const void *ctx);

typedef struct {
    tl_tensor *index, *direct, *indexed;   /* direct may be NULL (scatter.value) */
    int64_t dim;
} sg_args;

/* always inlined, so that wrappers passing a constant fn get it inlined too
 * (gather's copy becomes a plain load/store in the inner loop) */
static inline __attribute__((always_inline)) int sg_run_inline(const sg_args *a, sg_elem_fn fn, const void *ctx) {
    const tl_tensor *ix = a->index;
    if (ix->numel == 0) return 0;
    const int64_t nd = si_nonempty_dim(ix), dim = a->dim;
    const int64_t dimsize = si_nonempty_size(a->indexed, dim);
    const int64_t idx_isz = tl__itemsize(ix->dtype), isz = tl__itemsize(a->indexed->dtype);
    const int64_t dim_stride = si_nonempty_stride(a->indexed, dim) * isz;
    int64_t sizes[TL_MAX_DIMS], st[3][TL_MAX_DIMS], pos[TL_MAX_DIMS] = {0}, off[3] = {0, 0, 0};
    for (int64_t k = 0; k < nd; k++) {
        sizes[k] = si_nonempty_size(ix, k);
        st[0][k] = si_nonempty_stride(ix, k) * idx_isz;
        st[1][k] = a->direct ? si_nonempty_stride(a->direct, k) * tl__itemsize(a->direct->dtype) : 0;
        st[2][k] = k == dim ? 0 : si_nonempty_stride(a->indexed, k) * isz;
    }
    const int64_t *strides[3] = {st[0], st[1], st[2]};
    char *pi = tl__data(ix), *pd = a->direct ? tl__data(a->direct) : NULL, *px = tl__data(a->indexed);
    const int64_t last = nd - 1, n = sizes[last], si = st[0][last], sd = st[1][last], sx = st[2][last];
    /* the inner run, per index type (the type test stays out of the loop) */
#define SG_INNER(IT)                                                                                      \
    for (int64_t k = 0; k < n; k++) {                                                                     \
        IT v;                                                                                             \
        memcpy(&v, ib + k * si, sizeof(IT));                                                              \
        if ((uint64_t)(int64_t)v >= (uint64_t)dimsize) /* negative or too large */                        \
            return tl_set_error(TL_ERR_RUNTIME, "index %lld is out of bounds for dimension %lld with size %lld", \
                                (long long)v, (long long)dim, (long long)dimsize);                        \
        fn(db ? db + k * sd : NULL, xb + k * sx + (int64_t)v * dim_stride, ctx);                          \
    }
    do {
        const char *ib = pi + off[0];
        char *db = pd ? pd + off[1] : NULL, *xb = px + off[2];
        if (ix->dtype == TL_INT64) {
            SG_INNER(int64_t)
        } else {
            SG_INNER(int32_t)
        }
    } while (si_next(last, sizes, -1, pos, 3, strides, off));
#undef SG_INNER
    return 0;
}

static int sg_run(const sg_args *a, sg_elem_fn fn, const void *ctx) { return sg_run_inline(a, fn, ctx); }

/* element moves by item size: gather, direct (out) <- indexed (self); put,
 * indexed (out) <- direct (src / source) */
#define SG_MOVE(T)                                                                                \
    static void gather_##T(char *d, char *x, const void *c) { (void)c; memcpy(d, x, sizeof(T)); } \
    static void put_##T(char *d, char *x, const void *c) { (void)c; memcpy(x, d, sizeof(T)); }    \
    static int gather_run_##T(const sg_args *a) { return sg_run_inline(a, gather_##T, NULL); }    \
    static int put_run_##T(const sg_args *a) { return sg_run_inline(a, put_##T, NULL); }
SG_MOVE(uint8_t)
SG_MOVE(uint16_t)
SG_MOVE(uint32_t)
SG_MOVE(uint64_t)
typedef struct {
    uint64_t w[2];
} elem16;   /* complex128 */
SG_MOVE(elem16)

static int gather_run(const sg_args *a, int64_t isz) {
    return isz == 1 ? gather_run_uint8_t(a) : isz == 2 ? gather_run_uint16_t(a)
         : isz == 4 ? gather_run_uint32_t(a) : isz == 16 ? gather_run_elem16(a) : gather_run_uint64_t(a);
}

static int put_run(const sg_args *a, int64_t isz) {
    return isz == 1 ? put_run_uint8_t(a) : isz == 2 ? put_run_uint16_t(a)
         : isz == 4 ? put_run_uint32_t(a) : isz == 16 ? put_run_elem16(a) : put_run_uint64_t(a);
}

int tl_meta_gather(tl_structured *s, tl_tensor *self, int64_t dim, tl_tensor *index, bool sparse_grad) {
    (void)sparse_grad;
    char b1[256], b2[256];
    const int64_t d = tl__wrap_dim(dim, self->ndim, 1);
    if (d < 0) return -1;
    if (index->numel != 0) {
        if (!si_is_index_dtype(index->dtype))
            return tl_set_error(TL_ERR_RUNTIME, "gather(): Expected dtype int32/int64 for index");
        if (si_nonempty_dim(self) != si_nonempty_dim(index))
            return tl_set_error(TL_ERR_RUNTIME, "Index tensor must have the same number of dimensions as input tensor");
        for (int64_t k = 0; k < si_nonempty_dim(self); k++)
            if (k != d && si_nonempty_size(index, k) > si_nonempty_size(self, k))
                return tl_set_error(TL_ERR_RUNTIME, "Size does not match at dimension %lld expected index %s to be no "
                                                    "larger than self %s apart from dimension %lld",
                                    (long long)k, si_shape_str(b1, sizeof b1, index->ndim, index->sizes),
                                    si_shape_str(b2, sizeof b2, self->ndim, self->sizes), (long long)d);
    }
    return tl_structured_set_output(s, 0, index->ndim, index->sizes, NULL, self->dtype);
}

int tl_impl_gather_out(tl_structured *s, tl_tensor *self, int64_t dim, tl_tensor *index, bool sparse_grad, tl_tensor *out) {
    (void)s;
    (void)sparse_grad;
    if (si_check_no_internal_overlap(out) || si_check_no_overlap(out, self) || si_check_no_overlap(out, index)) return -1;
    sg_args a = {index, out, self, tl__wrap_dim(dim, self->ndim, 1)};
    return gather_run(&a, tl__itemsize(self->dtype));
}

/* gather's gradient: zeros of self's shape with grad added at the gathered
 * positions (PyTorch's gather_backward; sparse_grad is not supported) */
tl_tensor *tl_native_gather_backward(tl_keyset ks, tl_tensor *grad, tl_tensor *self, int64_t dim, tl_tensor *index,
                                     bool sparse_grad) {
    (void)ks;
    if (sparse_grad) {
        tl_set_error(TL_ERR_NOT_IMPLEMENTED, "gather(): sparse_grad=True is not supported (torchlet has no sparse tensors)");
        return NULL;
    }
    tl_tensor *z = tl_ops_zeros(self->sizes, self->ndim, grad->dtype, -1, (int)grad->device, false, false);
    if (!z) return NULL;
    tl_tensor *r = tl_ops_scatter_add(z, dim, index, grad);
    tl_tensor_release(z);
    return r;
}

/* scatter's reductions: 0 none, 1 add, 2 multiply */
typedef struct {
    tl_dtype dt;
    int reduce;
    char value[16];   /* scatter.value: the value as bytes of out's dtype (complex128: 16) */
} sc_ctx;

static void sc_store(char *d, char *x, const void *c) {
    (void)d;
    si_move(x, ((const sc_ctx *)c)->value, tl__itemsize(((const sc_ctx *)c)->dt));
}

/* scatter_add's float loops (the gradients of gather / index_select) */
#define SC_ADD(T)                                           \
    static void sc_add_##T(char *d, char *x, const void *c) { \
        (void)c;                                            \
        T a, b;                                             \
        memcpy(&a, x, sizeof(T));                           \
        memcpy(&b, d, sizeof(T));                           \
        a += b;                                             \
        memcpy(x, &a, sizeof(T));                           \
    }
SC_ADD(float)
SC_ADD(double)

/* other dtypes: through tl_scalar (ints wrap in int64 like C++; bool: or / and;
 * floats in double, which rounds one float sum or product exactly once) */
static void sc_reduce_generic(char *src, char *x, const void *cp) {
    const sc_ctx *c = cp;
    tl_scalar a, b;
    tl_scalar_load(x, c->dt, &a);
    tl_scalar_load(src, c->dt, &b);
    tl_scalar r;
    if (c->dt == TL_BOOL) {
        r = tl_scalar_from_bool(c->reduce == 1 ? (a.i || b.i) : (a.i && b.i));
    } else if (a.kind == TL_SCALAR_DOUBLE) {
        r = tl_scalar_from_double(c->reduce == 1 ? a.d + b.d : a.d * b.d);
    } else {
        const uint64_t ua = (uint64_t)a.i, ub = (uint64_t)b.i;
        r = tl_scalar_from_int((int64_t)(c->reduce == 1 ? ua + ub : ua * ub));
    }
    tl_scalar_store(r, c->dt, x);
}

/* scatter.value with a reduction: the value plays src's part */
static void sc_reduce_value(char *d, char *x, const void *cp) {
    (void)d;
    sc_reduce_generic((char *)((const sc_ctx *)cp)->value, x, cp);
}

static int parse_reduce(const char *reduce, int *out) {
    if (!reduce) {
        *out = 0;
        return 0;
    }
    if (!strcmp(reduce, "add")) *out = 1;
    else if (!strcmp(reduce, "multiply")) *out = 2;
    else return tl_set_error(TL_ERR_RUNTIME, "reduce argument must be either add or multiply.");
    return 0;
}

/* PyTorch's scatter_meta_impl: dtype and shape checks, output like self */
static int scatter_meta(tl_structured *s, tl_tensor *self, int64_t dim, tl_tensor *index, tl_tensor *src,
                        const char *reduce) {
    char b1[256], b2[256], b3[256];
    const int64_t d = tl__wrap_dim(dim, self->ndim, 1);
    if (d < 0) return -1;
    if (index->numel != 0 && !si_is_index_dtype(index->dtype))
        return tl_set_error(TL_ERR_RUNTIME, "scatter(): Expected dtype int32/int64 for index");
    if (src && src->dtype != self->dtype)
        return tl_set_error(TL_ERR_RUNTIME, "scatter(): Expected self.dtype to be equal to src.dtype");
    if (index->numel != 0) {
        if (si_nonempty_dim(self) != si_nonempty_dim(index))
            return tl_set_error(TL_ERR_RUNTIME, "Index tensor must have the same number of dimensions as self tensor");
        int wrong = 0;
        for (int64_t k = 0; k < si_nonempty_dim(self); k++)
            if (k != d && si_nonempty_size(index, k) > si_nonempty_size(self, k)) wrong = 1;
        if (src) {
            for (int64_t k = 0; !wrong && k < si_nonempty_dim(index); k++)
                if (k < si_nonempty_dim(src) && si_nonempty_size(index, k) > si_nonempty_size(src, k)) wrong = 1;
            if (si_nonempty_dim(src) != si_nonempty_dim(index))
                return tl_set_error(TL_ERR_RUNTIME, "Index tensor must have the same number of dimensions as src tensor");
            if (wrong)
                return tl_set_error(TL_ERR_RUNTIME, "Expected index %s to be no larger than self %s apart from dimension "
                                                    "%lld and to be no larger size than src %s",
                                    si_shape_str(b1, sizeof b1, index->ndim, index->sizes),
                                    si_shape_str(b2, sizeof b2, self->ndim, self->sizes), (long long)d,
                                    si_shape_str(b3, sizeof b3, src->ndim, src->sizes));
        } else if (wrong) {
            return tl_set_error(TL_ERR_RUNTIME, "Expected index %s to be no larger than self %s apart from dimension %lld",
                                si_shape_str(b1, sizeof b1, index->ndim, index->sizes),
                                si_shape_str(b2, sizeof b2, self->ndim, self->sizes), (long long)d);
        }
    }
    int r;
    if (parse_reduce(reduce, &r)) return -1;
    if (tl_structured_set_output(s, 0, self->ndim, self->sizes, NULL, self->dtype)) return -1;
    tl_tensor *out = s->outputs[0];
    if (s->kind != TL_STRUCTURED_FUNCTIONAL &&
        (si_check_no_internal_overlap(out) || si_check_no_overlap(out, index) || (src && si_check_no_overlap(out, src))))
        return -1;
    return 0;
}

/* out <- self (unless in-place), then one scatter pass */
static int scatter_impl(tl_tensor *self, int64_t dim, tl_tensor *index, tl_tensor *src, const tl_scalar *value,
                        const char *reduce, tl_tensor *out) {
    if (out != self && tl_copy_(out, self)) return -1;
    sc_ctx c = {out->dtype, 0, {0}};
    if (parse_reduce(reduce, &c.reduce)) return -1;
    if (value && tl_scalar_store(*value, out->dtype, c.value)) return -1;
    sg_args a = {index, src, out, tl__wrap_dim(dim, self->ndim, 1)};
    if (!value && !c.reduce) return put_run(&a, tl__itemsize(out->dtype));
    sg_elem_fn fn = value ? (c.reduce ? sc_reduce_value : sc_store)
                  : c.reduce == 1 && out->dtype == TL_FLOAT32 ? sc_add_float
                  : c.reduce == 1 && out->dtype == TL_FLOAT64 ? sc_add_double : sc_reduce_generic;
    return sg_run(&a, fn, &c);
}

/* for scatter_reduce.two (scatter_reduce.c): the checks with reduce left to
 * the caller, and one element pass */
int si_scatter_meta(tl_structured *s, tl_tensor *self, int64_t dim, tl_tensor *index, tl_tensor *src) {
    return scatter_meta(s, self, dim, index, src, NULL);
}

int si_scatter_run(tl_tensor *index, tl_tensor *direct, tl_tensor *indexed, int64_t dim, si_elem_fn fn,
                   const void *ctx) {
    sg_args a = {index, direct, indexed, dim};
    return sg_run(&a, fn, ctx);
}

int tl_meta_scatter_src(tl_structured *s, tl_tensor *self, int64_t dim, tl_tensor *index, tl_tensor *src) {
    return scatter_meta(s, self, dim, index, src, NULL);
}

int tl_impl_scatter_src_out(tl_structured *s, tl_tensor *self, int64_t dim, tl_tensor *index, tl_tensor *src, tl_tensor *out) {
    (void)s;
    return scatter_impl(self, dim, index, src, NULL, NULL, out);
}

int tl_meta_scatter_value(tl_structured *s, tl_tensor *self, int64_t dim, tl_tensor *index, tl_scalar value) {
    (void)value;
    return scatter_meta(s, self, dim, index, NULL, NULL);
}

int tl_impl_scatter_value_out(tl_structured *s, tl_tensor *self, int64_t dim, tl_tensor *index, tl_scalar value,
                              tl_tensor *out) {
    (void)s;
    return scatter_impl(self, dim, index, NULL, &value, NULL, out);
}

int tl_meta_scatter_reduce(tl_structured *s, tl_tensor *self, int64_t dim, tl_tensor *index, tl_tensor *src,
                           const char *reduce) {
    TL_WARN_ONCE("The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in a future "
                 "PyTorch release. Use torch.scatter_reduce instead for more reduction options.");
    return scatter_meta(s, self, dim, index, src, reduce);
}

int tl_impl_scatter_reduce_out(tl_structured *s, tl_tensor *self, int64_t dim, tl_tensor *index, tl_tensor *src,
                               const char *reduce, tl_tensor *out) {
    (void)s;
    return scatter_impl(self, dim, index, src, NULL, reduce, out);
}

int tl_meta_scatter_value_reduce(tl_structured *s, tl_tensor *self, int64_t dim, tl_tensor *index, tl_scalar value,
                                 const char *reduce) {
    (void)value;
    return scatter_meta(s, self, dim, index, NULL, reduce);
}

int tl_impl_scatter_value_reduce_out(tl_structured *s, tl_tensor *self, int64_t dim, tl_tensor *index, tl_scalar value,
                                     const char *reduce, tl_tensor *out) {
    (void)s;
    return scatter_impl(self, dim, index, NULL, &value, reduce, out);
}

int tl_meta_scatter_add(tl_structured *s, tl_tensor *self, int64_t dim, tl_tensor *index, tl_tensor *src) {
    return scatter_meta(s, self, dim, index, src, NULL);
}

int tl_impl_scatter_add(tl_structured *s, tl_tensor *self, int64_t dim, tl_tensor *index, tl_tensor *src, tl_tensor *out) {
    (void)s;
    return scatter_impl(self, dim, index, src, NULL, "add", out);
}

/* ---------------------------------------------------- index_copy, index_fill */

/* the index (1-D or 0-dim, contiguous int64) laid over the positions of
 * `like` (its sizes with dim's replaced by the index length; a 0-dim `like`
 * counts as [1]), read along dim, broadcast elsewhere: PyTorch's
 * index_restrided, for sg_run */
static tl_tensor *index_along(tl_tensor *ix, const tl_tensor *like, int64_t d) {
    int64_t sizes[TL_MAX_DIMS], strides[TL_MAX_DIMS];
    const int64_t nd = si_nonempty_dim(like);
    for (int64_t k = 0; k < nd; k++) {
        sizes[k] = k == d ? ix->numel : si_nonempty_size(like, k);
        strides[k] = k == d ? 1 : 0;
    }
    return tl_as_strided(ix, nd, sizes, strides, ix->storage_offset);
}

/* the sizes of t but dim `skip` (-1: all), as c10 prints a std::vector ("2 4") */
static const char *slice_str(char *buf, size_t n, const tl_tensor *t, int64_t skip, int64_t *sizes, int64_t *len) {
    size_t k = 0;
    *len = 0;
    buf[0] = '\0';
    for (int64_t i = 0; i < t->ndim; i++) {
        if (i == skip) continue;
        sizes[(*len)++] = t->sizes[i];
        if (k < n) k += (size_t)snprintf(buf + k, n - k, k ? " %lld" : "%lld", (long long)t->sizes[i]);
    }
    return buf;
}

/* PyTorch's index_copy meta function, checks in its order */
int tl_meta_index_copy(tl_structured *s, tl_tensor *self, int64_t dim, tl_tensor *index, tl_tensor *source) {
    const int64_t d = tl__wrap_dim(dim, self->ndim, 1);
    if (d < 0) return -1;
    if (tl_structured_set_output(s, 0, self->ndim, self->sizes, NULL, self->dtype)) return -1;
    tl_tensor *out = s->outputs[0];
    if (s->kind != TL_STRUCTURED_FUNCTIONAL &&
        (si_check_no_internal_overlap(out) || si_check_no_overlap(out, index) || si_check_no_overlap(out, source)))
        return -1;
    if (index->ndim >= 2)
        return tl_set_error(TL_ERR_INDEX, "index_copy_(): Index should have dimension 1 or 0 (got %lld)",
                            (long long)index->ndim);
    const int64_t n = index->numel;
    if (source->ndim == 0 && n != 1)
        return tl_set_error(TL_ERR_INDEX, "index_copy_(): When source is scalar, index should have one element "
                                          "(got %lld)", (long long)n);
    if (source->ndim != self->ndim && source->ndim != 0 && self->ndim != 0)
        return tl_set_error(TL_ERR_INDEX, "index_copy_(): When source and destination are not scalars, their "
                                          "dimensionality must match. Source dimensionality (%lld), destination "
                                          "dimensionality (%lld)", (long long)source->ndim, (long long)self->ndim);
    if (index->dtype != TL_INT64)
        return tl_set_error(TL_ERR_RUNTIME, "index_copy_(): Expected a long tensor for index, but got %s",
                            tl_dtype_scalar_name(index->dtype));
    if (self->dtype != source->dtype)
        return tl_set_error(TL_ERR_RUNTIME, "index_copy_(): self and source expected to have the same dtype, but got "
                                            "(self) %s and (source) %s",
                            tl_dtype_scalar_name(self->dtype), tl_dtype_scalar_name(source->dtype));
    if (self->device != source->device || self->device != index->device)
        return tl_set_error(TL_ERR_RUNTIME, "index_copy_(): self, index and source expected to be in the same device, "
                                            "but got (self) %s, (index) %s, and (source) %s",
                            tl__device_name(self->device), tl__device_name(index->device),
                            tl__device_name(source->device));
    /* every dim but dim must agree (self 0-dim: d is 0 and source drops its dim 0) */
    char b1[256], b2[256];
    int64_t a[TL_MAX_DIMS], b[TL_MAX_DIMS], na, nb;
    slice_str(b1, sizeof b1, self, d, a, &na);
    slice_str(b2, sizeof b2, source, d, b, &nb);
    if (na != nb || memcmp(a, b, sizeof(int64_t) * (size_t)na) != 0)
        return tl_set_error(TL_ERR_RUNTIME, "index_copy_(): Source/destination tensor must have same slice shapes. "
                                            "Destination slice shape: %s at dimension %lld and source slice shape: %s "
                                            "at dimension 0.", b1, (long long)d, b2);
    if (source->ndim != 0 && n != source->sizes[d])
        return tl_set_error(TL_ERR_INDEX, "index_copy_(): Number of indices (%lld) should be equal to source.size(dim) "
                                          "(%lld)", (long long)n, (long long)source->sizes[d]);
    return 0;
}

/* out <- self, then the slices of source along dim go to out's slices
 * index[i]: every index checked first (when any element moves, as PyTorch's
 * kernel only checks the ones it visits), then one pass over source; with a
 * repeated index the last copy wins */
int tl_impl_index_copy_out(tl_structured *s, tl_tensor *self, int64_t dim, tl_tensor *index, tl_tensor *source,
                           tl_tensor *out) {
    (void)s;
    if (out != self && tl_copy_(out, self)) return -1;
    const int64_t d = tl__wrap_dim(dim, self->ndim, 1), size = si_nonempty_size(out, d);
    tl_tensor *ix = index_as_i64(index), *iv = ix ? index_along(ix, source, d) : NULL;
    int rc = iv ? 0 : -1;
    if (!rc && iv->numel > 0) {
        const int64_t *idx = (const int64_t *)tl__data(ix);
        for (int64_t i = 0; i < ix->numel && !rc; i++)
            if (idx[i] < 0 || idx[i] >= size)
                rc = tl_set_error(TL_ERR_INDEX, "index_copy_(): index %lld is out of bounds for dimension %lld with "
                                                "size %lld", (long long)idx[i], (long long)d, (long long)size);
        sg_args a = {iv, source, out, d};
        if (!rc) rc = put_run(&a, tl__itemsize(out->dtype));
    }
    tl_tensor_release(iv);
    tl_tensor_release(ix);
    return rc;
}

/* PyTorch's index_fill_ (Scalar value): its checks in its order, negative
 * indices wrap, the value stored in self's dtype (wrapping like fill_) */
/* index_fill_'s checks in PyTorch's order (shared with the CUDA kernel):
 * the wrapped dim, or -1 */
int64_t si_index_fill_check(tl_tensor *self, int64_t dim, tl_tensor *index) {
    if (index->dtype != TL_INT64) return tl_set_error(TL_ERR_INDEX, "index_fill_(): Expected dtype int64 for index.");
    if (si_check_no_overlap(self, index)) return -1;
    if (si_has_internal_overlap(self))
        tl__warn("Use of index_fill_ on expanded tensors is deprecated. Please clone() the tensor before performing "
                 "this operation. This also applies to advanced indexing e.g. tensor[mask] = scalar");
    const int64_t d = tl__wrap_dim(dim, self->ndim, 1);
    if (d < 0) return -1;
    if (index->ndim > 1) return tl_set_error(TL_ERR_RUNTIME, "Index has to be a vector/scalar");
    if (self->device != index->device)
        return tl_set_error(TL_ERR_RUNTIME, "Expected all tensors to be on the same device, but found at least two "
                                            "devices, %s and %s!", tl__device_name(index->device),
                            tl__device_name(self->device));
    return d;
}

tl_tensor *tl_native_index_fill__scalar(tl_keyset ks, tl_tensor *self, int64_t dim, tl_tensor *index, tl_scalar value) {
    (void)ks;
    const int64_t d = si_index_fill_check(self, dim, index);
    if (d < 0) return NULL;
    sc_ctx c = {self->dtype, 0, {0}};
    if (tl_scalar_store(value, self->dtype, c.value)) return NULL;
    if (self->device != TL_META && index->numel > 0) {
        const int64_t size = si_nonempty_size(self, d);
        tl_tensor *ix = index_as_i64_copy(index, 1), *iv = ix ? index_along(ix, self, d) : NULL;
        int rc = iv ? 0 : -1;
        if (!rc && iv->numel > 0) {
            int64_t *idx = (int64_t *)tl__data(ix);
            for (int64_t i = 0; i < ix->numel && !rc; i++) {
                if (idx[i] < -size || idx[i] >= size)
                    rc = tl_set_error(TL_ERR_INDEX, "index %lld is out of bounds for dimension %lld with size %lld",
                                      (long long)idx[i], (long long)d, (long long)size);
                else if (idx[i] < 0)
                    idx[i] += size;
            }
            sg_args a = {iv, NULL, self, d};
            if (!rc) rc = sg_run(&a, sc_store, &c);
        }
        tl_tensor_release(iv);
        tl_tensor_release(ix);
        if (rc) return NULL;
    }
    tl_tensor_bump_version(self);
    tl_tensor_retain(self);
    return self;
}

/* index_fill: on a clone of self (PyTorch's CompositeExplicitAutograd kernel) */
tl_tensor *tl_native_index_fill_scalar(tl_keyset ks, tl_tensor *self, int64_t dim, tl_tensor *index, tl_scalar value) {
    (void)ks;
    tl_tensor *c = tl_ops_clone(self, TL_PRESERVE_FORMAT);
    if (!c) return NULL;
    tl_tensor *r = tl_ops_index_fill__int_Scalar(c, dim, index, value);
    tl_tensor_release(c);
    return r;
}

/* ------------------------------------------------------------ masked_fill */

typedef struct {
    char value[16];   /* one element of any dtype */
    int64_t isz;
} mf_ctx;

static void mf_loop(char **data, const int64_t *strides, int64_t n, void *p) {
    const mf_ctx *c = p;
    char *dst = data[0];
    const char *m = data[1];
    for (int64_t k = 0; k < n; k++)
        if (m[k * strides[1]]) si_move(dst + k * strides[0], c->value, c->isz);
}

static int masked_fill_inplace(tl_tensor *self, tl_tensor *mask, tl_scalar value) {
    if (mask->dtype != TL_BOOL)
        return tl_set_error(TL_ERR_RUNTIME, "masked_fill_ only supports boolean masks, but got mask with dtype %s",
                            tl_dtype_caffe2_name(mask->dtype));
    mf_ctx c = {{0}, tl__itemsize(self->dtype)};
    if (tl_scalar_store(value, self->dtype, c.value)) return -1;
    tl_iter *it = tl_iter_new(TL_ITER_NO_BROADCAST_OUTPUT);
    if (!it) return -1;
    int rc = tl_iter_add_output(it, self);
    if (!rc) rc = tl_iter_add_input(it, mask);
    if (!rc) rc = tl_iter_build(it);
    if (!rc && !tl_iter_is_meta(it)) rc = tl_iter_for_each(it, mf_loop, &c);
    tl_iter_free(it);
    if (!rc) tl_tensor_bump_version(self);
    return rc;
}

/* the value of masked_fill.Tensor: a 0-dim tensor (also the CUDA kernel's) */
int si_masked_fill_value(tl_tensor *value, tl_scalar *out) {
    if (value->ndim != 0)
        return tl_set_error(TL_ERR_RUNTIME, "masked_fill_ only supports a 0-dimensional value tensor, but got tensor "
                                            "with %lld dimension(s).", (long long)value->ndim);
    return tl_tensor_item(value, out);
}

tl_tensor *tl_native_masked_fill__scalar_cpu(tl_keyset ks, tl_tensor *self, tl_tensor *mask, tl_scalar value) {
    (void)ks;
    if (masked_fill_inplace(self, mask, value)) return NULL;
    tl_tensor_retain(self);
    return self;
}

tl_tensor *tl_native_masked_fill__tensor_cpu(tl_keyset ks, tl_tensor *self, tl_tensor *mask, tl_tensor *value) {
    (void)ks;
    tl_scalar v;
    if (si_masked_fill_value(value, &v) || masked_fill_inplace(self, mask, v)) return NULL;
    tl_tensor_retain(self);
    return self;
}

/* functional: self and mask broadcast together (expand_outplace), a
 * contiguous copy of self, filled in place by the device's masked_fill_ */
static tl_tensor *masked_fill_functional(tl_tensor *self, tl_tensor *mask, tl_scalar value) {
    tl_tensor *in[2] = {mask, self};
    int64_t nd, shape[TL_MAX_DIMS], perm[TL_MAX_DIMS];
    tl_dtype dt;
    if (tl_iter_compute(2, in, TL_ITER_PROMOTE_INPUTS, &nd, shape, &dt, perm)) return NULL; /* shape only */
    tl_tensor *r = tl_empty(nd, shape, self->dtype, tl__device_of(self)), *f = NULL;
    if (r && (tl_copy_(r, self) || !(f = tl_ops_masked_fill__Scalar(r, mask, value)))) {
        tl_tensor_release(r);
        return NULL;
    }
    tl_tensor_release(f);   /* r itself */
    return r;
}

tl_tensor *tl_native_masked_fill_scalar(tl_keyset ks, tl_tensor *self, tl_tensor *mask, tl_scalar value) {
    (void)ks;
    return masked_fill_functional(self, mask, value);
}

tl_tensor *tl_native_masked_fill_tensor(tl_keyset ks, tl_tensor *self, tl_tensor *mask, tl_tensor *value) {
    (void)ks;
    tl_scalar v;
    if (si_masked_fill_value(value, &v)) return NULL;
    return masked_fill_functional(self, mask, v);
}

/* -------------------------------------------------------------- embedding */

/* PyTorch's checkScalarTypes wording ("torch.FloatTensor") */
int si_check_embedding_indices(const tl_tensor *indices, const char *fn) {
    if (si_is_index_dtype(indices->dtype)) return 0;
    static const char *legacy[TL_NUM_DTYPES] = {"Bool", "Byte", "Char", "Short", "Int", "Long", "Half", "BFloat16",
                                                "Float", "Double", "ComplexFloat", "ComplexDouble"};
    return tl_set_error(TL_ERR_RUNTIME, "Expected tensor for argument #1 'indices' to have one of the following scalar "
                                        "types: Long, Int; but got torch.%s%sTensor instead (while checking arguments for %s)",
                        indices->device == TL_META ? "meta." : "", legacy[indices->dtype], fn);
}

tl_tensor *tl_native_embedding(tl_keyset ks, tl_tensor *weight, tl_tensor *indices, int64_t padding_idx,
                               bool scale_grad_by_freq, bool sparse) {
    (void)ks;
    (void)padding_idx; /* the forward ignores it: only the gradient skips that row */
    (void)scale_grad_by_freq;
    (void)sparse;
    if (weight->ndim != 2) {
        tl_set_error(TL_ERR_RUNTIME, "'weight' must be 2-D");
        return NULL;
    }
    if (si_check_embedding_indices(indices, "embedding")) return NULL;
    if (indices->ndim == 1) return tl_ops_index_select(weight, 0, indices);
    const int64_t flat = -1;
    tl_tensor *iv = tl_ops_reshape(indices, &flat, 1);
    tl_tensor *sel = iv ? tl_ops_index_select(weight, 0, iv) : NULL;
    tl_tensor_release(iv);
    if (!sel) return NULL;
    int64_t shape[TL_MAX_DIMS];
    memcpy(shape, indices->sizes, sizeof(int64_t) * (size_t)indices->ndim);
    shape[indices->ndim] = weight->sizes[1];
    tl_tensor *r = tl_ops_view(sel, shape, indices->ndim + 1);
    tl_tensor_release(sel);
    return r;
}

static int cmp_i64(const void *a, const void *b) {
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* embedding_renorm_ (PyTorch's embedding_renorm_cpu_): each distinct row of
 * self named by indices whose norm_type-norm exceeds max_norm is scaled in
 * place by max_norm / (norm + 1e-7). Rows in sorted order, one at a time,
 * through select / linalg_vector_norm / mul_ as PyTorch's loop does. */
tl_tensor *tl_native_embedding_renorm_cpu_(tl_keyset ks, tl_tensor *self, tl_tensor *indices, double max_norm,
                                           double norm_type) {
    (void)ks;
    if (self->ndim != 2) {
        tl_set_error(TL_ERR_RUNTIME, "Expected 2-dimensional tensor, but got %lld-dimensional tensor for argument "
                                     "#1 'self' (while checking arguments for embedding_renorm_)",
                     (long long)self->ndim);
        return NULL;
    }
    if (!si_is_index_dtype(indices->dtype)) {
        static const char *legacy[TL_NUM_DTYPES] = {"Bool", "Byte", "Char", "Short", "Int", "Long", "Half",
                                                    "BFloat16", "Float", "Double", "ComplexFloat", "ComplexDouble"};
        tl_set_error(TL_ERR_RUNTIME, "Expected tensor for argument #2 'indices' to have one of the following scalar "
                                     "types: Long, Int; but got torch.%sTensor instead (while checking arguments "
                                     "for embedding_renorm_)", legacy[indices->dtype]);
        return NULL;
    }
    const int64_t n = indices->numel;
    tl_tensor *ic = tl_to_dtype(indices, TL_INT64, 0);   /* contiguous int64 copy (or the tensor itself) */
    tl_tensor *c = ic ? tl_contiguous(ic) : NULL;
    tl_tensor_release(ic);
    if (!c) return NULL;
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
    if (!idx) {
        tl_tensor_release(c);
        tl_set_error(TL_ERR_MEMORY, "out of memory in embedding_renorm_");
        return NULL;
    }
    if (n) memcpy(idx, tl_tensor_data_ptr(c), sizeof(int64_t) * (size_t)n);
    tl_tensor_release(c);
    qsort(idx, (size_t)n, sizeof(int64_t), cmp_i64);
    int rc = 0;
    for (int64_t i = 0; i < n && rc == 0; i++) {
        if (i > 0 && idx[i] == idx[i - 1]) continue;
        tl_tensor *row = tl_ops_select_int(self, 0, idx[i]);
        tl_tensor *nrm = row ? tl_ops_linalg_vector_norm(row, tl_scalar_from_double(norm_type), NULL, 0, false,
                                                         TL_DTYPE_UNDEFINED)
                             : NULL;
        tl_scalar v;
        if (!nrm || tl_tensor_item(nrm, &v) != 0) {
            rc = -1;
        } else {
            const double norm = v.kind == TL_SCALAR_DOUBLE ? v.d : (double)v.i;
            if (norm > max_norm) {
                tl_tensor *r = tl_ops_mul__Scalar(row, tl_scalar_from_double(max_norm / (norm + 1e-7)));
                if (!r) rc = -1;
                tl_tensor_release(r);
            }
        }
        tl_tensor_release(nrm);
        tl_tensor_release(row);
    }
    free(idx);
    if (rc) return NULL;
    tl_tensor_retain(self);
    return self;
}

tl_tensor *tl_native_embedding_backward(tl_keyset ks, tl_tensor *grad, tl_tensor *indices, int64_t num_weights,
                                        int64_t padding_idx, bool scale_grad_by_freq, bool sparse) {
    (void)ks;
    if (sparse) {
        tl_set_error(TL_ERR_NOT_IMPLEMENTED, "embedding(): sparse=True is not supported (torchlet has no sparse tensors)");
        return NULL;
    }
    return tl_ops_embedding_dense_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq);
}

/* rows of grad (flattened to [N, D]) summed into [num_weights, D], computed in
 * float64 (float32 for the small float types: float16 / bfloat16 / float32),
 * scaled by 1/count with scale_grad_by_freq, padding_idx's row left at zero */
tl_tensor *tl_native_embedding_dense_backward_cpu(tl_keyset ks, tl_tensor *grad_output, tl_tensor *indices,
                                                  int64_t num_weights, int64_t padding_idx, bool scale_grad_by_freq) {
    (void)ks;
    if (si_check_embedding_indices(indices, "embedding_backward")) return NULL;
    if (!tl__dtype_is_floating(grad_output->dtype)) {
        tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"embedding_dense_backward\" not implemented for '%s'",
                     tl_dtype_scalar_name(grad_output->dtype));
        return NULL;
    }
    if (num_weights < 0) {
        tl_set_error(TL_ERR_RUNTIME, "embedding_dense_backward: num_weights must be non-negative");
        return NULL;
    }
    const int64_t n = indices->numel, D = grad_output->ndim ? grad_output->sizes[grad_output->ndim - 1] : 1;
    if (grad_output->numel != n * D) {
        tl_set_error(TL_ERR_RUNTIME, "embedding_dense_backward: grad_output has %lld elements, expected %lld x %lld",
                     (long long)grad_output->numel, (long long)n, (long long)D);
        return NULL;
    }
    const tl_dtype ct = grad_output->dtype == TL_FLOAT64 ? TL_FLOAT64 : TL_FLOAT32;
    const int64_t wshape[2] = {num_weights, D};
    tl_tensor *ix = index_as_i64(indices), *gc = NULL, *g = NULL, *acc = NULL, *r = NULL;
    int64_t *count = NULL;
    if (!ix || !(g = tl_to_dtype(grad_output, ct, 0)) || !(gc = tl_contiguous(g)) || !(acc = tl_zeros(2, wshape, ct, TL_CPU)))
        goto done;
    const int64_t *idx = (const int64_t *)tl__data(ix);
    for (int64_t i = 0; i < n; i++)
        if (idx[i] < 0 || idx[i] >= num_weights) {
            tl_set_error(TL_ERR_INDEX, "index out of range in self");
            goto done;
        }
    if (scale_grad_by_freq && n > 0) {
        if (!(count = calloc((size_t)(num_weights ? num_weights : 1), sizeof *count))) {
            tl_set_error(TL_ERR_MEMORY, "out of memory");
            goto done;
        }
        for (int64_t i = 0; i < n; i++) count[idx[i]]++;
    }
    for (int64_t i = 0; i < n; i++) {
        const int64_t w = idx[i];
        if (w == padding_idx) continue;
        const double scale = count ? 1.0 / (double)count[w] : 1.0;
        if (ct == TL_FLOAT64) {
            double *dst = (double *)tl__data(acc) + w * D;
            const double *src = (const double *)tl__data(gc) + i * D;
            for (int64_t k = 0; k < D; k++) dst[k] += src[k] * scale;
        } else {
            float *dst = (float *)tl__data(acc) + w * D;
            const float *src = (const float *)tl__data(gc) + i * D;
            const float fs = (float)scale;
            for (int64_t k = 0; k < D; k++) dst[k] += src[k] * fs;
        }
    }
    r = tl_to_dtype(acc, grad_output->dtype, 0);
done:
    free(count);
    tl_tensor_release(ix);
    tl_tensor_release(g);
    tl_tensor_release(gc);
    tl_tensor_release(acc);
    return r;
}

/* ------------------------------------------------------------- tril / triu */

static int tri_meta(tl_structured *s, tl_tensor *self, const char *name) {
    if (self->ndim < 2)
        return tl_set_error(TL_ERR_RUNTIME, "%s: input tensor must have at least 2 dimensions", name);
    return tl_structured_set_output(s, 0, self->ndim, self->sizes, NULL, self->dtype);
}

/* out[.., i, j] = keep(j - i) ? self[.., i, j] : 0 (zero bits are zero in every dtype) */
static int tri_impl(tl_tensor *self, int64_t k, int lower, tl_tensor *out) {
    if (out != self && si_check_no_overlap(out, self)) return -1;
    if (out->numel == 0) return 0;
    const int64_t nd = self->ndim, M = self->sizes[nd - 2], N = self->sizes[nd - 1], isz = tl__itemsize(self->dtype);
    const int64_t sr[2] = {self->strides[nd - 2] * isz, out->strides[nd - 2] * isz};
    const int64_t sc[2] = {self->strides[nd - 1] * isz, out->strides[nd - 1] * isz};
    int64_t st[2][TL_MAX_DIMS], pos[TL_MAX_DIMS] = {0}, off[2] = {0, 0};
    for (int64_t d = 0; d < nd - 2; d++) {
        st[0][d] = self->strides[d] * isz;
        st[1][d] = out->strides[d] * isz;
    }
    const int64_t *strides[2] = {st[0], st[1]};
    const int inplace = out == self;
    char *ps = tl__data(self), *po = tl__data(out);
    static const char zero[16];   /* one zero element of any dtype */
    do {
        for (int64_t i = 0; i < M; i++) {
            const char *srow = ps + off[0] + i * sr[0];
            char *orow = po + off[1] + i * sr[1];
            for (int64_t j = 0; j < N; j++) {
                const int keep = lower ? j - i <= k : j - i >= k;
                if (!keep) si_move(orow + j * sc[1], zero, isz);
                else if (!inplace) si_move(orow + j * sc[1], srow + j * sc[0], isz);
            }
        }
    } while (si_next(nd - 2, self->sizes, -1, pos, 2, strides, off));
    return 0;
}

int tl_meta_tril(tl_structured *s, tl_tensor *self, int64_t diagonal) {
    (void)diagonal;
    return tri_meta(s, self, "tril");
}

int tl_impl_tril_cpu(tl_structured *s, tl_tensor *self, int64_t diagonal, tl_tensor *out) {
    (void)s;
    return tri_impl(self, diagonal, 1, out);
}

int tl_meta_triu(tl_structured *s, tl_tensor *self, int64_t diagonal) {
    (void)diagonal;
    return tri_meta(s, self, "triu");
}

int tl_impl_triu_cpu(tl_structured *s, tl_tensor *self, int64_t diagonal, tl_tensor *out) {
    (void)s;
    return tri_impl(self, diagonal, 0, out);
}
