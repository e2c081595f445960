/* Convolution as im2col / col2im around the vendor GEMM (tl_blas_gemm):
 * the three products every convolution and its gradients reduce to
 * (kernels/native/conv_gemm.c; docs/NN.md "Convolution").
 *
 * One geometry serves both directions: the "image" side is the tensor the
 * kernel window slides over (the input of a convolution, the output of a
 * transposed one), the "column" side the other (its spatial positions are
 * the window positions). Per group g the weight is the row-major matrix
 * W_g [Cc/G, Ci/G * K] in both layouts ([Cout, Cin/G, k...] and, transposed,
 * [Cin, Cout/G, k...]), so:
 *   cols_from_image:  Y[n, g] = W_g @ im2col(X[n, g])        (+ bias on Y)
 *   image_from_cols:  X[n, g] = col2im(W_g^T @ Y[n, g])      (+ bias on X)
 *   weight_grad:      dW_g   = sum_n Y[n, g] @ im2col(X[n, g])^T
 * X is [N, Ci, isz...], Y [N, Cc, osz...], all contiguous, float32 or
 * float64. float32 products go to oneDNN first where it takes them
 * (conv_dnnl.h); the im2col path computes the rest. */
#ifndef TL_CONV_GEMM_H
#define TL_CONV_GEMM_H

#include <stdbool.h>
#include <stdint.h>

#include "tl_dtype.h"

#define TL_CONV_MAXD 3

typedef struct {
    int64_t N, G;
    int64_t Ci, Cc;          /* image-side / column-side channels, all groups */
    int64_t isz[TL_CONV_MAXD], osz[TL_CONV_MAXD];
    int64_t k[TL_CONV_MAXD], s[TL_CONV_MAXD], p[TL_CONV_MAXD], d[TL_CONV_MAXD];
    tl_dtype dt;             /* TL_FLOAT32 or TL_FLOAT64 */
    bool transposed;         /* the column side is the input (read only by the oneDNN choice, conv_dnnl.c) */
} tl_conv_geom;

/* Fill g's spatial arrays from nd (1..3) dims, leading dims padded to size 1 */
void tl_conv_geom_spatial(tl_conv_geom *g, int nd, const int64_t *isz, const int64_t *osz, const int64_t *k,
                          const int64_t *s, const int64_t *p, const int64_t *d);

/* The three products (see above); bias may be NULL. 0, or -1 with the
 * error set (out of memory, a dimension beyond the BLAS integer). */
int tl_conv_cols_from_image(const tl_conv_geom *g, const void *X, const void *W, const void *bias, void *Y);
int tl_conv_image_from_cols(const tl_conv_geom *g, const void *Y, const void *W, const void *bias, void *X);
int tl_conv_weight_grad(const tl_conv_geom *g, const void *X, const void *Y, void *dW);

#endif
