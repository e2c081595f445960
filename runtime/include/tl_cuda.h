/* torchlet runtime: the CUDA backend's C interface (runtime/src/cuda/).
 *
 * The driver is loaded lazily (dlopen of libcuda.so.1, or the library named by
 * TORCHLET_LIBCUDA, entry points resolved with cuGetProcAddress at a pinned
 * API version), so nothing here needs a driver at link time: on a machine
 * without one, tl_cuda_device_count() is 0 and every call that needs a device
 * fails with a RuntimeError-class error, never a crash.
 *
 * Every function returning int returns 0 on success, or -1 with the
 * thread-local error set (tl_error.h). Streams are opaque driver handles;
 * NULL is the device's default (legacy) stream.
 *
 * cdef-clean: build_ffi.py strips preprocessor lines; keep plain declarations.
 */
#ifndef TL_CUDA_H
#define TL_CUDA_H

#include <stddef.h>
#include <stdint.h>
#include "tl_tensor.h"

enum { TL_CUDA_MAX_DEVICES = 16 };

typedef struct tl_cuda_stream_s *tl_cuda_stream;  /* a CUstream */
typedef struct tl_cuda_event_s *tl_cuda_event;    /* a CUevent */

/* ---------------------------------------------------------------- devices */
int tl_cuda_device_count(void);          /* 0 without a driver or device (no error) */
const char *tl_cuda_unavailable_reason(void);  /* why the count is 0 ("" when it is not) */
int tl_cuda_current_device(void);        /* this thread's device (0 by default) */
int tl_cuda_set_device(int device);
int tl_cuda_device_capability(int device, int *major, int *minor);
int tl_cuda_device_name(int device, char *buf, int buflen);
int tl_cuda_driver_version(int *version);  /* cuDriverGetVersion, e.g. 13000 */
int tl_cuda_synchronize(int device);     /* whole device */

/* ---------------------------------------------------------------- streams */
tl_cuda_stream tl_cuda_current_stream(int device);  /* this thread's; NULL = default */
int tl_cuda_set_current_stream(int device, tl_cuda_stream s);
int tl_cuda_stream_create(int device, int priority, tl_cuda_stream *out);
int tl_cuda_stream_destroy(tl_cuda_stream s);
int tl_cuda_stream_synchronize(tl_cuda_stream s);
int tl_cuda_stream_query(tl_cuda_stream s);          /* 1 done, 0 pending, -1 error */
int tl_cuda_event_create(int device, int enable_timing, tl_cuda_event *out);
int tl_cuda_event_destroy(tl_cuda_event e);
int tl_cuda_event_record(tl_cuda_event e, tl_cuda_stream s);
int tl_cuda_event_query(tl_cuda_event e);            /* 1 done, 0 pending, -1 error */
int tl_cuda_event_synchronize(tl_cuda_event e);
int tl_cuda_stream_wait_event(tl_cuda_stream s, tl_cuda_event e);
int tl_cuda_event_elapsed_ms(tl_cuda_event start, tl_cuda_event end, float *ms);

/* ------------------------------------------- memory (the caching allocator) */
/* device memory for nbytes on `device`, associated with the current stream
 * (PyTorch's rules: 512 B rounding, small/large pools, best fit per stream,
 * split/merge, free-and-retry on out-of-memory). NULL + error on failure;
 * nbytes == 0 gives NULL without an error. */
void *tl_cuda_alloc(int device, int64_t nbytes);
void tl_cuda_free(void *ptr);                        /* NULL is ignored */
int tl_cuda_record_stream(void *ptr, tl_cuda_stream s);
int tl_cuda_empty_cache(void);
/* counters of `device`: allocated/reserved bytes now and at peak */
int tl_cuda_memory_stats(int device, int64_t *allocated, int64_t *max_allocated,
                         int64_t *reserved, int64_t *max_reserved);
int tl_cuda_reset_peak_memory_stats(int device);

/* copies on the current stream of the device involved; dst_device or
 * src_device -1 means host memory. A copy to the host synchronizes (as
 * PyTorch's .cpu() / .item() do); non_blocking is honoured for host->device. */
int tl_cuda_memcpy(void *dst, int dst_device, const void *src, int src_device,
                   int64_t nbytes, int non_blocking);
int tl_cuda_memset(void *dst, int device, int value, int64_t nbytes);

/* ---------------------------------------------------------------- kernels */
/* A program: one CUDA C source (no #include) holding the kernels of one
 * operator (all dtypes and variants). The generator emits one static
 * tl_cuda_program per operator; its text is in pieces, the program's own and
 * texts several programs share (the prelude: generated/cuda/tl_cuda_parts.c),
 * joined in order into the source the compiler gets. The runtime fills
 * `modules` on first launch per device, through the installed compiler. */
typedef struct tl_cuda_program {
    const char *name;            /* e.g. "ufunc_add": part of the cache key */
    const char *const *parts;    /* the CUDA C text in pieces, NULL-terminated */
    void *modules[TL_CUDA_MAX_DEVICES];  /* CUmodule per device, NULL until loaded */
} tl_cuda_program;

/* A kernel of a program, its CUfunction resolved once per device. */
typedef struct tl_cuda_function {
    tl_cuda_program *program;
    const char *name;            /* the extern "C" __global__ name */
    void *fns[TL_CUDA_MAX_DEVICES];
} tl_cuda_function;

/* Source -> loadable image (CUBIN) for compute capability major.minor.
 * Installed by torchlet.cuda at import (NVRTC + on-disk cache); the image is
 * malloc'd and freed by the runtime. Returns 0, or -1 with *error_msg set to a
 * malloc'd message. Only called on a program's first launch on a device. */
typedef int (*tl_cuda_compile_fn)(const char *name, const char *source, int cc_major,
                                  int cc_minor, void **image, size_t *image_len,
                                  char **error_msg);
void tl_cuda_set_compiler(tl_cuda_compile_fn fn);

/* Launches f on the current stream of the current device. args is the
 * cuLaunchKernel kernelParams array (one pointer per kernel parameter; the
 * generator passes one parameter struct whose layout it emits on both
 * sides). No Python on this path. */
int tl_cuda_launch(tl_cuda_function *f, const unsigned grid[3], const unsigned block[3],
                   unsigned shared_bytes, void **args);

/* ------------------------------------------------ hooks for device kernels */
/* The runtime copies and fills CUDA tensors itself where bytes allow it
 * (cuMemcpy*, cuMemsetD8/16/32 over dense tensors) and otherwise through a
 * host staging copy. A kernel library installs these to do the rest on the
 * device: `copy` for a same-device copy that needs a cast or a strided
 * layout (dst and src on one device, same shape after broadcasting src),
 * `fill` for a fill no memset pattern expresses (8-byte values with unequal
 * halves, strided views). Each returns 0, or -1 with the error set; NULL
 * (the default) keeps the staging path. */
typedef int (*tl_cuda_copy_kernel_fn)(tl_tensor *dst, const tl_tensor *src);
typedef int (*tl_cuda_fill_kernel_fn)(tl_tensor *dst, tl_scalar value);
void tl_cuda_set_copy_kernel(tl_cuda_copy_kernel_fn fn);
void tl_cuda_set_fill_kernel(tl_cuda_fill_kernel_fn fn);

/* ------------------------------------------------------------- tensors */
/* PyTorch's Tensor.record_stream: the tensor's block is not reused until the
 * work queued on s so far has finished. */
int tl_cuda_tensor_record_stream(const tl_tensor *t, tl_cuda_stream s);

#endif
