/* Device memory (tl_cuda.h): the caching allocator over the driver, copies
 * and memsets on the current stream. */
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "tl_error.h"

/* ------------------------------------------------- the driver as a backend */
static int be_alloc(void *ctx, int device, size_t size, void **ptr) {
    (void)ctx;
    if (tl__cu_ctx(device) != 0) return -1;
    CUdeviceptr p = 0;
    CUresult r = tl__cu()->cuMemAlloc(&p, size);
    if (r == TL_CU_ERROR_OUT_OF_MEMORY) return 1;
    if (r != TL_CU_SUCCESS) return tl__cu_error(r, "cuMemAlloc");
    *ptr = (void *)(uintptr_t)p;
    return 0;
}

static int be_free(void *ctx, int device, void *ptr) {
    (void)ctx;
    if (tl__cu_ctx(device) != 0) return -1;
    CUresult r = tl__cu()->cuMemFree((CUdeviceptr)(uintptr_t)ptr);
    return r == TL_CU_SUCCESS ? 0 : tl__cu_error(r, "cuMemFree");
}

static int be_event_record(void *ctx, int device, void *stream, void **event) {
    (void)ctx;
    tl_cuda_event e = NULL;
    if (tl_cuda_event_create(device, 0, &e) != 0) return -1;
    if (tl_cuda_event_record(e, (tl_cuda_stream)stream) != 0) {
        tl_cuda_event_destroy(e);
        return -1;
    }
    *event = e;
    return 0;
}

static int be_event_query(void *ctx, void *event) {
    (void)ctx;
    return tl_cuda_event_query((tl_cuda_event)event);
}

static int be_event_sync(void *ctx, void *event) {
    (void)ctx;
    return tl_cuda_event_synchronize((tl_cuda_event)event);
}

static void be_event_destroy(void *ctx, void *event) {
    (void)ctx;
    tl_cuda_event_destroy((tl_cuda_event)event);
}

static int be_mem_info(void *ctx, int device, size_t *free_bytes, size_t *total_bytes) {
    (void)ctx;
    if (tl__cu_ctx(device) != 0) return -1;
    return tl__cu()->cuMemGetInfo(free_bytes, total_bytes) == TL_CU_SUCCESS ? 0 : -1;
}

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static tl_caching_allocator *g_alloc;

static void make_allocator(void) {
    static const tl_cuda_alloc_backend be = {NULL, be_alloc, be_free, be_event_record, be_event_query,
                                             be_event_sync, be_event_destroy, be_mem_info};
    int n = tl_cuda_device_count();
    if (n > 0) g_alloc = tl_caching_allocator_new(&be, n);
}

static tl_caching_allocator *allocator(void) {
    if (!tl__cu()) return NULL;
    pthread_once(&g_once, make_allocator);
    if (!g_alloc) tl_set_error(TL_ERR_MEMORY, "the CUDA caching allocator could not be created");
    return g_alloc;
}

/* ---------------------------------------------------------------- memory */
void *tl_cuda_alloc(int device, int64_t nbytes) {
    if (nbytes < 0) {
        tl_set_error(TL_ERR_RUNTIME, "Trying to create tensor with negative dimension");
        return NULL;
    }
    tl_caching_allocator *a = allocator();
    if (!a || tl__cu_check_device(device) != 0) return NULL;
    if (nbytes == 0) return NULL;
    return tl_caching_allocator_malloc(a, device, (size_t)nbytes, tl_cuda_current_stream(device));
}

void tl_cuda_free(void *ptr) {
    if (!ptr || !g_alloc) return;
    if (tl_caching_allocator_free(g_alloc, ptr) != 0) tl_clear_error();   /* a deleter cannot report */
}

int tl_cuda_record_stream(void *ptr, tl_cuda_stream s) {
    tl_caching_allocator *a = allocator();
    return a ? tl_caching_allocator_record_stream(a, ptr, s) : -1;
}

int tl_cuda_empty_cache(void) {
    if (tl_cuda_device_count() == 0) return 0;   /* nothing cached: PyTorch's empty_cache is a no-op too */
    tl_caching_allocator *a = allocator();
    return a ? tl_caching_allocator_empty_cache(a) : -1;
}

int tl_cuda_memory_stats(int device, int64_t *allocated, int64_t *max_allocated, int64_t *reserved,
                         int64_t *max_reserved) {
    tl_caching_allocator *a = allocator();
    if (!a) return -1;
    tl_cuda_alloc_stats st;
    if (tl_caching_allocator_stats(a, device, &st) != 0) return -1;
    if (allocated) *allocated = st.allocated;
    if (max_allocated) *max_allocated = st.max_allocated;
    if (reserved) *reserved = st.reserved;
    if (max_reserved) *max_reserved = st.max_reserved;
    return 0;
}

