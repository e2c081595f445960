/* Per-ISA bag sum of embedding_bag (kernels/native/embedding_bag.c calls
 * it through tl_bag_stub). Table slot 0 is float32, slot 1 float64. */
#ifndef TL_BAG_KERNEL_H
#define TL_BAG_KERNEL_H

#include <stdint.h>

#include "tl_kernel.h"

/* out[0:D] = sum over i in [s, e) with idx[i] != pad of w[idx[i]] (* psw[i]
 * when psw is not NULL), in index order; rows idx[i + ahead] (i + ahead < n)
 * are prefetched. Returns the number of padding entries skipped. */
typedef int64_t (*tl_bag_sum_fn)(const void *w, const int64_t *idx, int64_t s, int64_t e, int64_t n, int64_t D,
                                 int64_t pad, const void *psw, void *out);

typedef tl_bag_sum_fn tl_bag_table_t[2];
extern const tl_bag_table_t tl_bag_table_DEFAULT, tl_bag_table_AVX2, tl_bag_table_AVX512;
extern tl_kernel_stub tl_bag_stub;

#endif
