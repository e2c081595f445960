/* The driver, loaded lazily: dlopen of libcuda.so.1 (or $TORCHLET_LIBCUDA),
 * every entry point resolved with cuGetProcAddress at API version 12000 (as
 * PyTorch's c10/cuda/driver_api does), cuInit on first use. Devices' primary
 * contexts are retained once and made current per host thread; each thread
 * has a current device and, per device, a current stream. Without a driver
 * nothing fails at import: tl_cuda_device_count() is 0 and the calls that need
 * a device set PyTorch's "Found no NVIDIA driver ..." RuntimeError. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "tl_error.h"

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static tl_cu_api g_api;
static int g_loaded;                   /* the API is usable */
static int g_count;                    /* devices */
static char g_reason[512];             /* why g_count is 0 */
static pthread_mutex_t g_ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static CUcontext g_ctx[TL_CUDA_MAX_DEVICES];

_Thread_local int tl__cu_t_device = 0;           /* tl_cuda_current_device (guard.c sets it too) */
static _Thread_local int t_ctx_device = -1;      /* whose context is current here */
static _Thread_local tl_cuda_stream t_stream[TL_CUDA_MAX_DEVICES];

#define NO_DRIVER                                                                                  \
    "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed " \
    "a driver from http://www.nvidia.com/Download/index.aspx"

typedef CUresult (*get_proc_v2_fn)(const char *, void **, int, uint64_t, int *);
typedef CUresult (*get_proc_v1_fn)(const char *, void **, int, uint64_t);

static const char *err_text(CUresult r) {
    const char *s = NULL;
    if (g_api.cuGetErrorString && g_api.cuGetErrorString(r, &s) == TL_CU_SUCCESS && s) return s;
    return "unknown error";
}

static void load(void) {
    const char *path = getenv("TORCHLET_LIBCUDA");
    if (!path || !*path) path = "libcuda.so.1";
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(g_reason, sizeof g_reason, "%s", NO_DRIVER);
        return;
    }
    get_proc_v2_fn gp2 = (get_proc_v2_fn)dlsym(h, "cuGetProcAddress_v2");
    get_proc_v1_fn gp1 = gp2 ? NULL : (get_proc_v1_fn)dlsym(h, "cuGetProcAddress");
    if (!gp2 && !gp1) {
        snprintf(g_reason, sizeof g_reason, "The NVIDIA driver on your system is too old (%s has no "
                 "cuGetProcAddress): torchlet needs a driver for CUDA 12.0 or newer", path);
        return;
    }
    /* name table: the base names; the pinned version picks the _v2 ABIs */
    static const struct { const char *name; size_t off; } entries[] = {
#define E(n) {#n, offsetof(tl_cu_api, n)}
        E(cuInit), E(cuDriverGetVersion), E(cuGetErrorString), E(cuGetErrorName), E(cuDeviceGetCount),
        E(cuDeviceGet), E(cuDeviceGetName), E(cuDeviceGetAttribute), E(cuDeviceTotalMem),
        E(cuDevicePrimaryCtxRetain), E(cuCtxSetCurrent), E(cuCtxSynchronize), E(cuMemGetInfo), E(cuMemAlloc),
        E(cuMemFree), E(cuMemcpyHtoDAsync), E(cuMemcpyDtoHAsync), E(cuMemcpyDtoDAsync), E(cuMemcpyPeerAsync),
        E(cuMemsetD8Async), E(cuMemsetD16Async), E(cuMemsetD32Async), E(cuStreamCreateWithPriority),
        E(cuStreamDestroy), E(cuStreamSynchronize), E(cuStreamQuery), E(cuStreamWaitEvent), E(cuEventCreate),
        E(cuEventDestroy), E(cuEventRecord), E(cuEventQuery), E(cuEventSynchronize), E(cuEventElapsedTime),
        E(cuModuleLoadData), E(cuModuleGetFunction), E(cuLaunchKernel),
#undef E
    };
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        void *fn = NULL;
        CUresult r = gp2 ? gp2(entries[i].name, &fn, TL_CU_API_VERSION, 0, NULL)
                         : gp1(entries[i].name, &fn, TL_CU_API_VERSION, 0);
        if (r != TL_CU_SUCCESS || !fn) {
            snprintf(g_reason, sizeof g_reason, "The NVIDIA driver on your system lacks %s (API version %d): "
                     "torchlet needs a driver for CUDA 12.0 or newer", entries[i].name, TL_CU_API_VERSION);
            return;
        }
        memcpy((char *)&g_api + entries[i].off, &fn, sizeof fn);
    }
    CUresult r = g_api.cuInit(0);
    if (r == TL_CU_ERROR_NO_DEVICE) {
        snprintf(g_reason, sizeof g_reason, "No CUDA GPUs are available");
        return;
    }
    if (r != TL_CU_SUCCESS) {
        snprintf(g_reason, sizeof g_reason, "CUDA driver initialization failed: %s", err_text(r));
        return;
    }
    int n = 0;
    r = g_api.cuDeviceGetCount(&n);
    if (r != TL_CU_SUCCESS || n <= 0) {
        snprintf(g_reason, sizeof g_reason, "No CUDA GPUs are available");
        return;
    }
    g_count = n < TL_CUDA_MAX_DEVICES ? n : TL_CUDA_MAX_DEVICES;
    g_loaded = 1;
    /* the driver handle stays open for the life of the process */
}

