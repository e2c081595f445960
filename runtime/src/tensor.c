/* Storage, tensors, factories and views (tl_tensor.h). */
#include <stdio.h>
#include <stdlib.h>

#include "tl_internal.h"

/* ------------------------------------------------------------ dispatch keys */
#if defined(__has_include)
#if __has_include("tl_dispatch_key.h")
#include "tl_dispatch_key.h"
#define TL_HAVE_DISPATCH_KEYS 1
#endif
#endif

uint64_t tl__keyset_for_device(tl_device_type d) {
#ifdef TL_HAVE_DISPATCH_KEYS
    switch (d) {
    case TL_CPU: return TL_KEYSET_CPU_BITS;
    case TL_CUDA: return TL_KEYSET_CUDA_BITS;
    case TL_META: return TL_KEYSET_META_BITS;
    }
    return 0;
#else
    /* placeholder bits until tl_dispatch_key.h defines the real ones */
    switch (d) {
    case TL_CPU: return 1ull << 1;
    case TL_CUDA: return 1ull << 2;
    case TL_META: return 1ull << 3;
    }
    return 0;
#endif
}

const char *tl__device_name(tl_device_type d) {
    switch (d) {
    case TL_CPU: return "cpu";
    case TL_CUDA: return "cuda";
    case TL_META: return "meta";
    }
    return "unknown";
}

/* ------------------------------------------------------------ spare blocks */
/* One spare block per thread for a tensor and one for a storage of at most
 * TL_SMALL_DATA bytes: a 1-element `a + b` allocates and frees one of each
 * per call, and glibc's malloc + free cost ~130 instructions a pair (a spare:
 * ~5). A block freed on another thread goes to that thread's spare. Off under
 * AddressSanitizer, which should see every use after free. An exiting thread
 * leaves its spares allocated (two blocks at most). */
#if defined(__SANITIZE_ADDRESS__)
#define TL_USE_SPARES 0
#else
#define TL_USE_SPARES 1
#endif
#define TL_SMALL_DATA 64
#define TL_SMALL_STORAGE_BLOCK (sizeof(tl_storage) + (TL_ALIGNMENT - 1) + TL_SMALL_DATA)
static _Thread_local void *g_spare_tensor __attribute__((tls_model("initial-exec"))) = NULL;
static _Thread_local void *g_spare_storage __attribute__((tls_model("initial-exec"))) = NULL;

static inline tl_tensor *tensor_block_alloc(void) {
    if (TL_USE_SPARES && g_spare_tensor) {
        tl_tensor *t = g_spare_tensor;
        g_spare_tensor = NULL;
        return t;
    }
    return malloc(sizeof(tl_tensor));
}

static inline void tensor_block_free(tl_tensor *t) {
    if (TL_USE_SPARES && !g_spare_tensor) g_spare_tensor = t;
    else free(t);
}

/* ------------------------------------------------------------------ storage */
static tl_storage *storage_alloc(void) {
    tl_storage *s = calloc(1, sizeof *s);
    if (!s) tl_set_error(TL_ERR_MEMORY, "out of memory allocating a storage");
    else s->refcount = 1;
    return s;
}

tl_storage *tl_storage_new(int64_t nbytes, tl_device_type device) {
    if (nbytes < 0) {
        tl_set_error(TL_ERR_RUNTIME, "Storage size must be non-negative, got %lld", (long long)nbytes);
        return NULL;
    }
    if (tl__device_type_of((int)device) == TL_CUDA) {
        tl_storage *s = storage_alloc();
        if (!s) return NULL;
        if (tl__cuda_storage_init(s, nbytes, (int)device) != 0) { free(s); return NULL; }
        return s;
    }
    if (device != TL_CPU && device != TL_META) {
        tl_set_error(TL_ERR_VALUE, "invalid device %d", (int)device);
        return NULL;
    }
    if (device == TL_CPU && nbytes > 0 && nbytes <= TL_INLINE_STORAGE_MAX) {
        /* small: the data lives in the same block as the storage (one malloc,
         * no posix_memalign, which costs ~90 ns), still 64-byte aligned */
        int small = nbytes <= TL_SMALL_DATA;
        tl_storage *s = NULL;
        if (TL_USE_SPARES && small && g_spare_storage) {
            s = g_spare_storage;
            g_spare_storage = NULL;
        } else {
            s = malloc(small ? TL_SMALL_STORAGE_BLOCK : sizeof(tl_storage) + (TL_ALIGNMENT - 1) + (size_t)nbytes);
        }
        if (!s) {
            tl_set_error(TL_ERR_MEMORY, "DefaultCPUAllocator: not enough memory: you tried to allocate %lld bytes.",
                         (long long)nbytes);
            return NULL;
        }
        memset(s, 0, sizeof *s);
        s->refcount = 1;
        s->nbytes = nbytes;
        s->device = device;
        s->small_block = small;
        s->data = (void *)(((uintptr_t)(s + 1) + (TL_ALIGNMENT - 1)) & ~(uintptr_t)(TL_ALIGNMENT - 1));
        return s;
    }
    tl_storage *s = storage_alloc();
    if (!s) return NULL;
    s->nbytes = nbytes;
    s->device = device;
    if (device == TL_CPU && nbytes > 0) {
        s->data = tl_alloc(nbytes);
        if (!s->data) { free(s); return NULL; }
        s->owns_data = 1;
    }
    return s;
}

tl_storage *tl_storage_from_external(void *data, int64_t nbytes, tl_device_type device,
                                     tl_deleter_fn deleter, void *ctx) {
    if (nbytes < 0) {
        tl_set_error(TL_ERR_RUNTIME, "Storage size must be non-negative, got %lld", (long long)nbytes);
        return NULL;
    }
    tl_storage *s = storage_alloc();
    if (!s) return NULL;
    s->data = data;
    s->nbytes = nbytes;
    s->device = device;
    s->external = 1;
    s->deleter = deleter;
    s->deleter_ctx = ctx;
    return s;
}

