/* cuBLAS, loaded lazily (tl_cuda_blas.h): dlopen once, the entry points into
 * a table, one handle per (device, stream) created on first use with its
 * stream set and the default math mode (no TF32: PyTorch's default for
 * float32 matmul), and tl_cuda_gemm over cublasGemmStridedBatchedEx with
 * PyTorch's types (at::cuda::blas::bgemm): float32 in CUBLAS_COMPUTE_32F,
 * float64 in CUBLAS_COMPUTE_64F, float16 / bfloat16 stored as such and
 * computed in CUBLAS_COMPUTE_32F with float alpha / beta and the tensor-op
 * algorithm. The handles live as long as the process (as PyTorch's pool). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "tl_cuda.h"
#include "tl_cuda_blas.h"
#include "tl_error.h"

/* cuBLAS's ABI: the values of cublas_api.h / library_types.h */
enum {
    CUBLAS_STATUS_SUCCESS = 0,
    CUBLAS_DEFAULT_MATH = 0,
    CUDA_R_32F = 0, CUDA_R_64F = 1, CUDA_R_16F = 2, CUDA_R_16BF = 14,
    CUBLAS_COMPUTE_32F = 68, CUBLAS_COMPUTE_64F = 70,
    CUBLAS_GEMM_DEFAULT = -1, CUBLAS_GEMM_DEFAULT_TENSOR_OP = 99,
};
typedef int cublas_status;
typedef void *cublas_handle;

typedef struct tl_cublas_api {
    cublas_status (*create)(cublas_handle *);
    cublas_status (*set_stream)(cublas_handle, void *);
    cublas_status (*set_math_mode)(cublas_handle, int);
    cublas_status (*gemm_strided_batched_ex)(cublas_handle, int, int, int, int, int, const void *, const void *,
                                             int, int, long long, const void *, int, int, long long, const void *,
                                             void *, int, int, long long, int, int, int);
    const char *(*status_name)(cublas_status);   /* optional */
} tl_cublas_api;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static tl_cublas_api g_api;
static int g_loaded;
static char g_reason[1024];
static char g_path[1024];   /* tl_cuda_blas_set_library */

enum { MAX_HANDLES = 256 };
static struct {
    int device;
    void *stream;
    cublas_handle handle;
} g_handles[MAX_HANDLES];
static int g_nhandles;

void tl_cuda_blas_set_library(const char *path) {
    pthread_mutex_lock(&g_lock);
    snprintf(g_path, sizeof g_path, "%s", path ? path : "");
    pthread_mutex_unlock(&g_lock);
}

/* dlsym of name, or of its _v2 form (cublasCreate_v2 ...) */
static void *sym(void *lib, const char *name, int v2) {
    char buf[96];
    snprintf(buf, sizeof buf, v2 ? "%s_v2" : "%s", name);
    return dlsym(lib, buf);
}

static void load(void) {
    const char *env = getenv("TORCHLET_LIBCUBLAS");
    pthread_mutex_lock(&g_lock);
    char located[sizeof g_path];
    memcpy(located, g_path, sizeof located);
    pthread_mutex_unlock(&g_lock);
    const char *tries[4] = {env && *env ? env : NULL, located[0] ? located : NULL, "libcublas.so.13",
                            "libcublas.so.12"};
    void *lib = NULL;
    char tried[512] = "";
    for (int i = 0; i < 4 && !lib; i++) {
        if (!tries[i]) continue;
        lib = dlopen(tries[i], RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            const size_t n = strlen(tried);
            snprintf(tried + n, sizeof tried - n, "%s%s", n ? ", " : "", tries[i]);
        }
        if (env && *env && i == 0) break;   /* an explicit library is the only one tried */
    }
    if (!lib) {
        snprintf(g_reason, sizeof g_reason,
                 "cuBLAS is not available: could not load %s. Install the nvidia-cublas-cu12 (or nvidia-cublas "
                 "for CUDA 13) wheel, or name the library in TORCHLET_LIBCUBLAS", tried);
        return;
    }
    g_api.create = (cublas_status(*)(cublas_handle *))sym(lib, "cublasCreate", 1);
    g_api.set_stream = (cublas_status(*)(cublas_handle, void *))sym(lib, "cublasSetStream", 1);
    g_api.set_math_mode = (cublas_status(*)(cublas_handle, int))sym(lib, "cublasSetMathMode", 0);
    *(void **)&g_api.gemm_strided_batched_ex = sym(lib, "cublasGemmStridedBatchedEx", 0);
    g_api.status_name = (const char *(*)(cublas_status))sym(lib, "cublasGetStatusName", 0);
    const char *missing = !g_api.create ? "cublasCreate_v2"
                          : !g_api.set_stream ? "cublasSetStream_v2"
                          : !g_api.set_math_mode ? "cublasSetMathMode"
                          : !g_api.gemm_strided_batched_ex ? "cublasGemmStridedBatchedEx" : NULL;
    if (missing) {
        snprintf(g_reason, sizeof g_reason, "cuBLAS is not available: %s has no %s", tries[0] ? tries[0] : "libcublas",
                 missing);
        return;
    }
    g_loaded = 1;
}

