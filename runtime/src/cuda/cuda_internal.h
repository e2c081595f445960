/* The CUDA runtime's internals (runtime/src/cuda/): the driver API subset it
 * calls, resolved at run time, and the caching allocator's backend interface.
 * No CUDA header is needed: the few driver types are declared here with the
 * driver's ABI (handles are pointers, CUdeviceptr is 64-bit, CUresult int). */
#ifndef TL_CUDA_INTERNAL_H
#define TL_CUDA_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "tl_cuda.h"

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;

enum {
    TL_CU_SUCCESS = 0,
    TL_CU_ERROR_OUT_OF_MEMORY = 2,
    TL_CU_ERROR_NO_DEVICE = 100,
    TL_CU_ERROR_INVALID_DEVICE = 101,
    TL_CU_ERROR_NOT_READY = 600,
    TL_CU_ATTR_CC_MAJOR = 75,    /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
    TL_CU_ATTR_CC_MINOR = 76,
    TL_CU_EVENT_DISABLE_TIMING = 2,
    TL_CU_STREAM_NON_BLOCKING = 1,
    TL_CU_API_VERSION = 12000    /* the pinned cuGetProcAddress version */
};

/* the entry points, resolved once by cuGetProcAddress at TL_CU_API_VERSION */
typedef struct tl_cu_api {
    CUresult (*cuInit)(unsigned);
    CUresult (*cuDriverGetVersion)(int *);
    CUresult (*cuGetErrorString)(CUresult, const char **);
    CUresult (*cuGetErrorName)(CUresult, const char **);
    CUresult (*cuDeviceGetCount)(int *);
    CUresult (*cuDeviceGet)(CUdevice *, int);
    CUresult (*cuDeviceGetName)(char *, int, CUdevice);
    CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
    CUresult (*cuDeviceTotalMem)(size_t *, CUdevice);
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*cuCtxSetCurrent)(CUcontext);
    CUresult (*cuCtxSynchronize)(void);
    CUresult (*cuMemGetInfo)(size_t *, size_t *);
    CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
    CUresult (*cuMemFree)(CUdeviceptr);
    CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
    CUresult (*cuMemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
    CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
    CUresult (*cuMemcpyPeerAsync)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream);
    CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
    CUresult (*cuMemsetD16Async)(CUdeviceptr, unsigned short, size_t, CUstream);
    CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned int, size_t, CUstream);
    CUresult (*cuStreamCreateWithPriority)(CUstream *, unsigned, int);
    CUresult (*cuStreamDestroy)(CUstream);
    CUresult (*cuStreamSynchronize)(CUstream);
    CUresult (*cuStreamQuery)(CUstream);
    CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned);
    CUresult (*cuEventCreate)(CUevent *, unsigned);
    CUresult (*cuEventDestroy)(CUevent);
    CUresult (*cuEventRecord)(CUevent, CUstream);
    CUresult (*cuEventQuery)(CUevent);
    CUresult (*cuEventSynchronize)(CUevent);
    CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
    CUresult (*cuModuleLoadData)(CUmodule *, const void *);
    CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
    CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                               unsigned, CUstream, void **, void **);
} tl_cu_api;

/* ---- driver.c */
/* the loaded API, or NULL with the error set ("Found no NVIDIA driver ...") */
const tl_cu_api *tl__cu(void);
/* makes device's primary context current on this thread (retained on first use) */
int tl__cu_ctx(int device);
CUcontext tl__cu_primary(int device);      /* after tl__cu_ctx(device) succeeded */
/* "CUDA driver error: <the driver's text>" from a failed call's result; -1 */
int tl__cu_error(CUresult r, const char *what);
int tl__cu_check_device(int device);       /* 0, or -1 + "CUDA error: invalid device ordinal" */
extern _Thread_local int tl__cu_t_device;  /* this thread's current device (driver.c, guard.c) */

/* ---- memory.c: count elements of width 1, 2 or 4 bytes set to pattern, on
 * the current stream */
int tl__cuda_memset_pattern(void *dst, int device, uint32_t pattern, int width, int64_t count);

/* ---- the caching allocator (caching_allocator.c), over a backend: the
 * driver's (memory.c) in torchlet, a host-malloc one in tests/cuda */
typedef struct tl_cuda_alloc_backend {
    void *ctx;
    /* 0 ok, 1 out of memory (no error set), -1 other failure (error set) */
    int (*raw_alloc)(void *ctx, int device, size_t size, void **ptr);
    int (*raw_free)(void *ctx, int device, void *ptr);
    /* an event recorded on `stream` now; query: 1 done, 0 pending, -1 error */
    int (*event_record)(void *ctx, int device, void *stream, void **event);
    int (*event_query)(void *ctx, void *event);
    int (*event_synchronize)(void *ctx, void *event);
    void (*event_destroy)(void *ctx, void *event);
    /* free and total bytes of the device (for the out-of-memory message); may be NULL */
    int (*mem_info)(void *ctx, int device, size_t *free_bytes, size_t *total_bytes);
} tl_cuda_alloc_backend;

typedef struct tl_cuda_alloc_stats {
    int64_t allocated, max_allocated, reserved, max_reserved;
    int64_t n_segments, n_alloc_retries, n_ooms, n_blocks_free, n_pending_events;
} tl_cuda_alloc_stats;

typedef struct tl_caching_allocator tl_caching_allocator;
tl_caching_allocator *tl_caching_allocator_new(const tl_cuda_alloc_backend *backend, int ndevices);
void tl_caching_allocator_destroy(tl_caching_allocator *a);   /* gives every segment back */
/* NULL + error on failure (TL_ERR_CUDA_OOM when memory ran out); nbytes 0: NULL, no error */
void *tl_caching_allocator_malloc(tl_caching_allocator *a, int device, size_t nbytes, void *stream);
int tl_caching_allocator_free(tl_caching_allocator *a, void *ptr);
int tl_caching_allocator_record_stream(tl_caching_allocator *a, void *ptr, void *stream);
int tl_caching_allocator_empty_cache(tl_caching_allocator *a);
int tl_caching_allocator_stats(tl_caching_allocator *a, int device, tl_cuda_alloc_stats *out);
int tl_caching_allocator_reset_peak(tl_caching_allocator *a, int device);
/* the device of the block at ptr (-1 if ptr is not an allocated block) */
int tl_caching_allocator_device_of(tl_caching_allocator *a, const void *ptr);

/* PyTorch's size rules (exposed for tests) */
size_t tl_caching_round_size(size_t n);         /* 512 B multiples */
size_t tl_caching_allocation_size(size_t rounded); /* the segment size cudaMalloc'ed */

#endif
