/* torchlet runtime: storage and tensors (public C API).
 *
 * Ownership: every function returning `tl_tensor *` / `tl_storage *` returns a
 * NEW reference (release it with tl_tensor_release / tl_storage_release), or
 * NULL with the thread-local error set (tl_error.h). Arguments are borrowed.
 * Reference counts are atomic: the GIL is released during every cffi call.
 *
 * Devices: a `tl_device_type device` argument of a factory may carry a device
 * index (type | (index + 1) << 8, see tl_internal.h); the plain TL_CUDA means
 * the current CUDA device (tl_cuda.h).
 *
 * Dispatch keys: tl_tensor_key_set() returns the tensor's DispatchKeySet bits.
 * When runtime/include/tl_dispatch_key.h exists, tensor.c takes the CPU/Meta
 * key numbers from it; otherwise it uses placeholder bits (CPU = 1 << 1,
 * Meta = 1 << 3, CUDA = 1 << 2). See runtime/src/tensor.c.
 *
 * cdef-clean: build_ffi.py strips preprocessor lines; keep plain declarations.
 */
#ifndef TL_TENSOR_H
#define TL_TENSOR_H

#include <stdint.h>
#include "tl_dtype.h"

typedef struct tl_storage tl_storage;
typedef struct tl_tensor tl_tensor;

/* deleter for memory the runtime does not own (e.g. a numpy array's buffer) */
typedef void (*tl_deleter_fn)(void *ctx);

/* ---------------------------------------------------------------- storage */
tl_storage *tl_storage_new(int64_t nbytes, tl_device_type device);
tl_storage *tl_storage_from_external(void *data, int64_t nbytes, tl_device_type device,
                                     tl_deleter_fn deleter, void *ctx);
void tl_storage_retain(tl_storage *s);
void tl_storage_release(tl_storage *s);
void *tl_storage_data(const tl_storage *s);
int64_t tl_storage_nbytes(const tl_storage *s);
int64_t tl_storage_refcount(const tl_storage *s);

/* ----------------------------------------------------------------- tensor */
void tl_tensor_retain(tl_tensor *t);
void tl_tensor_release(tl_tensor *t);              /* NULL is ignored */
int64_t tl_tensor_refcount(const tl_tensor *t);

/* tensor over an existing storage; checks that the view fits the storage */
tl_tensor *tl_tensor_new_with_storage(tl_storage *s, int64_t storage_offset, int64_t ndim,
                                      const int64_t *sizes, const int64_t *strides,
                                      tl_dtype dtype);

/* metadata */
int64_t tl_tensor_ndim(const tl_tensor *t);
const int64_t *tl_tensor_sizes(const tl_tensor *t);
const int64_t *tl_tensor_strides(const tl_tensor *t);     /* in elements */
int64_t tl_tensor_size(const tl_tensor *t, int64_t dim);   /* wraps dim; -1 + IndexError if bad */
int64_t tl_tensor_stride(const tl_tensor *t, int64_t dim);
int64_t tl_tensor_numel(const tl_tensor *t);
tl_dtype tl_tensor_dtype(const tl_tensor *t);
tl_device_type tl_tensor_device(const tl_tensor *t);
int tl_tensor_device_index(const tl_tensor *t);            /* cuda: the device ordinal; cpu/meta: -1 */
int tl_storage_device_index(const tl_storage *s);          /* likewise */
int64_t tl_tensor_itemsize(const tl_tensor *t);
int64_t tl_tensor_storage_offset(const tl_tensor *t);
tl_storage *tl_tensor_storage(const tl_tensor *t);          /* borrowed; NULL never */
void *tl_tensor_data_ptr(const tl_tensor *t);               /* storage data + offset; NULL on meta/empty */
int tl_tensor_is_contiguous(const tl_tensor *t);
int tl_tensor_is_non_overlapping_and_dense(const tl_tensor *t);
int tl_tensor_is_wrapped_number(const tl_tensor *t);        /* 0-dim tensor made from a Python number */
void tl_tensor_set_wrapped_number(tl_tensor *t, int flag);
uint64_t tl_tensor_key_set(const tl_tensor *t);
int tl_tensor_is_alias_of(const tl_tensor *a, const tl_tensor *b);  /* same storage */
/* returns the meta metadata summary "sizes/strides/dtype" as a short string for debugging */
const char *tl_tensor_debug_string(const tl_tensor *t);

/* room for autograd: an opaque pointer owned by the autograd layer, freed with
 * its deleter when the tensor dies; a version counter shared by all views of a
 * storage (bumped by in-place ops). */
void *tl_tensor_autograd_meta(const tl_tensor *t);
void tl_tensor_set_autograd_meta(tl_tensor *t, void *meta, tl_deleter_fn deleter);
int64_t tl_tensor_version(const tl_tensor *t);
void tl_tensor_bump_version(tl_tensor *t);

