/* torchlet runtime: internal definitions shared by runtime/src and kernels.
 * NOT part of the cdef (not in cdef_headers.txt). */
#ifndef TL_INTERNAL_H
#define TL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tl_dtype.h"
#include "tl_error.h"
#include "tl_iter.h"
#include "tl_runtime.h"
#include "tl_tensor.h"

#define TL_MAX_DIMS 64
#define TL_INLINE_DIMS 5
#define TL_ALIGNMENT 64
#define TL_INLINE_STORAGE_MAX 4096   /* CPU storages up to this size hold their data inline */

#define TL_LIKELY(x) __builtin_expect(!!(x), 1)
#define TL_UNLIKELY(x) __builtin_expect(!!(x), 0)

struct tl_storage {
    int64_t refcount;          /* atomic */
    int64_t version;           /* atomic; version counter shared by views */
    void *data;
    int64_t nbytes;            /* usable bytes */
    tl_device_type device;
    int32_t device_index;      /* cuda: the device's ordinal; 0 for cpu and meta */
    int owns_data;             /* 1: tl_free(data, nbytes) on release, cuda: tl_cuda_free(data) */
    int external;              /* wraps memory the runtime does not own (not resizable) */
    int small_block;           /* a block of the small class (tensor.c's per-thread spare) */
    tl_deleter_fn deleter;     /* external memory */
    void *deleter_ctx;
};

struct tl_tensor {
    int64_t refcount;          /* atomic */
    tl_storage *storage;
    int64_t storage_offset;    /* elements */
    int64_t ndim;
    int64_t numel;
    int64_t *sizes;            /* -> inline_dims or heap when ndim > TL_INLINE_DIMS */
    int64_t *strides;
    tl_dtype dtype;
    tl_device_type device;
    uint32_t flags;            /* TL_TF_* */
    uint64_t key_set;
    void *autograd_meta;
    tl_deleter_fn autograd_meta_deleter;
    void *py_slot;             /* a tensor subclass's Python state (tl_tensor_set_py_slot) */
    int64_t inline_dims[2 * TL_INLINE_DIMS];
};

enum {
    TL_TF_CONTIGUOUS = 1,
    TL_TF_WRAPPED_NUMBER = 2,
    TL_TF_NON_OVERLAPPING_DENSE = 4
};

/* ---- hot dtype queries, inlined inside the library (the exported
 * tl_dtype_* functions of dtype.c stay for the cdef and for other callers;
 * a call per query cost ~10% of a 1-element `a + b` in C) */
extern const int64_t tl__k_itemsize[TL_NUM_DTYPES];
static inline int tl__dtype_valid(int dt) { return (unsigned)dt < (unsigned)TL_NUM_DTYPES; }
static inline int64_t tl__itemsize(tl_dtype dt) { return tl__dtype_valid((int)dt) ? tl__k_itemsize[dt] : 0; }
static inline int tl__dtype_is_floating(tl_dtype dt) { return dt >= TL_FLOAT16 && dt <= TL_FLOAT64; }
static inline int tl__dtype_is_complex(tl_dtype dt) { return dt == TL_COMPLEX64 || dt == TL_COMPLEX128; }

/* ---- tensor internals (tensor.c) */
tl_tensor *tl__tensor_alloc(tl_storage *s, int64_t offset, int64_t ndim, const int64_t *sizes,
                            const int64_t *strides, tl_dtype dtype); /* takes a ref on s */
int tl__tensor_set_geometry(tl_tensor *t, int64_t ndim, const int64_t *sizes,
                            const int64_t *strides);
void tl__tensor_refresh(tl_tensor *t);     /* numel + flags from sizes/strides */
int tl__check_sizes(int64_t ndim, const int64_t *sizes, int64_t *numel_out);
int tl__contiguous_strides(int64_t ndim, const int64_t *sizes, int64_t *strides);
int64_t tl__wrap_dim(int64_t dim, int64_t ndim, int scalar_ok); /* -1 + IndexError */
static inline char *tl__data(const tl_tensor *t) {
    if (!t->storage->data) return NULL;
    return (char *)t->storage->data + t->storage_offset * tl__itemsize(t->dtype);
}
uint64_t tl__keyset_for_device(tl_device_type d);
const char *tl__device_name(tl_device_type d);
/* A device argument travels through the factories and the generated glue as
 * one int: the tl_device_type in the low byte and, for an explicit index
 * ("cuda:1"), index + 1 above it. "cuda" alone (no index: the current device),
 * "cpu" and "meta" are the plain type values, so CPU code compares as before. */
