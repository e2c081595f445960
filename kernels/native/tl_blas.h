/* The vendor BLAS (scipy-openblas32, a wheel built for linking; symbols carry
 * a `scipy_` prefix) behind three calls. kernels/native/blas.c is the only
 * file that includes the wheel's cblas.h; setup.py adds its include dir for
 * that file alone and links libscipy_openblas (docs/LINALG.md). */
#ifndef TL_BLAS_H
#define TL_BLAS_H

#include <stdbool.h>
#include <stdint.h>

#include "tl_dtype.h"

/* the largest dimension, leading dimension or batch stride the BLAS integer
 * (32-bit) can carry; larger problems take the C loop */
#define TL_BLAS_INT_MAX 2147483647LL

/* Row-major C[b] = alpha * op(A[b]) @ op(B[b]) + beta * C[b] for b < batch
 * (element strides sa/sb/sc between the batch's matrices), float32 or float64
 * (dt). beta == 0 ignores C's contents (NaN included), as BLAS specifies.
 * Every integer argument must be <= TL_BLAS_INT_MAX (the caller checks).
 * Runs on torchlet's thread count (tl_get_num_threads; one thread inside a
 * tl_parallel_for region): a batch of small matrices (M*N*K <= 2^24, C's
 * matrices disjoint) is split over the thread pool, one single-threaded
 * call per matrix; otherwise OpenBLAS splits each call. */
void tl_blas_gemm(tl_dtype dt, bool transa, bool transb, int64_t M, int64_t N, int64_t K, double alpha,
                  const void *A, int64_t lda, int64_t sa, const void *B, int64_t ldb, int64_t sb, double beta,
                  void *C, int64_t ldc, int64_t sc, int64_t batch);
/* the same for complex64 / complex128 (cgemm / zgemm): complex alpha, beta */
void tl_blas_gemm_complex(tl_dtype dt, bool transa, bool transb, int64_t M, int64_t N, int64_t K,
                          double _Complex alpha, const void *A, int64_t lda, int64_t sa, const void *B, int64_t ldb,
                          int64_t sb, double _Complex beta, void *C, int64_t ldc, int64_t sc, int64_t batch);

/* OpenBLAS's threads: torchlet's thread pool (1, the default) or OpenBLAS's
 * own pthread pool (0; also TORCHLET_BLAS_OWN_POOL=1 at load) */
void tl_blas_use_pool(int on);

#endif
