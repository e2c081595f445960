/* CUDA tensors in the runtime: storage memory from the caching allocator,
 * copies to, from and between devices, fill, item.
 *
 * Bytes move with cuMemcpy* when both sides are laid out the same dense way
 * and need no cast; everything else goes through a host staging copy of the
 * device tensor's byte span, where the CPU copy engine does casts, broadcasts
 * and strides (PyTorch stages non-contiguous copies too). A kernel library
 * may install device-side copy and fill kernels (tl_cuda_set_copy_kernel /
 * tl_cuda_set_fill_kernel) that take over the same-device cases. */
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "tl_internal.h"

static tl_cuda_copy_kernel_fn g_copy_kernel;
static tl_cuda_fill_kernel_fn g_fill_kernel;

void tl_cuda_set_copy_kernel(tl_cuda_copy_kernel_fn fn) { __atomic_store_n(&g_copy_kernel, fn, __ATOMIC_RELEASE); }
void tl_cuda_set_fill_kernel(tl_cuda_fill_kernel_fn fn) { __atomic_store_n(&g_fill_kernel, fn, __ATOMIC_RELEASE); }

/* ---------------------------------------------------------------- storage */
int tl__cuda_storage_init(tl_storage *s, int64_t nbytes, int packed_device) {
    int index = tl__device_index_of(packed_device);
    if (tl_cuda_device_count() == 0) return tl_set_error(TL_ERR_RUNTIME, "%s", tl_cuda_unavailable_reason());
    if (index < 0) index = tl_cuda_current_device();
    if (tl__cu_check_device(index) != 0) return -1;
    void *p = NULL;
    if (nbytes > 0 && !(p = tl_cuda_alloc(index, nbytes))) return -1;
    s->data = p;
    s->nbytes = nbytes;
    s->device = TL_CUDA;
    s->device_index = index;
    s->owns_data = 1;
    return 0;
}

void tl__cuda_storage_free(tl_storage *s) { tl_cuda_free(s->data); }

int tl__cuda_storage_grow(tl_storage *s, int64_t nbytes) {
    void *p = tl_cuda_alloc(s->device_index, nbytes);
    if (!p) return -1;
    if (s->data && s->nbytes && tl_cuda_memcpy(p, s->device_index, s->data, s->device_index, s->nbytes, 0) != 0) {
        tl_cuda_free(p);
        return -1;
    }
    if (s->owns_data) tl_cuda_free(s->data);
    s->data = p;
    s->owns_data = 1;
    return 0;
}

int tl_cuda_tensor_record_stream(const tl_tensor *t, tl_cuda_stream s) {
    if (!t || t->device != TL_CUDA)
        return tl_set_error(TL_ERR_RUNTIME, "record_stream: expected a cuda tensor, got a %s tensor",
                            t ? tl__device_name(t->device) : "undefined");
    if (!t->storage->data || !t->storage->owns_data) return 0;   /* no block of the allocator */
    return tl_cuda_record_stream(t->storage->data, s);
}

/* ---------------------------------------------------------------- staging */
/* the element offsets t reaches, relative to its first element */
static void span_of(const tl_tensor *t, int64_t *lo, int64_t *hi) {
    int64_t a = 0, b = 0;
    for (int64_t d = 0; d < t->ndim; d++) {
        int64_t e = (t->sizes[d] - 1) * t->strides[d];
        if (e < 0) a += e;
        else b += e;
    }
    *lo = a;
    *hi = b;
}

/* a CPU tensor with t's sizes and strides over a host copy of t's byte span */
static tl_tensor *stage_to_host(const tl_tensor *t, int64_t *lo_out) {
    int64_t lo, hi, isz = tl__itemsize(t->dtype);
    span_of(t, &lo, &hi);
    int64_t nbytes = (hi - lo + 1) * isz;
    tl_storage *s = tl_storage_new(nbytes, TL_CPU);
    if (!s) return NULL;
    if (tl_cuda_memcpy(s->data, -1, tl__data(t) + lo * isz, t->storage->device_index, nbytes, 0) != 0) {
        tl_storage_release(s);
        return NULL;
    }
    tl_tensor *h = tl__tensor_alloc(s, -lo, t->ndim, t->sizes, t->strides, t->dtype);
    tl_storage_release(s);
    if (lo_out) *lo_out = lo;
    return h;
}

