/* uint8 bilinear / bicubic 2-d upsampling in PyTorch's fixed point
 * (kernels/native/upsample_uint8.c). */
#ifndef TL_UPSAMPLE_UINT8_H
#define TL_UPSAMPLE_UINT8_H

#include <math.h>
#include <stdbool.h>

#include "tl_tensor.h"

/* PIL's triangle filter and PyTorch's cubic convolution (UpSample.h's
 * cubic_convolution1 / 2 with its A), in double (upsample_aa.c's float
 * versions round as PyTorch's float code) */
static inline double tl_ups_tri(double x) {
    x = fabs(x);
    return x < 1.0 ? 1.0 - x : 0.0;
}

static inline double tl_ups_cubic(double x, double a) {
    x = fabs(x);
    if (x < 1.0) return ((a + 2) * x - (a + 3)) * x * x + 1;
    if (x < 2.0) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
    return 0.0;
}

/* out (allocated, [N, C, OH, OW], uint8) from input [N, C, IH, IW]; scales /
 * has: the optional per-dim scale factors (H, W). 0, or -1 with the error set. */
int tl_upsample_uint8_2d(const tl_tensor *input, tl_tensor *out, bool cubic, bool antialias, bool align_corners,
                         const double *scales, const bool *has);

#endif
