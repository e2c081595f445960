/* A fake libcuda for tests: the driver entry points torchlet's CUDA runtime
 * uses, over host memory, so the whole backend runs on a machine without a
 * GPU. Built by tests/cuda (gcc -shared) and loaded through TORCHLET_LIBCUDA.
 *
 *  - "device" memory is host memory (tests read it directly); every device
 *    pointer a call touches must lie inside a live allocation, else
 *    CUDA_ERROR_ILLEGAL_ADDRESS (out-of-bounds copies fail loudly);
 *  - copies and memsets run at once; events complete at once unless manual
 *    events are on (fake_set_manual_events), then they stay pending until
 *    fake_complete_events() or a synchronize on them;
 *  - cuModuleLoadData accepts any image; cuModuleGetFunction finds kernels a
 *    test registered with fake_register_kernel(name, host function), which
 *    cuLaunchKernel calls with the grid, block and kernelParams;
 *  - an allocation limit (fake_set_memory_limit) makes cuMemAlloc fail with
 *    CUDA_ERROR_OUT_OF_MEMORY;
 *  - counters (fake_counter("mem_alloc"), ...) let tests see what happened;
 *    launches are also counted per device of the context current at the
 *    launch (fake_launches_on, fake_last_launch_device), and every allocation
 *    keeps the device it was made on (fake_is_device_ptr).
 * Environment: FAKE_CUDA_DEVICES (default 2; 0 makes cuInit fail with
 * CUDA_ERROR_NO_DEVICE), FAKE_CUDA_CC ("9.0"), FAKE_CUDA_DRIVER_VERSION (13000). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef void (*fake_kernel_fn)(unsigned grid[3], unsigned block[3], void **params);

enum {
    SUCCESS = 0, INVALID_VALUE = 1, OUT_OF_MEMORY = 2, NOT_INITIALIZED = 3, NO_DEVICE = 100, INVALID_DEVICE = 101,
    INVALID_CONTEXT = 201, INVALID_HANDLE = 400, NOT_FOUND = 500, NOT_READY = 600, ILLEGAL_ADDRESS = 700
};

typedef struct fake_ctx { int device; } fake_ctx;
typedef struct fake_stream { int device; int pending; } fake_stream;
typedef struct fake_event { int device, recorded, done, timing; double ms; fake_stream *stream; } fake_event;
typedef struct fake_module { int device; } fake_module;
typedef struct fake_function { char name[128]; fake_kernel_fn fn; } fake_function;
typedef struct { char *ptr; size_t size; int device; } allocation;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_initialized, g_ndevices = -1, g_cc_major = 9, g_cc_minor = 0, g_driver_version = 13000;
static fake_ctx g_ctx[16];
static __thread fake_ctx *t_current;
static allocation *g_allocs;
static int g_nallocs, g_capallocs;
static size_t g_in_use, g_limit = (size_t)80 << 30;
static int g_manual_events;
static fake_event **g_pending;
static int g_npending, g_cappending;
enum { FAKE_MAX_KERNELS = 1024 };   /* the reduction program alone has over 200 */
static struct { char name[128]; fake_kernel_fn fn; } g_kernels[FAKE_MAX_KERNELS];
static int g_nkernels;
static long long g_last_proc_version;

/* counters */
static long long c_mem_alloc, c_mem_free, c_h2d, c_d2h, c_d2d, c_peer, c_memset, c_launch, c_module_load,
    c_ctx_set, c_stream_sync, c_event_record, c_bytes_h2d, c_bytes_d2h;
static unsigned g_last_grid[3], g_last_block[3], g_last_shared;
static long long c_launch_dev[16];   /* launches per device of the current context */
static int g_last_launch_device = -1;
static void *g_last_stream;

static void env_init(void) {
    if (g_ndevices >= 0) return;
    const char *e = getenv("FAKE_CUDA_DEVICES");
    g_ndevices = e ? atoi(e) : 2;
    if (g_ndevices > 16) g_ndevices = 16;
    if ((e = getenv("FAKE_CUDA_CC"))) sscanf(e, "%d.%d", &g_cc_major, &g_cc_minor);
    if ((e = getenv("FAKE_CUDA_DRIVER_VERSION"))) g_driver_version = atoi(e);
    for (int i = 0; i < 16; i++) g_ctx[i].device = i;
}

