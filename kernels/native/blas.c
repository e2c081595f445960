/* The vendor BLAS behind tl_blas.h: OpenBLAS from the scipy-openblas32 wheel
 * (cblas.h from the wheel's include dir, which setup.py adds for this file
 * only; every symbol is prefixed `scipy_`).
 *
 * Threads: the wheel is a pthreads build with its own pool. torchlet hands
 * OpenBLAS a threads callback instead, so its parallel jobs run on torchlet's
 * thread pool (runtime/src/parallel.c): one pool for kernels and BLAS (two
 * pools spinning after their work fight for the cores: docs/LINALG.md). Before each call the
 * thread count is set to torchlet's (tl_get_num_threads: OMP_NUM_THREADS or
 * set_num_threads), or to 1 inside a tl_parallel_for region; the set is
 * skipped when the count did not change. A batch of small matrices is split
 * over the pool instead (one single-threaded call per matrix). Fork:
 * torchlet's child handler sets the count to 1, which the next call passes
 * on (OpenBLAS also stops its own pool around fork). TORCHLET_BLAS_OWN_POOL=1
 * at load keeps OpenBLAS's pool. */
#include <complex.h>
#include <stdatomic.h>
#include <stdlib.h>

#include <cblas.h>

#include "tl_blas.h"
#include "tl_internal.h"
#include "tl_runtime.h"

static atomic_int g_blas_threads = 0; /* the count last given to OpenBLAS */

/* OpenBLAS's parallel jobs on torchlet's thread pool instead of its own
 * pthread pool: one set of threads for the whole library (as PyTorch's BLAS
 * shares its OpenMP pool with at::parallel_for), and none left spinning
 * beside BLAS. The jobs of one call wait on each other, so each runs on its
 * own thread (tl_parallel_jobs). */
typedef struct {
    openblas_dojob_callback dojob;
    char *jobdata;
    size_t elsize;
    int data;
} blas_jobs;

static void blas_job(int i, void *p) {
    const blas_jobs *j = p;
    j->dojob(i, j->jobdata + (size_t)i * j->elsize, j->data);
}

static void pool_jobs(int sync, openblas_dojob_callback dojob, int numjobs, size_t elsize, void *jobdata, int data) {
    (void)sync;
    blas_jobs j = {dojob, jobdata, elsize, data};
    tl_parallel_jobs(numjobs, blas_job, &j);
}

void tl_blas_use_pool(int on) { scipy_openblas_set_threads_callback_function(on ? pool_jobs : NULL); }

__attribute__((constructor)) static void blas_init(void) {
    const char *e = getenv("TORCHLET_BLAS_OWN_POOL");
    tl_blas_use_pool(!(e && e[0] == '1'));
}

/* tell OpenBLAS n threads, only when the count changed */
static void set_blas_threads(int n) {
    if (atomic_load_explicit(&g_blas_threads, memory_order_relaxed) != n) {
        scipy_openblas_set_num_threads(n);
        atomic_store_explicit(&g_blas_threads, n, memory_order_relaxed);
    }
}

/* torchlet's thread count for this call: 1 inside a tl_parallel_for region,
 * at most the pool's limit (every job gets its own thread) */
static int blas_threads(void) {
    int n = tl__in_parallel_region() ? 1 : tl_get_num_threads();
    if (n > TL_MAX_THREADS) n = TL_MAX_THREADS;
    return n < 1 ? 1 : n;
}

typedef struct {
    tl_dtype dt;
    enum CBLAS_TRANSPOSE ta, tb;
    blasint M, N, K, lda, ldb, ldc;
    double _Complex alpha, beta; /* real dtypes: the real parts */
    const char *A, *B;
    char *C;
    int64_t sa, sb, sc; /* batch strides in bytes */
} gemm_job;

