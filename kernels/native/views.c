/* View operators (yaml/native_functions.yaml: view, reshape, transpose.int, t,
 * permute, expand, squeeze*, unsqueeze, select.int, slice.Tensor, as_strided,
 * alias). Hand-written kernels over the runtime's views (tl_tensor.h); every
 * result shares self's storage and version counter. The signatures are fixed by
 * generated/include/tl_ops.h (docs/OPERATOR_ABI.md). */
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/_unsafe_view.h"
#include "ops/alias.h"
#include "ops/as_strided.h"
#include "ops/clone.h"
#include "ops/copy.h"
#include "ops/expand.h"
#include "ops/permute.h"
#include "ops/reshape.h"
#include "ops/select.h"
#include "ops/select_backward.h"
#include "ops/slice.h"
#include "ops/slice_backward.h"
#include "ops/squeeze.h"
#include "ops/t.h"
#include "ops/transpose.h"
#include "ops/unsqueeze.h"
#include "ops/view.h"
#include "ops/zeros.h"

tl_tensor *tl_native_view(tl_keyset ks, tl_tensor *self, const int64_t *size, int64_t size_len) {
    (void)ks;
    return tl_view(self, size_len, size);
}

/* CompositeImplicitAutograd: a view when the strides allow it, else a copy.
 * It decomposes through the entry points (view, or clone then _unsafe_view)
 * so that autograd records its parts (ViewBackward0, or CloneBackward0 then
 * UnsafeViewBackward0), as PyTorch's. */
tl_tensor *tl_native_reshape(tl_keyset ks, tl_tensor *self, const int64_t *shape, int64_t shape_len) {
    (void)ks;
    tl_tensor *probe = tl_view(self, shape_len, shape); /* metadata only: can it be a view? */
    if (probe) {
        tl_tensor_release(probe);
        return tl_ops_view(self, shape, shape_len);
    }
    tl_clear_error();
    tl_tensor *c = tl_ops_clone(self, TL_CONTIGUOUS_FORMAT);
    if (!c) return NULL;
    tl_tensor *r = tl_ops__unsafe_view(c, shape, shape_len);
    tl_tensor_release(c);
    return r;
}

tl_tensor *tl_native_transpose(tl_keyset ks, tl_tensor *self, int64_t dim0, int64_t dim1) {
    (void)ks;
    return tl_transpose(self, dim0, dim1);
}

tl_tensor *tl_native_t(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    int64_t nd = tl_tensor_ndim(self);
    if (nd > 2) {
        tl_set_error(TL_ERR_RUNTIME, "t() expects a tensor with <= 2 dimensions, but self is %lldD", (long long)nd);
        return NULL;
    }
    return nd < 2 ? tl_alias(self) : tl_transpose(self, 0, 1);
}

tl_tensor *tl_native_permute(tl_keyset ks, tl_tensor *self, const int64_t *dims, int64_t dims_len) {
    (void)ks;
    return tl_permute(self, dims_len, dims);
}

tl_tensor *tl_native_expand(tl_keyset ks, tl_tensor *self, const int64_t *size, int64_t size_len, bool implicit) {
    (void)ks;
    (void)implicit;
    return tl_expand(self, size_len, size);
}

/* squeeze the dims flagged in drop[] (only those of size 1) */
static tl_tensor *squeeze_mask(tl_tensor *self, const char *drop) {
    int64_t nd = tl_tensor_ndim(self), k = 0;
    const int64_t *sz = tl_tensor_sizes(self), *st = tl_tensor_strides(self);
    int64_t sizes[TL_MAX_DIMS], strides[TL_MAX_DIMS];
    for (int64_t i = 0; i < nd; i++) {
        if (drop[i] && sz[i] == 1) continue;
        sizes[k] = sz[i];
        strides[k] = st[i];
        k++;
    }
    return tl_as_strided(self, k, sizes, strides, tl_tensor_storage_offset(self));
}

tl_tensor *tl_native_squeeze(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    char drop[TL_MAX_DIMS];
    memset(drop, 1, sizeof drop);
    return squeeze_mask(self, drop);
}

tl_tensor *tl_native_squeeze_dim(tl_keyset ks, tl_tensor *self, int64_t dim) {
    (void)ks;
    return tl_squeeze_dim(self, dim);
}

