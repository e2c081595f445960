/* Block transposes and line streaming for TensorIterator's tiled walk
 * (runtime/src/iter.c, "tiled walk" in docs/RUNTIME.md).
 *
 * Compiled once per CPU capability like every kernels/cpu file. A transpose
 * moves bits only (loads, shuffles, stores: no arithmetic), so one routine per
 * element size serves every dtype of that size:
 *
 *     dst[c * dst_row + r * isz] = src[r * src_row + c * isz]
 *     for r < rows, c < cols (dst_row, src_row in bytes)
 *
 * Whole SIMD blocks go through registers (4 bytes: 16x16 AVX-512, 8x8 AVX2,
 * 4x4 SSE; 8 bytes: 8x8 / 4x4 / 2x2; 2 bytes: 8x8 SSE2), the edges and 1-byte
 * elements element by element (the block is in L1 either way).
 */
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "tl_kernel.h"

/* element-by-element part [r0, rows) x [c0, cols) */
#define TL_DEFINE_TR_SCALAR(NAME, T)                                                          \
    static inline void NAME(char *dst, int64_t drow, const char *src, int64_t srow, int64_t r0,  \
                            int64_t rows, int64_t c0, int64_t cols) {                        \
        for (int64_t r = r0; r < rows; r++) {                                                 \
            const T *s = (const T *)(src + r * srow);                                         \
            for (int64_t c = c0; c < cols; c++) *(T *)(dst + c * drow + r * (int64_t)sizeof(T)) = s[c]; \
        }                                                                                     \
    }
TL_DEFINE_TR_SCALAR(tr_rest_1, uint8_t)
TL_DEFINE_TR_SCALAR(tr_rest_2, uint16_t)
TL_DEFINE_TR_SCALAR(tr_rest_4, uint32_t)
TL_DEFINE_TR_SCALAR(tr_rest_8, uint64_t)

/* B x B register blocks, then the right edge (columns past the last whole
 * block) and the bottom edge (rows past it) element by element */
#define TL_DEFINE_TRANSPOSE(SZ, B, BLOCK)                                                      \
    static void TL_KNAME(transpose_##SZ)(char *dst, int64_t drow, const char *src, int64_t srow, \
                                         int64_t rows, int64_t cols) {                        \
        const int64_t rb = rows - rows % (B), cb = cols - cols % (B);                         \
        for (int64_t r = 0; r < rb; r += (B)) {                                               \
            for (int64_t c = 0; c < cb; c += (B))                                             \
                BLOCK(dst + c * drow + r * (SZ), drow, src + r * srow + c * (SZ), srow);      \
            tr_rest_##SZ(dst, drow, src, srow, r, r + (B), cb, cols);                         \
        }                                                                                     \
        tr_rest_##SZ(dst, drow, src, srow, rb, rows, 0, cols);                                \
    }

/* no register blocks (1-byte elements, ISAs without SSE2) */
#define TL_DEFINE_TRANSPOSE_PLAIN(SZ)                                                          \
    static void TL_KNAME(transpose_##SZ)(char *dst, int64_t drow, const char *src, int64_t srow, \
                                         int64_t rows, int64_t cols) {                        \
        tr_rest_##SZ(dst, drow, src, srow, 0, rows, 0, cols);                                 \
    }