/* room for tensor subclasses (runtime/torchlet/_subclass.py): an opaque slot the
 * Python layer owns, released through one process-wide hook when the tensor dies
 * (or the slot is replaced). A tensor with a slot carries the Python dispatch key,
 * so its calls reach the Python key's fallback; views do not inherit it. */
typedef void (*tl_py_slot_release_fn)(void *slot);
void tl_set_py_slot_release(tl_py_slot_release_fn fn);
void tl_tensor_set_py_slot(tl_tensor *t, void *slot);      /* NULL: back to a plain tensor */
void *tl_tensor_py_slot(const tl_tensor *t);

/* -------------------------------------------------------------- factories */
tl_tensor *tl_empty(int64_t ndim, const int64_t *sizes, tl_dtype dtype, tl_device_type device);
tl_tensor *tl_empty_strided(int64_t ndim, const int64_t *sizes, const int64_t *strides,
                            tl_dtype dtype, tl_device_type device);
tl_tensor *tl_empty_like(const tl_tensor *t);               /* same layout when dense */
tl_tensor *tl_zeros(int64_t ndim, const int64_t *sizes, tl_dtype dtype, tl_device_type device);
tl_tensor *tl_ones(int64_t ndim, const int64_t *sizes, tl_dtype dtype, tl_device_type device);
tl_tensor *tl_full(int64_t ndim, const int64_t *sizes, tl_scalar value, tl_dtype dtype,
                   tl_device_type device);
tl_tensor *tl_arange(int64_t n, tl_dtype dtype, tl_device_type device);  /* 0..n-1 */
/* 0-dim tensor of dtype (TL_DTYPE_UNDEFINED: the scalar's own dtype) */
tl_tensor *tl_scalar_tensor(tl_scalar s, tl_dtype dtype, tl_device_type device);
/* 0-dim CPU tensor marked as a wrapped Python number (bool/int64/float64):
 * takes part in type promotion like a Python scalar */
tl_tensor *tl_wrapped_scalar(tl_scalar s);
/* copy of nbytes of host memory laid out contiguously, as a new tensor */
tl_tensor *tl_tensor_from_buffer(const void *data, int64_t ndim, const int64_t *sizes,
                                 tl_dtype dtype);

/* ------------------------------------------------------------------ views */
/* every view shares the storage and the version counter */
tl_tensor *tl_as_strided(const tl_tensor *t, int64_t ndim, const int64_t *sizes,
                         const int64_t *strides, int64_t storage_offset);
tl_tensor *tl_alias(const tl_tensor *t);
tl_tensor *tl_view(const tl_tensor *t, int64_t ndim, const int64_t *shape);   /* one -1 allowed */
tl_tensor *tl_reshape(const tl_tensor *t, int64_t ndim, const int64_t *shape); /* view or copy */
tl_tensor *tl_transpose(const tl_tensor *t, int64_t dim0, int64_t dim1);
tl_tensor *tl_permute(const tl_tensor *t, int64_t ndim, const int64_t *dims);
tl_tensor *tl_select(const tl_tensor *t, int64_t dim, int64_t index);
tl_tensor *tl_slice(const tl_tensor *t, int64_t dim, int64_t start, int64_t end, int64_t step);
tl_tensor *tl_narrow(const tl_tensor *t, int64_t dim, int64_t start, int64_t length);
tl_tensor *tl_expand(const tl_tensor *t, int64_t ndim, const int64_t *sizes);  /* -1 keeps */
tl_tensor *tl_squeeze_dim(const tl_tensor *t, int64_t dim);
tl_tensor *tl_unsqueeze(const tl_tensor *t, int64_t dim);

/* ---------------------------------------------------------- copy and fill */
/* dst <- src, broadcasting src to dst's shape, converting dtypes; any strides;
 * safe when src and dst overlap. Returns 0 or -1. */
int tl_copy_(tl_tensor *dst, const tl_tensor *src);
tl_tensor *tl_clone(const tl_tensor *t);                    /* preserve layout when dense */
tl_tensor *tl_contiguous(const tl_tensor *t);               /* new ref to t if already contiguous */
tl_tensor *tl_to_dtype(const tl_tensor *t, tl_dtype dtype, int copy);  /* new ref to t if same & !copy */
tl_tensor *tl_to_device(const tl_tensor *t, tl_device_type device, int copy);
int tl_fill_(tl_tensor *t, tl_scalar value);
int tl_zero_(tl_tensor *t);
int tl_tensor_item(const tl_tensor *t, tl_scalar *out);     /* numel must be 1 */
/* resize in place (contiguous strides); grows the storage when needed */
int tl_resize_(tl_tensor *t, int64_t ndim, const int64_t *sizes);

#endif