/* the allocation holding [p, p + n), or NULL */
static allocation *find(const void *p, size_t n) {
    const char *c = p;
    for (int i = 0; i < g_nallocs; i++)
        if (c >= g_allocs[i].ptr && c + n <= g_allocs[i].ptr + g_allocs[i].size) return &g_allocs[i];
    return NULL;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ---------------------------------------------------------------- init, devices */
static CUresult f_cuInit(unsigned flags) {
    (void)flags;
    env_init();
    if (g_ndevices == 0) return NO_DEVICE;
    g_initialized = 1;
    return SUCCESS;
}
static CUresult f_cuDriverGetVersion(int *v) { env_init(); *v = g_driver_version; return SUCCESS; }
static CUresult f_cuGetErrorString(CUresult r, const char **s) {
    switch (r) {
    case SUCCESS: *s = "no error"; break;
    case INVALID_VALUE: *s = "invalid argument"; break;
    case OUT_OF_MEMORY: *s = "out of memory"; break;
    case NOT_INITIALIZED: *s = "initialization error"; break;
    case NO_DEVICE: *s = "no CUDA-capable device is detected"; break;
    case INVALID_DEVICE: *s = "invalid device ordinal"; break;
    case INVALID_CONTEXT: *s = "invalid device context"; break;
    case INVALID_HANDLE: *s = "invalid resource handle"; break;
    case NOT_FOUND: *s = "named symbol not found"; break;
    case NOT_READY: *s = "device not ready"; break;
    case ILLEGAL_ADDRESS: *s = "an illegal memory access was encountered"; break;
    default: *s = "unknown error"; return INVALID_VALUE;
    }
    return SUCCESS;
}
static CUresult f_cuGetErrorName(CUresult r, const char **s) {
    switch (r) {
    case SUCCESS: *s = "CUDA_SUCCESS"; break;
    case INVALID_VALUE: *s = "CUDA_ERROR_INVALID_VALUE"; break;
    case OUT_OF_MEMORY: *s = "CUDA_ERROR_OUT_OF_MEMORY"; break;
    case NO_DEVICE: *s = "CUDA_ERROR_NO_DEVICE"; break;
    case INVALID_DEVICE: *s = "CUDA_ERROR_INVALID_DEVICE"; break;
    case INVALID_CONTEXT: *s = "CUDA_ERROR_INVALID_CONTEXT"; break;
    case INVALID_HANDLE: *s = "CUDA_ERROR_INVALID_HANDLE"; break;
    case NOT_FOUND: *s = "CUDA_ERROR_NOT_FOUND"; break;
    case NOT_READY: *s = "CUDA_ERROR_NOT_READY"; break;
    case ILLEGAL_ADDRESS: *s = "CUDA_ERROR_ILLEGAL_ADDRESS"; break;
    default: *s = "CUDA_ERROR_UNKNOWN"; return INVALID_VALUE;
    }
    return SUCCESS;
}
static CUresult f_cuDeviceGetCount(int *n) {
    if (!g_initialized) return NOT_INITIALIZED;
    *n = g_ndevices;
    return SUCCESS;
}
static CUresult f_cuDeviceGet(int *d, int ordinal) {
    if (!g_initialized) return NOT_INITIALIZED;
    if (ordinal < 0 || ordinal >= g_ndevices) return INVALID_DEVICE;
    *d = ordinal;
    return SUCCESS;
}
static CUresult f_cuDeviceGetName(char *buf, int len, int d) {
    if (d < 0 || d >= g_ndevices) return INVALID_DEVICE;
    snprintf(buf, (size_t)len, "Fake CUDA Device %d (torchlet test driver)", d);
    return SUCCESS;
}
static CUresult f_cuDeviceGetAttribute(int *v, int attr, int d) {
    if (d < 0 || d >= g_ndevices) return INVALID_DEVICE;
    if (attr == 75) *v = g_cc_major;
    else if (attr == 76) *v = g_cc_minor;
    else if (attr == 16) *v = 132;   /* multiprocessors */
    else return INVALID_VALUE;
    return SUCCESS;
}
static CUresult f_cuDeviceTotalMem(size_t *b, int d) {
    if (d < 0 || d >= g_ndevices) return INVALID_DEVICE;
    *b = g_limit;
    return SUCCESS;
}
static CUresult f_cuDevicePrimaryCtxRetain(fake_ctx **c, int d) {
    if (!g_initialized) return NOT_INITIALIZED;
    if (d < 0 || d >= g_ndevices) return INVALID_DEVICE;
    *c = &g_ctx[d];
    return SUCCESS;
}
static CUresult f_cuCtxSetCurrent(fake_ctx *c) {
    t_current = c;
    __atomic_add_fetch(&c_ctx_set, 1, __ATOMIC_RELAXED);
    return SUCCESS;
}
static CUresult f_cuCtxSynchronize(void) { return t_current ? SUCCESS : INVALID_CONTEXT; }

/* ---------------------------------------------------------------- memory */
static CUresult f_cuMemGetInfo(size_t *fr, size_t *total) {
    if (!t_current) return INVALID_CONTEXT;
    pthread_mutex_lock(&g_lock);
    *fr = g_limit > g_in_use ? g_limit - g_in_use : 0;
    *total = g_limit;
    pthread_mutex_unlock(&g_lock);
    return SUCCESS;
}
static CUresult f_cuMemAlloc(CUdeviceptr *dp, size_t size) {
    if (!t_current) return INVALID_CONTEXT;
    if (size == 0) return INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    CUresult r = SUCCESS;
    if (g_in_use + size > g_limit) {
        r = OUT_OF_MEMORY;
    } else {
        void *p = aligned_alloc(256, (size + 255) / 256 * 256);
        if (!p) {
            r = OUT_OF_MEMORY;
        } else {
            if (g_nallocs == g_capallocs) {
                g_capallocs = g_capallocs ? 2 * g_capallocs : 64;
                g_allocs = realloc(g_allocs, sizeof *g_allocs * (size_t)g_capallocs);
            }
            memset(p, 0xAB, size);   /* garbage, like fresh device memory */
            g_allocs[g_nallocs++] = (allocation){p, size, t_current->device};
            g_in_use += size;
            c_mem_alloc++;
            *dp = (CUdeviceptr)(uintptr_t)p;
        }
    }
    pthread_mutex_unlock(&g_lock);
    return r;
}
static CUresult f_cuMemFree(CUdeviceptr dp) {
    pthread_mutex_lock(&g_lock);
    CUresult r = INVALID_VALUE;
    for (int i = 0; i < g_nallocs; i++) {
        if ((uintptr_t)g_allocs[i].ptr != dp) continue;
        free(g_allocs[i].ptr);
        g_in_use -= g_allocs[i].size;
        g_allocs[i] = g_allocs[--g_nallocs];
        c_mem_free++;
        r = SUCCESS;
        break;
    }
    pthread_mutex_unlock(&g_lock);
    return r;
}

static CUresult check_stream(fake_stream *s) { return s || t_current ? SUCCESS : INVALID_CONTEXT; }

static CUresult copy(void *dst, int dst_dev, const void *src, int src_dev, size_t n, long long *counter) {
    pthread_mutex_lock(&g_lock);
    CUresult r = SUCCESS;
    if ((dst_dev && !find(dst, n)) || (src_dev && !find(src, n))) r = ILLEGAL_ADDRESS;
    else memmove(dst, src, n);
    if (r == SUCCESS) (*counter)++;
    pthread_mutex_unlock(&g_lock);
    return r;
}
static CUresult f_cuMemcpyHtoDAsync(CUdeviceptr d, const void *h, size_t n, fake_stream *s) {
    if (check_stream(s)) return INVALID_CONTEXT;
    __atomic_add_fetch(&c_bytes_h2d, (long long)n, __ATOMIC_RELAXED);
    return copy((void *)(uintptr_t)d, 1, h, 0, n, &c_h2d);
}
static CUresult f_cuMemcpyDtoHAsync(void *h, CUdeviceptr d, size_t n, fake_stream *s) {
    if (check_stream(s)) return INVALID_CONTEXT;
    __atomic_add_fetch(&c_bytes_d2h, (long long)n, __ATOMIC_RELAXED);
    return copy(h, 0, (const void *)(uintptr_t)d, 1, n, &c_d2h);
}
static CUresult f_cuMemcpyDtoDAsync(CUdeviceptr d, CUdeviceptr s2, size_t n, fake_stream *s) {
    if (check_stream(s)) return INVALID_CONTEXT;
    return copy((void *)(uintptr_t)d, 1, (const void *)(uintptr_t)s2, 1, n, &c_d2d);
}
static CUresult f_cuMemcpyPeerAsync(CUdeviceptr d, fake_ctx *dc, CUdeviceptr s2, fake_ctx *sc, size_t n,
                                    fake_stream *s) {
    if (!dc || !sc || check_stream(s)) return INVALID_CONTEXT;
    return copy((void *)(uintptr_t)d, 1, (const void *)(uintptr_t)s2, 1, n, &c_peer);
}
static CUresult memset_n(CUdeviceptr d, const void *pattern, size_t width, size_t count, fake_stream *s) {
    if (check_stream(s)) return INVALID_CONTEXT;
    pthread_mutex_lock(&g_lock);
    CUresult r = SUCCESS;
    char *p = (char *)(uintptr_t)d;
    if (!find(p, width * count)) r = ILLEGAL_ADDRESS;
    else
        for (size_t i = 0; i < count; i++) memcpy(p + i * width, pattern, width);
    if (r == SUCCESS) c_memset++;
    pthread_mutex_unlock(&g_lock);
    return r;
}
static CUresult f_cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, fake_stream *s) {
    return memset_n(d, &v, 1, n, s);
}
static CUresult f_cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, fake_stream *s) {
    if (d % 2) return INVALID_VALUE;
    return memset_n(d, &v, 2, n, s);
}
static CUresult f_cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, fake_stream *s) {
    if (d % 4) return INVALID_VALUE;
    return memset_n(d, &v, 4, n, s);
}

