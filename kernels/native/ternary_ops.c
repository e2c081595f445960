/* Three-input pointwise operators: addcmul, addcdiv, where, lerp, clamp (with
 * clamp_min / clamp_max and the clip aliases).
 *
 * The arithmetic is generated from the formulas in kernels/ufunc/ (addcmul.h,
 * addcdiv.h, where.h, lerp.h, clamp.h; docs/UFUNC.md). Here: the structured
 * meta functions (PyTorch's TensorIterator configs, checks and messages:
 * PointwiseOps.cpp, TensorCompare.cpp, Lerp.cpp), the impls that pick a
 * standalone kernel per call as PyTorch's impls pick a stub, and the
 * composite overloads (where with Scalars, clip).
 */
#include "tl_error.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/addcdiv.h"
#include "ops/addcmul.h"
#include "ops/clamp.h"
#include "ops/clamp_max.h"
#include "ops/clamp_min.h"
#include "ops/clip.h"
#include "ops/lerp.h"
#include "ops/where.h"
#include "tl_structured.h"
#include "tl_tensor.h"
#include "ufunc_clamp_max_scalar.h"
#include "ufunc_clamp_min_scalar.h"
#include "ufunc_clamp_scalar.h"
#include "ufunc_clamp_tensor.h"
#include "ufunc_lerp_scalar.h"
#include "ufunc_lerp_tensor.h"
#include "ufunc_maximum.h"
#include "ufunc_minimum.h"

/* ---- addcmul / addcdiv: build_ternary_op (the loops: generated tl_impl_ufunc_*) */
int tl_meta_addcmul(tl_structured *s, tl_tensor *self, tl_tensor *tensor1, tl_tensor *tensor2, tl_scalar value) {
    (void)value;
    return tl_structured_build_ternary_op(s, self, tensor1, tensor2);
}

int tl_meta_addcdiv(tl_structured *s, tl_tensor *self, tl_tensor *tensor1, tl_tensor *tensor2, tl_scalar value) {
    (void)value;
    if (tl_dtype_is_integral(tl_tensor_dtype(tensor1), 1) && tl_dtype_is_integral(tl_tensor_dtype(tensor2), 1))
        return tl_set_error(TL_ERR_RUNTIME,
                            "Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
                            "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can "
                            "be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
                            "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
                            "addcdiv behavior is just the latter implementation: (input + value * tensor1 / "
                            "tensor2), for all dtypes.");
    return tl_structured_build_ternary_op(s, self, tensor1, tensor2);
}

/* ---- where: bool condition beside two promoted inputs (tl_structured_build_where_op) */
int tl_meta_where_self(tl_structured *s, tl_tensor *condition, tl_tensor *self, tl_tensor *other) {
    return tl_structured_build_where_op(s, condition, self, other);
}

/* the Scalar overloads (CompositeImplicitAutograd in PyTorch): the number as a
 * wrapped 0-dim tensor, so it promotes like a Python scalar */
tl_tensor *tl_native_where_ScalarSelf(tl_keyset ks, tl_tensor *condition, tl_scalar self, tl_tensor *other) {
    (void)ks;
    tl_tensor *w = tl_wrapped_scalar(self);
    if (!w) return NULL;
    tl_tensor *r = tl_ops_where_self(condition, w, other);
    tl_tensor_release(w);
    return r;
}

tl_tensor *tl_native_where_ScalarOther(tl_keyset ks, tl_tensor *condition, tl_tensor *self, tl_scalar other) {
    (void)ks;
    tl_tensor *w = tl_wrapped_scalar(other);
    if (!w) return NULL;
    tl_tensor *r = tl_ops_where_self(condition, self, w);
    tl_tensor_release(w);
    return r;
}

tl_tensor *tl_native_where_Scalar(tl_keyset ks, tl_tensor *condition, tl_scalar self, tl_scalar other) {
    (void)ks;
    tl_tensor *a = tl_wrapped_scalar(self);
    if (!a) return NULL;
    tl_tensor *r = tl_native_where_ScalarOther(ks, condition, a, other);
    tl_tensor_release(a);
    return r;
}

/* ---- lerp: self and end of one dtype (PyTorch's messages); a Tensor weight of
 * that dtype too, unless 0-dim (then converted, like a Scalar weight) */
static int lerp_check(const tl_tensor *self, const tl_tensor *x, const char *name) {
    if (tl_tensor_dtype(x) == tl_tensor_dtype(self)) return 0;
    return tl_set_error(TL_ERR_RUNTIME, "expected dtype %s for `%s` but got dtype %s",
                        tl_dtype_caffe2_name(tl_tensor_dtype(self)), name, tl_dtype_caffe2_name(tl_tensor_dtype(x)));
}

