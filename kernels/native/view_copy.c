/* The *_copy operators (a view, then a contiguous clone: PyTorch's generated
 * CompositeViewCopyKernels.cpp), narrow_copy, the *_scatter operators (a
 * clone of self with src copied into one view of it: TensorShape.cpp) and
 * scalar_tensor. All are CompositeExplicitAutograd(NonFunctional), with the
 * derivatives of their views in yaml/derivatives.yaml. Messages are PyTorch's. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/alias.h"
#include "ops/alias_copy.h"
#include "ops/as_strided.h"
#include "ops/as_strided_copy.h"
#include "ops/clone.h"
#include "ops/copy.h"
#include "ops/diagonal.h"
#include "ops/diagonal_copy.h"
#include "ops/diagonal_scatter.h"
#include "ops/empty.h"
#include "ops/empty_permuted.h"
#include "ops/empty_strided.h"
#include "ops/expand.h"
#include "ops/expand_copy.h"
#include "ops/full.h"
#include "ops/narrow.h"
#include "ops/narrow_copy.h"
#include "ops/new_empty_strided.h"
#include "ops/permute.h"
#include "ops/permute_copy.h"
#include "ops/reshape.h"
#include "ops/scalar_tensor.h"
#include "ops/select.h"
#include "ops/select_scatter.h"
#include "ops/slice.h"
#include "ops/slice_scatter.h"
#include "ops/split_with_sizes.h"
#include "ops/split_with_sizes_copy.h"
#include "ops/squeeze.h"
#include "ops/squeeze_copy.h"
#include "ops/t.h"
#include "ops/t_copy.h"
#include "ops/transpose.h"
#include "ops/transpose_copy.h"
#include "ops/unbind.h"
#include "ops/unbind_copy.h"
#include "ops/unsqueeze.h"
#include "ops/unsqueeze_copy.h"
#include "ops/view_copy.h"
#include "tl_structured.h"
#include "tl_tensor.h"

/* a contiguous copy of the view v (v released) */
static tl_tensor *copied(tl_tensor *v) {
    if (!v) return NULL;
    tl_tensor *r = tl_ops_clone(v, TL_CONTIGUOUS_FORMAT);
    tl_tensor_release(v);
    return r;
}

/* every piece of a Tensor[] view result replaced by its contiguous copy */
static int copied_list(int rc, tl_tensor ***ret, int64_t *ret_len) {
    if (rc < 0) return rc;
    for (int64_t i = 0; i < *ret_len; i++) {
        (*ret)[i] = copied((*ret)[i]);
        if (!(*ret)[i]) {
            tl_tensor_list_free(*ret, *ret_len);
            *ret = NULL;
            return -1;
        }
    }
    return 0;
}

tl_tensor *tl_native_alias_copy(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    return copied(tl_ops_alias(self));
}

tl_tensor *tl_native_as_strided_copy_symint(tl_keyset ks, tl_tensor *self, const int64_t *size, int64_t size_len,
                                            const int64_t *stride, int64_t stride_len, int64_t storage_offset,
                                            bool storage_offset_has) {
    (void)ks;
    return copied(tl_ops_as_strided(self, size, size_len, stride, stride_len, storage_offset, storage_offset_has));
}

tl_tensor *tl_native_diagonal_copy(tl_keyset ks, tl_tensor *self, int64_t offset, int64_t dim1, int64_t dim2) {
    (void)ks;
    return copied(tl_ops_diagonal(self, offset, dim1, dim2));
}

tl_tensor *tl_native_expand_copy_symint(tl_keyset ks, tl_tensor *self, const int64_t *size, int64_t size_len,
                                        bool implicit) {
    (void)ks;
    return copied(tl_ops_expand(self, size, size_len, implicit));
}

tl_tensor *tl_native_permute_copy(tl_keyset ks, tl_tensor *self, const int64_t *dims, int64_t dims_len) {
    (void)ks;
    return copied(tl_ops_permute(self, dims, dims_len));
}

tl_tensor *tl_native_squeeze_copy(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    return copied(tl_ops_squeeze(self));
}