/* ---------------------------------------------------------------- streams and events */
static CUresult f_cuStreamCreateWithPriority(fake_stream **s, unsigned flags, int prio) {
    (void)flags; (void)prio;
    if (!t_current) return INVALID_CONTEXT;
    *s = calloc(1, sizeof **s);
    (*s)->device = t_current->device;
    return SUCCESS;
}
static CUresult f_cuStreamDestroy(fake_stream *s) {
    if (!s) return INVALID_HANDLE;
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < g_npending; i++)   /* pending events lose their stream, not their state */
        if (g_pending[i]->stream == s) g_pending[i]->stream = NULL;
    pthread_mutex_unlock(&g_lock);
    free(s);
    return SUCCESS;
}
static void complete(fake_event *e) {
    e->done = 1;
    e->ms = now_ms();
    for (int i = 0; i < g_npending; i++)
        if (g_pending[i] == e) {
            g_pending[i] = g_pending[--g_npending];
            break;
        }
    if (e->stream) e->stream->pending--;
}
static CUresult f_cuStreamSynchronize(fake_stream *s) {
    if (check_stream(s)) return INVALID_CONTEXT;
    __atomic_add_fetch(&c_stream_sync, 1, __ATOMIC_RELAXED);
    pthread_mutex_lock(&g_lock);
    for (int i = g_npending - 1; i >= 0; i--)
        if (g_pending[i]->stream == s) complete(g_pending[i]);
    pthread_mutex_unlock(&g_lock);
    return SUCCESS;
}
static CUresult f_cuStreamQuery(fake_stream *s) {
    if (check_stream(s)) return INVALID_CONTEXT;
    pthread_mutex_lock(&g_lock);
    int busy = 0;
    for (int i = 0; i < g_npending; i++) busy |= g_pending[i]->stream == s;
    pthread_mutex_unlock(&g_lock);
    return busy ? NOT_READY : SUCCESS;
}
static CUresult f_cuStreamWaitEvent(fake_stream *s, fake_event *e, unsigned flags) {
    (void)flags;
    if (!e || check_stream(s)) return INVALID_HANDLE;
    return SUCCESS;   /* the fake runs everything at once: nothing to order */
}
static CUresult f_cuEventCreate(fake_event **e, unsigned flags) {
    if (!t_current) return INVALID_CONTEXT;
    *e = calloc(1, sizeof **e);
    (*e)->device = t_current->device;
    (*e)->timing = !(flags & 2);
    return SUCCESS;
}
static CUresult f_cuEventDestroy(fake_event *e) {
    if (!e) return INVALID_HANDLE;
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < g_npending; i++)
        if (g_pending[i] == e) {
            g_pending[i] = g_pending[--g_npending];
            break;
        }
    pthread_mutex_unlock(&g_lock);
    free(e);
    return SUCCESS;
}
static CUresult f_cuEventRecord(fake_event *e, fake_stream *s) {
    if (!e) return INVALID_HANDLE;
    if (check_stream(s)) return INVALID_CONTEXT;
    pthread_mutex_lock(&g_lock);
    c_event_record++;
    e->recorded = 1;
    e->stream = s;
    if (g_manual_events) {
        int listed = 0;
        for (int i = 0; i < g_npending; i++) listed |= g_pending[i] == e;
        if (!listed) {
            if (g_npending == g_cappending) {
                g_cappending = g_cappending ? 2 * g_cappending : 64;
                g_pending = realloc(g_pending, sizeof *g_pending * (size_t)g_cappending);
            }
            g_pending[g_npending++] = e;
            if (s) s->pending++;
        }
        e->done = 0;
    } else {
        e->done = 1;
        e->ms = now_ms();
    }
    pthread_mutex_unlock(&g_lock);
    return SUCCESS;
}
static CUresult f_cuEventQuery(fake_event *e) {
    if (!e) return INVALID_HANDLE;
    pthread_mutex_lock(&g_lock);
    int done = !e->recorded || e->done;
    pthread_mutex_unlock(&g_lock);
    return done ? SUCCESS : NOT_READY;
}
static CUresult f_cuEventSynchronize(fake_event *e) {
    if (!e) return INVALID_HANDLE;
    pthread_mutex_lock(&g_lock);
    if (e->recorded && !e->done) complete(e);
    pthread_mutex_unlock(&g_lock);
    return SUCCESS;
}
static CUresult f_cuEventElapsedTime(float *ms, fake_event *a, fake_event *b) {
    if (!a || !b) return INVALID_HANDLE;
    if (!a->timing || !b->timing) return INVALID_HANDLE;
    if (!a->done || !b->done) return NOT_READY;
    *ms = (float)(b->ms - a->ms);
    return SUCCESS;
}