/* ---- 4-byte elements */
#if defined(__AVX512F__)
static inline void block_4(char *d, int64_t ds, const char *s, int64_t ss) {
    __m512 r[16], t[16];
    for (int i = 0; i < 16; i++) r[i] = _mm512_loadu_ps(s + i * ss);
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; i++) {
        __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 1]);
        __m512d c = _mm512_castps_pd(t[4 * i + 2]), e = _mm512_castps_pd(t[4 * i + 3]);
        r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
        r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
        r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, e));
        r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, e));
    }
    /* r[4i + q]: rows 4i..4i+3, column q of each 128-bit lane: gather lanes */
    for (int i = 0; i < 2; i++)
        for (int q = 0; q < 4; q++) {
            t[8 * i + q] = _mm512_shuffle_f32x4(r[8 * i + q], r[8 * i + 4 + q], 0x88);
            t[8 * i + 4 + q] = _mm512_shuffle_f32x4(r[8 * i + q], r[8 * i + 4 + q], 0xdd);
        }
    for (int q = 0; q < 8; q++) {
        r[q] = _mm512_shuffle_f32x4(t[q], t[8 + q], 0x88);
        r[8 + q] = _mm512_shuffle_f32x4(t[q], t[8 + q], 0xdd);
    }
    for (int i = 0; i < 16; i++) _mm512_storeu_ps(d + i * ds, r[i]);
}
TL_DEFINE_TRANSPOSE(4, 16, block_4)
#elif defined(__AVX__)
static inline void block_4(char *d, int64_t ds, const char *s, int64_t ss) {
    __m256 r[8], t[8];
    for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_ps((const float *)(s + i * ss));
    for (int i = 0; i < 4; i++) {
        t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 2; i++) {
        r[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
        r[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xee);
        r[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
        r[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xee);
    }
    for (int q = 0; q < 4; q++) {
        _mm256_storeu_ps((float *)(d + q * ds), _mm256_permute2f128_ps(r[q], r[4 + q], 0x20));
        _mm256_storeu_ps((float *)(d + (4 + q) * ds), _mm256_permute2f128_ps(r[q], r[4 + q], 0x31));
    }
}
TL_DEFINE_TRANSPOSE(4, 8, block_4)
#elif defined(__SSE2__)
static inline void block_4(char *d, int64_t ds, const char *s, int64_t ss) {
    __m128 r0 = _mm_loadu_ps((const float *)s), r1 = _mm_loadu_ps((const float *)(s + ss));
    __m128 r2 = _mm_loadu_ps((const float *)(s + 2 * ss)), r3 = _mm_loadu_ps((const float *)(s + 3 * ss));
    _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
    _mm_storeu_ps((float *)d, r0);
    _mm_storeu_ps((float *)(d + ds), r1);
    _mm_storeu_ps((float *)(d + 2 * ds), r2);
    _mm_storeu_ps((float *)(d + 3 * ds), r3);
}
TL_DEFINE_TRANSPOSE(4, 4, block_4)
#else
TL_DEFINE_TRANSPOSE_PLAIN(4)
#endif

/* ---- 8-byte elements */
#if defined(__AVX512F__)
static inline void block_8(char *d, int64_t ds, const char *s, int64_t ss) {
    __m512d r[8], t[8];
    for (int i = 0; i < 8; i++) r[i] = _mm512_loadu_pd(s + i * ss);
    for (int i = 0; i < 4; i++) {
        t[2 * i] = _mm512_unpacklo_pd(r[2 * i], r[2 * i + 1]);      /* columns 0,2,4,6 of rows 2i, 2i+1 */
        t[2 * i + 1] = _mm512_unpackhi_pd(r[2 * i], r[2 * i + 1]);  /* columns 1,3,5,7 */
    }
    /* r[0]: columns 0,4 of rows 0-3; r[1]: 2,6; r[2]: 1,5; r[3]: 3,7; r[4..7] rows 4-7 */
    for (int h = 0; h < 2; h++) {
        r[4 * h] = _mm512_shuffle_f64x2(t[4 * h], t[4 * h + 2], 0x88);
        r[4 * h + 1] = _mm512_shuffle_f64x2(t[4 * h], t[4 * h + 2], 0xdd);
        r[4 * h + 2] = _mm512_shuffle_f64x2(t[4 * h + 1], t[4 * h + 3], 0x88);
        r[4 * h + 3] = _mm512_shuffle_f64x2(t[4 * h + 1], t[4 * h + 3], 0xdd);
    }
    static const int col_lo[4] = {0, 2, 1, 3};  /* r[q] holds columns col_lo[q] and col_lo[q] + 4 */
    for (int q = 0; q < 4; q++) {
        _mm512_storeu_pd(d + col_lo[q] * ds, _mm512_shuffle_f64x2(r[q], r[4 + q], 0x88));
        _mm512_storeu_pd(d + (col_lo[q] + 4) * ds, _mm512_shuffle_f64x2(r[q], r[4 + q], 0xdd));
    }
}
TL_DEFINE_TRANSPOSE(8, 8, block_8)
#elif defined(__AVX__)
static inline void block_8(char *d, int64_t ds, const char *s, int64_t ss) {
    __m256d r0 = _mm256_loadu_pd((const double *)s), r1 = _mm256_loadu_pd((const double *)(s + ss));
    __m256d r2 = _mm256_loadu_pd((const double *)(s + 2 * ss)), r3 = _mm256_loadu_pd((const double *)(s + 3 * ss));
    __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
    __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
    _mm256_storeu_pd((double *)d, _mm256_permute2f128_pd(t0, t2, 0x20));
    _mm256_storeu_pd((double *)(d + ds), _mm256_permute2f128_pd(t1, t3, 0x20));
    _mm256_storeu_pd((double *)(d + 2 * ds), _mm256_permute2f128_pd(t0, t2, 0x31));
    _mm256_storeu_pd((double *)(d + 3 * ds), _mm256_permute2f128_pd(t1, t3, 0x31));
}
TL_DEFINE_TRANSPOSE(8, 4, block_8)
#elif defined(__SSE2__)
static inline void block_8(char *d, int64_t ds, const char *s, int64_t ss) {
    __m128d r0 = _mm_loadu_pd((const double *)s), r1 = _mm_loadu_pd((const double *)(s + ss));
    _mm_storeu_pd((double *)d, _mm_unpacklo_pd(r0, r1));
    _mm_storeu_pd((double *)(d + ds), _mm_unpackhi_pd(r0, r1));
}
TL_DEFINE_TRANSPOSE(8, 2, block_8)
#else
TL_DEFINE_TRANSPOSE_PLAIN(8)
#endif

/* ---- 2-byte elements (float16, bfloat16, int16): 8x8 with SSE2 everywhere */
#if defined(__SSE2__)
static inline void block_2(char *d, int64_t ds, const char *s, int64_t ss) {
    __m128i r[8], a[8];
    for (int i = 0; i < 8; i++) r[i] = _mm_loadu_si128((const __m128i *)(s + i * ss));
    for (int i = 0; i < 4; i++) {
        a[2 * i] = _mm_unpacklo_epi16(r[2 * i], r[2 * i + 1]);      /* columns 0-3 of rows 2i, 2i+1 */
        a[2 * i + 1] = _mm_unpackhi_epi16(r[2 * i], r[2 * i + 1]);  /* columns 4-7 */
    }
    /* lo: rows 0-3, hi: rows 4-7; entry q holds columns 2q, 2q+1 */
    __m128i lo[4], hi[4];
    lo[0] = _mm_unpacklo_epi32(a[0], a[2]);  /* cols 0,1 rows 0-3 */
    lo[1] = _mm_unpackhi_epi32(a[0], a[2]);  /* cols 2,3 */
    lo[2] = _mm_unpacklo_epi32(a[1], a[3]);  /* cols 4,5 */
    lo[3] = _mm_unpackhi_epi32(a[1], a[3]);  /* cols 6,7 */
    hi[0] = _mm_unpacklo_epi32(a[4], a[6]);
    hi[1] = _mm_unpackhi_epi32(a[4], a[6]);
    hi[2] = _mm_unpacklo_epi32(a[5], a[7]);
    hi[3] = _mm_unpackhi_epi32(a[5], a[7]);
    for (int q = 0; q < 4; q++) {
        _mm_storeu_si128((__m128i *)(d + (2 * q) * ds), _mm_unpacklo_epi64(lo[q], hi[q]));
        _mm_storeu_si128((__m128i *)(d + (2 * q + 1) * ds), _mm_unpackhi_epi64(lo[q], hi[q]));
    }
}
TL_DEFINE_TRANSPOSE(2, 8, block_2)
#else
TL_DEFINE_TRANSPOSE_PLAIN(2)
#endif

/* ---- 1-byte elements (bool, uint8, int8): element by element */
TL_DEFINE_TRANSPOSE_PLAIN(1)

/* dst <- src (nbytes): every whole 64-byte line of dst written with
 * non-temporal stores, the partial lines at either end with plain ones, so a
 * line shared with the neighbouring tile is never half streamed */
static void TL_KNAME(stream_lines)(char *dst, const char *src, int64_t nbytes) {
#if defined(__SSE2__)
    int64_t head = (int64_t)((64 - ((uintptr_t)dst & 63)) & 63);
    if (head > nbytes) head = nbytes;
    memcpy(dst, src, (size_t)head);
    dst += head, src += head, nbytes -= head;
    for (; nbytes >= 64; dst += 64, src += 64, nbytes -= 64) {
#if defined(__AVX512F__)
        _mm512_stream_si512((void *)dst, _mm512_loadu_si512((const void *)src));
#elif defined(__AVX__)
        _mm256_stream_si256((__m256i *)dst, _mm256_loadu_si256((const __m256i *)src));
        _mm256_stream_si256((__m256i *)(dst + 32), _mm256_loadu_si256((const __m256i *)(src + 32)));
#else
        for (int k = 0; k < 64; k += 16)
            _mm_stream_si128((__m128i *)(dst + k), _mm_loadu_si128((const __m128i *)(src + k)));
#endif
    }
#endif
    memcpy(dst, src, (size_t)nbytes);
}

static void TL_KNAME(stream_fence)(void) {
#if defined(__SSE2__)
    _mm_sfence();
#endif
}

const tl_tile_kernels_t TL_KNAME(tl_tile_kernels) = {
    {TL_KNAME(transpose_1), TL_KNAME(transpose_2), TL_KNAME(transpose_4), TL_KNAME(transpose_8)},
    TL_KNAME(stream_lines),
    TL_KNAME(stream_fence),
};