/* the staged span back into the device tensor t */
static int unstage(tl_tensor *t, const tl_tensor *h, int64_t lo) {
    int64_t isz = tl__itemsize(t->dtype);
    return tl_cuda_memcpy(tl__data(t) + lo * isz, t->storage->device_index, h->storage->data, -1,
                          h->storage->nbytes, 0);
}

static int same_geometry(const tl_tensor *a, const tl_tensor *b) {
    return a->ndim == b->ndim && memcmp(a->sizes, b->sizes, sizeof(int64_t) * (size_t)a->ndim) == 0 &&
           memcmp(a->strides, b->strides, sizeof(int64_t) * (size_t)a->ndim) == 0;
}

static int dense(const tl_tensor *t) { return (t->flags & TL_TF_NON_OVERLAPPING_DENSE) != 0; }

/* bytes of a dense tensor, from its lowest address */
static char *dense_start(const tl_tensor *t) {
    int64_t lo, hi;
    span_of(t, &lo, &hi);
    return tl__data(t) + lo * tl__itemsize(t->dtype);
}

/* host src -> device dst, same shape */
static int copy_h2d(tl_tensor *dst, const tl_tensor *src) {
    int rc;
    if (dense(dst)) {   /* stage in dst's layout and dtype, then one copy */
        tl_tensor *h = tl_empty_strided(dst->ndim, dst->sizes, dst->strides, dst->dtype, TL_CPU);
        if (!h) return -1;
        rc = tl__copy_impl(h, src);
        if (rc == 0)
            rc = tl_cuda_memcpy(dense_start(dst), dst->storage->device_index, dense_start(h), -1,
                                dst->numel * tl__itemsize(dst->dtype), 0);
        tl_tensor_release(h);
        return rc;
    }
    /* a strided view: read its span, write the elements, put the span back */
    int64_t lo;
    tl_tensor *h = stage_to_host(dst, &lo);
    if (!h) return -1;
    rc = tl__copy_impl(h, src);
    if (rc == 0) rc = unstage(dst, h, lo);
    tl_tensor_release(h);
    return rc;
}

int tl__cuda_copy(tl_tensor *dst, const tl_tensor *src) {
    if (dst->device == TL_META) {   /* shapes only: src's metadata on meta */
        tl_tensor *m = tl_empty(src->ndim, src->sizes, src->dtype, TL_META);
        if (!m) return -1;
        int rc = tl__copy_impl(dst, m);
        tl_tensor_release(m);
        return rc;
    }
    tl_tensor *bsrc = NULL;
    if (src->ndim != dst->ndim || memcmp(src->sizes, dst->sizes, sizeof(int64_t) * (size_t)dst->ndim) != 0) {
        bsrc = tl_expand(src, dst->ndim, dst->sizes);   /* PyTorch's broadcast error when it cannot */
        if (!bsrc) return -1;
        src = bsrc;
    }
    int rc = 0;
    if (dst->numel == 0) goto done;
    if (dst->device == TL_CUDA && src->device == TL_CUDA) {
        const int same_dev = dst->storage->device_index == src->storage->device_index;
        if (dst->dtype == src->dtype && same_geometry(dst, src) && dense(dst) && dst->storage != src->storage) {
            rc = tl_cuda_memcpy(dense_start(dst), dst->storage->device_index, dense_start(src),
                                src->storage->device_index, dst->numel * tl__itemsize(dst->dtype), 0);
            goto done;
        }
        if (dst->storage == src->storage && tl__data(dst) == tl__data(src) && dst->dtype == src->dtype &&
            same_geometry(dst, src))
            goto done;
        tl_cuda_copy_kernel_fn k = __atomic_load_n(&g_copy_kernel, __ATOMIC_ACQUIRE);
        if (k && same_dev && dst->storage != src->storage) {
            rc = k(dst, src);
            goto done;
        }
        tl_tensor *h = stage_to_host(src, NULL);   /* also makes overlapping copies safe */
        if (!h) { rc = -1; goto done; }
        rc = copy_h2d(dst, h);
        tl_tensor_release(h);
    } else if (src->device == TL_CUDA) {   /* to the host (cpu dst) */
        tl_tensor *h = stage_to_host(src, NULL);
        if (!h) { rc = -1; goto done; }
        rc = tl__copy_impl(dst, h);
        tl_tensor_release(h);
    } else if (src->device == TL_META) {
        rc = tl_set_error(TL_ERR_NOT_IMPLEMENTED, "Cannot copy out of meta tensor; no data!");
    } else {
        rc = copy_h2d(dst, src);
    }
done:
    tl_tensor_release(bsrc);
    return rc;
}

