/* A libcublas for tests (loaded through TORCHLET_LIBCUBLAS beside the fake
 * driver, whose "device memory" is host memory): it records every call so
 * tests can check the arguments the runtime passed (transposes, leading
 * dims, batch strides, types, compute type, algorithm, stream), and it
 * computes the GEMM on the host in column-major terms, as cuBLAS would, so
 * results are checked against the CPU's matmul as well. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { R_32F = 0, R_64F = 1, R_16F = 2, R_16BF = 14, COMPUTE_32F = 68, COMPUTE_64F = 70 };

typedef struct fake_gemm_call {
    void *handle;
    int transa, transb, m, n, k;
    double alpha, beta;
    int atype, btype, ctype, lda, ldb, ldc;
    long long stride_a, stride_b, stride_c;
    int batch, compute, algo;
    const void *a, *b;
    void *c;
} fake_gemm_call;

static fake_gemm_call g_last;
static long g_gemms, g_creates, g_set_streams, g_math_modes;
static void *g_last_stream;
static int g_fail_status;   /* != 0: the next gemm returns it */

typedef struct handle {
    void *stream;
    int math;
} handle;

int cublasCreate_v2(void **h) {
    *h = calloc(1, sizeof(handle));
    g_creates++;
    return 0;
}
int cublasSetStream_v2(void *h, void *stream) {
    ((handle *)h)->stream = stream;
    g_last_stream = stream;
    g_set_streams++;
    return 0;
}
int cublasSetMathMode(void *h, int mode) {
    ((handle *)h)->math = mode;
    g_math_modes++;
    return 0;
}
const char *cublasGetStatusName(int s) {
    return s == 7 ? "CUBLAS_STATUS_INVALID_VALUE" : s == 13 ? "CUBLAS_STATUS_EXECUTION_FAILED" : "CUBLAS_STATUS_?";
}

static float h2f(uint16_t h) {   /* IEEE half -> float (exact) */
    const uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31, m = h & 1023;
    uint32_t u;
    if (e == 0) {
        float f = (float)m / 16777216.0f;   /* m * 2^-24 */
        return s ? -f : f;
    }
    u = e == 31 ? s | 0x7f800000u | (m << 13) : s | ((e + 112) << 23) | (m << 13);
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint16_t f2h(float f) {   /* round to nearest even; normal range and zero (test data) */
    uint32_t u;
    memcpy(&u, &f, 4);
    const uint32_t s = (u >> 16) & 0x8000u;
    int e = (int)((u >> 23) & 255) - 127 + 15;
    uint32_t m = u & 0x7fffffu;
    if ((u & 0x7fffffffu) == 0) return (uint16_t)s;
    if (e <= 0) return (uint16_t)s;   /* flush (not reached by the tests' values) */
    uint32_t r = ((uint32_t)e << 10) | (m >> 13);
    const uint32_t rest = m & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (r & 1))) r++;
    return (uint16_t)(s | r);
}
static float bf2f(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint16_t f2bf(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static double load(int type, const void *p, long long i) {
    switch (type) {
    case R_32F: return ((const float *)p)[i];
    case R_64F: return ((const double *)p)[i];
    case R_16F: return h2f(((const uint16_t *)p)[i]);
    default: return bf2f(((const uint16_t *)p)[i]);
    }
}
static void store(int type, void *p, long long i, double v) {
    switch (type) {
    case R_32F: ((float *)p)[i] = (float)v; break;
    case R_64F: ((double *)p)[i] = v; break;
    case R_16F: ((uint16_t *)p)[i] = f2h((float)v); break;
    default: ((uint16_t *)p)[i] = f2bf((float)v); break;
    }
}

int cublasGemmStridedBatchedEx(void *h, int transa, int transb, int m, int n, int k, const void *alpha,
                               const void *A, int atype, int lda, long long stride_a, const void *B, int btype,
                               int ldb, long long stride_b, const void *beta, void *C, int ctype, int ldc,
                               long long stride_c, int batch, int compute, int algo) {
    const double al = compute == COMPUTE_64F ? *(const double *)alpha : *(const float *)alpha;
    const double be = compute == COMPUTE_64F ? *(const double *)beta : *(const float *)beta;
    g_last = (fake_gemm_call){h, transa, transb, m, n, k, al, be, atype, btype, ctype, lda, ldb, ldc,
                              stride_a, stride_b, stride_c, batch, compute, algo, A, B, C};
    g_gemms++;
    if (g_fail_status) {
        const int s = g_fail_status;
        g_fail_status = 0;
        return s;
    }
    /* cuBLAS's own argument checks */
    if (m < 0 || n < 0 || k < 0 || lda < (transa ? (k > 1 ? k : 1) : (m > 1 ? m : 1)) ||
        ldb < (transb ? (n > 1 ? n : 1) : (k > 1 ? k : 1)) || ldc < (m > 1 ? m : 1))
        return 7;   /* CUBLAS_STATUS_INVALID_VALUE */
    for (int bi = 0; bi < batch; bi++)
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) {
                double acc = 0;
                for (int p = 0; p < k; p++) {
                    const long long ia = transa ? (long long)i * lda + p : (long long)p * lda + i;
                    const long long ib = transb ? (long long)p * ldb + j : (long long)j * ldb + p;
                    acc += load(atype, A, bi * stride_a + ia) * load(btype, B, bi * stride_b + ib);
                }
                const long long ic = bi * stride_c + (long long)j * ldc + i;
                /* beta == 0: C is not read (it may hold NaN) */
                store(ctype, C, ic, al * acc + (be == 0 ? 0 : be * load(ctype, C, ic)));
            }
    return 0;
}

/* ---- for the tests */
long fake_cublas_counter(const char *what) {
    if (!strcmp(what, "gemm")) return g_gemms;
    if (!strcmp(what, "create")) return g_creates;
    if (!strcmp(what, "set_stream")) return g_set_streams;
    if (!strcmp(what, "math_mode")) return g_math_modes;
    return -1;
}
/* the last GEMM's arguments as text: "transa transb m n k lda ldb ldc stride_a stride_b stride_c batch
 * atype compute algo alpha beta" */
const char *fake_cublas_last(void) {
    static char buf[512];
    const fake_gemm_call *c = &g_last;
    snprintf(buf, sizeof buf, "%d %d %d %d %d %d %d %d %lld %lld %lld %d %d %d %d %g %g", c->transa, c->transb, c->m,
             c->n, c->k, c->lda, c->ldb, c->ldc, c->stride_a, c->stride_b, c->stride_c, c->batch, c->atype, c->compute,
             c->algo, c->alpha, c->beta);
    return buf;
}
void *fake_cublas_last_stream(void) { return g_last_stream; }
void fake_cublas_fail_next(int status) { g_fail_status = status; }