void tl_storage_retain(tl_storage *s) {
    if (s) __atomic_add_fetch(&s->refcount, 1, __ATOMIC_RELAXED);
}

void tl_storage_release(tl_storage *s) {
    if (!s) return;
    if (__atomic_sub_fetch(&s->refcount, 1, __ATOMIC_ACQ_REL) != 0) return;
    if (s->owns_data) {
        if (TL_UNLIKELY(s->device == TL_CUDA)) tl__cuda_storage_free(s);
        else tl_free(s->data, s->nbytes);
    }
    if (s->deleter) s->deleter(s->deleter_ctx);
    if (TL_USE_SPARES && s->small_block && !g_spare_storage) g_spare_storage = s;
    else free(s);
}

void *tl_storage_data(const tl_storage *s) { return s->data; }
int64_t tl_storage_nbytes(const tl_storage *s) { return s->nbytes; }
int64_t tl_storage_refcount(const tl_storage *s) { return __atomic_load_n(&s->refcount, __ATOMIC_RELAXED); }
int tl_storage_device_index(const tl_storage *s) { return s->device == TL_CUDA ? s->device_index : -1; }

/* ------------------------------------------------------------ size helpers */
static void format_list(char *buf, size_t cap, int64_t n, const int64_t *v) {
    size_t pos = 0;
    pos += (size_t)snprintf(buf + pos, cap - pos, "[");
    for (int64_t i = 0; i < n && pos < cap; i++)
        pos += (size_t)snprintf(buf + pos, cap - pos, i ? ", %lld" : "%lld", (long long)v[i]);
    if (pos < cap) snprintf(buf + pos, cap - pos, "]");
}

int tl__check_sizes(int64_t ndim, const int64_t *sizes, int64_t *numel_out) {
    if (ndim < 0 || ndim > TL_MAX_DIMS)
        return tl_set_error(TL_ERR_RUNTIME, "tensors can have at most %d dimensions, got %lld",
                            TL_MAX_DIMS, (long long)ndim);
    int64_t numel = 1;
    int overflow = 0;
    for (int64_t i = 0; i < ndim; i++) {
        if (sizes[i] < 0) {
            char buf[512];
            format_list(buf, sizeof buf, ndim, sizes);
            return tl_set_error(TL_ERR_RUNTIME, "Trying to create tensor with negative dimension %lld: %s",
                                (long long)sizes[i], buf);
        }
        if (tl__mul_overflow(numel, sizes[i], &numel)) overflow = 1;
    }
    for (int64_t i = 0; i < ndim; i++)
        if (sizes[i] == 0) { overflow = 0; numel = 0; }
    if (overflow) {
        char buf[512];
        format_list(buf, sizeof buf, ndim, sizes);
        return tl_set_error(TL_ERR_RUNTIME, "Storage size calculation overflowed with sizes=%s", buf);
    }
    if (numel_out) *numel_out = numel;
    return 0;
}

int tl__contiguous_strides(int64_t ndim, const int64_t *sizes, int64_t *strides) {
    int64_t s = 1;
    for (int64_t i = ndim - 1; i >= 0; i--) {
        strides[i] = s;
        int64_t sz = sizes[i] > 1 ? sizes[i] : 1;
        if (tl__mul_overflow(s, sz, &s)) s = INT64_MAX;  /* caller checks numel */
    }
    return 0;
}

int64_t tl__wrap_dim(int64_t dim, int64_t ndim, int scalar_ok) {
    int64_t n = ndim;
    if (n <= 0) {
        if (!scalar_ok) {
            tl_set_error(TL_ERR_INDEX, "Dimension specified as %lld but tensor has no dimensions",
                         (long long)dim);
            return -1;
        }
        n = 1;
    }
    if (dim < -n || dim > n - 1) {
        tl_set_error(TL_ERR_INDEX, "Dimension out of range (expected to be in range of [%lld, %lld], but got %lld)",
                     (long long)-n, (long long)(n - 1), (long long)dim);
        return -1;
    }
    return dim < 0 ? dim + n : dim;
}

/* ------------------------------------------------------------------ tensor */
static int compute_contiguous(const tl_tensor *t) {
    if (t->numel == 0) return 1;
    int64_t expected = 1;
    for (int64_t i = t->ndim - 1; i >= 0; i--) {
        if (t->sizes[i] != 1) {
            if (t->strides[i] != expected) return 0;
            expected *= t->sizes[i];
        }
    }
    return 1;
}

static int compute_non_overlapping_and_dense(const tl_tensor *t) {
    if (t->ndim == 1) return t->sizes[0] < 2 || t->strides[0] == 1;
    if (t->flags & TL_TF_CONTIGUOUS) return 1;
    int64_t perm[TL_MAX_DIMS];
    for (int64_t i = 0; i < t->ndim; i++) perm[i] = i;
    /* insertion sort dims by (size < 2 last, stride ascending) */
    for (int64_t i = 1; i < t->ndim; i++) {
        int64_t v = perm[i], j = i - 1;
        while (j >= 0) {
            int64_t a = perm[j];
            int move;
            if (t->sizes[a] < 2) move = t->sizes[v] >= 2;
            else if (t->sizes[v] < 2) move = 0;
            else move = t->strides[a] > t->strides[v];
            if (!move) break;
            perm[j + 1] = perm[j];
            j--;
        }
        perm[j + 1] = v;
    }
    int64_t require = 1;
    for (int64_t i = 0; i < t->ndim; i++) {
        int64_t sz = t->sizes[perm[i]];
        if (sz < 2) return 1;
        if (t->strides[perm[i]] != require) return 0;
        require *= sz;
    }
    return 1;
}

