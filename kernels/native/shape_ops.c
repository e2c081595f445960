/* Shape operators (yaml/native_functions.yaml, block "shape and
 * indexing operators"): cat (structured) and stack, which copy; split,
 * split_with_sizes, chunk, unbind, flatten, unflatten, narrow, hstack, vstack,
 * which decompose into views / cat through the entry points.
 *
 * split.Tensor, split_with_sizes and unbind are CompositeExplicitAutograd as in
 * PyTorch: their pieces are slice / select views made below autograd, and one
 * SplitBackward0 / SplitWithSizesBackward0 / UnbindBackward0 node (a Tensor[]
 * formula) covers them all; the other decompositions are
 * CompositeImplicitAutograd. docs/OPS_SHAPE_INDEX.md lists the differences. */
#include <stdlib.h>

#include "shape_index.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/cat.h"
#include "ops/chunk.h"
#include "ops/flatten.h"
#include "ops/hstack.h"
#include "ops/narrow.h"
#include "ops/reshape.h"
#include "ops/select.h"
#include "ops/slice.h"
#include "ops/split.h"
#include "ops/split_with_sizes.h"
#include "ops/stack.h"
#include "ops/unbind.h"
#include "ops/unflatten.h"
#include "ops/unsafe_split.h"
#include "ops/unsqueeze.h"
#include "ops/view.h"
#include "ops/vstack.h"
#include "tl_structured.h"

/* ------------------------------------------------------------------ cat */

/* PyTorch's legacy rule: 1-D empty tensors are skipped by the shape checks */
static int cat_skip(const tl_tensor *t) { return t->ndim == 1 && t->sizes[0] == 0; }

/* dim wrapped against the first tensor that is not skipped (legacy_cat_wrap_dim) */
static int64_t cat_wrap_dim(tl_tensor *const *ts, int64_t n, int64_t dim) {
    for (int64_t i = 0; i < n; i++)
        if (!cat_skip(ts[i])) return tl__wrap_dim(dim, ts[i]->ndim, 1);
    return dim;
}

int tl_meta_cat(tl_structured *s, tl_tensor *const *tensors, int64_t tensors_len, int64_t dim) {
    if (tensors_len == 0) return tl_set_error(TL_ERR_VALUE, "torch.cat(): expected a non-empty list of Tensors");
    for (int64_t i = 0; i < tensors_len; i++) {
        if (tensors[i]->ndim == 0)
            return tl_set_error(TL_ERR_RUNTIME, "zero-dimensional tensor (at position %lld) cannot be concatenated",
                                (long long)i);
        if (tensors[i]->device != tensors[0]->device)
            return tl_set_error(TL_ERR_RUNTIME, "Expected all tensors to be on the same device, but found at least "
                                                "two devices, %s and %s!",
                                tl__device_name(tensors[0]->device), tl__device_name(tensors[i]->device));
    }
    const int64_t d = cat_wrap_dim(tensors, tensors_len, dim);
    if (d < 0) return -1;
    tl_dtype dt = tl_result_type(tensors_len, (tl_tensor **)tensors);
    if (s->kind == TL_STRUCTURED_OUT && s->outputs[0]) {
        /* overlap refused before out= is resized (PyTorch checks after, but its
         * resize warning is immediate; here it would be left pending) */
        for (int64_t i = 0; i < tensors_len; i++)
            if (si_check_no_overlap(s->outputs[0], tensors[i])) return -1;
        const tl_dtype od = tl_tensor_dtype(s->outputs[0]);
        if (!tl_can_cast(dt, od))
            return tl_set_error(TL_ERR_TYPE, "torch.cat(): input types can't be cast to the desired output type %s",
                                tl_dtype_scalar_name(od));
        dt = od;
    }
    int64_t sizes[TL_MAX_DIMS] = {0};
    int64_t nd = 1;
    const tl_tensor *ref = NULL;
    for (int64_t i = 0; i < tensors_len; i++) {
        const tl_tensor *t = tensors[i];
        if (cat_skip(t)) continue;
        if (!ref) {
            ref = t;
            nd = t->ndim;
            memcpy(sizes, t->sizes, sizeof(int64_t) * (size_t)nd);
            sizes[d] = 0;
        }
        if (t->ndim != ref->ndim)
            return tl_set_error(TL_ERR_RUNTIME, "Tensors must have same number of dimensions: got %lld and %lld",
                                (long long)ref->ndim, (long long)t->ndim);
        for (int64_t k = 0; k < nd; k++)
            if (k != d && t->sizes[k] != ref->sizes[k])
                return tl_set_error(TL_ERR_RUNTIME, "Sizes of tensors must match except in dimension %lld. Expected "
                                                    "size %lld but got size %lld for tensor number %lld in the list.",
                                    (long long)d, (long long)ref->sizes[k], (long long)t->sizes[k], (long long)i);
        sizes[d] += t->sizes[d];
    }
    return tl_structured_set_output(s, 0, nd, sizes, NULL, dt);
}

