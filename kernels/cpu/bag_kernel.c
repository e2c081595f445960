/* embedding_bag's bag sum (bag_kernel.h), compiled once per CPU capability:
 * the row adds are the vector width of the capability. Rows are gathered at
 * random from a table usually far larger than the caches, so the row
 * BAG_AHEAD indices on is prefetched (its cache lines) and the loads
 * overlap instead of waiting one miss at a time. */
#include "bag_kernel.h"

enum { BAG_AHEAD = 16 };

/* rows [s, e) added into acc[0:len] at column d0 (len a constant CH in the
 * full chunks, so acc stays in vector registers across the bag) */
#define TL_DEF_BAG(NAME, T)                                                                                 \
    enum { CH_##NAME = 256 / (int)sizeof(T) };                                                              \
    static inline __attribute__((always_inline)) int64_t chunk_##NAME(                                      \
        const T *w, const int64_t *idx, int64_t s, int64_t e, int64_t n, int64_t D, int64_t pad,            \
        const T *psw, T *restrict o, int64_t d0, int64_t len, int pf) {                                     \
        T acc[CH_##NAME] = {0};                                                                             \
        int64_t skipped = 0;                                                                                \
        for (int64_t i = s; i < e; i++) {                                                                   \
            if (pf && i + BAG_AHEAD < n) {                                                                  \
                const char *p = (const char *)(w + idx[i + BAG_AHEAD] * D);                                 \
                for (int64_t b = 0; b < D * (int64_t)sizeof(T); b += 64) __builtin_prefetch(p + b);         \
            }                                                                                               \
            const int64_t r = idx[i];                                                                       \
            if (r == pad) {                                                                                 \
                skipped++;                                                                                  \
                continue;                                                                                   \
            }                                                                                               \
            const T *restrict row = w + r * D + d0;                                                         \
            if (psw) {                                                                                      \
                const T sc = psw[i];                                                                        \
                for (int64_t d = 0; d < len; d++) acc[d] += row[d] * sc;                                    \
            } else {                                                                                        \
                for (int64_t d = 0; d < len; d++) acc[d] += row[d];                                         \
            }                                                                                               \
        }                                                                                                   \
        for (int64_t d = 0; d < len; d++) o[d0 + d] = acc[d];                                               \
        return skipped;                                                                                     \
    }                                                                                                       \
    static int64_t TL_KNAME(bag_sum_##NAME)(const void *wv, const int64_t *idx, int64_t s, int64_t e,       \
                                            int64_t n, int64_t D, int64_t pad, const void *pswv, void *ov) { \
        const T *w = wv, *psw = pswv;                                                                       \
        T *o = ov;                                                                                          \
        int64_t skipped = 0, d0 = 0;                                                                        \
        for (; d0 + CH_##NAME <= D; d0 += CH_##NAME)                                                        \
            skipped = chunk_##NAME(w, idx, s, e, n, D, pad, psw, o, d0, CH_##NAME, d0 == 0);                \
        if (d0 < D) skipped = chunk_##NAME(w, idx, s, e, n, D, pad, psw, o, d0, D - d0, d0 == 0);           \
        for (int64_t i = s; D == 0 && i < e; i++) skipped += idx[i] == pad; /* no columns: the count only */ \
        return skipped;                                                                                     \
    }

TL_DEF_BAG(f32, float)
TL_DEF_BAG(f64, double)

const tl_bag_table_t TL_KNAME(tl_bag_table) = {TL_KNAME(bag_sum_f32), TL_KNAME(bag_sum_f64)};
