/* The vendor BLAS behind tl_blas.h: OpenBLAS from the scipy-openblas32 wheel
 * (cblas.h from the wheel's include dir, which setup.py adds for this file
 * only; every symbol is prefixed `scipy_`).
 *
 * Threads: the wheel is a pthreads build with its own pool. torchlet hands
 * OpenBLAS a threads callback instead, so its parallel jobs run on torchlet's
 * OpenMP team: one pool for kernels and BLAS (two pools spinning after their
 * work fight for the cores: measured in docs/LINALG.md). Before each call the
 * thread count is set to torchlet's (tl_get_num_threads: OMP_NUM_THREADS or
 * set_num_threads), or to 1 inside a tl_parallel_for region; the set is
 * skipped when the count did not change. Fork: torchlet's child handler sets
 * the count to 1, which the next call passes on (OpenBLAS also stops its own
 * pool around fork). TORCHLET_BLAS_OWN_POOL=1 at load keeps OpenBLAS's pool. */
#include <omp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include <cblas.h>

#include "tl_blas.h"
#include "tl_internal.h"
#include "tl_runtime.h"

static atomic_int g_blas_threads = 0; /* the count last given to OpenBLAS */

/* OpenBLAS's parallel jobs on torchlet's OpenMP team instead of its own
 * pthread pool: one pool of threads for the whole library, as PyTorch's BLAS
 * shares its OpenMP pool with at::parallel_for. The jobs of one call wait on
 * each other, so all of them must run at once: one thread per job. */
typedef struct {
    openblas_dojob_callback dojob;
    int i, data;
    void *job;
} job_arg;

static void *job_thread(void *p) {
    const job_arg *a = p;
    a->dojob(a->i, a->job, a->data);
    return NULL;
}

static void omp_jobs(int sync, openblas_dojob_callback dojob, int numjobs, size_t elsize, void *jobdata, int data) {
    (void)sync;
    /* OpenMP cannot promise a team of numjobs here (a nested region beyond
     * the active levels): plain threads for jobs 1.. (rare; never from
     * torchlet's own regions, which run BLAS on one thread) */
    if (omp_in_parallel() && omp_get_active_level() >= omp_get_max_active_levels()) {
        pthread_t th[64];
        job_arg args[64];
        int started = 0;
        for (int i = 1; i < numjobs && i < 64; i++) {
            args[i] = (job_arg){dojob, i, data, (char *)jobdata + (size_t)i * elsize};
            if (pthread_create(&th[i], NULL, job_thread, &args[i]) != 0) abort(); /* jobs wait on each other */
            started = i;
        }
        dojob(0, jobdata, data);
        for (int i = 1; i <= started; i++) pthread_join(th[i], NULL);
        return;
    }
#pragma omp parallel num_threads(numjobs)
    dojob(omp_get_thread_num(), (char *)jobdata + (size_t)omp_get_thread_num() * elsize, data);
}

void tl_blas_use_openmp(int on) { scipy_openblas_set_threads_callback_function(on ? omp_jobs : NULL); }

__attribute__((constructor)) static void blas_init(void) {
    const char *e = getenv("TORCHLET_BLAS_OWN_POOL");
    tl_blas_use_openmp(!(e && e[0] == '1'));
}

static void blas_threads(void) {
    int n = tl__in_parallel_region() ? 1 : tl_get_num_threads();
    if (n > omp_get_thread_limit()) n = omp_get_thread_limit(); /* every job gets its own thread */
    if (atomic_load_explicit(&g_blas_threads, memory_order_relaxed) != n) {
        scipy_openblas_set_num_threads(n);
        atomic_store_explicit(&g_blas_threads, n, memory_order_relaxed);
    }
}

void tl_blas_gemm(tl_dtype dt, bool transa, bool transb, int64_t M, int64_t N, int64_t K, double alpha,
                  const void *A, int64_t lda, int64_t sa, const void *B, int64_t ldb, int64_t sb, double beta,
                  void *C, int64_t ldc, int64_t sc, int64_t batch) {
    blas_threads();
    const enum CBLAS_TRANSPOSE ta = transa ? CblasTrans : CblasNoTrans;
    const enum CBLAS_TRANSPOSE tb = transb ? CblasTrans : CblasNoTrans;
    for (int64_t i = 0; i < batch; i++) {
        if (dt == TL_FLOAT64)
            scipy_cblas_dgemm(CblasRowMajor, ta, tb, (blasint)M, (blasint)N, (blasint)K, alpha,
                              (const double *)A + i * sa, (blasint)lda, (const double *)B + i * sb, (blasint)ldb,
                              beta, (double *)C + i * sc, (blasint)ldc);
        else
            scipy_cblas_sgemm(CblasRowMajor, ta, tb, (blasint)M, (blasint)N, (blasint)K, (float)alpha,
                              (const float *)A + i * sa, (blasint)lda, (const float *)B + i * sb, (blasint)ldb,
                              (float)beta, (float *)C + i * sc, (blasint)ldc);
    }
}
