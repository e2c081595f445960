/* uint8 bilinear / bicubic 2-d upsampling in PyTorch's fixed point
 * (kernels/native/upsample_uint8.c). */
#ifndef TL_UPSAMPLE_UINT8_H
#define TL_UPSAMPLE_UINT8_H

#include <stdbool.h>

#include "tl_tensor.h"

/* out (allocated, [N, C, OH, OW], uint8) from input [N, C, IH, IW]; scales /
 * has: the optional per-dim scale factors (H, W). 0, or -1 with the error set. */
int tl_upsample_uint8_2d(const tl_tensor *input, tl_tensor *out, bool cubic, bool antialias, bool align_corners,
                         const double *scales, const bool *has);

#endif