int tl_cuda_blas_available(void) {
    pthread_once(&g_once, load);
    return g_loaded;
}

const char *tl_cuda_blas_unavailable_reason(void) { return tl_cuda_blas_available() ? "" : g_reason; }

static const char *status_text(cublas_status s) {
    const char *n = g_api.status_name ? g_api.status_name(s) : NULL;
    return n ? n : "CUBLAS_STATUS_UNKNOWN";
}

static int blas_error(cublas_status s, const char *call) {
    return tl_set_error(TL_ERR_RUNTIME, "CUDA error: %s when calling `%s`", status_text(s), call);
}

/* the handle of (device, current stream); the device's context current */
static cublas_handle handle_for(int device) {
    if (!tl_cuda_blas_available()) {
        tl_set_error(TL_ERR_RUNTIME, "%s", g_reason);
        return NULL;
    }
    if (tl__cu_ctx(device) != 0) return NULL;
    void *stream = (void *)tl_cuda_current_stream(device);
    cublas_handle h = NULL;
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < g_nhandles; i++)
        if (g_handles[i].device == device && g_handles[i].stream == stream) h = g_handles[i].handle;
    if (!h) {
        cublas_status s;
        if (g_nhandles == MAX_HANDLES) {
            tl_set_error(TL_ERR_RUNTIME, "cuBLAS: more than %d (device, stream) handles", MAX_HANDLES);
        } else if ((s = g_api.create(&h)) != CUBLAS_STATUS_SUCCESS) {
            blas_error(s, "cublasCreate(handle)");
            h = NULL;
        } else if ((s = g_api.set_stream(h, stream)) != CUBLAS_STATUS_SUCCESS) {
            blas_error(s, "cublasSetStream(handle, stream)");
            h = NULL;
        } else if ((s = g_api.set_math_mode(h, CUBLAS_DEFAULT_MATH)) != CUBLAS_STATUS_SUCCESS) {
            blas_error(s, "cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH)");
            h = NULL;
        } else {
            g_handles[g_nhandles].device = device;
            g_handles[g_nhandles].stream = stream;
            g_handles[g_nhandles].handle = h;
            g_nhandles++;
        }
    }
    pthread_mutex_unlock(&g_lock);
    return h;
}

static int fits_int(int64_t v) { return v >= 0 && v <= 2147483647; }

int tl_cuda_gemm(int device, const tl_cuda_gemm_args *g) {
    int type, compute, algo;
    switch (g->dtype) {
    case TL_FLOAT32: type = CUDA_R_32F; compute = CUBLAS_COMPUTE_32F; algo = CUBLAS_GEMM_DEFAULT; break;
    case TL_FLOAT64: type = CUDA_R_64F; compute = CUBLAS_COMPUTE_64F; algo = CUBLAS_GEMM_DEFAULT; break;
    case TL_FLOAT16: type = CUDA_R_16F; compute = CUBLAS_COMPUTE_32F; algo = CUBLAS_GEMM_DEFAULT_TENSOR_OP; break;
    case TL_BFLOAT16: type = CUDA_R_16BF; compute = CUBLAS_COMPUTE_32F; algo = CUBLAS_GEMM_DEFAULT_TENSOR_OP; break;
    default:
        return tl_set_error(TL_ERR_RUNTIME, "cuBLAS GEMM: unsupported dtype %s", tl_dtype_scalar_name(g->dtype));
    }
    /* PyTorch's CUDABLAS_NONNEGINT_CHECK */
    const int64_t ints[] = {g->m, g->n, g->k, g->lda, g->ldb, g->ldc, g->batch};
    const char *names[] = {"m", "n", "k", "lda", "ldb", "ldc", "num_batches"};
    for (int i = 0; i < 7; i++)
        if (!fits_int(ints[i]))
            return tl_set_error(TL_ERR_RUNTIME, "at::cuda::blas::bgemm<%s> argument %s must be non-negative and less "
                                "than 2147483647 but got %lld", tl_dtype_scalar_name(g->dtype), names[i],
                                (long long)ints[i]);
    cublas_handle h = handle_for(device);
    if (!h) return -1;
    const float falpha = (float)g->alpha, fbeta = (float)g->beta;
    const void *alpha = compute == CUBLAS_COMPUTE_64F ? (const void *)&g->alpha : (const void *)&falpha;
    const void *beta = compute == CUBLAS_COMPUTE_64F ? (const void *)&g->beta : (const void *)&fbeta;
    const cublas_status s = g_api.gemm_strided_batched_ex(
        h, g->transa, g->transb, (int)g->m, (int)g->n, (int)g->k, alpha, g->a, type, (int)g->lda, g->stride_a, g->b,
        type, (int)g->ldb, g->stride_b, beta, g->c, type, (int)g->ldc, g->stride_c, (int)g->batch, compute, algo);
    if (s != CUBLAS_STATUS_SUCCESS)
        return blas_error(s, "cublasGemmStridedBatchedEx(handle, opa, opb, m, n, k, &alpha, a, type, lda, stridea, "
                             "b, type, ldb, strideb, &beta, c, type, ldc, stridec, num_batches, compute_type, algo)");
    return 0;
}
