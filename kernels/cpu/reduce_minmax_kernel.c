/* max/min and argmax/argmin reduction kernels (see
 * kernels/ufunc/tl_reduce_kernel.h), compiled once per CPU capability.
 * Columns: the select `(x > a || x != x) ? x : a` keeps NaN (compare + blend
 * once vectorized).
 *
 * argmax/argmin rows go block by block (ARG_BLOCK elements, in cache): the
 * vectorized row max of each block, the first block whose max beats the best
 * so far (strictly: ties keep the earlier block), and at the end one scan of
 * that block for the first element equal to its max. A block with a NaN
 * answers at once with its first NaN (PyTorch: NaN is the max and the min).
 * One pass over memory, all of it at the speed of the max kernel. */
#include <stdint.h>

#include "tl_reduce_kernel.h"

#define SEL_MAX(a, x) ((x) > (a) || (x) != (x) ? (x) : (a))
#define SEL_MIN(a, x) ((x) < (a) || (x) != (x) ? (x) : (a))

/* software prefetch of the lines of [q, q + bytes) 4 KiB ahead: the DEF_ROW
 * and argmax loops below do enough work per load that without it they read
 * ~1.2-1.3x slower than a plain load loop (measured; with it ~1.0-1.04x);
 * the float32 max / min rows on AVX2 / AVX-512 (DEF_ROW_VEC) need none */
#define PF_BYTES 4096
#define PREFETCH_LINES(q, bytes)                                                              \
    for (unsigned o_ = 0; o_ < (bytes); o_ += 64) __builtin_prefetch((const char *)(q) + PF_BYTES + o_)

/* rows: 64 lanes of `x > a ? x : a` (exactly maxps / minps, so GCC emits
 * them) plus a lane-wise NaN flag; any NaN makes the result NaN */
#define DEF_ROW(NAME, T, OP)                                                                  \
    static T TL_KNAME(NAME)(const T *restrict p, int64_t n) {                                 \
        int64_t k = 0;                                                                        \
        T r = p[0];                                                                           \
        if (n >= 64) {                                                                        \
            T a[64];                                                                          \
            int32_t nan[64];                                                                  \
            for (int j = 0; j < 64; j++) {                                                    \
                a[j] = p[j];                                                                  \
                nan[j] = p[j] != p[j];                                                        \
            }                                                                                 \
            for (k = 64; k + 64 <= n; k += 64) {                                              \
                PREFETCH_LINES(p + k, 64 * sizeof(T));                                        \
                for (int j = 0; j < 64; j++) {                                                \
                    const T x = p[k + j];                                                     \
                    a[j] = x OP a[j] ? x : a[j];                                              \
                    nan[j] |= x != x;                                                         \
                }                                                                             \
            }                                                                                 \
            int32_t any = 0;                                                                  \
            for (int j = 0; j < 64; j++) any |= nan[j];                                       \
            if (any) return (T)__builtin_nan("");                                             \
            for (int w = 32; w > 0; w /= 2)   /* a tree: vectorized, no 63-step chain */      \
                for (int j = 0; j < w; j++) a[j] = a[j + w] OP a[j] ? a[j + w] : a[j];         \
            r = a[0];                                                                         \
        }                                                                                     \
        for (; k < n; k++) {                                                                  \
            const T x = p[k];                                                                 \
            if (x != x) return x;                                                             \
            r = x OP r ? x : r;                                                               \
        }                                                                                     \
        return r;                                                                             \
    }

#define DEF_COL(NAME, SEL)                                                                    \
    static void TL_KNAME(NAME)(float *restrict acc, const float *restrict p, int64_t n) {     \
        for (int64_t k = 0; k < n; k++) acc[k] = SEL(acc[k], p[k]);                           \
    }

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
/* float32 rows on AVX2 / AVX-512: the same 64 lanes and the same final tree
 * as DEF_ROW (so the same bits, the sign of a zero included), with the NaN
 * test one unordered compare per pair of vectors (true when either holds a
 * NaN) and no software prefetch: as little work per load as a plain load
 * loop, which streams at the memory's speed without it (the compare + mask
 * form of DEF_ROW with its prefetch read 1.12-1.17x slower than a plain
 * load loop on the 2-core AMD VM, this one 0.9-1.0x) */
