/* torchlet runtime: matrix products on CUDA through cuBLAS (runtime/src/cuda/
 * cublas.c). Nothing links against cuBLAS: on first use the runtime dlopens
 * $TORCHLET_LIBCUBLAS, else the library torchlet.cuda located in the
 * nvidia-cublas wheel (tl_cuda_blas_set_library), else libcublas.so.13 /
 * libcublas.so.12 from the loader's path, and resolves the few entry points
 * it calls. A missing library is a RuntimeError naming what was tried.
 *
 * cdef-clean: build_ffi.py strips preprocessor lines; keep plain declarations.
 */
#ifndef TL_CUDA_BLAS_H
#define TL_CUDA_BLAS_H

#include <stdint.h>
#include "tl_dtype.h"

/* the library to try before the loader's path (called by torchlet.cuda at
 * import; no effect once the library is loaded). NULL clears it. */
void tl_cuda_blas_set_library(const char *path);
/* 1 when cuBLAS loaded (loading it on first call), else 0 with the reason
 * in tl_cuda_blas_unavailable_reason() */
int tl_cuda_blas_available(void);
const char *tl_cuda_blas_unavailable_reason(void);

/* One cuBLAS GEMM in cuBLAS's column-major terms, batched with element
 * strides: C_i = alpha * op(A_i) op(B_i) + beta * C_i for i < batch, op(A)
 * m x k, op(B) k x n, C m x n; trans: 0 'N', 1 'T'. float32 / float64 /
 * float16 / bfloat16 (half and bfloat16 accumulate in float). Runs on the
 * current stream of `device` through that (device, stream)'s handle. */
typedef struct tl_cuda_gemm_args {
    int transa, transb;
    int64_t m, n, k;
    double alpha, beta;
    const void *a;
    int64_t lda, stride_a;
    const void *b;
    int64_t ldb, stride_b;
    void *c;
    int64_t ldc, stride_c;
    int64_t batch;
    tl_dtype dtype;
} tl_cuda_gemm_args;
int tl_cuda_gemm(int device, const tl_cuda_gemm_args *g);

#endif