typedef struct {
    char *out;
    int64_t row;              /* bytes of one outer row of out */
    int64_t n;
    char *const *src;         /* contiguous inputs */
    const int64_t *bytes;     /* bytes of one outer row of each input */
} cat_ctx;

static void cat_rows(int64_t b, int64_t e, void *p) {
    const cat_ctx *c = p;
    for (int64_t o = b; o < e; o++) {
        char *dst = c->out + o * c->row;
        for (int64_t i = 0; i < c->n; i++) {
            memcpy(dst, c->src[i] + o * c->bytes[i], (size_t)c->bytes[i]);
            dst += c->bytes[i];
        }
    }
}

/* the general path: copy (with conversion) into a slice of out per input */
static int cat_slices(tl_tensor *const *tensors, int64_t tensors_len, int64_t d, tl_tensor *out);

/* the overlap checks: -1 error, 1 nothing to write, 0 go on */
static int cat_prepare(tl_tensor *const *tensors, int64_t tensors_len, tl_tensor *out) {
    if (si_check_no_internal_overlap(out)) return -1;
    for (int64_t i = 0; i < tensors_len; i++)
        if (si_check_no_overlap(out, tensors[i])) return -1;
    return out->numel == 0;
}

int tl_impl_cat_out_cpu(tl_structured *s, tl_tensor *const *tensors, int64_t tensors_len, int64_t dim, tl_tensor *out) {
    (void)s;
    const int go = cat_prepare(tensors, tensors_len, out);
    if (go) return go < 0 ? -1 : 0;
    const int64_t d = cat_wrap_dim(tensors, tensors_len, dim);
    /* fast path: contiguous everywhere, one dtype: rows of bytes */
    int fast = tl_tensor_is_contiguous(out) && tensors_len <= 4096;
    for (int64_t i = 0; fast && i < tensors_len; i++)
        fast = cat_skip(tensors[i]) || (tensors[i]->dtype == out->dtype && tl_tensor_is_contiguous(tensors[i]));
    if (fast) {
        int64_t outer = 1, n = 0;
        for (int64_t k = 0; k < d; k++) outer *= out->sizes[k];
        char *src[4096];
        int64_t bytes[4096];
        const int64_t isz = tl__itemsize(out->dtype);
        for (int64_t i = 0; i < tensors_len; i++) {
            if (cat_skip(tensors[i]) || tensors[i]->numel == 0) continue;
            src[n] = tl__data(tensors[i]);
            bytes[n++] = tensors[i]->numel / outer * isz;
        }
        cat_ctx c = {tl__data(out), out->numel / outer * isz, n, src, bytes};
        int64_t grain = (1 << 16) / (c.row > 0 ? c.row : 1);
        tl_parallel_for(outer, grain > 0 ? grain : 1, cat_rows, &c);
        return 0;
    }
    return cat_slices(tensors, tensors_len, d, out);
}

/* cat on CUDA (yaml: CUDA: cat_out_cuda): the general path, each slice
 * written by the device's copy kernel */
int tl_impl_cat_out_cuda(tl_structured *s, tl_tensor *const *tensors, int64_t tensors_len, int64_t dim, tl_tensor *out) {
    (void)s;
    const int go = cat_prepare(tensors, tensors_len, out);
    if (go) return go < 0 ? -1 : 0;
    return cat_slices(tensors, tensors_len, cat_wrap_dim(tensors, tensors_len, dim), out);
}