#if defined(__AVX512F__)
#define RV __m512
#define RV_N 16
#define RV_LOAD _mm512_loadu_ps
#define RV_STORE _mm512_storeu_ps
#define RV_MAX _mm512_max_ps
#define RV_MIN _mm512_min_ps
#define RV_NAN_T __mmask16
#define RV_NAN_OR(m, x, y) ((m) |= _mm512_cmp_ps_mask((x), (y), _CMP_UNORD_Q))
#define RV_NAN_ANY(m) ((m) != 0)
#else
#define RV __m256
#define RV_N 8
#define RV_LOAD _mm256_loadu_ps
#define RV_STORE _mm256_storeu_ps
#define RV_MAX _mm256_max_ps
#define RV_MIN _mm256_min_ps
#define RV_NAN_T __m256
#define RV_NAN_OR(m, x, y) ((m) = _mm256_or_ps((m), _mm256_cmp_ps((x), (y), _CMP_UNORD_Q)))
#define RV_NAN_ANY(m) (_mm256_movemask_ps(m) != 0)
#endif
enum { RV_K = 64 / RV_N };   /* vectors per 64 lanes */
/* VOP(x, a) = x OP a ? x : a lane-wise (maxps / minps with x first) */
#define DEF_ROW_VEC(NAME, OP, VOP)                                                            \
    static float TL_KNAME(NAME)(const float *restrict p, int64_t n) {                         \
        int64_t k = 0;                                                                        \
        float r = p[0];                                                                       \
        if (n >= 64) {                                                                        \
            RV a[RV_K];                                                                       \
            RV_NAN_T m;                                                                       \
            __builtin_memset(&m, 0, sizeof m);                                                \
            for (int v = 0; v < RV_K; v++) a[v] = RV_LOAD(p + v * RV_N);                      \
            for (int v = 0; v < RV_K; v += 2) RV_NAN_OR(m, a[v], a[v + 1]);                   \
            for (k = 64; k + 64 <= n; k += 64) {                                              \
                RV x[RV_K];                                                                   \
                for (int v = 0; v < RV_K; v++) x[v] = RV_LOAD(p + k + v * RV_N);              \
                for (int v = 0; v < RV_K; v += 2) RV_NAN_OR(m, x[v], x[v + 1]);               \
                for (int v = 0; v < RV_K; v++) a[v] = VOP(x[v], a[v]);                        \
            }                                                                                 \
            if (RV_NAN_ANY(m)) return __builtin_nanf("");                                     \
            float l[64];                                                                      \
            for (int v = 0; v < RV_K; v++) RV_STORE(l + v * RV_N, a[v]);                      \
            for (int w = 32; w > 0; w /= 2)                                                   \
                for (int j = 0; j < w; j++) l[j] = l[j + w] OP l[j] ? l[j + w] : l[j];         \
            r = l[0];                                                                         \
        }                                                                                     \
        for (; k < n; k++) {                                                                  \
            const float x = p[k];                                                             \
            if (x != x) return x;                                                             \
            r = x OP r ? x : r;                                                               \
        }                                                                                     \
        return r;                                                                             \
    }
DEF_ROW_VEC(rowmax_f32, >, RV_MAX)
DEF_ROW_VEC(rowmin_f32, <, RV_MIN)
#else
DEF_ROW(rowmax_f32, float, >)
DEF_ROW(rowmin_f32, float, <)
#endif
DEF_ROW(rowmax_f64, double, >)
DEF_ROW(rowmin_f64, double, <)
DEF_COL(colmax_f32, SEL_MAX)
DEF_COL(colmin_f32, SEL_MIN)

/* ---- argmax / argmin */

#define ARG_BLOCK 8192

/* the first k < n with p[k] == v (v NaN: the first NaN); v is in p[0, n).
 * 256 bytes at a time (GCC vector types, lowered to the variant's ISA):
 * four compares OR-ed, one test, an early exit at the first hit, then the
 * scalar loop finds the element. */
#define FIRST_SCAN(T, VT, MT, HIT)                                                            \
    for (; k + 4 * VL <= n; k += 4 * VL) {                                                    \
        MT m = {0};                                                                           \
        for (int b = 0; b < 4; b++) {                                                         \
            VT x;                                                                             \
            __builtin_memcpy(&x, p + k + b * VL, sizeof x);                                   \
            m |= HIT;                                                                         \
        }                                                                                     \
        uint64_t u[8], any = 0;                                                               \
        __builtin_memcpy(u, &m, sizeof u);                                                    \
        for (int j = 0; j < 8; j++) any |= u[j];                                              \
        if (any) break;                                                                       \
    }
#define DEF_FIRST(NAME, T, VT, MT)                                                            \
    static int64_t first_##NAME(const T *restrict p, int64_t n, T v) {                        \
        enum { VL = 64 / sizeof(T) };                                                         \
        int64_t k = 0;                                                                        \
        if (v != v) {                                                                         \
            FIRST_SCAN(T, VT, MT, x != x)                                                     \
            for (; k < n; k++)                                                                \
                if (p[k] != p[k]) return k;                                                   \
        } else {                                                                              \
            FIRST_SCAN(T, VT, MT, x == v)                                                     \
            for (; k < n; k++)                                                                \
                if (p[k] == v) return k;                                                      \
        }                                                                                     \
        return 0;                                                                             \
    }