/* ---------------------------------------------------------------- modules and launches */
static CUresult f_cuModuleLoadData(fake_module **m, const void *image) {
    if (!t_current) return INVALID_CONTEXT;
    if (!image) return INVALID_VALUE;
    *m = calloc(1, sizeof **m);
    (*m)->device = t_current->device;
    __atomic_add_fetch(&c_module_load, 1, __ATOMIC_RELAXED);
    return SUCCESS;
}
static CUresult f_cuModuleGetFunction(fake_function **f, fake_module *m, const char *name) {
    if (!m) return INVALID_HANDLE;
    pthread_mutex_lock(&g_lock);
    fake_kernel_fn fn = NULL;
    for (int i = 0; i < g_nkernels; i++)
        if (strcmp(g_kernels[i].name, name) == 0) fn = g_kernels[i].fn;
    pthread_mutex_unlock(&g_lock);
    if (!fn) return NOT_FOUND;
    *f = calloc(1, sizeof **f);
    snprintf((*f)->name, sizeof (*f)->name, "%s", name);
    (*f)->fn = fn;
    return SUCCESS;
}
static CUresult f_cuLaunchKernel(fake_function *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                 unsigned bz, unsigned shared, fake_stream *s, void **params, void **extra) {
    if (!f) return INVALID_HANDLE;
    if (check_stream(s)) return INVALID_CONTEXT;
    if (extra) return INVALID_VALUE;   /* torchlet passes kernelParams only */
    if (bx * by * bz > 1024 || bx * by * bz == 0) return INVALID_VALUE;
    unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
    pthread_mutex_lock(&g_lock);
    memcpy(g_last_grid, grid, sizeof grid);
    memcpy(g_last_block, block, sizeof block);
    g_last_shared = shared;
    g_last_stream = s;
    c_launch++;
    if (t_current) c_launch_dev[t_current->device]++;
    g_last_launch_device = t_current ? t_current->device : -1;
    pthread_mutex_unlock(&g_lock);
    f->fn(grid, block, params);
    return SUCCESS;
}