/* check_all_same_dtype of PyTorch's default iterator config, on the out= /
 * in-place tensor */
static int same_dtype_output(const tl_structured *s, tl_dtype want) {
    const tl_tensor *o = s->kind == TL_STRUCTURED_FUNCTIONAL ? NULL : s->outputs[0];
    if (o && tl_tensor_dtype(o) != want)
        return tl_set_error(TL_ERR_RUNTIME, "Found dtype %s but expected %s", tl_dtype_scalar_name(tl_tensor_dtype(o)),
                            tl_dtype_scalar_name(want));
    return 0;
}

int tl_meta_lerp_Scalar(tl_structured *s, tl_tensor *self, tl_tensor *end, tl_scalar weight) {
    (void)weight;
    if (lerp_check(self, end, "end")) return -1;
    return tl_structured_build_binary_op(s, self, end);
}

int tl_impl_lerp_Scalar(tl_structured *s, tl_tensor *self, tl_tensor *end, tl_scalar weight, tl_tensor *out) {
    (void)self, (void)end, (void)out;
    return tl_ufunc_lerp_scalar_run(s->iter, weight);
}

int tl_meta_lerp_Tensor(tl_structured *s, tl_tensor *self, tl_tensor *end, tl_tensor *weight) {
    if (lerp_check(self, end, "end")) return -1;
    if (tl_tensor_ndim(weight) != 0 && lerp_check(self, weight, "weight")) return -1;
    if (same_dtype_output(s, tl_tensor_dtype(self))) return -1;
    const tl_tensor *in[3] = {self, end, weight};
    return tl_structured_build_as(s, TL_ITER_RESIZE_OUTPUTS | TL_ITER_CHECK_OVERLAP, 3, in, tl_tensor_dtype(self));
}

int tl_impl_lerp_Tensor(tl_structured *s, tl_tensor *self, tl_tensor *end, tl_tensor *weight, tl_tensor *out) {
    (void)self, (void)end, (void)weight, (void)out;
    return tl_ufunc_lerp_tensor_run(s->iter);
}

/* ---- clamp with Scalar bounds (clamp, clamp_min, clamp_max): PyTorch's manual
 * promotion: a floating self keeps its dtype; else the bounds take part as
 * Python scalars (int tensor, 0.5 -> float; bool tensor, 2 -> int64), and an
 * in-place call may not change self's dtype. The loop runs in that dtype; an
 * out= tensor must have it (build_unary_op's check_all_same_dtype). */
static int clamp_scalar_meta(tl_structured *s, tl_tensor *self, const tl_scalar *lo, const tl_scalar *hi) {
    const tl_dtype dt = tl_tensor_dtype(self);
    tl_dtype rt = dt;
    if (!tl_dtype_is_floating(dt)) {
        const tl_scalar *b[2] = {lo, hi};
        for (int i = 0; i < 2; i++) {
            if (!b[i]) continue;
            if (b[i]->kind == TL_SCALAR_DOUBLE) rt = tl_get_default_dtype();
            else if (b[i]->kind == TL_SCALAR_INT && rt == TL_BOOL) rt = TL_INT64;
        }
        if (rt != dt && s->kind == TL_STRUCTURED_INPLACE)
            return tl_set_error(TL_ERR_RUNTIME, "result type %s can't be cast to the desired output type %s",
                                tl_dtype_scalar_name(rt), tl_dtype_caffe2_name(dt));
    }
    if (rt == dt) return tl_structured_build_unary_op(s, self);
    if (same_dtype_output(s, rt)) return -1;
    const tl_tensor *in[1] = {self};
    return tl_structured_build_as(s, TL_ITER_UNARY_OP, 1, in, rt);
}

int tl_meta_clamp(tl_structured *s, tl_tensor *self, const tl_scalar *min, const tl_scalar *max) {
    if (!min && !max) return tl_set_error(TL_ERR_RUNTIME, "torch.clamp: At least one of 'min' or 'max' must not be None");
    return clamp_scalar_meta(s, self, min, max);
}

/* a NaN bound needs no special case: the float formulas give NaN for it */
int tl_impl_clamp_out(tl_structured *s, tl_tensor *self, const tl_scalar *min, const tl_scalar *max, tl_tensor *out) {
    (void)self, (void)out;
    if (min && max) return tl_ufunc_clamp_scalar_run(s->iter, *min, *max);
    if (max) return tl_ufunc_clamp_max_scalar_run(s->iter, *max);
    return tl_ufunc_clamp_min_scalar_run(s->iter, *min);
}