static void init(void) { pthread_once(&g_once, load); }

const tl_cu_api *tl__cu(void) {
    init();
    if (!g_loaded) {
        tl_set_error(TL_ERR_RUNTIME, "%s", g_reason);
        return NULL;
    }
    return &g_api;
}

int tl_cuda_device_count(void) {
    init();
    return g_count;
}

const char *tl_cuda_unavailable_reason(void) {
    init();
    return g_count ? "" : g_reason;
}

int tl__cu_error(CUresult r, const char *what) {
    const char *name = NULL;
    if (g_api.cuGetErrorName) g_api.cuGetErrorName(r, &name);
    if (r == TL_CU_ERROR_OUT_OF_MEMORY)
        return tl_set_error(TL_ERR_CUDA_OOM, "CUDA out of memory (%s: %s)", what, err_text(r));
    return tl_set_error(TL_ERR_RUNTIME, "CUDA driver error: %s (%s in %s)", err_text(r), name ? name : "?", what);
}

int tl__cu_check_device(int device) {
    if (!tl__cu()) return -1;
    if (device < 0 || device >= g_count) return tl_set_error(TL_ERR_RUNTIME, "CUDA error: invalid device ordinal");
    return 0;
}

int tl__cu_ctx(int device) {
    if (device >= 0 && device == t_ctx_device) return 0;   /* already current on this thread */
    if (tl__cu_check_device(device) != 0) return -1;
    pthread_mutex_lock(&g_ctx_lock);
    CUresult r = TL_CU_SUCCESS;
    if (!g_ctx[device]) {
        CUdevice dev;
        r = g_api.cuDeviceGet(&dev, device);
        if (r == TL_CU_SUCCESS) r = g_api.cuDevicePrimaryCtxRetain(&g_ctx[device], dev);
    }
    CUcontext ctx = g_ctx[device];
    pthread_mutex_unlock(&g_ctx_lock);
    if (r != TL_CU_SUCCESS) return tl__cu_error(r, "cuDevicePrimaryCtxRetain");
    r = g_api.cuCtxSetCurrent(ctx);
    if (r != TL_CU_SUCCESS) return tl__cu_error(r, "cuCtxSetCurrent");
    t_ctx_device = device;
    return 0;
}

CUcontext tl__cu_primary(int device) { return g_ctx[device]; }

/* ---------------------------------------------------------------- devices */
int tl_cuda_current_device(void) { return tl__cu_t_device; }

int tl_cuda_set_device(int device) {
    if (tl__cu_check_device(device) != 0) return -1;
    tl__cu_t_device = device;
    return tl__cu_ctx(device);
}

int tl_cuda_device_capability(int device, int *major, int *minor) {
    if (tl__cu_check_device(device) != 0) return -1;
    CUdevice dev;
    CUresult r = g_api.cuDeviceGet(&dev, device);
    if (r == TL_CU_SUCCESS) r = g_api.cuDeviceGetAttribute(major, TL_CU_ATTR_CC_MAJOR, dev);
    if (r == TL_CU_SUCCESS) r = g_api.cuDeviceGetAttribute(minor, TL_CU_ATTR_CC_MINOR, dev);
    return r == TL_CU_SUCCESS ? 0 : tl__cu_error(r, "cuDeviceGetAttribute");
}

int tl_cuda_device_name(int device, char *buf, int buflen) {
    if (tl__cu_check_device(device) != 0) return -1;
    if (!buf || buflen <= 0) return tl_set_error(TL_ERR_VALUE, "device name: no buffer");
    CUdevice dev;
    CUresult r = g_api.cuDeviceGet(&dev, device);
    if (r == TL_CU_SUCCESS) r = g_api.cuDeviceGetName(buf, buflen, dev);
    buf[buflen - 1] = 0;
    return r == TL_CU_SUCCESS ? 0 : tl__cu_error(r, "cuDeviceGetName");
}

int tl_cuda_driver_version(int *version) {
    if (!tl__cu()) return -1;
    CUresult r = g_api.cuDriverGetVersion(version);
    return r == TL_CU_SUCCESS ? 0 : tl__cu_error(r, "cuDriverGetVersion");
}

