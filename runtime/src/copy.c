/* copy_, clone, contiguous, to, fill_, item, resize_ (tl_tensor.h). */
#include <stdlib.h>

#include "tl_cuda.h"
#include "tl_internal.h"

typedef struct {
    tl_loop_fn loop;
    char *dst, *src;
    int64_t ds, ss;
} flat_ctx;

static void flat_range(int64_t b, int64_t e, void *p) {
    flat_ctx *c = p;
    char *data[2] = {c->dst + b * c->ds, c->src + b * c->ss};
    int64_t strides[2] = {c->ds, c->ss};
    c->loop(data, strides, e - b, NULL);
}

static int same_geometry(const tl_tensor *a, const tl_tensor *b) {
    return a->ndim == b->ndim && memcmp(a->sizes, b->sizes, sizeof(int64_t) * (size_t)a->ndim) == 0 &&
           memcmp(a->strides, b->strides, sizeof(int64_t) * (size_t)a->ndim) == 0;
}

/* do src and dst share bytes (conservatively, by address range)? */
static int may_overlap(const tl_tensor *dst, const tl_tensor *src) {
    if (dst->storage != src->storage || !dst->storage->data) return 0;
    if (dst->numel == 0 || src->numel == 0) return 0;
    int64_t id = tl_dtype_itemsize(dst->dtype), is = tl_dtype_itemsize(src->dtype);
    char *a = tl__data(dst), *b = tl__data(src);
    int64_t ea = id, eb = is;
    for (int64_t k = 0; k < dst->ndim; k++) ea += (dst->sizes[k] - 1) * dst->strides[k] * id;
    for (int64_t k = 0; k < src->ndim; k++) eb += (src->sizes[k] - 1) * src->strides[k] * is;
    return a < b + eb && b < a + ea;
}

int tl__copy_impl(tl_tensor *dst, const tl_tensor *src) {
    if (dst == src) return 0;
    if (tl__dtype_is_complex(src->dtype) && !tl__dtype_is_complex(dst->dtype))
        TL_WARN_ONCE("Casting complex values to real discards the imaginary part");
    if (src->device == TL_META && dst->device != TL_META)
        return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "Cannot copy out of meta tensor; no data!");
    if (TL_UNLIKELY(dst->device == TL_CUDA || src->device == TL_CUDA)) return tl__cuda_copy(dst, src);
    tl_tensor *tmp = NULL;
    if (dst->device == TL_META && src->device != TL_META && !(src->ndim == 0 && src->device == TL_CPU)) {
        /* copying real data into a meta tensor checks shapes only: use src's metadata on meta */
        tmp = tl_empty(src->ndim, src->sizes, src->dtype, TL_META);
        if (!tmp) return -1;
        src = tmp;
    }
    if (dst->device == TL_CPU && src->device == TL_CPU && may_overlap(dst, src)) {
        if (dst->dtype == src->dtype && tl__data(dst) == tl__data(src) && same_geometry(dst, src)) return 0;
        /* copy through a temporary so overlapping views copy correctly */
        tmp = tl_empty(src->ndim, src->sizes, src->dtype, TL_CPU);
        if (!tmp) return -1;
        if (tl__copy_impl(tmp, src) != 0) { tl_tensor_release(tmp); return -1; }
        src = tmp;
    }
    int rc = 0;
    /* fast path: same shape, both laid out the same dense way */
    if (dst->device == TL_CPU && src->device == TL_CPU && same_geometry(dst, src) &&
        tl_tensor_is_non_overlapping_and_dense(dst) && dst->numel > 0) {
        flat_ctx c = {TL_COPY_LOOP(dst->dtype, src->dtype), tl__data(dst), tl__data(src),
                      tl_dtype_itemsize(dst->dtype), tl_dtype_itemsize(src->dtype)};
        tl_parallel_for(dst->numel, tl_get_grain_size(), flat_range, &c);
    } else {
        tl_iter *it = tl_iter_new(TL_ITER_NO_BROADCAST_OUTPUT | TL_ITER_CHECK_OVERLAP);
        if (!it) rc = -1;
        if (rc == 0) rc = tl_iter_add_output(it, dst);
        if (rc == 0) rc = tl_iter_add_input(it, src);
        if (rc == 0) rc = tl_iter_build(it);
        if (rc == 0 && !tl_iter_is_meta(it))
            rc = tl_iter_for_each(it, TL_COPY_LOOP(dst->dtype, src->dtype), NULL);
        tl_iter_free(it);
    }
    tl_tensor_release(tmp);
    return rc;
}

int tl_copy_(tl_tensor *dst, const tl_tensor *src) {
    if (!dst || !src) return tl_set_error(TL_ERR_RUNTIME, "copy_: undefined tensor");
    if (tl__copy_impl(dst, src) != 0) return -1;
    tl_tensor_bump_version(dst);
    return 0;
}

tl_tensor *tl_clone(const tl_tensor *t) {
    tl_tensor *c = tl_empty_like(t);
    if (!c) return NULL;
    if (tl__copy_impl(c, t) != 0) { tl_tensor_release(c); return NULL; }
    return c;
}

tl_tensor *tl_contiguous(const tl_tensor *t) {
    if (tl_tensor_is_contiguous(t)) { tl_tensor_retain((tl_tensor *)t); return (tl_tensor *)t; }
    tl_tensor *c = tl_empty(t->ndim, t->sizes, t->dtype, tl__device_of(t));
    if (!c) return NULL;
    if (tl__copy_impl(c, t) != 0) { tl_tensor_release(c); return NULL; }
    return c;
}

