/* Antialiased bilinear / bicubic 2-d upsampling and its backward
 * (kernels/native/upsample_aa.c). */
#ifndef TL_UPSAMPLE_AA_H
#define TL_UPSAMPLE_AA_H

#include <stdbool.h>

#include "tl_tensor.h"

/* forward: dst [N, C, OH, OW] from src [N, C, IH, IW] (float32 / float64;
 * uint8 in fixed point); backward: dst = grad_input [N, C, IH, IW] from src =
 * grad_output. scales / has: the optional per-dim scale factors (H, W).
 * 0, or -1 with the error set. */
int tl_upsample_aa_2d(const tl_tensor *src, tl_tensor *dst, bool backward, bool cubic, bool align_corners,
                      const double *scales, const bool *has);

#endif
