/* Logical, bitwise and shift operators:
 * meta functions of the structured ufunc operators (formulas in
 * kernels/ufunc/logical_*.h, bitwise_*.h) and the composite Scalar overloads,
 * which wrap the number as a 0-dim "wrapped number" tensor (it promotes as a
 * Python scalar) and call the Tensor overload, as PyTorch's BinaryOps.cpp does.
 *
 * dtype rules (PyTorch's):
 *  - logical_and/or/xor: comparison_op (inputs promoted to their common dtype,
 *    bool result; an out= / in-place tensor of another dtype gets 1/0);
 *    logical_not: the input as it is, bool result (or 1/0 in the out= dtype);
 *  - bitwise_and/or/xor/not: the common dtype, integers and bool only;
 *    shifts: integers only. Other dtypes are refused with the name of
 *    PyTorch's CPU kernel ("bitwise_and_cpu", "lshift_cpu", ...), before the
 *    loop runs (on Meta tensors nothing is computed, so nothing is refused).
 */
#include "pointwise_math.h"
#include "tl_error.h"
#include "tl_iter.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/bitwise_and.h"
#include "ops/bitwise_left_shift.h"
#include "ops/bitwise_not.h"
#include "ops/bitwise_or.h"
#include "ops/bitwise_right_shift.h"
#include "ops/bitwise_xor.h"
#include "ops/logical_and.h"
#include "ops/logical_not.h"
#include "ops/logical_or.h"
#include "ops/logical_xor.h"
#include "tl_structured.h"
#include "tl_tensor.h"

/* PyTorch's AT_DISPATCH error for a dtype the kernel has no loop for */
static int refuse_dtype(const char *kernel, tl_dtype dt) {
    return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", kernel, tl_dtype_scalar_name(dt));
}

/* integers (and bool when allow_bool) only, checked on the iterator's common dtype */
static int integral_only(tl_structured *s, const char *kernel, int allow_bool) {
    const tl_dtype dt = tl_iter_common_dtype(s->iter);
    if (tl_iter_is_meta(s->iter) || tl_dtype_is_integral(dt, allow_bool)) return 0;
    return refuse_dtype(kernel, dt);
}

/* ---- logical_*: bool results through the comparison configuration */
int tl_meta_logical_and(tl_structured *s, tl_tensor *self, tl_tensor *other) {
    return tl_structured_build_comparison_op(s, self, other);
}
int tl_meta_logical_or(tl_structured *s, tl_tensor *self, tl_tensor *other) {
    return tl_structured_build_comparison_op(s, self, other);
}
int tl_meta_logical_xor(tl_structured *s, tl_tensor *self, tl_tensor *other) {
    return tl_structured_build_comparison_op(s, self, other);
}
int tl_meta_logical_not(tl_structured *s, tl_tensor *self) {
    const tl_tensor *in[1] = {self};
    /* PyTorch: check_all_same_dtype(false); the loop reads self's dtype */
    const uint32_t flags = TL_ITER_PROMOTE_INPUTS | TL_ITER_CAST_TO_OUTPUTS | TL_ITER_RESIZE_OUTPUTS |
                           TL_ITER_CHECK_OVERLAP;
    return tl_structured_build(s, flags, 1, in, TL_BOOL);
}

/* ---- bitwise_*: the common dtype, integers (and bool except for shifts) */
#define TL_BITWISE_META(OP, KERNEL, ALLOW_BOOL)                                          \
    int tl_meta_##OP(tl_structured *s, tl_tensor *self, tl_tensor *other) {             \
        if (tl_structured_build_borrowing_binary_op(s, self, other)) return -1;         \
        return integral_only(s, KERNEL, ALLOW_BOOL);                                    \
    }
TL_BITWISE_META(bitwise_and_Tensor, "bitwise_and_cpu", 1)
TL_BITWISE_META(bitwise_or_Tensor, "bitwise_or_cpu", 1)
TL_BITWISE_META(bitwise_xor_Tensor, "bitwise_xor_cpu", 1)
TL_BITWISE_META(bitwise_left_shift_Tensor, "lshift_cpu", 0)
TL_BITWISE_META(bitwise_right_shift_Tensor, "rshift_cpu", 0)

int tl_meta_bitwise_not(tl_structured *s, tl_tensor *self) {
    if (tl_structured_build_unary_op(s, self)) return -1;
    return integral_only(s, "bitwise_not_cpu", 1);
}

/* the autogen `.Scalar_Tensor_out` kernels: op(wrapped(number), other, out=) */
static tl_tensor *number_first_out(tl_pointwise_binary_out_fn fn, tl_scalar number, tl_tensor *other, tl_tensor *out) {
    tl_tensor *w = tl_wrapped_scalar(number);
    if (!w) return NULL;
    tl_tensor *r = fn(w, other, out);
    tl_tensor_release(w);
    return r;
}

/* ---- Scalar overloads (wrapped numbers: kernels/native/pointwise_math.h):
 * the composite kernels of one operator (PyTorch: bitwise_and(Scalar),
 * bitwise_and_(Scalar), bitwise_and_out(Scalar), bitwise_and(Scalar, Tensor)
 * and its autogen out= form);
 * SCALAR is the overload name of the Tensor-Scalar form */
#define TL_SCALAR_OVERLOADS(OP, SCALAR)                                                                                \
    tl_tensor *tl_native_##OP##_##SCALAR(tl_keyset ks, tl_tensor *self, tl_scalar other) {                             \
        (void)ks;                                                                                                      \
        return tl_pointwise_with_number(tl_ops_##OP##_Tensor, self, other, 0);                                         \
    }                                                                                                                  \
    tl_tensor *tl_native_##OP##__##SCALAR(tl_keyset ks, tl_tensor *self, tl_scalar other) {                            \
        (void)ks;                                                                                                      \
        return tl_pointwise_with_number(tl_ops_##OP##__Tensor, self, other, 0);                                        \
    }                                                                                                                  \
    tl_tensor *tl_native_##OP##_##SCALAR##_out(tl_keyset ks, tl_tensor *self, tl_scalar other, tl_tensor *out) {       \
        (void)ks;                                                                                                      \
        return tl_pointwise_with_number_out(tl_ops_##OP##_Tensor_out, self, other, out);                               \
    }                                                                                                                  \
    tl_tensor *tl_native_##OP##_Scalar_Tensor(tl_keyset ks, tl_scalar self, tl_tensor *other) {                        \
        (void)ks;                                                                                                      \
        return tl_pointwise_with_number(tl_ops_##OP##_Tensor, other, self, 1);                                         \
    }                                                                                                                  \
    tl_tensor *tl_native_##OP##_Scalar_Tensor_out(tl_keyset ks, tl_scalar self, tl_tensor *other, tl_tensor *out) {    \
        (void)ks;                                                                                                      \
        return number_first_out(tl_ops_##OP##_Tensor_out, self, other, out);                                           \
    }

TL_SCALAR_OVERLOADS(bitwise_and, Scalar)
TL_SCALAR_OVERLOADS(bitwise_or, Scalar)
TL_SCALAR_OVERLOADS(bitwise_xor, Scalar)
TL_SCALAR_OVERLOADS(bitwise_left_shift, Tensor_Scalar)
TL_SCALAR_OVERLOADS(bitwise_right_shift, Tensor_Scalar)