/* ---------------------------------------------------------------- cuGetProcAddress */
static const struct { const char *name; void *fn; } g_table[] = {
#define F(n) {#n, (void *)f_##n}
    F(cuInit), F(cuDriverGetVersion), F(cuGetErrorString), F(cuGetErrorName), F(cuDeviceGetCount), F(cuDeviceGet),
    F(cuDeviceGetName), F(cuDeviceGetAttribute), F(cuDeviceTotalMem), F(cuDevicePrimaryCtxRetain),
    F(cuCtxSetCurrent), F(cuCtxSynchronize), F(cuMemGetInfo), F(cuMemAlloc), F(cuMemFree), F(cuMemcpyHtoDAsync),
    F(cuMemcpyDtoHAsync), F(cuMemcpyDtoDAsync), F(cuMemcpyPeerAsync), F(cuMemsetD8Async), F(cuMemsetD16Async),
    F(cuMemsetD32Async), F(cuStreamCreateWithPriority), F(cuStreamDestroy), F(cuStreamSynchronize),
    F(cuStreamQuery), F(cuStreamWaitEvent), F(cuEventCreate), F(cuEventDestroy), F(cuEventRecord),
    F(cuEventQuery), F(cuEventSynchronize), F(cuEventElapsedTime), F(cuModuleLoadData), F(cuModuleGetFunction),
    F(cuLaunchKernel),
#undef F
};

EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags, int *status) {
    (void)flags;
    g_last_proc_version = version;
    if (version < 12000) return INVALID_VALUE;   /* the fake speaks the 12.0 ABIs only */
    for (size_t i = 0; i < sizeof g_table / sizeof g_table[0]; i++)
        if (strcmp(g_table[i].name, symbol) == 0) {
            *pfn = g_table[i].fn;
            if (status) *status = 0;
            return SUCCESS;
        }
    *pfn = NULL;
    if (status) *status = 1;   /* CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND */
    return NOT_FOUND;
}

EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, uint64_t flags) {
    return cuGetProcAddress_v2(symbol, pfn, version, flags, NULL);
}

/* ---------------------------------------------------------------- test hooks */
EXPORT void fake_register_kernel(const char *name, fake_kernel_fn fn) {
    pthread_mutex_lock(&g_lock);
    if (g_nkernels < FAKE_MAX_KERNELS) {
        snprintf(g_kernels[g_nkernels].name, sizeof g_kernels[0].name, "%s", name);
        g_kernels[g_nkernels++].fn = fn;
    }
    pthread_mutex_unlock(&g_lock);
}
EXPORT void fake_set_memory_limit(long long bytes) {
    pthread_mutex_lock(&g_lock);
    g_limit = bytes < 0 ? (size_t)80 << 30 : (size_t)bytes;
    pthread_mutex_unlock(&g_lock);
}
EXPORT void fake_set_manual_events(int on) { g_manual_events = on; }
EXPORT int fake_complete_events(void) {
    pthread_mutex_lock(&g_lock);
    int n = g_npending;
    while (g_npending) complete(g_pending[g_npending - 1]);
    pthread_mutex_unlock(&g_lock);
    return n;
}
EXPORT int fake_pending_events(void) { return g_npending; }
EXPORT int fake_is_device_ptr(unsigned long long p, unsigned long long n) {
    pthread_mutex_lock(&g_lock);
    allocation *a = find((void *)(uintptr_t)p, (size_t)n);
    int d = a ? a->device : -1;
    pthread_mutex_unlock(&g_lock);
    return d;
}
EXPORT long long fake_counter(const char *name) {
    static const struct { const char *n; long long *v; } cs[] = {
        {"mem_alloc", &c_mem_alloc}, {"mem_free", &c_mem_free}, {"h2d", &c_h2d}, {"d2h", &c_d2h},
        {"d2d", &c_d2d}, {"peer", &c_peer}, {"memset", &c_memset}, {"launch", &c_launch},
        {"module_load", &c_module_load}, {"ctx_set", &c_ctx_set}, {"stream_sync", &c_stream_sync},
        {"event_record", &c_event_record}, {"bytes_h2d", &c_bytes_h2d}, {"bytes_d2h", &c_bytes_d2h},
    };
    if (strcmp(name, "in_use") == 0) return (long long)g_in_use;
    if (strcmp(name, "allocations") == 0) return g_nallocs;
    if (strcmp(name, "proc_version") == 0) return g_last_proc_version;
    if (strcmp(name, "last_shared") == 0) return g_last_shared;
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        if (strcmp(cs[i].n, name) == 0) return *cs[i].v;
    return -1;
}
EXPORT long long fake_launches_on(int device) { return device >= 0 && device < 16 ? c_launch_dev[device] : -1; }
EXPORT int fake_last_launch_device(void) { return g_last_launch_device; }
EXPORT void fake_last_launch(unsigned grid[3], unsigned block[3], void **stream) {
    memcpy(grid, g_last_grid, sizeof g_last_grid);
    memcpy(block, g_last_block, sizeof g_last_block);
    *stream = g_last_stream;
}