static int cat_slices(tl_tensor *const *tensors, int64_t tensors_len, int64_t d, tl_tensor *out) {
    int64_t off = 0;
    for (int64_t i = 0; i < tensors_len; i++) {
        if (cat_skip(tensors[i])) continue;
        const int64_t len = tensors[i]->sizes[d];
        tl_tensor *v = tl_slice(out, d, off, off + len, 1);
        int rc = v ? tl_copy_(v, tensors[i]) : -1;
        tl_tensor_release(v);
        if (rc) return -1;
        off += len;
    }
    return 0;
}

/* ---------------------------------------------------------------- stack */

/* tensors unsqueezed at the wrapped dim, after PyTorch's checks */
static tl_tensor **stack_inputs(tl_tensor *const *tensors, int64_t n, int64_t dim, int64_t *wdim) {
    char b1[256], b2[256];
    if (n == 0) {
        tl_set_error(TL_ERR_RUNTIME, "stack expects a non-empty TensorList");
        return NULL;
    }
    *wdim = tl__wrap_dim(dim, tensors[0]->ndim + 1, 1);
    if (*wdim < 0) return NULL;
    for (int64_t i = 1; i < n; i++) {
        const tl_tensor *a = tensors[0], *b = tensors[i];
        if (a->ndim != b->ndim || memcmp(a->sizes, b->sizes, sizeof(int64_t) * (size_t)a->ndim) != 0) {
            tl_set_error(TL_ERR_RUNTIME, "stack expects each tensor to be equal size, but got %s at entry 0 and %s at entry %lld",
                         si_shape_str(b1, sizeof b1, a->ndim, a->sizes), si_shape_str(b2, sizeof b2, b->ndim, b->sizes),
                         (long long)i);
            return NULL;
        }
    }
    tl_tensor **us = calloc((size_t)n, sizeof *us);
    if (!us) {
        tl_set_error(TL_ERR_MEMORY, "out of memory");
        return NULL;
    }
    for (int64_t i = 0; i < n; i++)
        if (!(us[i] = tl_unsqueeze(tensors[i], *wdim))) {
            tl_tensor_list_free(us, n);
            return NULL;
        }
    return us;
}

tl_tensor *tl_native_stack(tl_keyset ks, tl_tensor *const *tensors, int64_t tensors_len, int64_t dim) {
    (void)ks;
    int64_t wdim;
    tl_tensor **us = stack_inputs(tensors, tensors_len, dim, &wdim);
    if (!us) return NULL;
    tl_tensor *r = tl_ops_cat(us, tensors_len, wdim);
    tl_tensor_list_free(us, tensors_len);
    return r;
}

tl_tensor *tl_native_stack_out(tl_keyset ks, tl_tensor *const *tensors, int64_t tensors_len, int64_t dim, tl_tensor *out) {
    (void)ks;
    int64_t wdim;
    tl_tensor **us = stack_inputs(tensors, tensors_len, dim, &wdim);
    if (!us) return NULL;
    tl_tensor *r = tl_ops_cat_out(us, tensors_len, wdim, out);
    tl_tensor_list_free(us, tensors_len);
    return r;
}

/* hstack / vstack (+ .out when out is not NULL): PyTorch's atleast_1d /
 * atleast_2d, then cat / cat.out */
static tl_tensor *cat_atleast(tl_tensor *const *tensors, int64_t n, int64_t min_dim, const char *name,
                              tl_tensor *out) {
    if (n == 0) {
        tl_set_error(TL_ERR_RUNTIME, "%s expects a non-empty TensorList", name);
        return NULL;
    }
    tl_tensor **rep = calloc((size_t)n, sizeof *rep);
    if (!rep) {
        tl_set_error(TL_ERR_MEMORY, "out of memory");
        return NULL;
    }
    tl_tensor *r = NULL;
    for (int64_t i = 0; i < n; i++) {
        tl_tensor *t = tensors[i];
        const int64_t one[2] = {1, 1};
        if (t->ndim == 0) rep[i] = tl_ops_reshape(t, one, min_dim);
        else if (t->ndim == 1 && min_dim == 2) rep[i] = tl_ops_unsqueeze(t, 0);
        else {
            tl_tensor_retain(t);
            rep[i] = t;
        }
        if (!rep[i]) goto done;
    }
    const int64_t cat_dim = min_dim == 1 && rep[0]->ndim > 1 ? 1 : 0;
    r = out ? tl_ops_cat_out(rep, n, cat_dim, out) : tl_ops_cat(rep, n, cat_dim);
done:
    tl_tensor_list_free(rep, n);
    return r;
}

