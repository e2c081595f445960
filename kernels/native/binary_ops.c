/* Structured meta functions of the pointwise arithmetic operators (add, sub,
 * mul, div, neg) and the composite Scalar overloads (add.Scalar, rsub, ...).
 *
 * The arithmetic itself is not here: it is generated from the ufunc formulas
 * in kernels/ufunc/ (generated/kernels/ufunc_<op>.c, docs/UFUNC.md), whose
 * generated tl_impl_ufunc_<op> runs over the iterator these meta functions
 * build. Checks and messages are PyTorch's (BinaryOps.cpp, UnaryOps.cpp).
 */
#include <string.h>

#include "pointwise_math.h"
#include "tl_error.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/add.h"
#include "ops/div.h"
#include "ops/eq.h"
#include "ops/ge.h"
#include "ops/gt.h"
#include "ops/le.h"
#include "ops/lt.h"
#include "ops/maximum.h"
#include "ops/minimum.h"
#include "ops/mul.h"
#include "ops/ne.h"
#include "ops/neg.h"
#include "ops/rsub.h"
#include "ops/sub.h"
#include "tl_structured.h"
#include "tl_tensor.h"
#include "ufunc_div.h"
#include "ufunc_div_floor.h"
#include "ufunc_div_trunc.h"

/* PyTorch's alpha_check, on the iterator's common dtype */
static int alpha_check(tl_dtype dt, tl_scalar alpha) {
    if (alpha.kind == TL_SCALAR_BOOL && dt != TL_BOOL)
        return tl_set_error(TL_ERR_RUNTIME, "Boolean alpha only supported for Boolean results.");
    if (!tl_dtype_is_floating(dt) && !tl_dtype_is_complex(dt) &&
        (alpha.kind == TL_SCALAR_DOUBLE || alpha.kind == TL_SCALAR_COMPLEX))
        return tl_set_error(TL_ERR_RUNTIME,
                            "For integral input tensors, argument alpha must not be a floating point number.");
    if (!tl_dtype_is_complex(dt) && alpha.kind == TL_SCALAR_COMPLEX)
        return tl_set_error(TL_ERR_RUNTIME,
                            "For non-complex input tensors, argument alpha must not be a complex number.");
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

/* ---- div with rounding_mode (None / "trunc" / "floor") */
static int rounding_kind(const char *mode) {
    if (!mode) return 0;
    if (strcmp(mode, "trunc") == 0) return 1;
    if (strcmp(mode, "floor") == 0) return 2;
    return tl_set_error(TL_ERR_RUNTIME,
                        "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '%s'", mode);
}

int tl_meta_div_Tensor_mode(tl_structured *s, tl_tensor *self, tl_tensor *other, const char *rounding_mode) {
    const int k = rounding_kind(rounding_mode);
    if (k < 0) return -1;
    if (k == 0) return tl_structured_build_binary_float_op(s, self, other);
    return tl_structured_build_borrowing_binary_op(s, self, other);
}

int tl_impl_div_out_mode(tl_structured *s, tl_tensor *self, tl_tensor *other, const char *rounding_mode,
                         tl_tensor *out) {
    (void)self;
    (void)out;
    const int k = rounding_kind(rounding_mode);
    if (k < 0) return -1;
    if (k == 0) return tl_ufunc_div_run(s->iter);
    const tl_dtype dt = tl_iter_common_dtype(s->iter);
    /* ZeroDivisionError before any element is written (PyTorch's check) */
    if (tl_dtype_is_integral(dt, 0) && tl_iter_numel(s->iter) > 0 && tl_pointwise_check_int_divisor(other, dt))
        return -1;
    return k == 1 ? tl_ufunc_div_trunc_run(s->iter) : tl_ufunc_div_floor_run(s->iter);
}

tl_tensor *tl_native_div_Scalar_mode(tl_keyset ks, tl_tensor *self, tl_scalar other, const char *rounding_mode) {
    (void)ks;
    TL_WITH_WRAPPED(other, tl_ops_div_Tensor_mode(self, w_, rounding_mode));
}
tl_tensor *tl_native_div__Scalar_mode(tl_keyset ks, tl_tensor *self, tl_scalar other, const char *rounding_mode) {
    (void)ks;
    TL_WITH_WRAPPED(other, tl_ops_div__Tensor_mode(self, w_, rounding_mode));
}

/* ---- comparisons (eq ne lt le gt ge): bool results; out= / in-place tensors of
 * another dtype get 1/0 through a bool temporary (tl_structured_build_comparison_op) */
int tl_meta_eq_Tensor(tl_structured *s, tl_tensor *self, tl_tensor *other) {
    return tl_structured_build_comparison_op(s, self, other);
}
tl_tensor *tl_native_eq_Scalar(tl_keyset ks, tl_tensor *self, tl_scalar other) {
    (void)ks;
    TL_WITH_WRAPPED(other, tl_ops_eq_Tensor(self, w_));
}
tl_tensor *tl_native_eq__Scalar(tl_keyset ks, tl_tensor *self, tl_scalar other) {
    (void)ks;
    TL_WITH_WRAPPED(other, tl_ops_eq__Tensor(self, w_));
}
int tl_meta_ne_Tensor(tl_structured *s, tl_tensor *self, tl_tensor *other) {
    return tl_structured_build_comparison_op(s, self, other);
}
tl_tensor *tl_native_ne_Scalar(tl_keyset ks, tl_tensor *self, tl_scalar other) {
    (void)ks;
    TL_WITH_WRAPPED(other, tl_ops_ne_Tensor(self, w_));
}
tl_tensor *tl_native_ne__Scalar(tl_keyset ks, tl_tensor *self, tl_scalar other) {
    (void)ks;
    TL_WITH_WRAPPED(other, tl_ops_ne__Tensor(self, w_));
}
int tl_meta_lt_Tensor(tl_structured *s, tl_tensor *self, tl_tensor *other) {
    return tl_structured_build_comparison_op(s, self, other);
}
tl_tensor *tl_native_lt_Scalar(tl_keyset ks, tl_tensor *self, tl_scalar other) {
    (void)ks;
    TL_WITH_WRAPPED(other, tl_ops_lt_Tensor(self, w_));
}
tl_tensor *tl_native_lt__Scalar(tl_keyset ks, tl_tensor *self, tl_scalar other) {
    (void)ks;
    TL_WITH_WRAPPED(other, tl_ops_lt__Tensor(self, w_));
}
int tl_meta_le_Tensor(tl_structured *s, tl_tensor *self, tl_tensor *other) {
    return tl_structured_build_comparison_op(s, self, other);
}
tl_tensor *tl_native_le_Scalar(tl_keyset ks, tl_tensor *self, tl_scalar other) {
    (void)ks;
    TL_WITH_WRAPPED(other, tl_ops_le_Tensor(self, w_));
}
tl_tensor *tl_native_le__Scalar(tl_keyset ks, tl_tensor *self, tl_scalar other) {
    (void)ks;
    TL_WITH_WRAPPED(other, tl_ops_le__Tensor(self, w_));
}
int tl_meta_gt_Tensor(tl_structured *s, tl_tensor *self, tl_tensor *other) {
    return tl_structured_build_comparison_op(s, self, other);
}
tl_tensor *tl_native_gt_Scalar(tl_keyset ks, tl_tensor *self, tl_scalar other) {
    (void)ks;
    TL_WITH_WRAPPED(other, tl_ops_gt_Tensor(self, w_));
}
tl_tensor *tl_native_gt__Scalar(tl_keyset ks, tl_tensor *self, tl_scalar other) {
    (void)ks;
    TL_WITH_WRAPPED(other, tl_ops_gt__Tensor(self, w_));
}
int tl_meta_ge_Tensor(tl_structured *s, tl_tensor *self, tl_tensor *other) {
    return tl_structured_build_comparison_op(s, self, other);
}
tl_tensor *tl_native_ge_Scalar(tl_keyset ks, tl_tensor *self, tl_scalar other) {
    (void)ks;
    TL_WITH_WRAPPED(other, tl_ops_ge_Tensor(self, w_));
}
tl_tensor *tl_native_ge__Scalar(tl_keyset ks, tl_tensor *self, tl_scalar other) {
    (void)ks;
    TL_WITH_WRAPPED(other, tl_ops_ge__Tensor(self, w_));
}

/* ---- maximum / minimum: common dtype (PyTorch's build_borrowing_binary_op) */
int tl_meta_maximum(tl_structured *s, tl_tensor *self, tl_tensor *other) {
    return tl_structured_build_borrowing_binary_op(s, self, other);
}
int tl_meta_minimum(tl_structured *s, tl_tensor *self, tl_tensor *other) {
    return tl_structured_build_borrowing_binary_op(s, self, other);
}
