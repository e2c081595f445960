/* Per-ISA kernels of cumsum / cumprod over float32 / float64 data
 * (kernels/cpu/scan_kernel.c), used by kernels/native/reduce_scan.c.
 * Everything accumulates in double (PyTorch's CPU accumulation type for
 * float32 and float64 scans). Table: [0] float32, [1] float64; in each
 * [0] cumsum, [1] cumprod. */
#ifndef TL_SCAN_KERNEL_H
#define TL_SCAN_KERNEL_H

#include <stdint.h>

#include "tl_kernel.h"

/* row: out[i] = carry OP l_i for i < n (n >= 1), l the running sum (product)
 * of p[0..i] from the identity, in double; returns l_{n-1}. store == 0
 * writes nothing and returns the same l_{n-1} (the total of a chunk, for a
 * carry computed before the chunk is scanned). out may be p (in place). */
typedef double (*tl_scan_row_fn)(const void *p, void *out, int64_t n, double carry, int store);
/* columns: w columns of n rows (element i of column c at p[i * stride + c]),
 * each scanned down its rows in double in order (acc: w doubles of scratch) */
typedef void (*tl_scan_col_fn)(const void *p, void *out, int64_t n, int64_t stride, int64_t w, double *acc);
typedef struct {
    tl_scan_row_fn row[2];
    tl_scan_col_fn col[2];
} tl_scan_fns;
typedef tl_scan_fns tl_scan_table_t[2];
extern const tl_scan_table_t tl_scan_table_DEFAULT, tl_scan_table_AVX2, tl_scan_table_AVX512;
extern tl_kernel_stub tl_scan_stub;
#define TL_SCAN(s) ((*(const tl_scan_table_t *)tl_scan_stub.current)[s])

#endif