int tl_meta_clamp_min(tl_structured *s, tl_tensor *self, tl_scalar min) {
    return clamp_scalar_meta(s, self, &min, NULL);
}

int tl_impl_clamp_min_out(tl_structured *s, tl_tensor *self, tl_scalar min, tl_tensor *out) {
    (void)self, (void)out;
    return tl_ufunc_clamp_min_scalar_run(s->iter, min);
}

int tl_meta_clamp_max(tl_structured *s, tl_tensor *self, tl_scalar max) {
    return clamp_scalar_meta(s, self, NULL, &max);
}

int tl_impl_clamp_max_out(tl_structured *s, tl_tensor *self, tl_scalar max, tl_tensor *out) {
    (void)self, (void)out;
    return tl_ufunc_clamp_max_scalar_run(s->iter, max);
}

/* ---- clamp with tensor bounds: the defined inputs promoted together (PyTorch's
 * CLAMP_CONFIG: safe casting into out=, cast back when its dtype differs); one
 * bound runs maximum / minimum like PyTorch's maximum_stub / minimum_stub */
int tl_meta_clamp_Tensor(tl_structured *s, tl_tensor *self, tl_tensor *min, tl_tensor *max) {
    if (!min && !max) return tl_set_error(TL_ERR_RUNTIME, "torch.clamp: At least one of 'min' or 'max' must not be None");
    const tl_tensor *in[3] = {self, min ? min : max, max};
    return tl_structured_build(s, TL_ITER_BINARY_OP, min && max ? 3 : 2, in, TL_DTYPE_UNDEFINED);
}

int tl_impl_clamp_Tensor_out(tl_structured *s, tl_tensor *self, tl_tensor *min, tl_tensor *max, tl_tensor *out) {
    (void)self, (void)out;
    if (min && max) return tl_ufunc_clamp_tensor_run(s->iter);
    return min ? tl_ufunc_maximum_run(s->iter) : tl_ufunc_minimum_run(s->iter);
}

int tl_meta_clamp_min_Tensor(tl_structured *s, tl_tensor *self, tl_tensor *min) {
    return tl_structured_build_borrowing_binary_op(s, self, min);
}

int tl_impl_clamp_min_Tensor_out(tl_structured *s, tl_tensor *self, tl_tensor *min, tl_tensor *out) {
    (void)self, (void)min, (void)out;
    return tl_ufunc_maximum_run(s->iter);
}

int tl_meta_clamp_max_Tensor(tl_structured *s, tl_tensor *self, tl_tensor *max) {
    return tl_structured_build_borrowing_binary_op(s, self, max);
}

int tl_impl_clamp_max_Tensor_out(tl_structured *s, tl_tensor *self, tl_tensor *max, tl_tensor *out) {
    (void)self, (void)max, (void)out;
    return tl_ufunc_minimum_run(s->iter);
}

/* ---- clip: PyTorch's alias of clamp (CompositeImplicitAutograd) */
tl_tensor *tl_native_clip(tl_keyset ks, tl_tensor *self, const tl_scalar *min, const tl_scalar *max) {
    (void)ks;
    return tl_ops_clamp(self, min, max);
}
tl_tensor *tl_native_clip_Tensor(tl_keyset ks, tl_tensor *self, tl_tensor *min, tl_tensor *max) {
    (void)ks;
    return tl_ops_clamp_Tensor(self, min, max);
}
tl_tensor *tl_native_clip_(tl_keyset ks, tl_tensor *self, const tl_scalar *min, const tl_scalar *max) {
    (void)ks;
    return tl_ops_clamp_(self, min, max);
}
tl_tensor *tl_native_clip__Tensor(tl_keyset ks, tl_tensor *self, tl_tensor *min, tl_tensor *max) {
    (void)ks;
    return tl_ops_clamp__Tensor(self, min, max);
}
tl_tensor *tl_native_clip_out(tl_keyset ks, tl_tensor *self, const tl_scalar *min, const tl_scalar *max,
                              tl_tensor *out) {
    (void)ks;
    return tl_ops_clamp_out(self, min, max, out);
}
tl_tensor *tl_native_clip_Tensor_out(tl_keyset ks, tl_tensor *self, tl_tensor *min, tl_tensor *max, tl_tensor *out) {
    (void)ks;
    return tl_ops_clamp_Tensor_out(self, min, max, out);
}