void tl__tensor_refresh(tl_tensor *t) {
    int64_t n = 1;
    for (int64_t i = 0; i < t->ndim; i++) n *= t->sizes[i];
    t->numel = n;
    uint32_t keep = t->flags & TL_TF_WRAPPED_NUMBER;
    t->flags = keep;
    if (compute_contiguous(t)) t->flags |= TL_TF_CONTIGUOUS;
    if (compute_non_overlapping_and_dense(t)) t->flags |= TL_TF_NON_OVERLAPPING_DENSE;
}

int tl__tensor_set_geometry(tl_tensor *t, int64_t ndim, const int64_t *sizes, const int64_t *strides) {
    int64_t *buf;
    if (ndim <= TL_INLINE_DIMS) {
        buf = t->inline_dims;
    } else {
        buf = malloc(sizeof(int64_t) * 2 * (size_t)ndim);
        if (!buf) return tl_set_error(TL_ERR_MEMORY, "out of memory allocating tensor metadata");
    }
    /* copy first: sizes/strides may point into t's current buffers */
    int64_t tmp[2 * TL_MAX_DIMS];
    memcpy(tmp, sizes, sizeof(int64_t) * (size_t)ndim);
    if (strides) memcpy(tmp + ndim, strides, sizeof(int64_t) * (size_t)ndim);
    else tl__contiguous_strides(ndim, sizes, tmp + ndim);
    if (t->sizes && t->sizes != t->inline_dims && t->sizes != buf) free(t->sizes);
    memcpy(buf, tmp, sizeof(int64_t) * 2 * (size_t)ndim);
    t->sizes = buf;
    t->strides = buf + ndim;
    t->ndim = ndim;
    tl__tensor_refresh(t);
    return 0;
}

tl_tensor *tl__tensor_alloc(tl_storage *s, int64_t offset, int64_t ndim, const int64_t *sizes,
                            const int64_t *strides, tl_dtype dtype) {
    tl_tensor *t = tensor_block_alloc();
    if (!t) {
        tl_set_error(TL_ERR_MEMORY, "out of memory allocating a tensor");
        return NULL;
    }
    t->refcount = 1;
    t->storage = s;
    t->storage_offset = offset;
    t->dtype = dtype;
    t->device = s->device;
    t->flags = 0;
    t->key_set = tl__keyset_for_device(s->device);
    t->autograd_meta = NULL;
    t->autograd_meta_deleter = NULL;
    t->py_slot = NULL;
    t->sizes = NULL;
    if (tl__tensor_set_geometry(t, ndim, sizes, strides) != 0) {
        tensor_block_free(t);
        return NULL;
    }
    tl_storage_retain(s);
    return t;
}

/* tl_empty's common case (a fresh contiguous result of few dims): the
 * tensor takes over the caller's reference to s (no retain + release pair of
 * atomics) and its flags are known (no geometry pass) */
static tl_tensor *tensor_adopt_contiguous(tl_storage *s, int64_t ndim, const int64_t *sizes,
                                          const int64_t *strides, int64_t numel, tl_dtype dtype) {
    tl_tensor *t = tensor_block_alloc();
    if (!t) {
        tl_storage_release(s);
        tl_set_error(TL_ERR_MEMORY, "out of memory allocating a tensor");
        return NULL;
    }
    t->refcount = 1;
    t->storage = s;
    t->storage_offset = 0;
    t->ndim = ndim;
    t->numel = numel;
    t->sizes = t->inline_dims;
    t->strides = t->inline_dims + ndim;
    memcpy(t->sizes, sizes, sizeof(int64_t) * (size_t)ndim);
    memcpy(t->strides, strides, sizeof(int64_t) * (size_t)ndim);
    t->dtype = dtype;
    t->device = s->device;
    t->flags = TL_TF_CONTIGUOUS | TL_TF_NON_OVERLAPPING_DENSE;
    t->key_set = tl__keyset_for_device(s->device);
    t->autograd_meta = NULL;
    t->autograd_meta_deleter = NULL;
    t->py_slot = NULL;
    return t;
}

/* ------------------------------------------------------ tensor subclasses */
static tl_py_slot_release_fn py_slot_release;

static void release_py_slot(void *slot) {
    tl_py_slot_release_fn fn = __atomic_load_n(&py_slot_release, __ATOMIC_ACQUIRE);
    if (fn) fn(slot);
}

void tl_set_py_slot_release(tl_py_slot_release_fn fn) { __atomic_store_n(&py_slot_release, fn, __ATOMIC_RELEASE); }

#ifdef TL_HAVE_DISPATCH_KEYS
#define TL_PYTHON_KEY_BIT (1ull << TL_KEY_PYTHON)
#else
#define TL_PYTHON_KEY_BIT 0ull
#endif

void tl_tensor_set_py_slot(tl_tensor *t, void *slot) {
    void *old = t->py_slot;
    t->py_slot = slot;
    if (slot) t->key_set |= TL_PYTHON_KEY_BIT;
    else t->key_set &= ~TL_PYTHON_KEY_BIT;
    if (old && old != slot) release_py_slot(old);
}

void *tl_tensor_py_slot(const tl_tensor *t) { return t->py_slot; }

void tl_tensor_retain(tl_tensor *t) {
    if (t) __atomic_add_fetch(&t->refcount, 1, __ATOMIC_RELAXED);
}

void tl_tensor_release(tl_tensor *t) {
    if (!t) return;
    if (__atomic_sub_fetch(&t->refcount, 1, __ATOMIC_ACQ_REL) != 0) return;
    if (t->autograd_meta && t->autograd_meta_deleter) t->autograd_meta_deleter(t->autograd_meta);
    if (t->py_slot) release_py_slot(t->py_slot);
    tl_storage_release(t->storage);
    if (t->sizes != t->inline_dims) free(t->sizes);
    tensor_block_free(t);
}

