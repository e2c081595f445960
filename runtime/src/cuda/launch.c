/* Kernel launches (tl_cuda.h): a program's module is built on its first
 * launch on a device by the installed compiler (torchlet.cuda installs one
 * that runs NVRTC behind an on-disk cache), loaded with cuModuleLoadData, and
 * each tl_cuda_function caches its CUfunction per device. After that a launch
 * is two loads and cuLaunchKernel: no lock, no Python. */
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "tl_error.h"

static tl_cuda_compile_fn g_compiler;
static pthread_mutex_t g_load_lock = PTHREAD_MUTEX_INITIALIZER;

void tl_cuda_set_compiler(tl_cuda_compile_fn fn) { __atomic_store_n(&g_compiler, fn, __ATOMIC_RELEASE); }

/* p's source: its parts joined (malloc'd; NULL with the error set) */
static char *program_source(const tl_cuda_program *p) {
    size_t n = 1;
    for (const char *const *s = p->parts; *s; s++) n += strlen(*s);
    char *text = malloc(n), *w = text;
    if (!text) {
        tl_set_error(TL_ERR_MEMORY, "CUDA kernel '%s': out of memory for its source (%zu bytes)", p->name, n);
        return NULL;
    }
    for (const char *const *s = p->parts; *s; s++) {
        size_t k = strlen(*s);
        memcpy(w, *s, k);
        w += k;
    }
    *w = '\0';
    return text;
}

/* the module of p on device (under g_load_lock) */
static CUmodule program_module(tl_cuda_program *p, int device) {
    CUmodule m = (CUmodule)p->modules[device];
    if (m) return m;
    tl_cuda_compile_fn compile = __atomic_load_n(&g_compiler, __ATOMIC_ACQUIRE);
    if (!compile) {
        tl_set_error(TL_ERR_RUNTIME, "CUDA kernel '%s': no kernel compiler is installed (import torchlet.cuda "
                     "installs one)", p->name);
        return NULL;
    }
    int major = 0, minor = 0;
    if (tl_cuda_device_capability(device, &major, &minor) != 0) return NULL;
    void *image = NULL;
    size_t len = 0;
    char *msg = NULL;
    char *source = program_source(p);
    if (!source) return NULL;
    int rc = compile(p->name, source, major, minor, &image, &len, &msg);
    free(source);
    if (rc != 0 || !image) {
        tl_set_error(TL_ERR_RUNTIME, "CUDA kernel '%s' failed to compile for sm_%d%d: %s", p->name, major, minor,
                     msg ? msg : "the compiler gave no image");
        free(msg);
        free(image);
        return NULL;
    }
    free(msg);
    CUresult r = tl__cu()->cuModuleLoadData(&m, image);
    free(image);
    if (r != TL_CU_SUCCESS) {
        tl__cu_error(r, "cuModuleLoadData");
        return NULL;
    }
    __atomic_store_n(&p->modules[device], (void *)m, __ATOMIC_RELEASE);
    return m;
}

static CUfunction resolve(tl_cuda_function *f, int device) {
    pthread_mutex_lock(&g_load_lock);
    CUfunction fn = (CUfunction)f->fns[device];
    if (!fn) {
        CUmodule m = program_module(f->program, device);
        if (m) {
            CUresult r = tl__cu()->cuModuleGetFunction(&fn, m, f->name);
            if (r != TL_CU_SUCCESS) {
                tl__cu_error(r, f->name);
                fn = NULL;
            } else {
                __atomic_store_n(&f->fns[device], (void *)fn, __ATOMIC_RELEASE);
            }
        }
    }
    pthread_mutex_unlock(&g_load_lock);
    return fn;
}

int tl_cuda_launch(tl_cuda_function *f, const unsigned grid[3], const unsigned block[3], unsigned shared_bytes,
                   void **args) {
    const int device = tl_cuda_current_device();
    if (tl__cu_ctx(device) != 0) return -1;
    CUfunction fn = (CUfunction)__atomic_load_n(&f->fns[device], __ATOMIC_ACQUIRE);
    if (!fn && !(fn = resolve(f, device))) return -1;
    if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0) return 0;   /* nothing to run (an empty tensor) */
    CUresult r = tl__cu()->cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared_bytes,
                                          (CUstream)tl_cuda_current_stream(device), args, NULL);
    return r == TL_CU_SUCCESS ? 0 : tl__cu_error(r, f->name);
}
