/* The vendor BLAS behind tl_blas.h: OpenBLAS from the scipy-openblas32 wheel
 * (cblas.h from the wheel's include dir, which setup.py adds for this file
 * only; every symbol is prefixed `scipy_`).
 *
 * Threads: OpenBLAS keeps its own pthread pool (the wheel is not an OpenMP
 * build). Before each call its thread count is set to torchlet's
 * (tl_get_num_threads, which follows OMP_NUM_THREADS and set_num_threads), or
 * to 1 inside a tl_parallel_for region; the set is skipped when the count did
 * not change. Fork: OpenBLAS stops its pool before fork (its own pthread_atfork
 * handler) and starts it again on demand; torchlet's child handler sets the
 * thread count to 1, which the next call here passes on. */
#include <stdatomic.h>

#include <cblas.h>

#include "tl_blas.h"
#include "tl_internal.h"
#include "tl_runtime.h"

static atomic_int g_blas_threads = 0; /* the count last given to OpenBLAS */

static void blas_threads(void) {
    int n = tl__in_parallel_region() ? 1 : tl_get_num_threads();
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
