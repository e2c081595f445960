/* mm inner kernels (kernels/native/linalg.c calls them through
 * tl_mm_gemm_stub): C[M,N] = A[M,K] @ B[K,N], all contiguous, in the compute
 * dtype (float32, float64, wrapping 64-bit integers, complex128), rows [i0, i1) of C.
 * Cache-blocked i-k-j loops; the j loop vectorizes (FMA in the AVX2/AVX512
 * variants). Compiled once per CPU capability. float32 / float64 products
 * go to the vendor BLAS (kernels/native/blas.c); this loop serves integers,
 * K == 0 and sizes beyond the BLAS's 32-bit integers (docs/LINALG.md). */
#include <stdint.h>
#include <string.h>

#include "tl_kernel.h"
#include "tl_ufunc.h"

enum { MM_BK = 256, MM_BJ = 512 };

#define TL_DEF_GEMM(NAME, T)                                                                  \
    static void TL_KNAME(gemm_##NAME)(int64_t i0, int64_t i1, int64_t N, int64_t K,           \
                                      const void *A_, const void *B_, void *C_) {             \
        const T *restrict A = (const T *)A_;                                                  \
        const T *restrict B = (const T *)B_;                                                  \
        T *restrict C = (T *)C_;                                                              \
        memset(C + i0 * N, 0, (size_t)((i1 - i0) * N) * sizeof(T));                           \
        for (int64_t j0 = 0; j0 < N; j0 += MM_BJ) {                                           \
            const int64_t j1 = j0 + MM_BJ < N ? j0 + MM_BJ : N;                               \
            for (int64_t k0 = 0; k0 < K; k0 += MM_BK) {                                       \
                const int64_t k1 = k0 + MM_BK < K ? k0 + MM_BK : K;                           \
                for (int64_t i = i0; i < i1; i++) {                                           \
                    T *restrict c = C + i * N;                                                \
                    for (int64_t k = k0; k < k1; k++) {                                       \
                        const T a = A[i * K + k];                                             \
                        const T *restrict b = B + k * N;                                      \
                        for (int64_t j = j0; j < j1; j++) c[j] += a * b[j];                   \
                    }                                                                         \
                }                                                                             \
            }                                                                                 \
        }                                                                                     \
    }
TL_DEF_GEMM(f32, float)
TL_DEF_GEMM(f64, double)
TL_DEF_GEMM(u64, uint64_t)   /* integers: unsigned, so wrapping is defined */
TL_DEF_GEMM(c128, double _Complex)   /* complex64 / complex128 products */

const tl_mm_gemm_table_t TL_KNAME(tl_mm_gemm_table) = {
    [TL_FLOAT32] = TL_KNAME(gemm_f32),
    [TL_FLOAT64] = TL_KNAME(gemm_f64),
    [TL_INT64] = TL_KNAME(gemm_u64),
    [TL_COMPLEX128] = TL_KNAME(gemm_c128),
};