tl_tensor *tl_native_squeeze_copy_dim(tl_keyset ks, tl_tensor *self, int64_t dim) {
    (void)ks;
    return copied(tl_ops_squeeze_dim(self, dim));
}

tl_tensor *tl_native_squeeze_copy_dims(tl_keyset ks, tl_tensor *self, const int64_t *dim, int64_t dim_len) {
    (void)ks;
    return copied(tl_ops_squeeze_dims(self, dim, dim_len));
}

tl_tensor *tl_native_t_copy(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    return copied(tl_ops_t(self));
}

tl_tensor *tl_native_transpose_copy_int(tl_keyset ks, tl_tensor *self, int64_t dim0, int64_t dim1) {
    (void)ks;
    return copied(tl_ops_transpose_int(self, dim0, dim1));
}

tl_tensor *tl_native_unsqueeze_copy(tl_keyset ks, tl_tensor *self, int64_t dim) {
    (void)ks;
    return copied(tl_ops_unsqueeze(self, dim));
}

/* PyTorch: a size view cannot express is reshaped (a copy already) instead of refused */
tl_tensor *tl_native_view_copy_symint(tl_keyset ks, tl_tensor *self, const int64_t *size, int64_t size_len) {
    (void)ks;
    return copied(tl_ops_reshape(self, size, size_len));
}

int tl_native_split_with_sizes_copy_symint(tl_keyset ks, tl_tensor *self, const int64_t *split_sizes,
                                           int64_t split_sizes_len, int64_t dim, tl_tensor ***ret, int64_t *ret_len) {
    (void)ks;
    return copied_list(tl_ops_split_with_sizes(self, split_sizes, split_sizes_len, dim, ret, ret_len), ret, ret_len);
}

int tl_native_unbind_copy_int(tl_keyset ks, tl_tensor *self, int64_t dim, tl_tensor ***ret, int64_t *ret_len) {
    (void)ks;
    return copied_list(tl_ops_unbind_int(self, dim, ret, ret_len), ret, ret_len);
}

tl_tensor *tl_native_narrow_copy_dense_symint(tl_keyset ks, tl_tensor *self, int64_t dim, int64_t start,
                                              int64_t length) {
    (void)ks;
    return copied(tl_ops_narrow(self, dim, start, length));
}

/* ------------------------------------------------------------- scatters */

static void fmt_ints(char *buf, size_t n, const int64_t *v, int64_t len) {
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int64_t i = 0; i < len && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? ", " : "", (long long)v[i]);
    if (k < n) snprintf(buf + k, n - k, "]");
}

/* src copied into `slice` (a view of out); out released on failure */
static tl_tensor *scatter_into(tl_tensor *out, tl_tensor *slice, tl_tensor *src) {
    if (!slice) goto fail;
    bool same = slice->ndim == src->ndim;
    for (int64_t i = 0; same && i < src->ndim; i++) same = slice->sizes[i] == src->sizes[i];
    if (!same) {
        char a[256], b[256];
        fmt_ints(a, sizeof a, src->sizes, src->ndim);
        fmt_ints(b, sizeof b, slice->sizes, slice->ndim);
        tl_set_error(TL_ERR_RUNTIME, "expected src to have a size equal to the slice of self. src size = %s, slice size = %s",
                     a, b);
        goto fail;
    }
    tl_tensor *c = tl_ops_copy_(slice, src, false);
    if (!c) goto fail;
    tl_tensor_release(c);
    tl_tensor_release(slice);
    return out;
fail:
    tl_tensor_release(slice);
    tl_tensor_release(out);
    return NULL;
}

tl_tensor *tl_native_slice_scatter(tl_keyset ks, tl_tensor *self, tl_tensor *src, int64_t dim, int64_t start,
                                   bool start_has, int64_t end, bool end_has, int64_t step) {
    (void)ks;
    tl_tensor *out = tl_ops_clone(self, TL_PRESERVE_FORMAT);
    if (!out) return NULL;
    return scatter_into(out, tl_ops_slice_Tensor(out, dim, start, start_has, end, end_has, step), src);
}