int tl_cuda_synchronize(int device) {
    if (tl__cu_ctx(device) != 0) return -1;
    CUresult r = g_api.cuCtxSynchronize();
    return r == TL_CU_SUCCESS ? 0 : tl__cu_error(r, "cuCtxSynchronize");
}

/* ---------------------------------------------------------------- streams */
tl_cuda_stream tl_cuda_current_stream(int device) {
    return device >= 0 && device < TL_CUDA_MAX_DEVICES ? t_stream[device] : NULL;
}

int tl_cuda_set_current_stream(int device, tl_cuda_stream s) {
    if (tl__cu_check_device(device) != 0) return -1;
    t_stream[device] = s;
    return 0;
}

int tl_cuda_stream_create(int device, int priority, tl_cuda_stream *out) {
    if (tl__cu_ctx(device) != 0) return -1;
    CUstream s = NULL;
    CUresult r = g_api.cuStreamCreateWithPriority(&s, TL_CU_STREAM_NON_BLOCKING, priority);
    if (r != TL_CU_SUCCESS) return tl__cu_error(r, "cuStreamCreateWithPriority");
    *out = (tl_cuda_stream)s;
    return 0;
}

/* the calls below name the stream (NULL: the current device's default
 * stream, which is why that device's context is made current first) */
static int stream_ctx(void) { return tl__cu_ctx(tl__cu_t_device); }

int tl_cuda_stream_destroy(tl_cuda_stream s) {
    if (!s) return 0;
    if (!tl__cu()) return -1;
    CUresult r = g_api.cuStreamDestroy((CUstream)s);
    return r == TL_CU_SUCCESS ? 0 : tl__cu_error(r, "cuStreamDestroy");
}

int tl_cuda_stream_synchronize(tl_cuda_stream s) {
    if (stream_ctx() != 0) return -1;
    CUresult r = g_api.cuStreamSynchronize((CUstream)s);
    return r == TL_CU_SUCCESS ? 0 : tl__cu_error(r, "cuStreamSynchronize");
}

int tl_cuda_stream_query(tl_cuda_stream s) {
    if (stream_ctx() != 0) return -1;
    CUresult r = g_api.cuStreamQuery((CUstream)s);
    if (r == TL_CU_SUCCESS) return 1;
    if (r == TL_CU_ERROR_NOT_READY) return 0;
    return tl__cu_error(r, "cuStreamQuery");
}

int tl_cuda_event_create(int device, int enable_timing, tl_cuda_event *out) {
    if (tl__cu_ctx(device) != 0) return -1;
    CUevent e = NULL;
    CUresult r = g_api.cuEventCreate(&e, enable_timing ? 0 : TL_CU_EVENT_DISABLE_TIMING);
    if (r != TL_CU_SUCCESS) return tl__cu_error(r, "cuEventCreate");
    *out = (tl_cuda_event)e;
    return 0;
}

int tl_cuda_event_destroy(tl_cuda_event e) {
    if (!e) return 0;
    if (!tl__cu()) return -1;
    CUresult r = g_api.cuEventDestroy((CUevent)e);
    return r == TL_CU_SUCCESS ? 0 : tl__cu_error(r, "cuEventDestroy");
}

int tl_cuda_event_record(tl_cuda_event e, tl_cuda_stream s) {
    if (stream_ctx() != 0) return -1;
    CUresult r = g_api.cuEventRecord((CUevent)e, (CUstream)s);
    return r == TL_CU_SUCCESS ? 0 : tl__cu_error(r, "cuEventRecord");
}

int tl_cuda_event_query(tl_cuda_event e) {
    if (!tl__cu()) return -1;
    CUresult r = g_api.cuEventQuery((CUevent)e);
    if (r == TL_CU_SUCCESS) return 1;
    if (r == TL_CU_ERROR_NOT_READY) return 0;
    return tl__cu_error(r, "cuEventQuery");
}

int tl_cuda_event_synchronize(tl_cuda_event e) {
    if (!tl__cu()) return -1;
    CUresult r = g_api.cuEventSynchronize((CUevent)e);
    return r == TL_CU_SUCCESS ? 0 : tl__cu_error(r, "cuEventSynchronize");
}

int tl_cuda_stream_wait_event(tl_cuda_stream s, tl_cuda_event e) {
    if (stream_ctx() != 0) return -1;
    CUresult r = g_api.cuStreamWaitEvent((CUstream)s, (CUevent)e, 0);
    return r == TL_CU_SUCCESS ? 0 : tl__cu_error(r, "cuStreamWaitEvent");
}

int tl_cuda_event_elapsed_ms(tl_cuda_event start, tl_cuda_event end, float *ms) {
    if (!tl__cu()) return -1;
    CUresult r = g_api.cuEventElapsedTime(ms, (CUevent)start, (CUevent)end);
    return r == TL_CU_SUCCESS ? 0 : tl__cu_error(r, "cuEventElapsedTime");
}