int64_t tl_tensor_refcount(const tl_tensor *t) { return __atomic_load_n(&t->refcount, __ATOMIC_RELAXED); }

/* storage must hold offset + max reachable element */
static int check_in_bounds(const tl_storage *s, int64_t offset, int64_t ndim, const int64_t *sizes,
                           const int64_t *strides, tl_dtype dtype) {
    if (offset < 0)
        return tl_set_error(TL_ERR_RUNTIME, "Tensor: invalid storage offset %lld", (long long)offset);
    int64_t numel;
    if (tl__check_sizes(ndim, sizes, &numel) != 0) return -1;
    for (int64_t i = 0; i < ndim; i++) {
        if (strides[i] < 0) {
            char buf[512];
            format_list(buf, sizeof buf, ndim, strides);
            return tl_set_error(TL_ERR_RUNTIME,
                                "as_strided: Negative strides are not supported at the moment, got strides: %s", buf);
        }
    }
    if (numel == 0) return 0;
    int64_t need = offset + 1, itemsize = tl__itemsize(dtype), bytes;
    int ovf = 0;
    for (int64_t i = 0; i < ndim; i++) {
        int64_t span;
        ovf |= tl__mul_overflow(sizes[i] - 1, strides[i], &span);
        ovf |= tl__add_overflow(need, span, &need);
    }
    ovf |= tl__mul_overflow(need, itemsize, &bytes);
    if (ovf || bytes > s->nbytes) {
        char bs[512], bt[512];
        format_list(bs, sizeof bs, ndim, sizes);
        format_list(bt, sizeof bt, ndim, strides);
        return tl_set_error(TL_ERR_RUNTIME,
                            "setStorage: sizes %s, strides %s, storage offset %lld, and itemsize %lld requiring a "
                            "storage size of %lld are out of bounds for storage of size %lld",
                            bs, bt, (long long)offset, (long long)itemsize, ovf ? -1ll : (long long)bytes,
                            (long long)s->nbytes);
    }
    return 0;
}

tl_tensor *tl_tensor_new_with_storage(tl_storage *s, int64_t storage_offset, int64_t ndim,
                                      const int64_t *sizes, const int64_t *strides, tl_dtype dtype) {
    if (!tl__dtype_valid(dtype)) { tl_set_error(TL_ERR_VALUE, "invalid dtype %d", (int)dtype); return NULL; }
    if (tl__check_sizes(ndim, sizes, NULL) != 0) return NULL;
    int64_t st[TL_MAX_DIMS];
    if (!strides) { tl__contiguous_strides(ndim, sizes, st); strides = st; }
    if (check_in_bounds(s, storage_offset, ndim, sizes, strides, dtype) != 0) return NULL;
    return tl__tensor_alloc(s, storage_offset, ndim, sizes, strides, dtype);
}

int64_t tl_tensor_ndim(const tl_tensor *t) { return t->ndim; }
const int64_t *tl_tensor_sizes(const tl_tensor *t) { return t->sizes; }
const int64_t *tl_tensor_strides(const tl_tensor *t) { return t->strides; }

int64_t tl_tensor_size(const tl_tensor *t, int64_t dim) {
    int64_t d = tl__wrap_dim(dim, t->ndim, 0);
    return d < 0 ? -1 : t->sizes[d];
}

int64_t tl_tensor_stride(const tl_tensor *t, int64_t dim) {
    int64_t d = tl__wrap_dim(dim, t->ndim, 0);
    return d < 0 ? -1 : t->strides[d];
}

int64_t tl_tensor_numel(const tl_tensor *t) { return t->numel; }
tl_dtype tl_tensor_dtype(const tl_tensor *t) { return t->dtype; }
tl_device_type tl_tensor_device(const tl_tensor *t) { return t->device; }
int tl_tensor_device_index(const tl_tensor *t) { return tl_storage_device_index(t->storage); }

const char *tl__tensor_device_str(const tl_tensor *t) {
    static _Thread_local char buf[2][24];   /* two: error messages name two devices */
    static _Thread_local int which = 0;
    if (t->device != TL_CUDA) return tl__device_name(t->device);
    which ^= 1;
    snprintf(buf[which], sizeof buf[which], "cuda:%d", (int)t->storage->device_index);
    return buf[which];
}
int64_t tl_tensor_itemsize(const tl_tensor *t) { return tl__itemsize(t->dtype); }
int64_t tl_tensor_storage_offset(const tl_tensor *t) { return t->storage_offset; }
tl_storage *tl_tensor_storage(const tl_tensor *t) { return t->storage; }
void *tl_tensor_data_ptr(const tl_tensor *t) { return tl__data(t); }
int tl_tensor_is_contiguous(const tl_tensor *t) { return (t->flags & TL_TF_CONTIGUOUS) != 0; }
int tl_tensor_is_non_overlapping_and_dense(const tl_tensor *t) {
    return (t->flags & TL_TF_NON_OVERLAPPING_DENSE) != 0;
}
int tl_tensor_is_wrapped_number(const tl_tensor *t) { return (t->flags & TL_TF_WRAPPED_NUMBER) != 0; }
void tl_tensor_set_wrapped_number(tl_tensor *t, int flag) {
    if (flag) t->flags |= TL_TF_WRAPPED_NUMBER;
    else t->flags &= ~(uint32_t)TL_TF_WRAPPED_NUMBER;
}
uint64_t tl_tensor_key_set(const tl_tensor *t) { return t->key_set; }
int tl_tensor_is_alias_of(const tl_tensor *a, const tl_tensor *b) { return a->storage == b->storage; }