/* matrices [b, e) of the batch, each one BLAS call */
static void gemm_items(int64_t b, int64_t e, void *ctx) {
    const gemm_job *j = ctx;
    for (int64_t i = b; i < e; i++) {
        const char *A = j->A + i * j->sa, *B = j->B + i * j->sb;
        char *C = j->C + i * j->sc;
        if (j->dt == TL_FLOAT64) {
            scipy_cblas_dgemm(CblasRowMajor, j->ta, j->tb, j->M, j->N, j->K, creal(j->alpha), (const double *)A,
                              j->lda, (const double *)B, j->ldb, creal(j->beta), (double *)C, j->ldc);
        } else if (j->dt == TL_FLOAT32) {
            scipy_cblas_sgemm(CblasRowMajor, j->ta, j->tb, j->M, j->N, j->K, (float)creal(j->alpha),
                              (const float *)A, j->lda, (const float *)B, j->ldb, (float)creal(j->beta), (float *)C,
                              j->ldc);
        } else if (j->dt == TL_COMPLEX128) {
            scipy_cblas_zgemm(CblasRowMajor, j->ta, j->tb, j->M, j->N, j->K, &j->alpha, A, j->lda, B, j->ldb,
                              &j->beta, C, j->ldc);
        } else {
            const float _Complex alpha = (float _Complex)j->alpha, beta = (float _Complex)j->beta;
            scipy_cblas_cgemm(CblasRowMajor, j->ta, j->tb, j->M, j->N, j->K, &alpha, A, j->lda, B, j->ldb, &beta, C,
                              j->ldc);
        }
    }
}

/* Small matrices of a batch (bmm in attention: 128x64 @ 64x128) gain
 * nothing from OpenBLAS splitting each one over threads (a team handoff and
 * a join per matrix for ~20 us of work): the batch is split over the thread
 * pool instead, one single-threaded BLAS call per matrix, as PyTorch's MKL
 * batch does. Large matrices keep OpenBLAS's own split (better balanced when
 * the batch does not divide by the thread count). */
#define TL_BLAS_ITEM_PARALLEL_MAX (1LL << 24) /* M * N * K of one matrix */

static void run_gemm(gemm_job *j, int64_t batch) {
    const int n = blas_threads();
    /* the matrices of C must not overlap (a batch stride below one matrix's
     * extent: the calls would race) */
    const bool disjoint = j->sc >= ((int64_t)(j->M - 1) * j->ldc + j->N) * (int64_t)tl_dtype_itemsize(j->dt);
    if (n > 1 && batch >= n && disjoint && (int64_t)j->M * j->N * j->K <= TL_BLAS_ITEM_PARALLEL_MAX) {
        set_blas_threads(1); /* the pool's threads each run whole matrices */
        tl_parallel_for(batch, 1, gemm_items, j);
        return;
    }
    set_blas_threads(n);
    gemm_items(0, batch, j);
}

void tl_blas_gemm(tl_dtype dt, bool transa, bool transb, int64_t M, int64_t N, int64_t K, double alpha,
                  const void *A, int64_t lda, int64_t sa, const void *B, int64_t ldb, int64_t sb, double beta,
                  void *C, int64_t ldc, int64_t sc, int64_t batch) {
    tl_blas_gemm_complex(dt, transa, transb, M, N, K, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch);
}

void tl_blas_gemm_complex(tl_dtype dt, bool transa, bool transb, int64_t M, int64_t N, int64_t K,
                          double _Complex alpha, const void *A, int64_t lda, int64_t sa, const void *B, int64_t ldb,
                          int64_t sb, double _Complex beta, void *C, int64_t ldc, int64_t sc, int64_t batch) {
    const int64_t isz = tl_dtype_itemsize(dt);
    gemm_job j = {dt, transa ? CblasTrans : CblasNoTrans, transb ? CblasTrans : CblasNoTrans,
                  (blasint)M, (blasint)N, (blasint)K, (blasint)lda, (blasint)ldb, (blasint)ldc, alpha, beta,
                  A, B, C, sa * isz, sb * isz, sc * isz};
    run_gemm(&j, batch);
}