tl_tensor *tl_native_hstack(tl_keyset ks, tl_tensor *const *tensors, int64_t tensors_len) {
    (void)ks;
    return cat_atleast(tensors, tensors_len, 1, "hstack", NULL);
}

tl_tensor *tl_native_vstack(tl_keyset ks, tl_tensor *const *tensors, int64_t tensors_len) {
    (void)ks;
    return cat_atleast(tensors, tensors_len, 2, "vstack", NULL);
}

tl_tensor *tl_native_hstack_out(tl_keyset ks, tl_tensor *const *tensors, int64_t tensors_len, tl_tensor *out) {
    (void)ks;
    return cat_atleast(tensors, tensors_len, 1, "hstack", out);
}

tl_tensor *tl_native_vstack_out(tl_keyset ks, tl_tensor *const *tensors, int64_t tensors_len, tl_tensor *out) {
    (void)ks;
    return cat_atleast(tensors, tensors_len, 2, "vstack", out);
}

/* ------------------------------------------------------- split and views */

/* pieces of self along dim of the given lengths, as slice views (entry points,
 * called below autograd: the split node records them) */
static int split_pieces(tl_tensor *self, int64_t dim, const int64_t *lens, int64_t n, tl_tensor ***ret, int64_t *ret_len) {
    tl_tensor **out = calloc((size_t)(n > 0 ? n : 1), sizeof *out);
    if (!out) return tl_set_error(TL_ERR_MEMORY, "out of memory");
    int64_t start = 0;
    for (int64_t i = 0; i < n; i++) {
        out[i] = tl_ops_slice_Tensor(self, dim, start, true, start + lens[i], true, 1);
        if (!out[i]) {
            tl_tensor_list_free(out, n);
            return -1;
        }
        start += lens[i];
    }
    *ret = out;
    *ret_len = n;
    return 0;
}

int tl_native_split(tl_keyset ks, tl_tensor *self, int64_t split_size, int64_t dim, tl_tensor ***ret, int64_t *ret_len) {
    (void)ks;
    if (self->ndim == 0) return tl_set_error(TL_ERR_RUNTIME, "split expects at least a 1-dimensional tensor");
    if (split_size < 0)
        return tl_set_error(TL_ERR_RUNTIME, "split expects split_size be non-negative, but got split_size=%lld",
                            (long long)split_size);
    const int64_t d = tl__wrap_dim(dim, self->ndim, 0);
    if (d < 0) return -1;
    const int64_t size = self->sizes[d];
    if (split_size == 0 && size != 0)
        return tl_set_error(TL_ERR_RUNTIME, "split_size can only be 0 if dimension size is 0, but got dimension size of %lld",
                            (long long)size);
    int64_t n = split_size ? (size + split_size - 1) / split_size : 1;
    if (n < 1) n = 1;
    int64_t *lens = malloc(sizeof(int64_t) * (size_t)n);
    if (!lens) return tl_set_error(TL_ERR_MEMORY, "out of memory");
    for (int64_t i = 0; i < n; i++) lens[i] = i < n - 1 ? split_size : size - split_size * (n - 1);
    int rc = split_pieces(self, d, lens, n, ret, ret_len);
    free(lens);
    return rc;
}