typedef float v16f __attribute__((vector_size(64)));
typedef int32_t v16i __attribute__((vector_size(64)));
typedef double v8d __attribute__((vector_size(64)));
typedef int64_t v8i __attribute__((vector_size(64)));
DEF_FIRST(f32, float, v16f, v16i)
DEF_FIRST(f64, double, v8d, v8i)

#define DEF_ARGROW(NAME, T, SUF, BEST, OP)                                                    \
    static int64_t TL_KNAME(NAME)(const void *p_, int64_t n) {                                \
        const T *restrict p = (const T *)p_;                                                  \
        int64_t bb = 0;                                                                       \
        T best = 0;                                                                           \
        for (int64_t b = 0; b < n; b += ARG_BLOCK) {                                          \
            const int64_t len = n - b < ARG_BLOCK ? n - b : ARG_BLOCK;                        \
            const T m = TL_KNAME(BEST)(p + b, len);                                           \
            if (m != m) return b + first_##SUF(p + b, len, m);                                 \
            if (b == 0 || m OP best) {                                                        \
                best = m;                                                                     \
                bb = b;                                                                       \
            }                                                                                 \
        }                                                                                     \
        return bb + first_##SUF(p + bb, n - bb < ARG_BLOCK ? n - bb : ARG_BLOCK, best);       \
    }
#if defined(__AVX512F__) || defined(__AVX2__)
DEF_ARGROW(argmax_blk_f32, float, f32, rowmax_f32, >)
DEF_ARGROW(argmin_blk_f32, float, f32, rowmin_f32, <)

/* float32 argmax / argmin rows in one pass (intrinsics per ISA): U = 4 vector
 * accumulators hold each lane's best value so far and the step (one step =
 * U vectors) where a strictly better value last replaced it, so every lane
 * keeps its first best. At the end the row's best is the best over the
 * lanes, and its first index the smallest `step * U * VL + j * VL + lane`
 * among the lanes holding it; then the tail, scalar. A lane-wise NaN flag is
 * tested every ARG_NB steps: a block with a NaN answers with its first NaN
 * (PyTorch: NaN is both the max and the min). Indices are int32 lanes, so
 * rows longer than ARG_PIECE take the blocked kernel above, as do short ones. */
#define ARG_PIECE (1ll << 30)

/* the scalar tail of a one-pass row, elements k .. n - 1, after the best b at bi */
static inline int64_t arg_tail_f32(const float *p, int64_t k, int64_t n, float b, int64_t bi, int is_max) {
    for (; k < n; k++) {
        const float x = p[k];
        if (x != x) return k;
        if (is_max ? x > b : x < b) {
            b = x;
            bi = k;
        }
    }
    return bi;
}
#if defined(__AVX512F__)
#include <immintrin.h>
#define ARG_VL 16
#define DEF_ARG1P(NAME, BLK, CMP, VBEST, HBEST, IS_MAX)                                           \
    static int64_t TL_KNAME(NAME)(const void *p_, int64_t n) {                                \
        const float *restrict p = (const float *)p_;                                          \
        if (n < 8 * ARG_VL || n > ARG_PIECE) return TL_KNAME(BLK)(p_, n);                     \
        __m512 m[4];                                                                          \
        __m512i it[4];                                                                        \
        __mmask16 nan = 0;                                                                    \
        for (int j = 0; j < 4; j++) {                                                         \
            m[j] = _mm512_loadu_ps(p + j * ARG_VL);                                           \
            it[j] = _mm512_setzero_si512();                                                   \
            nan |= _mm512_cmp_ps_mask(m[j], m[j], _CMP_UNORD_Q);                              \
        }                                                                                     \
        if (nan) return first_f32(p, 4 * ARG_VL, __builtin_nanf(""));                      \
        const int64_t steps = n / (4 * ARG_VL);                                               \
        for (int64_t s = 1; s < steps;) {                                                     \
            const int64_t b0 = s, e = steps - s < ARG_NB ? steps : s + ARG_NB;                \
            for (; s < e; s++) {                                                              \
                const __m512i cur = _mm512_set1_epi32((int32_t)s);                            \
                const float *restrict q = p + s * 4 * ARG_VL;                                 \
                for (int j = 0; j < 4; j++) {                                                 \
                    _mm_prefetch((const char *)(q + ARG_PF + j * ARG_VL), _MM_HINT_T0);       \
                    const __m512 x = _mm512_loadu_ps(q + j * ARG_VL);                         \
                    const __mmask16 k = _mm512_cmp_ps_mask(x, m[j], CMP);                     \
                    m[j] = _mm512_mask_mov_ps(m[j], k, x);                                    \
                    it[j] = _mm512_mask_mov_epi32(it[j], k, cur);                             \
                    nan |= _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);                            \
                }                                                                             \
            }                                                                                 \
            if (nan) {                                                                        \
                const int64_t off = b0 * 4 * ARG_VL;                                          \
                return off + first_f32(p + off, (e - b0) * 4 * ARG_VL, __builtin_nanf(""));  \
            }                                                                                 \
        }                                                                                     \
        const float best = HBEST(VBEST(VBEST(m[0], m[1]), VBEST(m[2], m[3])));                \
        const __m512 bv = _mm512_set1_ps(best);                                               \
        const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15); \
        __m512i cand = _mm512_set1_epi32(INT32_MAX);                                          \
        for (int j = 0; j < 4; j++) {                                                         \
            const __m512i ix = _mm512_add_epi32(_mm512_slli_epi32(it[j], 6),                  \
                                                _mm512_add_epi32(lane, _mm512_set1_epi32(j * ARG_VL))); \
            const __mmask16 k = _mm512_cmp_ps_mask(m[j], bv, _CMP_EQ_OQ);                     \
            cand = _mm512_mask_min_epi32(cand, k, cand, ix);                                  \
        }                                                                                     \
        int64_t bi = _mm512_reduce_min_epi32(cand);                                           \
        return arg_tail_f32(p, steps * 4 * ARG_VL, n, best, bi, IS_MAX);                      \
    }
