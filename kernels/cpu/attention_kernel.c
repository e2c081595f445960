/* Fused CPU attention, forward and backward (kernels/cpu/attention_kernel.h
 * gives the calling convention; kernels/native/attention.c the operators).
 * Compiled once per CPU capability: float exp is tl_vexp.h's (inlined), double
 * exp and log vectorize through libmvec (tl_mvec.h), the products are
 * vendor-BLAS GEMMs on tiles (tl_blas.h; one thread each, since the items
 * already run on torchlet's thread pool).
 *
 * Forward (flash style): a tile of TL_ATTN_BQ query rows meets the keys in
 * blocks of TL_ATTN_BK; each block's scores s = scale * q k^T + mask go
 * through an online softmax (running row maximum m and sum l; the
 * accumulated p @ v is rescaled by exp(m_old - m_new) when the maximum
 * grows), so no L x S matrix is ever stored. Causal attention (top-left
 * aligned, PyTorch's rule: key j is masked for query i when j > i) stops at
 * the tile's last visible key, so fully masked blocks are never computed.
 * The output row is acc / l and logsumexp = m + log(l). A row whose keys
 * are all masked gives 0 and logsumexp 0 (PyTorch's CPU kernel does the
 * same).
 *
 * Backward: one item is a (batch, kv head); it owns the gradients of its
 * key / value rows, so nothing is shared between threads. The
 * probabilities are recomputed from the saved logsumexp, p = exp(s - lse),
 * then per block: dv += p^T do, dp = do v^T, ds = p * (dp - D) with
 * D = rowsum(do * out), dq += scale * ds k, dk += scale * ds^T q. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tl_mvec.h"
#include "tl_kernel.h"
#include "tl_rowdot.h"
#include "tl_vexp.h"
#include "../native/tl_blas.h"
#include "attention_kernel.h"

#define LANES 16

/* BLAS leading dimensions must be >= 1 (they are unused for empty sides) */
#define LD(x) ((x) > 0 ? (x) : 1)
/* row stride of the score tiles: n rounded up to whole 64-byte vectors */
#define RS(n) (((n) + LANES - 1) / LANES * LANES)

/* 64-byte aligned scratch (rows of RS(n) elements stay aligned); free() */
static void *scratch(size_t bytes) { return aligned_alloc(64, (bytes + 63) / 64 * 64); }

/* exp of a shifted score, exactly 0 for -inf from masks; NaN propagates.
 * float: tl_vexp.h's in-house exp (inlined; no special input takes libmvec's
 * ~20x slower scalar path), subnormal results kept as softmax's
 * (tl_expf_sm: masked and far-underflowed lanes give 0 without a microcode
 * assist); double: libm's exp, arguments below LO given 0. */
#define EXP_LO_f64 (-708.0)
static inline float aexp_f32(float d) { return tl_expf_sm(d); }
static inline double aexp_f64(double d) { return d < EXP_LO_f64 ? 0.0 : exp(d); }

/* p[k] = exp(p[k] - sub) over a padded row (ld a multiple of LANES, 64-byte
 * aligned: no scalar peel or tail) */
static inline void exprow_f32(float *restrict p, int64_t ld, float sub) {
    for (int64_t k = 0; k < ld; k++) p[k] = tl_expf_sm(p[k] - sub);
}
/* double: the arguments are clamped to lo in a pass of their own (the
 * compiler barrier keeps GCC from feeding the unclamped -inf to the vector
 * exp, which it does when clamp and exp share a loop); clamped entries give 0 */
static inline void exprow_f64(double *restrict p, int64_t ld, double sub) {
    const double lo = EXP_LO_f64;
    for (int64_t k = 0; k < ld; k++) p[k] = p[k] - sub < lo ? lo : p[k] - sub;
    __asm__("" : : "r"(p) : "memory");
    for (int64_t k = 0; k < ld; k++) p[k] = p[k] == lo ? 0 : exp(p[k]);
}