#define TL_DEVICE_INDEX_SHIFT 8
static inline tl_device_type tl__device_type_of(int packed) { return (tl_device_type)(packed & 0xff); }
static inline int tl__device_index_of(int packed) { return (packed >> TL_DEVICE_INDEX_SHIFT) - 1; }  /* -1: none */
static inline int tl__device_pack(tl_device_type type, int index) {
    return (int)type | ((index + 1) << TL_DEVICE_INDEX_SHIFT);
}
/* t's device as a factory argument: the type, packed with the index for cuda */
static inline tl_device_type tl__device_of(const tl_tensor *t) {
    return TL_LIKELY(t->device != TL_CUDA) ? t->device
                                          : (tl_device_type)tl__device_pack(TL_CUDA, t->storage->device_index);
}
/* "cuda:1" for a cuda tensor, "cpu" / "meta" otherwise (a per-thread buffer: use before the next call) */
const char *tl__tensor_device_str(const tl_tensor *t);

/* checked arithmetic */
static inline int tl__mul_overflow(int64_t a, int64_t b, int64_t *r) {
    return __builtin_mul_overflow(a, b, r);
}
static inline int tl__add_overflow(int64_t a, int64_t b, int64_t *r) {
    return __builtin_add_overflow(a, b, r);
}

/* ---- TensorIterator (iter.c): an input the caller keeps alive until
 * tl_iter_free (no reference taken) */
int tl__iter_add_input_borrowed(tl_iter *it, const tl_tensor *in);
/* the last input added is read in its own dtype (not promoted; where's condition) */
int tl__iter_keep_last_input_dtype(tl_iter *it);
/* output i with the iterator's reference (which it gives up) */
tl_tensor *tl__iter_take_output(tl_iter *it, int i);

/* ---- warnings (error.c) */
void tl__warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* PyTorch's TORCH_WARN_ONCE: at most one warning per call site per process
 * (until tl_reset_warn_once). The flag is the site's own static atomic; it
 * holds the warn-once generation it last fired in, so a reset re-arms every
 * site at once and concurrent first calls still warn exactly once. */
typedef _Atomic unsigned tl_warn_once_flag;
void tl__warn_once(tl_warn_once_flag *flag, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define TL_WARN_ONCE(...)                        \
    do {                                         \
        static tl_warn_once_flag tl__site_flag;  \
        tl__warn_once(&tl__site_flag, __VA_ARGS__); \
    } while (0)

/* ---- parallel (parallel.c) */
typedef void (*tl_range_fn)(int64_t begin, int64_t end, void *ctx);
/* the pool's size limit: threads a region uses, the caller included */
#define TL_MAX_THREADS 64
/* calls fn over [0, n) split in chunks across threads when n >= grain (at
 * most one chunk per thread and per grain elements; which thread runs which
 * chunk varies: results must not depend on it) */
void tl_parallel_for(int64_t n, int64_t grain, tl_range_fn fn, void *ctx);
int tl__in_parallel_region(void);
/* job(i) for i < njobs, each on its own thread at the same time (jobs that
 * wait on each other: OpenBLAS's) */
void tl_parallel_jobs(int njobs, void (*job)(int i, void *ctx), void *ctx);

/* ---- copy / fill engine (copy.c) */
int tl__copy_impl(tl_tensor *dst, const tl_tensor *src);

/* ---- CUDA tensors (runtime/src/cuda/tensor_ops.c): storage memory, copies
 * to/from/between devices, fill, one element to the host */
int tl__cuda_storage_init(tl_storage *s, int64_t nbytes, int packed_device);
void tl__cuda_storage_free(tl_storage *s);
int tl__cuda_storage_grow(tl_storage *s, int64_t nbytes);
int tl__cuda_copy(tl_tensor *dst, const tl_tensor *src);
int tl__cuda_fill(tl_tensor *t, tl_scalar value);
int tl__cuda_item(const tl_tensor *t, tl_scalar *out);
/* a factory computed on the host, moved to `packed_device` (takes host's
 * reference; NULL in, NULL out) */
tl_tensor *tl__host_result_to(tl_tensor *host, int packed_device);

/* ---- kernels (kernels/cpu, one table per capability) */
#include "tl_kernel.h"

#endif