const char *tl_tensor_debug_string(const tl_tensor *t) {
    static _Thread_local char *buf = NULL;   /* heap: keep the TLS block small */
    if (!buf && !(buf = malloc(1200))) return "";
    char bs[512], bt[512];
    format_list(bs, sizeof bs, t->ndim, t->sizes);
    format_list(bt, sizeof bt, t->ndim, t->strides);
    snprintf(buf, 1200, "%s %s sizes=%s strides=%s offset=%lld", tl_dtype_name(t->dtype),
             tl__device_name(t->device), bs, bt, (long long)t->storage_offset);
    return buf;
}

void *tl_tensor_autograd_meta(const tl_tensor *t) { return t->autograd_meta; }
void tl_tensor_set_autograd_meta(tl_tensor *t, void *meta, tl_deleter_fn deleter) {
    if (t->autograd_meta && t->autograd_meta_deleter && t->autograd_meta != meta)
        t->autograd_meta_deleter(t->autograd_meta);
    t->autograd_meta = meta;
    t->autograd_meta_deleter = deleter;
}
int64_t tl_tensor_version(const tl_tensor *t) { return __atomic_load_n(&t->storage->version, __ATOMIC_RELAXED); }
void tl_tensor_bump_version(tl_tensor *t) { __atomic_add_fetch(&t->storage->version, 1, __ATOMIC_RELAXED); }

/* --------------------------------------------------------------- factories */
static int check_factory(tl_dtype dtype, tl_device_type device) {
    if (!tl__dtype_valid(dtype)) return tl_set_error(TL_ERR_VALUE, "invalid dtype %d", (int)dtype);
    if (tl__device_type_of((int)device) == TL_CUDA) return 0;   /* the index is checked on allocation */
    if (device != TL_CPU && device != TL_META) return tl_set_error(TL_ERR_VALUE, "invalid device %d", (int)device);
    return 0;
}

tl_tensor *tl_empty(int64_t ndim, const int64_t *sizes, tl_dtype dtype, tl_device_type device) {
    /* few dims (every iterator result): numel, strides and byte count in one
     * pass; a negative size or an overflow takes the checked path below for
     * its error message */
    if (ndim >= 0 && ndim <= TL_INLINE_DIMS && tl__dtype_valid(dtype) && (device == TL_CPU || device == TL_META)) {
        int64_t st[TL_INLINE_DIMS], numel = 1, s = 1, nbytes;
        int ok = 1;
        for (int64_t i = ndim - 1; i >= 0 && ok; i--) {
            int64_t sz = sizes[i];
            st[i] = s;
            ok = sz >= 0 && !tl__mul_overflow(s, sz > 1 ? sz : 1, &s);
            numel *= ok ? sz : 1;   /* numel <= s: no overflow when s has none */
        }
        if (ok && !tl__mul_overflow(numel, tl__itemsize(dtype), &nbytes)) {
            tl_storage *stg = tl_storage_new(nbytes, device);
            if (!stg) return NULL;
            return tensor_adopt_contiguous(stg, ndim, sizes, st, numel, dtype);
        }
    }
    return tl_empty_strided(ndim, sizes, NULL, dtype, device);
}

tl_tensor *tl_empty_strided(int64_t ndim, const int64_t *sizes, const int64_t *strides, tl_dtype dtype,
                            tl_device_type device) {
    if (check_factory(dtype, device) != 0) return NULL;
    int64_t numel;
    if (tl__check_sizes(ndim, sizes, &numel) != 0) return NULL;
    int64_t st[TL_MAX_DIMS];
    if (!strides) { tl__contiguous_strides(ndim, sizes, st); strides = st; }
    int64_t nelem = numel ? 1 : 0, nbytes;
    int ovf = 0;
    for (int64_t i = 0; i < ndim && numel; i++) {
        if (strides[i] < 0) {
            tl_set_error(TL_ERR_RUNTIME, "empty_strided: negative strides are not supported");
            return NULL;
        }
        int64_t span;
        ovf |= tl__mul_overflow(sizes[i] - 1, strides[i], &span);
        ovf |= tl__add_overflow(nelem, span, &nelem);
    }
    ovf |= tl__mul_overflow(nelem, tl__itemsize(dtype), &nbytes);
    if (ovf) {
        char buf[512];
        format_list(buf, sizeof buf, ndim, sizes);
        tl_set_error(TL_ERR_RUNTIME, "Storage size calculation overflowed with sizes=%s", buf);
        return NULL;
    }
    tl_storage *s = tl_storage_new(nbytes, device);
    if (!s) return NULL;
    if (strides == st && ndim <= TL_INLINE_DIMS) return tensor_adopt_contiguous(s, ndim, sizes, st, numel, dtype);
    tl_tensor *t = tl__tensor_alloc(s, 0, ndim, sizes, strides, dtype);
    tl_storage_release(s);
    return t;
}

tl_tensor *tl_empty_like(const tl_tensor *t) {
    if (t->flags & TL_TF_NON_OVERLAPPING_DENSE)
        return tl_empty_strided(t->ndim, t->sizes, t->strides, t->dtype, tl__device_of(t));
    return tl_empty(t->ndim, t->sizes, t->dtype, tl__device_of(t));
}

tl_tensor *tl_full(int64_t ndim, const int64_t *sizes, tl_scalar value, tl_dtype dtype, tl_device_type device) {
    tl_tensor *t = tl_empty(ndim, sizes, dtype, device);
    if (!t) return NULL;
    if (tl_fill_(t, value) != 0) { tl_tensor_release(t); return NULL; }
    return t;
}

tl_tensor *tl_zeros(int64_t ndim, const int64_t *sizes, tl_dtype dtype, tl_device_type device) {
    return tl_full(ndim, sizes, tl_scalar_from_int(0), dtype, device);
}