tl_tensor *tl_native_select_scatter_symint(tl_keyset ks, tl_tensor *self, tl_tensor *src, int64_t dim, int64_t index) {
    (void)ks;
    tl_tensor *out = tl_ops_clone(self, TL_PRESERVE_FORMAT);
    if (!out) return NULL;
    return scatter_into(out, tl_ops_select_int(out, dim, index), src);
}

tl_tensor *tl_native_diagonal_scatter(tl_keyset ks, tl_tensor *self, tl_tensor *src, int64_t offset, int64_t dim1,
                                      int64_t dim2) {
    (void)ks;
    tl_tensor *out = tl_ops_clone(self, TL_PRESERVE_FORMAT);
    if (!out) return NULL;
    return scatter_into(out, tl_ops_diagonal(out, offset, dim1, dim2), src);
}

/* ---------------------------------------------------------- scalar_tensor */

/* a 0-dim tensor of the default dtype unless given (not the number's own type) */
tl_tensor *tl_native_scalar_tensor(tl_keyset ks, tl_scalar s_arg, tl_dtype dtype, int layout, int device,
                                   bool pin_memory, bool pin_memory_has) {
    (void)ks;
    const int64_t none = 0;
    if (dtype == TL_DTYPE_UNDEFINED) dtype = tl_get_default_dtype();
    return tl_ops_full(&none, 0, s_arg, dtype, layout, device, pin_memory, pin_memory_has);
}

/* ------------------------------------------- empty_permuted / new_empty_strided */

/* uninitialised, laid out in memory in physical_layout's order of dims: an
 * empty tensor of the permuted sizes, permuted back to the logical order */
tl_tensor *tl_native_empty_permuted_symint(tl_keyset ks, const int64_t *size, int64_t size_len,
                                           const int64_t *physical_layout, int64_t physical_layout_len, tl_dtype dtype,
                                           int layout, int device, bool pin_memory, bool pin_memory_has) {
    (void)ks;
    const int64_t dim = size_len;
    if (dim != physical_layout_len) {
        tl_set_error(TL_ERR_RUNTIME,
                     "Number of dimensions in size does not match the length of the physical_layout; i.e. len(size) = "
                     "%lld is not equal to len(physical_layout) = %lld",
                     (long long)dim, (long long)physical_layout_len);
        return NULL;
    }
    int64_t phys[TL_MAX_DIMS], inv[TL_MAX_DIMS];
    bool seen[TL_MAX_DIMS] = {false};
    if (dim > TL_MAX_DIMS) {
        tl_set_error(TL_ERR_RUNTIME, "empty_permuted: at most %d dims", TL_MAX_DIMS);
        return NULL;
    }
    for (int64_t i = 0; i < dim; i++) {
        const int64_t p = physical_layout[i];
        if (p < 0 || p >= dim) {
            tl_set_error(TL_ERR_RUNTIME,
                         "Dimension out of range (expected to be between 0 and %lld, but got %lld at index %lld).  NB: "
                         "negative dims not currently supported; file an issue if you want it.",
                         (long long)(dim - 1), (long long)p, (long long)i);
            return NULL;
        }
        if (seen[p]) {
            tl_set_error(TL_ERR_RUNTIME, "Duplicate dim not allowed");
            return NULL;
        }
        seen[p] = true;
        phys[i] = size[p];
        inv[p] = i;
    }
    tl_tensor *t = tl_ops_empty_memory_format(phys, dim, dtype, layout, device, pin_memory, pin_memory_has, -1);
    if (!t) return NULL;
    tl_tensor *r = tl_ops_permute(t, inv, dim);
    tl_tensor_release(t);
    return r;
}

tl_tensor *tl_native_new_empty_strided_symint(tl_keyset ks, tl_tensor *self, const int64_t *size, int64_t size_len,
                                              const int64_t *stride, int64_t stride_len, tl_dtype dtype, int layout,
                                              int device, bool pin_memory, bool pin_memory_has) {
    (void)ks;
    return tl_ops_empty_strided(size, size_len, stride, stride_len, dtype == TL_DTYPE_UNDEFINED ? self->dtype : dtype,
                                layout, device < 0 ? (int)self->device : device, pin_memory, pin_memory_has);
}
