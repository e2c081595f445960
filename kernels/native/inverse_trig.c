/* Inverse hyperbolic functions and the numpy-style `arc*` aliases.
 *
 *  - asinh / acosh / atanh: structured ufunc operators (kernels/ufunc/<op>.h);
 *    float-valued like asin (build_borrowing_unary_float_op: integer and bool
 *    inputs compute in the default float dtype).
 *  - arcsin, arccos, arctan, arcsinh, arccosh, arctanh, arctan2 (+ `_` and
 *    .out): PyTorch declares them without dispatch (CompositeImplicitAutograd)
 *    and calls the original, so autograd records the original's node.
 */
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/acos.h"
#include "ops/acosh.h"
#include "ops/arccos.h"
#include "ops/arccosh.h"
#include "ops/arcsin.h"
#include "ops/arcsinh.h"
#include "ops/arctan.h"
#include "ops/arctan2.h"
#include "ops/arctanh.h"
#include "ops/asin.h"
#include "ops/asinh.h"
#include "ops/atan.h"
#include "ops/atan2.h"
#include "ops/atanh.h"
#include "tl_structured.h"
#include "tl_tensor.h"

#define TL_UNARY_FLOAT_META(op) \
    int tl_meta_##op(tl_structured *s, tl_tensor *self) { return tl_structured_build_unary_float_op(s, self); }
TL_UNARY_FLOAT_META(asinh)
TL_UNARY_FLOAT_META(acosh)
TL_UNARY_FLOAT_META(atanh)

/* arc<op>, arc<op>_, arc<op>.out -> <op>, <op>_, <op>.out */
#define TL_UNARY_ALIAS(alias, op)                                                  \
    tl_tensor *tl_native_##alias(tl_keyset ks, tl_tensor *self) {                  \
        (void)ks;                                                                  \
        return tl_ops_##op(self);                                                  \
    }                                                                              \
    tl_tensor *tl_native_##alias##_(tl_keyset ks, tl_tensor *self) {               \
        (void)ks;                                                                  \
        return tl_ops_##op##_(self);                                               \
    }                                                                              \
    tl_tensor *tl_native_##alias##_out(tl_keyset ks, tl_tensor *self, tl_tensor *out) { \
        (void)ks;                                                                  \
        return tl_ops_##op##_out(self, out);                                       \
    }
TL_UNARY_ALIAS(arcsin, asin)
TL_UNARY_ALIAS(arccos, acos)
TL_UNARY_ALIAS(arctan, atan)
TL_UNARY_ALIAS(arcsinh, asinh)
TL_UNARY_ALIAS(arccosh, acosh)
TL_UNARY_ALIAS(arctanh, atanh)

tl_tensor *tl_native_arctan2(tl_keyset ks, tl_tensor *self, tl_tensor *other) {
    (void)ks;
    return tl_ops_atan2(self, other);
}
tl_tensor *tl_native_arctan2_(tl_keyset ks, tl_tensor *self, tl_tensor *other) {
    (void)ks;
    return tl_ops_atan2_(self, other);
}
tl_tensor *tl_native_arctan2_out(tl_keyset ks, tl_tensor *self, tl_tensor *other, tl_tensor *out) {
    (void)ks;
    return tl_ops_atan2_out(self, other, out);
}