tl_tensor *tl_ones(int64_t ndim, const int64_t *sizes, tl_dtype dtype, tl_device_type device) {
    return tl_full(ndim, sizes, tl_scalar_from_int(1), dtype, device);
}

tl_tensor *tl_arange(int64_t n, tl_dtype dtype, tl_device_type device) {
    if (tl__device_type_of((int)device) == TL_CUDA) {   /* made on the host, copied over */
        tl_tensor *h = tl_arange(n, dtype, TL_CPU), *d = h ? tl_empty(1, &n, dtype, device) : NULL;
        if (d && tl__copy_impl(d, h) != 0) { tl_tensor_release(d); d = NULL; }
        tl_tensor_release(h);
        return d;
    }
    tl_tensor *t = tl_empty(1, &n, dtype, device);
    if (!t || device == TL_META) return t;
    char *p = tl__data(t);
    int64_t isz = tl__itemsize(dtype);
    for (int64_t i = 0; i < n; i++) tl_scalar_store(tl_scalar_from_int(i), dtype, p + i * isz);
    return t;
}

tl_tensor *tl_scalar_tensor(tl_scalar s, tl_dtype dtype, tl_device_type device) {
    if ((int)dtype == TL_DTYPE_UNDEFINED) dtype = tl_scalar_dtype(s);
    tl_tensor *t = tl_empty(0, NULL, dtype, device);
    if (!t) return NULL;
    if (device == TL_CPU) tl_scalar_store(s, dtype, tl__data(t));
    else if (tl__device_type_of((int)device) == TL_CUDA && tl_fill_(t, s) != 0) { tl_tensor_release(t); return NULL; }
    return t;
}

tl_tensor *tl_wrapped_scalar(tl_scalar s) {
    tl_tensor *t = tl_scalar_tensor(s, tl_scalar_dtype(s), TL_CPU);
    if (t) t->flags |= TL_TF_WRAPPED_NUMBER;
    return t;
}

tl_tensor *tl_tensor_from_buffer(const void *data, int64_t ndim, const int64_t *sizes, tl_dtype dtype) {
    tl_tensor *t = tl_empty(ndim, sizes, dtype, TL_CPU);
    if (!t) return NULL;
    if (t->numel) memcpy(tl__data(t), data, (size_t)(t->numel * tl__itemsize(dtype)));
    return t;
}

/* -------------------------------------------------------------------- views */
static tl_tensor *make_view(const tl_tensor *t, int64_t ndim, const int64_t *sizes, const int64_t *strides,
                            int64_t offset) {
    tl_tensor *v = tl__tensor_alloc(t->storage, offset, ndim, sizes, strides, t->dtype);
    if (v) v->key_set = t->key_set & ~TL_PYTHON_KEY_BIT;   /* a subclass's Python state is not shared */
    return v;
}

tl_tensor *tl_as_strided(const tl_tensor *t, int64_t ndim, const int64_t *sizes, const int64_t *strides,
                         int64_t storage_offset) {
    if (check_in_bounds(t->storage, storage_offset, ndim, sizes, strides, t->dtype) != 0) return NULL;
    return make_view(t, ndim, sizes, strides, storage_offset);
}

tl_tensor *tl_alias(const tl_tensor *t) { return make_view(t, t->ndim, t->sizes, t->strides, t->storage_offset); }

/* -1 inference; returns 0 and fills out */
static int infer_size(const int64_t *shape, int64_t ndim, int64_t numel, int64_t *out) {
    int64_t newsize = 1, infer = -1;
    for (int64_t i = 0; i < ndim; i++) {
        if (shape[i] == -1) {
            if (infer >= 0) return tl_set_error(TL_ERR_RUNTIME, "only one dimension can be inferred");
            infer = i;
        } else if (shape[i] >= 0) {
            if (tl__mul_overflow(newsize, shape[i], &newsize)) newsize = -2;
        } else {
            return tl_set_error(TL_ERR_RUNTIME, "invalid shape dimension %lld", (long long)shape[i]);
        }
        out[i] = shape[i];
    }
    if (newsize != -2 && (numel == newsize || (infer >= 0 && newsize > 0 && numel % newsize == 0))) {
        if (infer >= 0) {
            if (newsize == 0) {
                char buf[512];
                format_list(buf, sizeof buf, ndim, shape);
                return tl_set_error(TL_ERR_RUNTIME,
                                    "cannot reshape tensor of 0 elements into shape %s because the unspecified "
                                    "dimension size -1 can be any value and is ambiguous", buf);
            }
            out[infer] = numel / newsize;
        }
        return 0;
    }
    char buf[512];
    format_list(buf, sizeof buf, ndim, shape);
    return tl_set_error(TL_ERR_RUNTIME, "shape '%s' is invalid for input of size %lld", buf, (long long)numel);
}

/* PyTorch's computeStride: strides for viewing (sizes, strides) as newshape, or
 * 0 when it is not possible without a copy */