#define ARG_NB 128   /* steps of 64 elements per NaN test */
#define ARG_PF (PF_BYTES / 4)
DEF_ARG1P(argmax_row_f32, argmax_blk_f32, _CMP_GT_OQ, _mm512_max_ps, _mm512_reduce_max_ps, 1)
DEF_ARG1P(argmin_row_f32, argmin_blk_f32, _CMP_LT_OQ, _mm512_min_ps, _mm512_reduce_min_ps, 0)
#else /* AVX2 */
#include <immintrin.h>
#define ARG_VL 8
static inline float hmax8(__m256 v) {
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    return _mm_cvtss_f32(_mm_max_ss(h, _mm_shuffle_ps(h, h, 1)));
}
static inline float hmin8(__m256 v) {
    __m128 h = _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    h = _mm_min_ps(h, _mm_movehl_ps(h, h));
    return _mm_cvtss_f32(_mm_min_ss(h, _mm_shuffle_ps(h, h, 1)));
}
#define DEF_ARG1P(NAME, BLK, CMP, VBEST, HBEST, IS_MAX)                                           \
    static int64_t TL_KNAME(NAME)(const void *p_, int64_t n) {                                \
        const float *restrict p = (const float *)p_;                                          \
        if (n < 8 * ARG_VL || n > ARG_PIECE) return TL_KNAME(BLK)(p_, n);                     \
        __m256 m[4], nan = _mm256_setzero_ps();                                               \
        __m256i it[4];                                                                        \
        for (int j = 0; j < 4; j++) {                                                         \
            m[j] = _mm256_loadu_ps(p + j * ARG_VL);                                           \
            it[j] = _mm256_setzero_si256();                                                   \
            nan = _mm256_or_ps(nan, _mm256_cmp_ps(m[j], m[j], _CMP_UNORD_Q));                 \
        }                                                                                     \
        if (_mm256_movemask_ps(nan)) return first_f32(p, 4 * ARG_VL, __builtin_nanf(""));     \
        const int64_t steps = n / (4 * ARG_VL);                                               \
        for (int64_t s = 1; s < steps;) {                                                     \
            const int64_t b0 = s, e = steps - s < ARG_NB ? steps : s + ARG_NB;                \
            for (; s < e; s++) {                                                              \
                const __m256 cur = _mm256_castsi256_ps(_mm256_set1_epi32((int32_t)s));        \
                const float *restrict q = p + s * 4 * ARG_VL;                                 \
                for (int j = 0; j < 4; j++) {                                                 \
                    if (!(j & 1)) _mm_prefetch((const char *)(q + ARG_PF + j * ARG_VL), _MM_HINT_T0); \
                    const __m256 x = _mm256_loadu_ps(q + j * ARG_VL);                         \
                    const __m256 k = _mm256_cmp_ps(x, m[j], CMP);                             \
                    m[j] = VBEST(x, m[j]);   /* x if x beats m, else m (also for NaN x) */    \
                    it[j] = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(it[j]), cur, k)); \
                    nan = _mm256_or_ps(nan, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));               \
                }                                                                             \
            }                                                                                 \
            if (_mm256_movemask_ps(nan)) {                                                    \
                const int64_t off = b0 * 4 * ARG_VL;                                          \
                return off + first_f32(p + off, (e - b0) * 4 * ARG_VL, __builtin_nanf(""));  \
            }                                                                                 \
        }                                                                                     \
        const float best = HBEST(VBEST(VBEST(m[0], m[1]), VBEST(m[2], m[3])));                \
        const __m256 bv = _mm256_set1_ps(best);                                               \
        const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);                       \
        __m256i cand = _mm256_set1_epi32(INT32_MAX);                                          \
        for (int j = 0; j < 4; j++) {                                                         \
            const __m256i ix = _mm256_add_epi32(_mm256_slli_epi32(it[j], 5),                  \
                                                _mm256_add_epi32(lane, _mm256_set1_epi32(j * ARG_VL))); \
            const __m256i k = _mm256_castps_si256(_mm256_cmp_ps(m[j], bv, _CMP_EQ_OQ));       \
            cand = _mm256_min_epi32(cand, _mm256_blendv_epi8(cand, ix, k));                   \
        }                                                                                     \
        int32_t c8[8];                                                                        \
        _mm256_storeu_si256((__m256i *)c8, cand);                                             \
        int64_t bi = c8[0];                                                                   \
        for (int j = 1; j < 8; j++) bi = c8[j] < bi ? c8[j] : bi;                             \
        return arg_tail_f32(p, steps * 4 * ARG_VL, n, best, bi, IS_MAX);                      \
    }
