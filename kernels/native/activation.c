/* relu / relu_: PyTorch has no relu.out, so relu is not a structured ufunc
 * operator; these kernels build the iterator themselves and run the loops
 * generated from the formula kernels/ufunc/relu.h (generated/kernels/ufunc_relu.c).
 * Registered for CPU and Meta (the iterator computes metadata only on Meta). */
#include "tl_error.h"
#include "tl_iter.h"
#include "tl_ops.h"
#include "tl_tensor.h"
#include "ufunc_relu.h"

static tl_tensor *relu_run(tl_tensor *self, tl_tensor *out) {
    if (tl_tensor_dtype(self) == TL_BOOL) {
        tl_set_error(TL_ERR_RUNTIME, "Boolean inputs not supported for relu");
        return NULL;
    }
    tl_iter *it = tl_iter_new(TL_ITER_UNARY_OP);
    if (!it) return NULL;
    tl_tensor *result = NULL;
    if (tl_iter_add_output(it, out) == 0 && tl_iter_add_input(it, self) == 0 && tl_iter_build(it) == 0 &&
        tl_ufunc_relu_run(it) == 0)
        result = tl_iter_output(it, 0);
    tl_iter_free(it);
    return result;
}

tl_tensor *tl_native_relu(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    return relu_run(self, NULL);
}

tl_tensor *tl_native_relu_(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    tl_tensor *r = relu_run(self, self);
    if (r && tl_tensor_device(self) != TL_META) tl_tensor_bump_version(self);
    return r;
}
