/* What the real-dtype operators of shape_helpers.c call for complex tensors
 * (complex_ops.c). */
#ifndef TL_COMPLEX_OPS_H
#define TL_COMPLEX_OPS_H

#include "tl_tensor.h"

/* view_as_real without autograd (kernels reducing the two parts as reals);
 * NULL with the error set for a real dtype */
tl_tensor *tl__complex_as_real(tl_tensor *t);
/* select(view_as_real(self), -1, 0) */
tl_tensor *tl__complex_real(tl_tensor *self);
/* the conjugate of a complex tensor, materialised (no lazy conjugate bit) */
tl_tensor *tl__complex_conj_physical(tl_tensor *self);

#endif
