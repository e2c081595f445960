/* out= overloads PyTorch has and torchlet lacked (issue 6, missing ops),
 * each over the operator's existing functional or out= kernel:
 *
 *  - softmax.int_out / log_softmax.int_out (CompositeExplicitAutograd, as
 *    PyTorch's softmax_out: the functional result copied into out, whose
 *    dtype must be the result's);
 *  - nll_loss.out (CompositeImplicitAutograd: nll_loss_forward.output with a
 *    throw-away total_weight, as PyTorch) and nll_loss_forward.output (CPU);
 *  - eq/ne/lt/le/gt/ge.Scalar_out: the number wrapped, then the .Tensor_out.
 */
#include "missing_ops.h"
#include "pointwise_math.h"
#include "tl_internal.h"
#include "tl_ops.h"
#include "tl_structured.h"

tl_tensor *tl_native_softmax_out(tl_keyset ks, tl_tensor *self, int64_t dim, tl_dtype dtype, tl_tensor *out) {
    (void)ks;
    return tl_missing_copy_to_out(tl_ops_softmax_int(self, dim, dtype), out);
}

tl_tensor *tl_native_log_softmax_out(tl_keyset ks, tl_tensor *self, int64_t dim, tl_dtype dtype, tl_tensor *out) {
    (void)ks;
    return tl_missing_copy_to_out(tl_ops_log_softmax_int(self, dim, dtype), out);
}

int tl_native_nll_loss_forward_out_cpu(tl_keyset ks, tl_tensor *self, tl_tensor *target, tl_tensor *weight,
                                       int64_t reduction, int64_t ignore_index, tl_tensor *output,
                                       tl_tensor *total_weight, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    tl_tensor *o = NULL, *tw = NULL;
    if (tl_ops_nll_loss_forward(self, target, weight, reduction, ignore_index, &o, &tw)) return -1;
    tl_tensor *r0 = tl_missing_copy_to_out(o, output);
    tl_tensor *r1 = r0 ? tl_missing_copy_to_out(tw, total_weight) : (tl_tensor_release(tw), NULL);
    if (!r1) {
        tl_tensor_release(r0);
        return -1;
    }
    *ret0 = r0;
    *ret1 = r1;
    return 0;
}

tl_tensor *tl_native_nll_loss_out(tl_keyset ks, tl_tensor *self, tl_tensor *target, tl_tensor *weight,
                                  int64_t reduction, int64_t ignore_index, tl_tensor *out) {
    (void)ks;
    const int64_t zero = 0;
    tl_tensor *tw = tl_empty(1, &zero, tl_tensor_dtype(self), tl_tensor_device(self));
    if (!tw) return NULL;
    tl_tensor *r0 = NULL, *r1 = NULL;
    int rc = tl_ops_nll_loss_forward_output(self, target, weight, reduction, ignore_index, out, tw, &r0, &r1);
    tl_tensor_release(tw);
    tl_tensor_release(r1);
    return rc ? NULL : r0;
}

/* op.Scalar_out(self, number, out=): op.Tensor_out(self, wrapped(number), out) */
#define TL_SCALAR_OUT(op)                                                                          \
    tl_tensor *tl_native_##op##_Scalar_out(tl_keyset ks, tl_tensor *self, tl_scalar other, tl_tensor *out) { \
        (void)ks;                                                                                  \
        return tl_pointwise_with_number_out(tl_ops_##op##_Tensor_out, self, other, out);           \
    }
TL_SCALAR_OUT(eq)
TL_SCALAR_OUT(ne)
TL_SCALAR_OUT(lt)
TL_SCALAR_OUT(le)
TL_SCALAR_OUT(gt)
TL_SCALAR_OUT(ge)