int tl_native_split_with_sizes(tl_keyset ks, tl_tensor *self, const int64_t *split_sizes, int64_t split_sizes_len,
                               int64_t dim, tl_tensor ***ret, int64_t *ret_len) {
    (void)ks;
    char b[256];
    if (self->ndim == 0) return tl_set_error(TL_ERR_RUNTIME, "split expects at least a 1-dimensional tensor");
    const int64_t d = tl__wrap_dim(dim, self->ndim, 0);
    if (d < 0) return -1;
    int64_t sum = 0;
    for (int64_t i = 0; i < split_sizes_len; i++) {
        if (split_sizes[i] < 0)
            return tl_set_error(TL_ERR_RUNTIME, "split_with_sizes expects split_sizes have only non-negative entries, "
                                                "but got split_sizes=%s",
                                si_shape_str(b, sizeof b, split_sizes_len, split_sizes));
        sum += split_sizes[i];
    }
    if (sum != self->sizes[d])
        return tl_set_error(TL_ERR_RUNTIME, "split_with_sizes expects split_sizes to sum exactly to %lld (input tensor's "
                                            "size at dimension %lld), but got split_sizes=%s",
                            (long long)self->sizes[d], (long long)d, si_shape_str(b, sizeof b, split_sizes_len, split_sizes));
    return split_pieces(self, d, split_sizes, split_sizes_len, ret, ret_len);
}

/* split.sizes: PyTorch's split_symint, which forwards to split_with_sizes */
int tl_native_split_sizes(tl_keyset ks, tl_tensor *self, const int64_t *split_size, int64_t split_size_len, int64_t dim,
                          tl_tensor ***ret, int64_t *ret_len) {
    (void)ks;
    return tl_ops_split_with_sizes(self, split_size, split_size_len, dim, ret, ret_len);
}

/* chunk's pieces: split (unsafe_split for unsafe_chunk) into pieces of
 * ceil(size / chunks); `chunks` empty pieces of an empty dim */
int tl__chunk_pieces(tl_tensor *self, int64_t chunks, int64_t dim, bool unsafe, tl_tensor ***ret, int64_t *ret_len) {
    if (self->ndim == 0) return tl_set_error(TL_ERR_RUNTIME, "chunk expects at least a 1-dimensional tensor");
    if (chunks <= 0)
        return tl_set_error(TL_ERR_RUNTIME, "chunk expects `chunks` to be greater than 0, got: %lld", (long long)chunks);
    const int64_t d = tl__wrap_dim(dim, self->ndim, 0);
    if (d < 0) return -1;
    const int64_t size = self->sizes[d], split = (size + chunks - 1) / chunks;
    if (split == 0 && size == 0) {
        /* split would lose the number of chunks: `chunks` empty pieces */
        int64_t *lens = calloc((size_t)chunks, sizeof(int64_t));
        if (!lens) return tl_set_error(TL_ERR_MEMORY, "out of memory");
        int rc = tl_ops_split_with_sizes(self, lens, chunks, d, ret, ret_len);
        free(lens);
        return rc;
    }
    return unsafe ? tl_ops_unsafe_split_Tensor(self, split, d, ret, ret_len)
                  : tl_ops_split_Tensor(self, split, d, ret, ret_len);
}

int tl_native_chunk(tl_keyset ks, tl_tensor *self, int64_t chunks, int64_t dim, tl_tensor ***ret, int64_t *ret_len) {
    (void)ks;
    return tl__chunk_pieces(self, chunks, dim, false, ret, ret_len);
}

int tl_native_unbind(tl_keyset ks, tl_tensor *self, int64_t dim, tl_tensor ***ret, int64_t *ret_len) {
    (void)ks;
    if (self->ndim == 0)
        return tl_set_error(TL_ERR_INDEX, "Dimension specified as %lld but tensor has no dimensions", (long long)dim);
    const int64_t d = tl__wrap_dim(dim, self->ndim, 0);
    if (d < 0) return -1;
    const int64_t n = self->sizes[d];
    tl_tensor **out = calloc((size_t)(n ? n : 1), sizeof *out);
    if (!out) return tl_set_error(TL_ERR_MEMORY, "out of memory");
    for (int64_t i = 0; i < n; i++)
        if (!(out[i] = tl_ops_select_int(self, d, i))) {
            tl_tensor_list_free(out, n);
            return -1;
        }
    *ret = out;
    *ret_len = n;
    return 0;
}