#define ARG_NB 256   /* steps of 32 elements per NaN test */
#define ARG_PF (PF_BYTES / 4)
DEF_ARG1P(argmax_row_f32, argmax_blk_f32, _CMP_GT_OQ, _mm256_max_ps, hmax8, 1)
DEF_ARG1P(argmin_row_f32, argmin_blk_f32, _CMP_LT_OQ, _mm256_min_ps, hmin8, 0)
#endif
#else
DEF_ARGROW(argmax_row_f32, float, f32, rowmax_f32, >)
DEF_ARGROW(argmin_row_f32, float, f32, rowmin_f32, <)
#endif
DEF_ARGROW(argmax_row_f64, double, f64, rowmax_f64, >)
DEF_ARGROW(argmin_row_f64, double, f64, rowmin_f64, <)

/* columns: an element replaces the best when it beats it, or is the first NaN */
#define DEF_ARGCOL(NAME, T, OP)                                                               \
    static void TL_KNAME(NAME)(const void *p_, int64_t n, int64_t stride, int64_t w, void *best_, \
                               int64_t *restrict idx) {                                       \
        const T *restrict p = (const T *)p_;                                                  \
        T *restrict b = (T *)best_;                                                           \
        for (int64_t c = 0; c < w; c++) {                                                     \
            b[c] = p[c];                                                                      \
            idx[c] = 0;                                                                       \
        }                                                                                     \
        for (int64_t i = 1; i < n; i++) {                                                     \
            const T *restrict r = p + i * stride;                                             \
            for (int64_t c = 0; c < w; c++) {                                                 \
                const T x = r[c];                                                             \
                const int take = (x OP b[c]) | ((x != x) & (b[c] == b[c]));                   \
                b[c] = take ? x : b[c];                                                       \
                idx[c] = take ? i : idx[c];                                                   \
            }                                                                                 \
        }                                                                                     \
    }
DEF_ARGCOL(argmax_col_f32, float, >)
DEF_ARGCOL(argmin_col_f32, float, <)
DEF_ARGCOL(argmax_col_f64, double, >)
DEF_ARGCOL(argmin_col_f64, double, <)

const tl_argbest_table_t TL_KNAME(tl_argbest_table) = {
    {{TL_KNAME(argmax_row_f32), TL_KNAME(argmin_row_f32)}, {TL_KNAME(argmax_col_f32), TL_KNAME(argmin_col_f32)}},
    {{TL_KNAME(argmax_row_f64), TL_KNAME(argmin_row_f64)}, {TL_KNAME(argmax_col_f64), TL_KNAME(argmin_col_f64)}},
};

const tl_minmax_f32_table_t TL_KNAME(tl_minmax_f32_table) = {{
    {TL_KNAME(rowmax_f32), TL_KNAME(rowmin_f32)},
    {TL_KNAME(colmax_f32), TL_KNAME(colmin_f32)},
}};
