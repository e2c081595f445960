/* Threads: OpenMP with a grain size, torchlet's own thread count, and a fork
 * handler (a child that enters an OpenMP region after the parent used OpenMP
 * would hang in libgomp; the child runs single-threaded instead). */
#include <omp.h>
#include <pthread.h>

#include "tl_internal.h"

static int g_num_threads = 0;       /* 0: not initialised */
static int64_t g_grain = 32768;
static _Thread_local int g_in_parallel __attribute__((tls_model("initial-exec"))) = 0;

static void atfork_child(void) {
    g_num_threads = 1;
    omp_set_num_threads(1);
}

__attribute__((constructor)) static void parallel_init(void) {
    g_num_threads = omp_get_max_threads();
    if (g_num_threads < 1) g_num_threads = 1;
    pthread_atfork(NULL, NULL, atfork_child);
}

int tl_get_num_threads(void) { return g_num_threads < 1 ? 1 : g_num_threads; }

int tl_set_num_threads(int n) {
    if (n < 1) return tl_set_error(TL_ERR_RUNTIME, "Expected number of threads to be positive, got %d", n);
    g_num_threads = n;
    return 0;
}

int64_t tl_get_grain_size(void) { return g_grain; }
void tl_set_grain_size(int64_t grain) { g_grain = grain < 1 ? 1 : grain; }

int tl__in_parallel_region(void) { return g_in_parallel; }

void tl_parallel_for(int64_t n, int64_t grain, tl_range_fn fn, void *ctx) {
    if (n <= 0) return;
    int nt = tl_get_num_threads();
    if (grain < 1) grain = 1;
    int64_t max_chunks = (n + grain - 1) / grain;
    if (nt > max_chunks) nt = (int)max_chunks;
    if (nt <= 1 || g_in_parallel) {
        fn(0, n, ctx);
        return;
    }
#pragma omp parallel num_threads(nt)
    {
        int tid = omp_get_thread_num();
        int nth = omp_get_num_threads();
        int64_t chunk = (n + nth - 1) / nth;
        int64_t b = (int64_t)tid * chunk;
        int64_t e = b + chunk < n ? b + chunk : n;
        g_in_parallel = 1;
        if (b < e) fn(b, e, ctx);
        g_in_parallel = 0;
    }
}