tl_tensor *tl_native_squeeze_dims(tl_keyset ks, tl_tensor *self, const int64_t *dim, int64_t dim_len) {
    (void)ks;
    char drop[TL_MAX_DIMS] = {0};
    int64_t nd = tl_tensor_ndim(self);
    for (int64_t i = 0; i < dim_len; i++) {
        int64_t d = tl__wrap_dim(dim[i], nd, 1);
        if (d < 0) return NULL;
        if (nd == 0) continue;
        if (drop[d]) {
            tl_set_error(TL_ERR_RUNTIME, "dim %lld appears multiple times in the list of dims", (long long)d);
            return NULL;
        }
        drop[d] = 1;
    }
    return squeeze_mask(self, drop);
}

tl_tensor *tl_native_unsqueeze(tl_keyset ks, tl_tensor *self, int64_t dim) {
    (void)ks;
    return tl_unsqueeze(self, dim);
}

tl_tensor *tl_native_select(tl_keyset ks, tl_tensor *self, int64_t dim, int64_t index) {
    (void)ks;
    return tl_select(self, dim, index);
}

tl_tensor *tl_native_slice(tl_keyset ks, tl_tensor *self, int64_t dim, int64_t start, bool start_has, int64_t end,
                           bool end_has, int64_t step) {
    (void)ks;
    return tl_slice(self, dim, start_has ? start : 0, end_has ? end : INT64_MAX, step);
}

tl_tensor *tl_native_as_strided_tensorimpl(tl_keyset ks, tl_tensor *self, const int64_t *size, int64_t size_len,
                                           const int64_t *stride, int64_t stride_len, int64_t storage_offset,
                                           bool storage_offset_has) {
    (void)ks;
    if (size_len != stride_len) {
        tl_set_error(TL_ERR_RUNTIME, "mismatch in length of strides and shape");
        return NULL;
    }
    return tl_as_strided(self, size_len, size, stride,
                         storage_offset_has ? storage_offset : tl_tensor_storage_offset(self));
}

tl_tensor *tl_native_alias(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    return tl_alias(self);
}

/* Backward helpers of slice / select: the gradient scattered into zeros of the
 * input's shape. Composed of entry points (zeros, slice / select, copy_) so
 * that autograd records them under create_graph. */
static tl_tensor *scatter_into_zeros(tl_tensor *grad, const int64_t *sizes, int64_t ndim, tl_tensor *(*view)(tl_tensor *, void *),
                                     void *ctx) {
    tl_tensor *gi = tl_ops_zeros(sizes, ndim, tl_tensor_dtype(grad), -1, (int)tl__device_of(grad), false, false);
    if (!gi) return NULL;
    tl_tensor *v = view(gi, ctx);
    tl_tensor *r = v ? tl_ops_copy_(v, grad, false) : NULL;
    tl_tensor_release(v);
    if (!r) {
        tl_tensor_release(gi);
        return NULL;
    }
    tl_tensor_release(r);
    return gi;
}

typedef struct { int64_t dim, start, end, step; } slice_args;

static tl_tensor *slice_view(tl_tensor *t, void *ctx) {
    slice_args *a = (slice_args *)ctx;
    return tl_ops_slice_Tensor(t, a->dim, a->start, true, a->end, true, a->step);
}

static tl_tensor *select_view(tl_tensor *t, void *ctx) {
    int64_t *a = (int64_t *)ctx;
    return tl_ops_select_int(t, a[0], a[1]);
}

tl_tensor *tl_native_slice_backward(tl_keyset ks, tl_tensor *grad_output, const int64_t *input_sizes,
                                    int64_t input_sizes_len, int64_t dim, int64_t start, int64_t end, int64_t step) {
    (void)ks;
    slice_args a = {dim, start, end, step};
    return scatter_into_zeros(grad_output, input_sizes, input_sizes_len, slice_view, &a);
}

tl_tensor *tl_native_select_backward(tl_keyset ks, tl_tensor *grad_output, const int64_t *input_sizes,
                                     int64_t input_sizes_len, int64_t dim, int64_t index) {
    (void)ks;
    int64_t a[2] = {dim, index};
    return scatter_into_zeros(grad_output, input_sizes, input_sizes_len, select_view, a);
}
