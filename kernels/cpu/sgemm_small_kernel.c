/* Small float32 products (kernels/native/blas.c routes them here; see
 * tl_blas.h and docs/LINALG.md "Small products"): C = alpha * A @ B + beta * C
 * for rows [r0, r1) of one matrix, A and B at any element strides, C
 * row-major. bmm in attention (128x64 @ 64x128) runs ~1.3x faster here than
 * through OpenBLAS, whose per-call packing and buffers weigh on ~1 M
 * multiply-adds.
 *
 * Register tiles of MR rows x NV vectors: B's columns [j0, j0 + NR) are
 * packed once per strip into a K x NR panel (zero-padded past N, so every
 * layout of B reads the same way), then each tile keeps MR * NV accumulators
 * in registers over k, broadcasting A[i, k]. The rows past M of the last
 * tile read row r0 again and are not stored. Each output element is one
 * k-ordered chain of multiply-adds, whatever the thread split.
 *
 * Written with GCC vector extensions and compiled once per CPU capability;
 * the tile fits each ISA's registers (AVX-512: 4 x 4 zmm of 32; AVX2: 4 x 2
 * ymm of 16; baseline SSE2: 4 x 2 xmm). */
#include <stdint.h>
#include <string.h>

#include "../native/tl_blas.h"
#include "tl_kernel.h"

#if defined(__AVX512F__)
#define VW 16
#define NV 4
#elif defined(__AVX2__)
#define VW 8
#define NV 2
#else
#define VW 4
#define NV 2
#endif
#define MR 4
#define NR (VW * NV)

_Static_assert(NR <= TL_SGEMM_SMALL_NR_MAX, "the caller's panel holds K x TL_SGEMM_SMALL_NR_MAX floats");

typedef float vf __attribute__((vector_size(VW * sizeof(float))));
/* unaligned access to C */
typedef float vfu __attribute__((vector_size(VW * sizeof(float)), aligned(4)));

/* B[:, j0:j0+nc] -> P[k][NR], zeros past nc */
static void pack_b(const tl_sgemm_small_args *g, const float *B, int64_t j0, int64_t nc, float *restrict P) {
    for (int64_t k = 0; k < g->K; k++) {
        const float *b = B + k * g->rsb + j0 * g->csb;
        float *restrict d = P + k * NR;
        if (g->csb == 1) {
            memcpy(d, b, (size_t)nc * sizeof(float));
        } else {
            for (int64_t j = 0; j < nc; j++) d[j] = b[j * g->csb];
        }
        for (int64_t j = nc; j < NR; j++) d[j] = 0;
    }
}

/* rows a[0..MR) of A against the panel: C rows c (mr valid rows, nc valid
 * columns) */
static void tile(const tl_sgemm_small_args *g, const float *const a[MR], const float *restrict P, float *c,
                 int64_t mr, int64_t nc) {
    vf acc[MR][NV];
    for (int r = 0; r < MR; r++)
        for (int v = 0; v < NV; v++) acc[r][v] = (vf){0};
    const int64_t csa = g->csa;
    for (int64_t k = 0; k < g->K; k++) {
        const vf *bp = (const vf *)(P + k * NR);
        vf b[NV];
        for (int v = 0; v < NV; v++) b[v] = bp[v];
        for (int r = 0; r < MR; r++) {
            const float x = a[r][k * csa];
            for (int v = 0; v < NV; v++) acc[r][v] += x * b[v];
        }
    }
    const float alpha = g->alpha, beta = g->beta;
    if (mr == MR && nc == NR) {
        for (int r = 0; r < MR; r++) {
            vfu *cr = (vfu *)(c + r * g->ldc);
            for (int v = 0; v < NV; v++) {
                vf x = acc[r][v] * alpha;
                if (beta != 0) x += (vf)cr[v] * beta; /* beta == 0: C's contents ignored (NaN too) */
                cr[v] = x;
            }
        }
        return;
    }
    float t[MR][NR] __attribute__((aligned(64)));
    for (int r = 0; r < MR; r++)
        for (int v = 0; v < NV; v++) *(vf *)&t[r][v * VW] = acc[r][v];
    for (int64_t r = 0; r < mr; r++) {
        float *cr = c + r * g->ldc;
        for (int64_t j = 0; j < nc; j++) cr[j] = beta != 0 ? alpha * t[r][j] + beta * cr[j] : alpha * t[r][j];
    }
}

/* rows [r0, r1) of matrix `item` of the batch; P: K x TL_SGEMM_SMALL_NR_MAX
 * floats, 64-byte aligned */
static void sgemm_small(const tl_sgemm_small_args *g, int64_t item, int64_t r0, int64_t r1, float *P) {
    const float *A = g->A + item * g->sa, *B = g->B + item * g->sb;
    float *C = g->C + item * g->sc;
    for (int64_t j0 = 0; j0 < g->N; j0 += NR) {
        const int64_t nc = g->N - j0 < NR ? g->N - j0 : NR;
        pack_b(g, B, j0, nc, P);
        for (int64_t i0 = r0; i0 < r1; i0 += MR) {
            const int64_t mr = r1 - i0 < MR ? r1 - i0 : MR;
            const float *a[MR];
            for (int r = 0; r < MR; r++) a[r] = A + (r < mr ? i0 + r : r0) * g->rsa;
            tile(g, a, P, C + i0 * g->ldc + j0, mr, nc);
        }
    }
}

const tl_sgemm_small_fn TL_KNAME(tl_sgemm_small_table)[1] = {sgemm_small};
