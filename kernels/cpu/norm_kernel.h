/* Per-ISA contiguous-run primitives of batch_norm and group_norm
 * (kernels/native/norm_ops.c walks the channels / groups and calls them
 * through tl_norm_stub on runs of n contiguous elements). Table slot 0 is
 * float32, 1 float64; float16 / bfloat16 are computed in float32 by the
 * caller. Sums are returned in double (float32 runs accumulate in vector
 * float partial sums per block of 1024, then in double), so long channels
 * stay accurate. */
#ifndef TL_NORM_KERNEL_H
#define TL_NORM_KERNEL_H

#include <stdint.h>

#include "tl_kernel.h"

/* sum(x) */
typedef double (*tl_norm_sum_fn)(const void *x, int64_t n);
/* sum((x - mean)^2) */
typedef double (*tl_norm_sqdev_fn)(const void *x, int64_t n, double mean);
/* y = (x - m) * a + b (the mean subtracted first: a = rstd * w can be large) */
typedef void (*tl_norm_affine_fn)(const void *x, void *y, int64_t n, double m, double a, double b);
/* *sum_g += sum(g), *dot += sum(g * (x - mean)) */
typedef void (*tl_norm_gdot_fn)(const void *g, const void *x, int64_t n, double mean, double *sum_g, double *dot);
/* gi = g * a + x * b + c */
typedef void (*tl_norm_bwd_fn)(const void *g, const void *x, void *gi, int64_t n, double a, double b, double c);

typedef struct {
    tl_norm_sum_fn sum;
    tl_norm_sqdev_fn sqdev;
    tl_norm_affine_fn affine;
    tl_norm_gdot_fn gdot;
    tl_norm_bwd_fn bwd;
} tl_norm_kernels;

typedef tl_norm_kernels tl_norm_table_t[2];
extern const tl_norm_table_t tl_norm_table_DEFAULT, tl_norm_table_AVX2, tl_norm_table_AVX512;
extern tl_kernel_stub tl_norm_stub;

#endif