tl_tensor *tl_to_dtype(const tl_tensor *t, tl_dtype dtype, int copy) {
    if (!tl_dtype_valid(dtype)) { tl_set_error(TL_ERR_VALUE, "invalid dtype %d", (int)dtype); return NULL; }
    if (dtype == t->dtype && !copy) { tl_tensor_retain((tl_tensor *)t); return (tl_tensor *)t; }
    tl_tensor *c = tl_tensor_is_non_overlapping_and_dense(t)
                       ? tl_empty_strided(t->ndim, t->sizes, t->strides, dtype, tl__device_of(t))
                       : tl_empty(t->ndim, t->sizes, dtype, tl__device_of(t));
    if (!c) return NULL;
    if (tl__copy_impl(c, t) != 0) { tl_tensor_release(c); return NULL; }
    return c;
}

tl_tensor *tl_to_device(const tl_tensor *t, tl_device_type device, int copy) {
    if (tl__device_type_of((int)device) == TL_CUDA && tl__device_index_of((int)device) < 0)
        device = (tl_device_type)tl__device_pack(TL_CUDA, tl_cuda_current_device());   /* "cuda": the current one */
    if (device == tl__device_of(t) && !copy) { tl_tensor_retain((tl_tensor *)t); return (tl_tensor *)t; }
    if (t->device == TL_META && device != TL_META) {
        tl_set_error(TL_ERR_NOT_IMPLEMENTED, "Cannot copy out of meta tensor; no data!");
        return NULL;
    }
    tl_tensor *c = tl_tensor_is_non_overlapping_and_dense(t)
                       ? tl_empty_strided(t->ndim, t->sizes, t->strides, t->dtype, device)
                       : tl_empty(t->ndim, t->sizes, t->dtype, device);
    if (!c) return NULL;
    if (tl__copy_impl(c, t) != 0) { tl_tensor_release(c); return NULL; }
    return c;
}

int tl_fill_(tl_tensor *t, tl_scalar value) {
    if (!t) return tl_set_error(TL_ERR_RUNTIME, "fill_: undefined tensor");
    union { uint64_t u; unsigned char bytes[16]; } v = {0};   /* one element of any dtype (complex128: 16 bytes) */
    if (tl_scalar_store(value, t->dtype, &v) != 0) return -1;
    if (TL_UNLIKELY(t->device == TL_CUDA)) {
        if (tl__cuda_fill(t, value) != 0) return -1;
        tl_tensor_bump_version(t);
        return 0;
    }
    tl_iter *it = tl_iter_new(TL_ITER_NO_BROADCAST_OUTPUT | TL_ITER_CHECK_OVERLAP);
    if (!it) return -1;
    int rc = tl_iter_add_output(it, t);
    if (rc == 0) rc = tl_iter_build(it);
    if (rc == 0) {
        /* refuse to write through broadcast (stride 0) views; an empty tensor
         * (numpy gives empty arrays zero strides) has no element to overlap */
        for (int64_t k = 0; k < t->ndim && t->numel > 0; k++)
            if (t->strides[k] == 0 && t->sizes[k] > 1) {
                rc = tl_set_error(TL_ERR_RUNTIME,
                                  "unsupported operation: more than one element of the written-to tensor refers to "
                                  "a single memory location. Please clone() the tensor before performing the "
                                  "operation.");
                break;
            }
    }
    if (rc == 0 && !tl_iter_is_meta(it)) rc = tl_iter_for_each(it, TL_FILL_LOOP(t->dtype), &v);
    tl_iter_free(it);
    if (rc == 0) tl_tensor_bump_version(t);
    return rc;
}

int tl_zero_(tl_tensor *t) { return tl_fill_(t, tl_scalar_from_int(0)); }

int tl_tensor_item(const tl_tensor *t, tl_scalar *out) {
    if (t->numel != 1)
        return tl_set_error(TL_ERR_RUNTIME, "a Tensor with %lld elements cannot be converted to Scalar",
                            (long long)t->numel);
    if (t->device == TL_META)  /* PyTorch's text and kind */
        return tl_set_error(TL_ERR_RUNTIME, "Tensor.item() cannot be called on meta tensors");
    if (t->device == TL_CUDA) return tl__cuda_item(t, out);
    if (t->device != TL_CPU)
        return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "Tensor.item() is not supported for %s tensors: they have no data",
                            tl__device_name(t->device));
    return tl_scalar_load(tl__data(t), t->dtype, out);
}

int tl_resize_(tl_tensor *t, int64_t ndim, const int64_t *sizes) {
    int64_t numel;
    if (tl__check_sizes(ndim, sizes, &numel) != 0) return -1;
    int64_t isz = tl_dtype_itemsize(t->dtype), need, total;
    if (tl__mul_overflow(numel, isz, &need) || tl__add_overflow(need, t->storage_offset * isz, &total))
        return tl_set_error(TL_ERR_RUNTIME, "resize_: storage size calculation overflowed");
    if (total > t->storage->nbytes) {
        if (t->storage->external)
            return tl_set_error(TL_ERR_RUNTIME,
                                "Trying to resize storage that is not resizable (it wraps external memory)");
        /* every tensor sharing the storage sees the new block, as in PyTorch */
        tl_storage *st = t->storage;
        if (st->device == TL_CPU) {
            void *nd = tl_alloc(total);
            if (!nd) return -1;
            if (st->data && st->nbytes) memcpy(nd, st->data, (size_t)st->nbytes);
            if (st->owns_data) tl_free(st->data, st->nbytes);
            /* inline small data stays in the storage's block until it dies */
            st->data = nd;
            st->owns_data = 1;
        } else if (st->device == TL_CUDA) {
            if (tl__cuda_storage_grow(st, total) != 0) return -1;
        }
        st->nbytes = total;
    }
    return tl__tensor_set_geometry(t, ndim, sizes, NULL);
}