/* ---------------------------------------------------------------- fill */
int tl__cuda_fill(tl_tensor *t, tl_scalar value) {
    if (t->numel == 0) return 0;
    union { uint64_t u; unsigned char bytes[16]; } v = {0};   /* one element of any dtype (complex128: 16 bytes) */
    if (tl_scalar_store(value, t->dtype, &v) != 0) return -1;
    const int64_t isz = tl__itemsize(t->dtype);
    if (dense(t)) {
        /* a memset when the element's bytes repeat with a period of 1, 2 or 4 */
        uint32_t lo32 = (uint32_t)v.u, hi32 = (uint32_t)(v.u >> 32);
        int width = 0;
        int64_t count = t->numel;
        uint32_t pattern = lo32;
        if (isz == 1 || isz == 2 || isz == 4) {
            width = (int)isz;
        } else if (isz == 8 && lo32 == hi32) {
            width = 4;
            count *= 2;
        }
        if (width) return tl__cuda_memset_pattern(dense_start(t), t->storage->device_index, pattern, width, count);
    } else {
        /* PyTorch refuses to fill through a broadcast (stride 0) view */
        for (int64_t k = 0; k < t->ndim; k++)
            if (t->strides[k] == 0 && t->sizes[k] > 1)
                return tl_set_error(TL_ERR_RUNTIME,
                                    "unsupported operation: more than one element of the written-to tensor refers "
                                    "to a single memory location. Please clone() the tensor before performing the "
                                    "operation.");
    }
    tl_cuda_fill_kernel_fn k = __atomic_load_n(&g_fill_kernel, __ATOMIC_ACQUIRE);
    if (k) return k(t, value);
    int64_t lo;
    tl_tensor *h = stage_to_host(t, &lo);
    if (!h) return -1;
    int rc = tl_fill_(h, value);
    if (rc == 0) rc = unstage(t, h, lo);
    tl_tensor_release(h);
    return rc;
}

int tl__cuda_item(const tl_tensor *t, tl_scalar *out) {
    union { uint64_t u; unsigned char bytes[16]; } buf = {0};   /* one element of any dtype */
    if (tl_cuda_memcpy(&buf, -1, tl__data(t), t->storage->device_index, tl__itemsize(t->dtype), 0) != 0) return -1;
    return tl_scalar_load(&buf, t->dtype, out);
}

tl_tensor *tl__host_result_to(tl_tensor *host, int packed_device) {
    if (!host) return NULL;
    tl_tensor *d = tl_empty(host->ndim, host->sizes, host->dtype, (tl_device_type)packed_device);
    if (d && tl__copy_impl(d, host) != 0) {
        tl_tensor_release(d);
        d = NULL;
    }
    tl_tensor_release(host);
    return d;
}
