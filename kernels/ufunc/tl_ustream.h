/* Non-temporal stores for the generated pointwise loops (templates/ufunc_kernel.c.j2).
 *
 * A contiguous or broadcast fast path that moves at least the store policy's
 * stream_min_bytes in one loop call (output + the inputs that are not
 * broadcast scalars) computes chunks of TL_UFUNC_CHUNK elements into a buffer
 * on the stack (L1) and writes each chunk with streaming stores, which skip
 * the read-for-ownership of every output cache line and keep the output from
 * evicting the inputs. The policy is the runtime's, derived from the machine
 * (tl_thresholds.h; the rule in docs/UFUNC.md "Stores"): while everything fits
 * in L2, plain stores win.
 *
 * Only the store is x86-specific (SSE2 / AVX / AVX-512 by the compilation's
 * ISA, like the rest of the loop); elsewhere it is a memcpy. tl_ustream_fence()
 * orders the weakly ordered streaming stores before the loop returns (the
 * results are read by other threads after the iterator's join).
 */
#ifndef TL_USTREAM_H
#define TL_USTREAM_H

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "tl_thresholds.h"   /* tl_cpu_store_policy */

#if defined(__AVX512F__)
#define TL__USTREAM_VEC 64
#elif defined(__AVX__)
#define TL__USTREAM_VEC 32
#elif defined(__SSE2__)
#define TL__USTREAM_VEC 16
#else
#define TL__USTREAM_VEC 0
#endif

/* dst <- src (nbytes): the whole vectors of dst's aligned part streamed, the
 * unaligned head and tail copied (plain stores) */
static inline void tl_ustream_copy(void *dst, const void *src, int64_t nbytes) {
#if TL__USTREAM_VEC
    char *d = (char *)dst;
    const char *s = (const char *)src;
    int64_t head = (int64_t)((TL__USTREAM_VEC - ((uintptr_t)d & (TL__USTREAM_VEC - 1))) & (TL__USTREAM_VEC - 1));
    if (head > nbytes) head = nbytes;
    memcpy(d, s, (size_t)head);
    d += head, s += head, nbytes -= head;
    for (; nbytes >= TL__USTREAM_VEC; d += TL__USTREAM_VEC, s += TL__USTREAM_VEC, nbytes -= TL__USTREAM_VEC) {
#if TL__USTREAM_VEC == 64
        _mm512_stream_si512((void *)d, _mm512_loadu_si512((const void *)s));
#elif TL__USTREAM_VEC == 32
        _mm256_stream_si256((__m256i *)d, _mm256_loadu_si256((const __m256i *)s));
#else
        _mm_stream_si128((__m128i *)d, _mm_loadu_si128((const __m128i *)s));
#endif
    }
    memcpy(d, s, (size_t)nbytes);
#else
    memcpy(dst, src, (size_t)nbytes);
#endif
}

/* elements per streamed chunk: 1 KiB of float32, the chunk computed into a
 * stack buffer (L1) and stored from there in whole 64-byte vectors. The
 * chunk loop has a constant trip count (one clean vector body) and starts at
 * a 64-byte boundary of the output (tl_ustream_head), so every store is an
 * aligned full line. */
#define TL_USTREAM_CHUNK 256

/* how many of n elements of size isz come before o's first 64-byte boundary
 * (all n when o is not even element-aligned: that output is stored plainly) */
static inline int64_t tl_ustream_head(const void *o, int64_t n, int64_t isz) {
    uintptr_t mis = (uintptr_t)o & 63;
    if (mis == 0) return 0;
    if (mis % (uintptr_t)isz != 0) return n;
    int64_t h = (int64_t)((64 - mis) / (uintptr_t)isz);
    return h < n ? h : n;
}

/* dst <- src, nbytes a multiple of 64, dst and src 64-byte aligned: streaming
 * stores of whole vectors (plain copy where the ISA has none) */
static inline void tl_ustream_store(void *dst, const void *src, int64_t nbytes) {
#if TL__USTREAM_VEC
    char *d = (char *)dst;
    const char *s = (const char *)src;
    for (int64_t k = 0; k < nbytes; k += TL__USTREAM_VEC) {
#if TL__USTREAM_VEC == 64
        _mm512_stream_si512((void *)(d + k), _mm512_load_si512((const void *)(s + k)));
#elif TL__USTREAM_VEC == 32
        _mm256_stream_si256((__m256i *)(d + k), _mm256_load_si256((const __m256i *)(s + k)));
#else
        _mm_stream_si128((__m128i *)(d + k), _mm_load_si128((const __m128i *)(s + k)));
#endif
    }
#else
    memcpy(dst, src, (size_t)nbytes);
#endif
}

/* software prefetch of the input bytes [p + AHEAD, p + AHEAD + nbytes), one
 * line each, called per chunk of a streamed loop when the policy says so
 * (Intel's cores; it costs AMD's Zen 10-20%): the hardware prefetcher
 * alone falls behind while a compute-bound chunk (exp, gelu, ...) runs, so
 * the loads of the next chunks missed and compute and memory took turns.
 * Measured on a Xeon (2^24 float32, AVX-512, C loop as generated): exp 11.5 -> 9.5 ms,
 * a memory-bound neg 6.9 -> 6.8 ms. Prefetches never fault past the end. */
#define TL_USTREAM_AHEAD 8192
static inline void tl_ustream_prefetch(const void *p, int64_t nbytes) {
    if (!tl_cpu_store_policy.prefetch) return;
    const char *c = (const char *)p + TL_USTREAM_AHEAD;
    for (int64_t b = 0; b < nbytes; b += 64) __builtin_prefetch(c + b);
}

static inline void tl_ustream_fence(void) {
#if TL__USTREAM_VEC
    _mm_sfence();
#endif
}

#endif