tl_tensor *tl_native_flatten(tl_keyset ks, tl_tensor *self, int64_t start_dim, int64_t end_dim) {
    (void)ks;
    const int64_t s = tl__wrap_dim(start_dim, self->ndim, 1), e = s < 0 ? -1 : tl__wrap_dim(end_dim, self->ndim, 1);
    if (s < 0 || e < 0) return NULL;
    if (s > e) {
        tl_set_error(TL_ERR_RUNTIME, "flatten() has invalid args: start_dim cannot come after end_dim");
        return NULL;
    }
    const int64_t one = 1;
    if (self->ndim == 0) return tl_ops_reshape(self, &one, 1);
    if (s == e) {
        tl_tensor_retain(self);
        return self;
    }
    int64_t shape[TL_MAX_DIMS], k = 0, mid = 1;
    for (int64_t i = 0; i < s; i++) shape[k++] = self->sizes[i];
    for (int64_t i = s; i <= e; i++) mid *= self->sizes[i];
    shape[k++] = mid;
    for (int64_t i = e + 1; i < self->ndim; i++) shape[k++] = self->sizes[i];
    return tl_ops_reshape(self, shape, k);
}

tl_tensor *tl_native_unflatten(tl_keyset ks, tl_tensor *self, int64_t dim, const int64_t *sizes, int64_t sizes_len) {
    (void)ks;
    char b[256];
    const int64_t d = tl__wrap_dim(dim, self->ndim, 1);
    if (d < 0) return NULL;
    if (sizes_len == 0) {
        tl_set_error(TL_ERR_RUNTIME, "unflatten: sizes must be non-empty");
        return NULL;
    }
    if (self->ndim + sizes_len - 1 > TL_MAX_DIMS) {
        tl_set_error(TL_ERR_RUNTIME, "unflatten: too many dimensions");
        return NULL;
    }
    /* PyTorch's infer_size over the size of dim */
    const int64_t numel = self->ndim ? self->sizes[d] : 1;
    int64_t known = 1, infer = -1, shape[TL_MAX_DIMS], k = 0;
    for (int64_t i = 0; i < sizes_len; i++) {
        if (sizes[i] == -1) {
            if (infer >= 0) {
                tl_set_error(TL_ERR_RUNTIME, "only one dimension can be inferred");
                return NULL;
            }
            infer = i;
        } else if (sizes[i] >= 0) {
            known *= sizes[i];
        } else {
            tl_set_error(TL_ERR_RUNTIME, "invalid shape dimension %lld", (long long)sizes[i]);
            return NULL;
        }
    }
    if (!(numel == known || (infer >= 0 && known > 0 && numel % known == 0))) {
        tl_set_error(TL_ERR_RUNTIME, "shape '%s' is invalid for input of size %lld", si_shape_str(b, sizeof b, sizes_len, sizes),
                     (long long)numel);
        return NULL;
    }
    for (int64_t i = 0; i < d; i++) shape[k++] = self->sizes[i];
    for (int64_t i = 0; i < sizes_len; i++) shape[k++] = i == infer ? (known ? numel / known : 0) : sizes[i];
    for (int64_t i = d + 1; i < self->ndim; i++) shape[k++] = self->sizes[i];
    return tl_ops_view(self, shape, k);
}

tl_tensor *tl_native_narrow(tl_keyset ks, tl_tensor *self, int64_t dim, int64_t start, int64_t length) {
    (void)ks;
    if (self->ndim == 0) {
        tl_set_error(TL_ERR_RUNTIME, "narrow() cannot be applied to a 0-dim tensor.");
        return NULL;
    }
    if (length < 0) {
        tl_set_error(TL_ERR_RUNTIME, "narrow(): length must be non-negative.");
        return NULL;
    }
    const int64_t d = tl__wrap_dim(dim, self->ndim, 0);
    if (d < 0) return NULL;
    const int64_t cur = self->sizes[d];
    if (start < -cur || start > cur) {
        tl_set_error(TL_ERR_INDEX, "start out of range (expected to be in range of [%lld, %lld], but got %lld)",
                     (long long)-cur, (long long)cur, (long long)start);
        return NULL;
    }
    if (start < 0) start += cur;
    if (start > cur - length) {
        tl_set_error(TL_ERR_RUNTIME, "start (%lld) + length (%lld) exceeds dimension size (%lld).", (long long)start,
                     (long long)length, (long long)cur);
        return NULL;
    }
    return tl_ops_slice_Tensor(self, d, start, true, start + length, true, 1);
}
