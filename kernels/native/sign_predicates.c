/* Meta functions of signbit, isposinf and isneginf (yaml/native_functions.yaml,
 * block "scatter / index reductions and sign predicates"; formulas in
 * kernels/ufunc/signbit.h, isposinf.h, isneginf.h): PyTorch's
 * build_borrowing_unary_force_boolean_op (self read in its own dtype, a bool
 * result) after its check that an out= tensor is bool. */
#include "tl_error.h"
#include "tl_internal.h"
#include "tl_iter.h"
#include "tl_structured.h"
#include "tl_tensor.h"

static int force_boolean_meta(tl_structured *s, tl_tensor *self, const char *name) {
    const tl_tensor *out = s->kind == TL_STRUCTURED_FUNCTIONAL ? NULL : s->outputs[0];
    if (out && out->dtype != TL_BOOL)
        return tl_set_error(TL_ERR_RUNTIME, "%s does not support non-boolean outputs.", name);
    const tl_tensor *in[1] = {self};
    const uint32_t flags = TL_ITER_PROMOTE_INPUTS | TL_ITER_CAST_TO_OUTPUTS | TL_ITER_RESIZE_OUTPUTS |
                           TL_ITER_CHECK_OVERLAP;
    return tl_structured_build(s, flags, 1, in, TL_BOOL);
}

int tl_meta_signbit(tl_structured *s, tl_tensor *self) { return force_boolean_meta(s, self, "signbit"); }
int tl_meta_isposinf(tl_structured *s, tl_tensor *self) { return force_boolean_meta(s, self, "isposinf"); }
int tl_meta_isneginf(tl_structured *s, tl_tensor *self) { return force_boolean_meta(s, self, "isneginf"); }
