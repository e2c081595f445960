/* Structured meta functions of the pointwise arithmetic operators (add, sub,
 * mul, div, neg) and the composite Scalar overloads (add.Scalar, rsub, ...).
 *
 * The arithmetic itself is not here: it is generated from the ufunc formulas
 * in kernels/ufunc/ (generated/kernels/ufunc_<op>.c, docs/UFUNC.md), whose
 * generated tl_impl_ufunc_<op> runs over the iterator these meta functions
 * build. Checks and messages are PyTorch's (BinaryOps.cpp, UnaryOps.cpp).
 */
#include "tl_error.h"
#include "tl_ops.h"
#include "tl_structured.h"
#include "tl_tensor.h"

/* PyTorch's alpha_check, on the iterator's common dtype */
static int alpha_check(tl_dtype dt, tl_scalar alpha) {
    if (alpha.kind == TL_SCALAR_BOOL && dt != TL_BOOL)
        return tl_set_error(TL_ERR_RUNTIME, "Boolean alpha only supported for Boolean results.");
    if (!tl_dtype_is_floating(dt) && alpha.kind == TL_SCALAR_DOUBLE)
        return tl_set_error(TL_ERR_RUNTIME,
                            "For integral input tensors, argument alpha must not be a floating point number.");
    return 0;
}

static int sub_check(const tl_tensor *self, const tl_tensor *other) {
    const int a = tl_tensor_dtype(self) == TL_BOOL, b = tl_tensor_dtype(other) == TL_BOOL;
    if (a && b)
        return tl_set_error(TL_ERR_RUNTIME, "Subtraction, the `-` operator, with two bool tensors is not supported. "
                                            "Use the `^` or `logical_xor()` operator instead.");
    if (a || b)
        return tl_set_error(TL_ERR_RUNTIME, "Subtraction, the `-` operator, with a bool tensor is not supported. "
                                            "If you are trying to invert a mask, use the `~` or `logical_not()` "
                                            "operator instead.");
    return 0;
}

int tl_meta_add_Tensor(tl_structured *s, tl_tensor *self, tl_tensor *other, tl_scalar alpha) {
    if (tl_structured_build_borrowing_binary_op(s, self, other)) return -1;
    return alpha_check(tl_iter_common_dtype(s->iter), alpha);
}

int tl_meta_sub_Tensor(tl_structured *s, tl_tensor *self, tl_tensor *other, tl_scalar alpha) {
    if (sub_check(self, other)) return -1;
    if (tl_structured_build_borrowing_binary_op(s, self, other)) return -1;
    return alpha_check(tl_iter_common_dtype(s->iter), alpha);
}

int tl_meta_mul_Tensor(tl_structured *s, tl_tensor *self, tl_tensor *other) {
    return tl_structured_build_borrowing_binary_op(s, self, other);
}

/* true division: integral inputs compute in the default float dtype */
int tl_meta_div_Tensor(tl_structured *s, tl_tensor *self, tl_tensor *other) {
    return tl_structured_build_binary_float_op(s, self, other);
}

int tl_meta_neg(tl_structured *s, tl_tensor *self) {
    if (tl_tensor_dtype(self) == TL_BOOL)
        return tl_set_error(TL_ERR_RUNTIME, "Negation, the `-` operator, on a bool tensor is not supported. "
                                            "If you are trying to invert a mask, use the `~` or `logical_not()` "
                                            "operator instead.");
    return tl_structured_build_unary_op(s, self);
}

/* ---- Scalar overloads: the Tensor overload with `other` as a wrapped number
 * (a 0-dim tensor that takes part in type promotion as a Python scalar) */
#define TL_WITH_WRAPPED(other, EXPR)                 \
    do {                                             \
        tl_tensor *w_ = tl_wrapped_scalar(other);    \
        if (!w_) return NULL;                        \
        tl_tensor *r_ = (EXPR);                      \
        tl_tensor_release(w_);                       \
        return r_;                                   \
    } while (0)

tl_tensor *tl_native_add_Scalar(tl_keyset ks, tl_tensor *self, tl_scalar other, tl_scalar alpha) {
    (void)ks;
    TL_WITH_WRAPPED(other, tl_ops_add_Tensor(self, w_, alpha));
}
tl_tensor *tl_native_add__Scalar(tl_keyset ks, tl_tensor *self, tl_scalar other, tl_scalar alpha) {
    (void)ks;
    TL_WITH_WRAPPED(other, tl_ops_add__Tensor(self, w_, alpha));
}
tl_tensor *tl_native_sub_Scalar(tl_keyset ks, tl_tensor *self, tl_scalar other, tl_scalar alpha) {
    (void)ks;
    TL_WITH_WRAPPED(other, tl_ops_sub_Tensor(self, w_, alpha));
}
tl_tensor *tl_native_sub__Scalar(tl_keyset ks, tl_tensor *self, tl_scalar other, tl_scalar alpha) {
    (void)ks;
    TL_WITH_WRAPPED(other, tl_ops_sub__Tensor(self, w_, alpha));
}
/* rsub(self, other, alpha) = other - alpha * self */
tl_tensor *tl_native_rsub_Tensor(tl_keyset ks, tl_tensor *self, tl_tensor *other, tl_scalar alpha) {
    (void)ks;
    return tl_ops_sub_Tensor(other, self, alpha);
}
tl_tensor *tl_native_rsub_Scalar(tl_keyset ks, tl_tensor *self, tl_scalar other, tl_scalar alpha) {
    (void)ks;
    TL_WITH_WRAPPED(other, tl_ops_sub_Tensor(w_, self, alpha));
}
tl_tensor *tl_native_mul_Scalar(tl_keyset ks, tl_tensor *self, tl_scalar other) {
    (void)ks;
    TL_WITH_WRAPPED(other, tl_ops_mul_Tensor(self, w_));
}
tl_tensor *tl_native_mul__Scalar(tl_keyset ks, tl_tensor *self, tl_scalar other) {
    (void)ks;
    TL_WITH_WRAPPED(other, tl_ops_mul__Tensor(self, w_));
}
tl_tensor *tl_native_div_Scalar(tl_keyset ks, tl_tensor *self, tl_scalar other) {
    (void)ks;
    TL_WITH_WRAPPED(other, tl_ops_div_Tensor(self, w_));
}
tl_tensor *tl_native_div__Scalar(tl_keyset ks, tl_tensor *self, tl_scalar other) {
    (void)ks;
    TL_WITH_WRAPPED(other, tl_ops_div__Tensor(self, w_));
}