#define TL_DEF_ATTN(NAME, T, DT, LOG)                                                                             \
    /* the maximum of a padded row (ld a multiple of LANES, 64-byte aligned); \
     * NaN is skipped here and reaches the output through exp(NaN - max) */                                \
    static T rowmax_##NAME(const T *p_, int64_t ld) {                                                        \
        const T *restrict p = __builtin_assume_aligned(p_, 64);                                              \
        T mx = -INFINITY;                                                                                    \
        _Pragma("omp simd reduction(max : mx)") for (int64_t k = 0; k < ld; k++) mx = p[k] > mx ? p[k] : mx; \
        return mx;                                                                                           \
    }                                                                                                        \
    /* p[k] = exp(p[k] - sub) over a padded row (exprow_*); returns the sum */                             \
    static T expsum_##NAME(T *p_, int64_t ld, T sub) {                                                       \
        T *restrict p = __builtin_assume_aligned(p_, 64);                                                    \
        exprow_##NAME(p, ld, sub);                                                                           \
        T a[LANES] = {0};                                                                                    \
        for (int64_t k = 0; k < ld; k += LANES)                                                              \
            for (int j = 0; j < LANES; j++) a[j] += p[k + j];                                                \
        T r = 0;                                                                                             \
        for (int j = 0; j < LANES; j++) r += a[j];                                                           \
        return r;                                                                                            \
    }                                                                                                        \
    /* dst (E x n, row stride ldd) = the n rows src[j * rs + e] transposed: the \
     * products with it are plain (NN) GEMMs, which take OpenBLAS's fast \
     * small-matrix kernels (the transposed-operand GEMMs do not) */                                      \
    static void transpose_##NAME(const T *restrict src, int64_t rs, int64_t n, int64_t E, T *restrict dst,    \
                                 int64_t ldd) {                                                              \
        for (int64_t j0 = 0; j0 < n; j0 += 16)                                                               \
            for (int64_t e = 0; e < E; e++)                                                                  \
                for (int64_t j = j0; j < n && j < j0 + 16; j++) dst[e * ldd + j] = src[j * rs + e];          \
    }                                                                                                        \
    /* s (bq x n, row stride RS(n), the padding -inf) = scale * q[q0:q0+bq] k[kv0:kv0+n]^T + mask, \
     * causal positions -inf; kt: the head's keys transposed (E x S, row stride S) */                      \
    static void scores_##NAME(const tl_attn_params *p, const T *qb, const T *kt, const T *mb, int64_t q0,    \
                              int64_t bq, int64_t kv0, int64_t n, T *restrict s) {                           \
        tl_blas_gemm(DT, false, false, bq, n, p->E, p->scale, qb + q0 * p->qs[2], LD(p->qs[2]), 0, kt + kv0,       \
                     LD(p->S), 0, \
                     0.0, s, RS(n), 0, 1);                                                                   \
        const int64_t ld = RS(n);                                                                            \
        for (int64_t r = 0; r < bq; r++)                                                                     \
            for (int64_t j = n; j < ld; j++) s[r * ld + j] = -INFINITY;                                      \
        if (mb) {                                                                                            \
            const int64_t mr = p->ms[2], mc = p->ms[3];                                                      \
            for (int64_t r = 0; r < bq; r++) {                                                               \
                const T *restrict m = mb + (q0 + r) * mr + kv0 * mc;                                         \
                T *restrict sr = s + r * ld;                                                                 \
                if (mc == 1)                                                                                 \
                    for (int64_t j = 0; j < n; j++) sr[j] += m[j];                                           \
                else                                                                                         \
                    for (int64_t j = 0; j < n; j++) sr[j] += m[j * mc];                                      \
            }                                                                                                \
        }                                                                                                    \
        if (p->causal && kv0 + n - 1 > q0)                                                                   \
            for (int64_t r = 0; r < bq; r++) {                                                               \
                int64_t j0 = q0 + r - kv0 + 1; /* first masked column of row q0 + r */                       \
                if (j0 < 0) j0 = 0;                                                                          \
                for (int64_t j = j0; j < n; j++) s[r * ld + j] = -INFINITY;                                  \
            }                                                                                                \
    }                                                                                                        \
    static int TL_KNAME(attn_fwd_##NAME)(const tl_attn_params *p, int64_t begin, int64_t end) {              \
        const int64_t E = p->E, L = p->L, S = p->S, BQ = TL_ATTN_BQ, BK = TL_ATTN_BK;                        \
        const int64_t nqt = (L + BQ - 1) / BQ, rep = p->Hq / p->Hk;                                          \
        const int64_t E1 = E > 0 ? E : 1;                                                                    \
        T *buf = scratch(sizeof(T) * (size_t)(BQ * BK + BQ * E1 + 2 * BQ + E1 * (S > 0 ? S : 1)));           \
        if (!buf) return -1;                                                                                 \
        T *s = buf, *acc = s + BQ * BK, *mx = acc + BQ * E1, *l = mx + BQ, *kt = l + BQ;                     \
        int64_t kt_of = -1; /* the (batch, kv head) whose keys kt holds */                                   \
        for (int64_t it = begin; it < end; it++) {                                                           \
            const int64_t qt = it % nqt, h = (it / nqt) % p->Hq, b = it / nqt / p->Hq, hk = h / rep;         \
            const int64_t q0 = qt * BQ, bq = L - q0 < BQ ? L - q0 : BQ;                                      \
            const T *qb = (const T *)p->q + b * p->qs[0] + h * p->qs[1];                                     \
            const T *kb = (const T *)p->k + b * p->ks[0] + hk * p->ks[1];                                    \
            const T *vb = (const T *)p->v + b * p->vs[0] + hk * p->vs[1];                                    \
            const T *mb = p->mask ? (const T *)p->mask + b * p->ms[0] + h * p->ms[1] : NULL;                 \
            const int64_t kv_end = p->causal && q0 + bq < S ? q0 + bq : S;                                   \
            if (kt_of != b * p->Hk + hk) {                                                                   \
                transpose_##NAME(kb, p->ks[2], S, E, kt, S);                                                 \
                kt_of = b * p->Hk + hk;                                                                      \
            }                                                                                                \
            for (int64_t r = 0; r < bq; r++) {                                                               \
                mx[r] = -INFINITY;                                                                           \
                l[r] = 0;                                                                                    \
            }                                                                                                \
            for (int64_t kv0 = 0; kv0 < kv_end; kv0 += BK) {                                                 \
                const int64_t n = kv_end - kv0 < BK ? kv_end - kv0 : BK;                                     \
                scores_##NAME(p, qb, kt, mb, q0, bq, kv0, n, s);                                             \
                const int64_t ld = RS(n);                                                                    \
                for (int64_t r = 0; r < bq; r++) {                                                           \
                    T *sr = s + r * ld;                                                                      \
                    const T bm = rowmax_##NAME(sr, ld);                                                       \
                    const T mnew = bm > mx[r] ? bm : mx[r];                                                  \
                    if (mnew == -INFINITY) { /* every key so far masked: p = 0 */                            \
                        memset(sr, 0, sizeof(T) * (size_t)ld);                                               \
                        continue;                                                                            \
                    }                                                                                        \
                    const T sum = expsum_##NAME(sr, ld, mnew);                                               \
                    if (kv0 > 0 && mnew != mx[r]) {                                                          \
                        const T corr = aexp_##NAME(mx[r] - mnew);                                            \
                        T *restrict ar = acc + r * E;                                                        \
                        for (int64_t e = 0; e < E; e++) ar[e] *= corr;                                       \
                        l[r] *= corr;                                                                        \
                    }                                                                                        \
                    l[r] += sum;                                                                             \
                    mx[r] = mnew;                                                                            \
                }                                                                                            \
                tl_blas_gemm(DT, false, false, bq, E, n, 1.0, s, ld, 0, vb + kv0 * p->vs[2], LD(p->vs[2]),  \
                             0, kv0 > 0 ? 1.0 : 0.0, acc, LD(E), 0, 1);                                      \
            }                                                                                                \
            T *ob = (T *)p->out + b * p->os[0] + h * p->os[1];                                               \
            T *lb = (T *)p->lse + b * p->ls[0] + h * p->ls[1];                                               \
            for (int64_t r = 0; r < bq; r++) {                                                               \
                T *restrict orow = ob + (q0 + r) * p->os[2];                                                 \
                const T *restrict ar = acc + r * E;                                                          \
                if (l[r] == 0) {                                                                             \
                    for (int64_t e = 0; e < E; e++) orow[e] = 0;                                             \
                    lb[(q0 + r) * p->ls[2]] = 0;                                                             \
                } else {                                                                                     \
                    const T inv = (T)1 / l[r];                                                               \
                    for (int64_t e = 0; e < E; e++) orow[e] = ar[e] * inv;                                   \
                    lb[(q0 + r) * p->ls[2]] = mx[r] + LOG(l[r]);                                             \
                }                                                                                            \
            }                                                                                                \
        }                                                                                                    \
        free(buf);                                                                                           \
        return 0;                                                                                            \
    }                                                                                                        \
    static void zero_rows_##NAME(T *base, int64_t rows, int64_t stride, int64_t E) {                         \
        for (int64_t j = 0; j < rows; j++) memset(base + j * stride, 0, sizeof(T) * (size_t)E);              \
    }                                                                                                        \
    static int TL_KNAME(attn_bwd_##NAME)(const tl_attn_params *p, int64_t begin, int64_t end) {              \
        const int64_t E = p->E, L = p->L, S = p->S, BQ = TL_ATTN_BWD_BQ, BK = TL_ATTN_BK;                    \
        const int64_t rep = p->Hq / p->Hk;                                                                   \
        const int64_t E1 = E > 0 ? E : 1;                                                                    \
        T *buf = scratch(sizeof(T) * (size_t)(2 * BQ * BK + BQ + 2 * E1 * (S > 0 ? S : 1)));                 \
        if (!buf) return -1;                                                                                 \
        T *s = buf, *dp = s + BQ * BK, *D = dp + BQ * BK, *kt = D + BQ, *vt = kt + E1 * (S > 0 ? S : 1);    \
        for (int64_t it = begin; it < end; it++) {                                                           \
            const int64_t hk = it % p->Hk, b = it / p->Hk;                                                   \
            const T *kb = (const T *)p->k + b * p->ks[0] + hk * p->ks[1];                                    \
            const T *vb = (const T *)p->v + b * p->vs[0] + hk * p->vs[1];                                    \
            T *gkb = (T *)p->gk + b * p->gks[0] + hk * p->gks[1];                                            \
            T *gvb = (T *)p->gv + b * p->gvs[0] + hk * p->gvs[1];                                            \
            transpose_##NAME(kb, p->ks[2], S, E, kt, S);                                                     \
            transpose_##NAME(vb, p->vs[2], S, E, vt, S);                                                     \
            /* dk / dv rows [0, init) hold sums; the first product reaching a \
             * row overwrites it (beta 0) instead of a zero fill. The query \
             * tiles run last to first, so the first one covers the most keys. */ \
            int64_t init = 0;                                                                                \
            for (int64_t h = hk * rep; h < (hk + 1) * rep; h++) {                                            \
                const T *qb = (const T *)p->q + b * p->qs[0] + h * p->qs[1];                                 \
                const T *ob = (const T *)p->out + b * p->os[0] + h * p->os[1];                               \
                const T *gob = (const T *)p->gout + b * p->gos[0] + h * p->gos[1];                           \
                const T *lb = (const T *)p->lse + b * p->ls[0] + h * p->ls[1];                               \
                const T *mb = p->mask ? (const T *)p->mask + b * p->ms[0] + h * p->ms[1] : NULL;             \
                T *gqb = (T *)p->gq + b * p->gqs[0] + h * p->gqs[1];                                         \
                for (int64_t q0 = (L - 1) / BQ * BQ; q0 >= 0 && L > 0; q0 -= BQ) {                           \
                    const int64_t bq = L - q0 < BQ ? L - q0 : BQ;                                            \
                    const int64_t kv_end = p->causal && q0 + bq < S ? q0 + bq : S;                           \
                    const T *go = gob + q0 * p->gos[2];                                                      \
                    T *gq = gqb + q0 * p->gqs[2];                                                            \
                    for (int64_t r = 0; r < bq; r++)                                                         \
                        D[r] = tl_rowdot_##NAME(go + r * p->gos[2], ob + (q0 + r) * p->os[2], E);               \
                    if (kv_end == 0) zero_rows_##NAME(gq, bq, p->gqs[2], E);                                 \
                    for (int64_t kv0 = 0; kv0 < kv_end; kv0 += BK) {                                         \
                        const int64_t n = kv_end - kv0 < BK ? kv_end - kv0 : BK;                             \
                        if (kv0 < init && kv0 + n > init) { /* part of the block is new */                   \
                            zero_rows_##NAME(gkb + init * p->gks[2], kv0 + n - init, p->gks[2], E);          \
                            zero_rows_##NAME(gvb + init * p->gvs[2], kv0 + n - init, p->gvs[2], E);          \
                            init = kv0 + n;                                                                  \
                        }                                                                                    \
                        const double acc = kv0 < init ? 1.0 : 0.0;                                           \
                        if (kv0 + n > init) init = kv0 + n;                                                  \
                        scores_##NAME(p, qb, kt, mb, q0, bq, kv0, n, s);                                     \
                        const int64_t ld = RS(n);                                                            \
                        for (int64_t r = 0; r < bq; r++) expsum_##NAME(s + r * ld, ld, lb[(q0 + r) * p->ls[2]]); \
                        /* dv += p^T do; dp = do v^T */                                                      \
                        tl_blas_gemm(DT, true, false, n, E, bq, 1.0, s, ld, 0, go, LD(p->gos[2]), 0, acc,   \
                                     gvb + kv0 * p->gvs[2], LD(p->gvs[2]), 0, 1);                            \
                        tl_blas_gemm(DT, false, false, bq, n, E, 1.0, go, LD(p->gos[2]), 0, vt + kv0, LD(S), 0, \
                                     0.0,                                                                    \
                                     dp, ld, 0, 1);                                                          \
                        for (int64_t r = 0; r < bq; r++) {                                                   \
                            T *restrict dr = dp + r * ld;                                                    \
                            const T *restrict sr = s + r * ld;                                               \
                            const T d = D[r];                                                                \
                            for (int64_t j = 0; j < n; j++) dr[j] = sr[j] * (dr[j] - d);                     \
                        }                                                                                    \
                        /* dq (+)= scale * ds k; dk += scale * ds^T q */                                     \
                        tl_blas_gemm(DT, false, false, bq, E, n, p->scale, dp, ld, 0, kb + kv0 * p->ks[2],  \
                                     LD(p->ks[2]), 0, kv0 > 0 ? 1.0 : 0.0, gq, LD(p->gqs[2]), 0, 1);         \
                        tl_blas_gemm(DT, true, false, n, E, bq, p->scale, dp, ld, 0, qb + q0 * p->qs[2],    \
                                     LD(p->qs[2]), 0, acc, gkb + kv0 * p->gks[2], LD(p->gks[2]), 0, 1);      \
                    }                                                                                        \
                }                                                                                            \
            }                                                                                                \
            zero_rows_##NAME(gkb + init * p->gks[2], S - init, p->gks[2], E);                                \
            zero_rows_##NAME(gvb + init * p->gvs[2], S - init, p->gvs[2], E);                                \
        }                                                                                                    \
        free(buf);                                                                                           \
        return 0;                                                                                            \
    }

TL_DEF_ATTN(f32, float, TL_FLOAT32, logf)
TL_DEF_ATTN(f64, double, TL_FLOAT64, log)

const tl_attn_table_t TL_KNAME(tl_attn_table) = {
    {TL_KNAME(attn_fwd_f32), TL_KNAME(attn_bwd_f32)},
    {TL_KNAME(attn_fwd_f64), TL_KNAME(attn_bwd_f64)},
};
