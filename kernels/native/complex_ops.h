/* What the real-dtype operators of shape_helpers.c call for complex tensors
 * (complex_ops.c). */
#ifndef TL_COMPLEX_OPS_H
#define TL_COMPLEX_OPS_H

#include "tl_error.h"
#include "tl_tensor.h"

/* view_as_real without autograd (kernels reducing the two parts as reals);
 * NULL with the error set for a real dtype */
tl_tensor *tl__complex_as_real(tl_tensor *t);
/* select(view_as_real(self), -1, 0) */
tl_tensor *tl__complex_real(tl_tensor *self);
/* |z| (hypot of the parts, a real tensor) and isnan (either part) of a
 * complex tensor; the abs / isnan operators for a real one */
tl_tensor *tl__abs_any(tl_tensor *t);
tl_tensor *tl__isnan_any(tl_tensor *t);
/* the conjugate of a complex tensor, materialised (no lazy conjugate bit) */
tl_tensor *tl__complex_conj_physical(tl_tensor *self);

/* kernels that do not take complex tensors: 0 for a real one; else -1 with
 * PyTorch's message, a RuntimeError `msg`, or with not_impl its
 * NotImplementedError "\"msg\" not implemented for 'ComplexFloat'" */
static inline int tl__refuse_complex(const tl_tensor *t, int not_impl, const char *msg) {
    const tl_dtype dt = tl_tensor_dtype(t);
    if (!tl_dtype_is_complex(dt)) return 0;
    if (not_impl)
        return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", msg, tl_dtype_scalar_name(dt));
    return tl_set_error(TL_ERR_RUNTIME, "%s", msg);
}

#endif