int tl_cuda_reset_peak_memory_stats(int device) {
    tl_caching_allocator *a = allocator();
    return a ? tl_caching_allocator_reset_peak(a, device) : -1;
}

/* ---------------------------------------------------------------- copies */
int tl_cuda_memcpy(void *dst, int dst_device, const void *src, int src_device, int64_t nbytes, int non_blocking) {
    if (nbytes < 0) return tl_set_error(TL_ERR_RUNTIME, "tl_cuda_memcpy: negative size");
    if (nbytes == 0) return 0;
    if (dst_device < 0 && src_device < 0) {
        memmove(dst, src, (size_t)nbytes);
        return 0;
    }
    const tl_cu_api *cu = tl__cu();
    if (!cu) return -1;
    CUresult r;
    if (src_device < 0) {   /* host -> device */
        if (tl__cu_ctx(dst_device) != 0) return -1;
        CUstream s = (CUstream)tl_cuda_current_stream(dst_device);
        r = cu->cuMemcpyHtoDAsync((CUdeviceptr)(uintptr_t)dst, src, (size_t)nbytes, s);
        if (r != TL_CU_SUCCESS) return tl__cu_error(r, "cuMemcpyHtoDAsync");
        if (!non_blocking && (r = cu->cuStreamSynchronize(s)) != TL_CU_SUCCESS)
            return tl__cu_error(r, "cuStreamSynchronize");
        return 0;
    }
    if (dst_device < 0) {   /* device -> host: the host sees the data on return */
        if (tl__cu_ctx(src_device) != 0) return -1;
        CUstream s = (CUstream)tl_cuda_current_stream(src_device);
        r = cu->cuMemcpyDtoHAsync(dst, (CUdeviceptr)(uintptr_t)src, (size_t)nbytes, s);
        if (r == TL_CU_SUCCESS) r = cu->cuStreamSynchronize(s);
        return r == TL_CU_SUCCESS ? 0 : tl__cu_error(r, "cuMemcpyDtoHAsync");
    }
    if (dst_device == src_device) {
        if (tl__cu_ctx(dst_device) != 0) return -1;
        CUstream s = (CUstream)tl_cuda_current_stream(dst_device);
        r = cu->cuMemcpyDtoDAsync((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, (size_t)nbytes, s);
        return r == TL_CU_SUCCESS ? 0 : tl__cu_error(r, "cuMemcpyDtoDAsync");
    }
    /* across devices: on the source's stream, finished before returning (the
     * destination's streams have no ordering with it otherwise) */
    if (tl__cu_ctx(dst_device) != 0 || tl__cu_ctx(src_device) != 0) return -1;
    CUstream s = (CUstream)tl_cuda_current_stream(src_device);
    r = cu->cuMemcpyPeerAsync((CUdeviceptr)(uintptr_t)dst, tl__cu_primary(dst_device), (CUdeviceptr)(uintptr_t)src,
                              tl__cu_primary(src_device), (size_t)nbytes, s);
    if (r == TL_CU_SUCCESS) r = cu->cuStreamSynchronize(s);
    return r == TL_CU_SUCCESS ? 0 : tl__cu_error(r, "cuMemcpyPeerAsync");
}

int tl__cuda_memset_pattern(void *dst, int device, uint32_t pattern, int width, int64_t count) {
    if (count <= 0) return 0;
    if (tl__cu_ctx(device) != 0) return -1;
    const tl_cu_api *cu = tl__cu();
    CUstream s = (CUstream)tl_cuda_current_stream(device);
    CUdeviceptr p = (CUdeviceptr)(uintptr_t)dst;
    CUresult r = width == 1   ? cu->cuMemsetD8Async(p, (unsigned char)pattern, (size_t)count, s)
                 : width == 2 ? cu->cuMemsetD16Async(p, (unsigned short)pattern, (size_t)count, s)
                              : cu->cuMemsetD32Async(p, pattern, (size_t)count, s);
    return r == TL_CU_SUCCESS ? 0 : tl__cu_error(r, "cuMemsetAsync");
}

int tl_cuda_memset(void *dst, int device, int value, int64_t nbytes) {
    if (nbytes < 0) return tl_set_error(TL_ERR_RUNTIME, "tl_cuda_memset: negative size");
    return tl__cuda_memset_pattern(dst, device, (uint32_t)(unsigned char)value, 1, nbytes);
}