static int compute_view_strides(const tl_tensor *t, int64_t nd, const int64_t *newshape, int64_t *newstrides) {
    if (t->ndim == 0) {
        for (int64_t i = 0; i < nd; i++) newstrides[i] = 1;
        return 1;
    }
    if (t->numel == 0) {
        tl__contiguous_strides(nd, newshape, newstrides);
        return 1;
    }
    int64_t view_d = nd - 1;
    int64_t chunk_base_stride = t->strides[t->ndim - 1];
    int64_t tensor_numel = 1, view_numel = 1;
    for (int64_t tensor_d = t->ndim - 1; tensor_d >= 0; tensor_d--) {
        tensor_numel *= t->sizes[tensor_d];
        if (tensor_d == 0 || (t->sizes[tensor_d - 1] != 1 &&
                              t->strides[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
            while (view_d >= 0 && (view_numel < tensor_numel || newshape[view_d] == 1)) {
                newstrides[view_d] = view_numel * chunk_base_stride;
                view_numel *= newshape[view_d];
                view_d--;
            }
            if (view_numel != tensor_numel) return 0;
            if (tensor_d > 0) {
                chunk_base_stride = t->strides[tensor_d - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    return view_d == -1;
}

tl_tensor *tl_view(const tl_tensor *t, int64_t ndim, const int64_t *shape) {
    int64_t sizes[TL_MAX_DIMS], strides[TL_MAX_DIMS];
    if (ndim < 0 || ndim > TL_MAX_DIMS) {
        tl_set_error(TL_ERR_RUNTIME, "view: too many dimensions (%lld)", (long long)ndim);
        return NULL;
    }
    if (infer_size(shape, ndim, t->numel, sizes) != 0) return NULL;
    if (!compute_view_strides(t, ndim, sizes, strides)) {
        tl_set_error(TL_ERR_RUNTIME,
                     "view size is not compatible with input tensor's size and stride (at least one dimension "
                     "spans across two contiguous subspaces). Use .reshape(...) instead.");
        return NULL;
    }
    return make_view(t, ndim, sizes, strides, t->storage_offset);
}

tl_tensor *tl_reshape(const tl_tensor *t, int64_t ndim, const int64_t *shape) {
    int64_t sizes[TL_MAX_DIMS], strides[TL_MAX_DIMS];
    if (ndim < 0 || ndim > TL_MAX_DIMS) {
        tl_set_error(TL_ERR_RUNTIME, "reshape: too many dimensions (%lld)", (long long)ndim);
        return NULL;
    }
    if (infer_size(shape, ndim, t->numel, sizes) != 0) return NULL;
    if (compute_view_strides(t, ndim, sizes, strides)) return make_view(t, ndim, sizes, strides, t->storage_offset);
    tl_tensor *c = tl_clone(t);
    if (!c) return NULL;
    /* a fresh clone of non-viewable input is contiguous only if t was not dense */
    tl_tensor *cc = tl_contiguous(c);
    tl_tensor_release(c);
    if (!cc) return NULL;
    tl_tensor *v = tl_view(cc, ndim, sizes);
    tl_tensor_release(cc);
    return v;
}

tl_tensor *tl_transpose(const tl_tensor *t, int64_t dim0, int64_t dim1) {
    int64_t d0 = tl__wrap_dim(dim0, t->ndim, 1), d1;
    if (d0 < 0) return NULL;
    d1 = tl__wrap_dim(dim1, t->ndim, 1);
    if (d1 < 0) return NULL;
    if (t->ndim == 0) return tl_alias(t);
    int64_t sizes[TL_MAX_DIMS], strides[TL_MAX_DIMS];
    memcpy(sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim);
    memcpy(strides, t->strides, sizeof(int64_t) * (size_t)t->ndim);
    sizes[d0] = t->sizes[d1]; sizes[d1] = t->sizes[d0];
    strides[d0] = t->strides[d1]; strides[d1] = t->strides[d0];
    return make_view(t, t->ndim, sizes, strides, t->storage_offset);
}

tl_tensor *tl_permute(const tl_tensor *t, int64_t ndim, const int64_t *dims) {
    if (ndim != t->ndim) {
        tl_set_error(TL_ERR_RUNTIME,
                     "permute(sparse_coo): number of dimensions in the tensor input does not match the length of "
                     "the desired ordering of dimensions i.e. input.dim() = %lld is not equal to len(dims) = %lld",
                     (long long)t->ndim, (long long)ndim);
        return NULL;
    }
    int64_t sizes[TL_MAX_DIMS], strides[TL_MAX_DIMS];
    int seen[TL_MAX_DIMS] = {0};
    for (int64_t i = 0; i < ndim; i++) {
        int64_t d = tl__wrap_dim(dims[i], t->ndim, 0);
        if (d < 0) return NULL;
        if (seen[d]) { tl_set_error(TL_ERR_RUNTIME, "permute(): duplicate dims are not allowed."); return NULL; }
        seen[d] = 1;
        sizes[i] = t->sizes[d];
        strides[i] = t->strides[d];
    }
    return make_view(t, ndim, sizes, strides, t->storage_offset);
}

tl_tensor *tl_select(const tl_tensor *t, int64_t dim, int64_t index) {
    if (t->ndim == 0) {
        tl_set_error(TL_ERR_INDEX, "select() cannot be applied to a 0-dim tensor.");
        return NULL;
    }
    int64_t d = tl__wrap_dim(dim, t->ndim, 0);
    if (d < 0) return NULL;
    int64_t size = t->sizes[d];
    if (index < -size || index >= size) {
        char buf[512];
        format_list(buf, sizeof buf, t->ndim, t->sizes);
        tl_set_error(TL_ERR_INDEX, "select(): index %lld out of range for tensor of size %s at dimension %lld",
                     (long long)index, buf, (long long)d);
        return NULL;
    }
    if (index < 0) index += size;
    int64_t sizes[TL_MAX_DIMS], strides[TL_MAX_DIMS], k = 0;
    for (int64_t i = 0; i < t->ndim; i++) {
        if (i == d) continue;
        sizes[k] = t->sizes[i];
        strides[k++] = t->strides[i];
    }
    return make_view(t, t->ndim - 1, sizes, strides, t->storage_offset + index * t->strides[d]);
}

tl_tensor *tl_slice(const tl_tensor *t, int64_t dim, int64_t start, int64_t end, int64_t step) {
    if (t->ndim == 0) {
        tl_set_error(TL_ERR_INDEX, "slice() cannot be applied to a 0-dim tensor.");
        return NULL;
    }
    int64_t d = tl__wrap_dim(dim, t->ndim, 0);
    if (d < 0) return NULL;
    if (step <= 0) {
        tl_set_error(TL_ERR_VALUE, "slice step must be positive");
        return NULL;
    }
    int64_t size = t->sizes[d];
    if (start < 0) start += size;
    if (end < 0) end += size;
    if (start < 0) start = 0;
    else if (start > size) start = size;
    if (end < start) end = start;
    else if (end > size) end = size;
    int64_t len = end == start ? 0 : 1 + (end - start - 1) / step;   /* no overflow for huge steps */
    int64_t sizes[TL_MAX_DIMS], strides[TL_MAX_DIMS];
    memcpy(sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim);
    memcpy(strides, t->strides, sizeof(int64_t) * (size_t)t->ndim);
    sizes[d] = len;
    if (len > 1) strides[d] = t->strides[d] * step;   /* step < size here, so this fits */
    return make_view(t, t->ndim, sizes, strides, t->storage_offset + start * t->strides[d]);
}

tl_tensor *tl_narrow(const tl_tensor *t, int64_t dim, int64_t start, int64_t length) {
    if (t->ndim == 0) {
        tl_set_error(TL_ERR_RUNTIME, "narrow() cannot be applied to a 0-dim tensor.");
        return NULL;
    }
    int64_t d = tl__wrap_dim(dim, t->ndim, 0);
    if (d < 0) return NULL;
    int64_t size = t->sizes[d];
    if (length < 0) { tl_set_error(TL_ERR_RUNTIME, "narrow(): length must be non-negative."); return NULL; }
    if (start < -size || start > size) {
        tl_set_error(TL_ERR_INDEX, "start out of range (expected to be in range of [%lld, %lld], but got %lld)",
                     (long long)-size, (long long)size, (long long)start);
        return NULL;
    }
    if (start < 0) start += size;
    if (start + length > size) {
        tl_set_error(TL_ERR_RUNTIME, "start (%lld) + length (%lld) exceeds dimension size (%lld).",
                     (long long)start, (long long)length, (long long)size);
        return NULL;
    }
    return tl_slice(t, d, start, start + length, 1);
}

tl_tensor *tl_expand(const tl_tensor *t, int64_t ndim, const int64_t *sizes) {
    if (ndim < t->ndim) {
        tl_set_error(TL_ERR_RUNTIME,
                     "expand: the number of sizes provided (%lld) must be greater or equal to the number of "
                     "dimensions in the tensor (%lld)", (long long)ndim, (long long)t->ndim);
        return NULL;
    }
    if (ndim > TL_MAX_DIMS) { tl_set_error(TL_ERR_RUNTIME, "expand: too many dimensions"); return NULL; }
    int64_t out_sizes[TL_MAX_DIMS], out_strides[TL_MAX_DIMS];
    for (int64_t i = ndim - 1; i >= 0; i--) {
        int64_t off = ndim - 1 - i, dim = t->ndim - 1 - off;
        int64_t size = dim >= 0 ? t->sizes[dim] : 1;
        int64_t stride = dim >= 0 ? t->strides[dim] : (i + 1 < ndim ? out_sizes[i + 1] * out_strides[i + 1] : 1);
        int64_t target = sizes[i];
        if (target == -1) {
            if (dim < 0) {
                tl_set_error(TL_ERR_RUNTIME,
                             "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension %lld",
                             (long long)i);
                return NULL;
            }
            target = size;
        }
        if (target < 0) {
            tl_set_error(TL_ERR_RUNTIME, "Trying to create tensor with negative dimension %lld", (long long)target);
            return NULL;
        }
        if (size != target) {
            if (size != 1) {
                char bs[512], bt[512];
                format_list(bs, sizeof bs, ndim, sizes);
                format_list(bt, sizeof bt, t->ndim, t->sizes);
                tl_set_error(TL_ERR_RUNTIME,
                             "The expanded size of the tensor (%lld) must match the existing size (%lld) at "
                             "non-singleton dimension %lld.  Target sizes: %s.  Tensor sizes: %s",
                             (long long)target, (long long)size, (long long)i, bs, bt);
                return NULL;
            }
            stride = 0;
        }
        out_sizes[i] = target;
        out_strides[i] = stride;
    }
    return make_view(t, ndim, out_sizes, out_strides, t->storage_offset);
}

tl_tensor *tl_squeeze_dim(const tl_tensor *t, int64_t dim) {
    int64_t d = tl__wrap_dim(dim, t->ndim, 1);
    if (d < 0) return NULL;
    if (t->ndim == 0 || t->sizes[d] != 1) return tl_alias(t);
    int64_t sizes[TL_MAX_DIMS], strides[TL_MAX_DIMS], k = 0;
    for (int64_t i = 0; i < t->ndim; i++) {
        if (i == d) continue;
        sizes[k] = t->sizes[i];
        strides[k++] = t->strides[i];
    }
    return make_view(t, t->ndim - 1, sizes, strides, t->storage_offset);
}

tl_tensor *tl_unsqueeze(const tl_tensor *t, int64_t dim) {
    int64_t d = tl__wrap_dim(dim, t->ndim + 1, 1);
    if (d < 0) return NULL;
    if (t->ndim + 1 > TL_MAX_DIMS) { tl_set_error(TL_ERR_RUNTIME, "unsqueeze: too many dimensions"); return NULL; }
    int64_t sizes[TL_MAX_DIMS], strides[TL_MAX_DIMS], k = 0;
    for (int64_t i = 0; i <= t->ndim; i++) {
        if (i == d) {
            sizes[i] = 1;
            strides[i] = d < t->ndim ? t->sizes[d] * t->strides[d] : 1;
        } else {
            sizes[i] = t->sizes[k];
            strides[i] = t->strides[k++];
        }
    }
    return make_view(t, t->ndim + 1, sizes, strides, t->storage_offset);
}
