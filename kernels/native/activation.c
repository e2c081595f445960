/* Activations. relu / relu_: PyTorch has no relu.out, so relu is not a structured ufunc
 * operator; these kernels build the iterator themselves and run the loops
 * generated from the formula kernels/ufunc/relu.h (generated/kernels/ufunc_relu.c).
 * Registered for CPU and Meta (the iterator computes metadata only on Meta). */
#include <stdint.h>
#include <string.h>

#include "tl_error.h"
#include "tl_iter.h"
#include "tl_ops.h"
#include "tl_structured.h"
#include "tl_tensor.h"
#include "ufunc_gelu.h"
#include "ufunc_gelu_backward.h"
#include "ufunc_gelu_backward_tanh.h"
#include "ufunc_gelu_tanh.h"
#include "ufunc_hardswish_backward.h"
#include "ufunc_log_sigmoid.h"
#include "ufunc_log_sigmoid_backward.h"
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

/* ---- activations: leaky_relu, elu, gelu, mish, softplus, hardtanh
 * (+ relu6) and their backward operators. Formulas in kernels/ufunc/<op>.h;
 * these are the meta functions (PyTorch's TORCH_META_FUNC: build_unary_op for
 * the forward ops, build_borrowing_binary_op(grad, self) for the backward
 * ones), PyTorch's argument checks, gelu's mode switch and the composites. */

/* floating loops only: PyTorch's AT_DISPATCH error, named after its CPU kernel
 * (checked on real data only: Meta tensors compute nothing) */
static int floating_only(tl_structured *s, const char *kernel) {
    const tl_dtype dt = tl_iter_common_dtype(s->iter);
    if (tl_iter_is_meta(s->iter) || tl_dtype_is_floating(dt)) return 0;
    return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", kernel, tl_dtype_scalar_name(dt));
}

static int unary_floating(tl_structured *s, tl_tensor *self, const char *kernel) {
    if (tl_structured_build_unary_op(s, self)) return -1;
    return floating_only(s, kernel);
}

static int backward_floating(tl_structured *s, tl_tensor *grad_output, tl_tensor *self, const char *kernel) {
    if (tl_structured_build_borrowing_binary_op(s, grad_output, self)) return -1;
    return floating_only(s, kernel);
}

static double scalar_to_double(tl_scalar v) { return v.kind == TL_SCALAR_DOUBLE ? v.d : (double)v.i; }

int tl_meta_leaky_relu(tl_structured *s, tl_tensor *self, tl_scalar negative_slope) {
    (void)negative_slope;
    return unary_floating(s, self, "leaky_relu_cpu");
}

int tl_meta_leaky_relu_backward(tl_structured *s, tl_tensor *grad_output, tl_tensor *self, tl_scalar negative_slope,
                                bool self_is_result) {
    if (self_is_result && scalar_to_double(negative_slope) < 0)
        return tl_set_error(TL_ERR_RUNTIME,
                            "In-place leakyReLu backward calculation is triggered with a negative slope which is not "
                            "supported. This is caused by calling in-place forward function with a negative slope, "
                            "please call out-of-place version instead. File an issue at "
                            "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu "
                            "backward calculation with negative slope");
    return backward_floating(s, grad_output, self, "leaky_relu_backward_cpu");
}

int tl_meta_elu(tl_structured *s, tl_tensor *self, tl_scalar alpha, tl_scalar scale, tl_scalar input_scale) {
    (void)alpha, (void)scale, (void)input_scale;
    return unary_floating(s, self, "elu_cpu");
}

int tl_meta_elu_backward(tl_structured *s, tl_tensor *grad_output, tl_scalar alpha, tl_scalar scale,
                         tl_scalar input_scale, bool is_result, tl_tensor *self_or_result) {
    (void)scale, (void)input_scale;
    if (is_result && scalar_to_double(alpha) < 0)
        return tl_set_error(TL_ERR_RUNTIME,
                            "In-place elu backward calculation is triggered with a negative slope which is not "
                            "supported. This is caused by calling in-place forward function with a negative slope, "
                            "please call out-of-place version instead.");
    return backward_floating(s, grad_output, self_or_result, "elu_backward_cpu");
}

/* gelu's approximate: 0 'none', 1 'tanh' (PyTorch's get_gelutype_enum) */
static int gelu_mode(const char *approximate) {
    if (approximate && strcmp(approximate, "none") == 0) return 0;
    if (approximate && strcmp(approximate, "tanh") == 0) return 1;
    return tl_set_error(TL_ERR_RUNTIME, "approximate argument must be either none or tanh.");
}

int tl_meta_gelu(tl_structured *s, tl_tensor *self, const char *approximate) {
    if (gelu_mode(approximate) < 0) return -1;
    return unary_floating(s, self, "GeluKernelImpl");
}

int tl_impl_gelu_out_cpu(tl_structured *s, tl_tensor *self, const char *approximate, tl_tensor *out) {
    (void)self, (void)out;
    const int mode = gelu_mode(approximate);
    if (mode < 0) return -1;
    return mode ? tl_ufunc_gelu_tanh_run(s->iter) : tl_ufunc_gelu_run(s->iter);
}

int tl_meta_gelu_backward(tl_structured *s, tl_tensor *grad_output, tl_tensor *self, const char *approximate) {
    if (gelu_mode(approximate) < 0) return -1;
    return backward_floating(s, grad_output, self, "GeluBackwardKernelImpl");
}

int tl_impl_gelu_backward_out_cpu(tl_structured *s, tl_tensor *grad_output, tl_tensor *self, const char *approximate,
                                  tl_tensor *grad_input) {
    (void)grad_output, (void)self, (void)grad_input;
    const int mode = gelu_mode(approximate);
    if (mode < 0) return -1;
    return mode ? tl_ufunc_gelu_backward_tanh_run(s->iter) : tl_ufunc_gelu_backward_run(s->iter);
}

int tl_meta_mish(tl_structured *s, tl_tensor *self) { return unary_floating(s, self, "mish_cpu"); }

int tl_meta_softplus(tl_structured *s, tl_tensor *self, tl_scalar beta, tl_scalar threshold) {
    (void)beta, (void)threshold;
    return unary_floating(s, self, "softplus_cpu");
}

int tl_meta_softplus_backward(tl_structured *s, tl_tensor *grad_output, tl_tensor *self, tl_scalar beta,
                              tl_scalar threshold) {
    (void)beta, (void)threshold;
    return backward_floating(s, grad_output, self, "softplus_backward_cpu");
}

/* silu_backward: PyTorch's build_borrowing_binary_op(grad_input, grad_output, self)
 * (the fused backward of silu, kernels/ufunc/silu_backward.h) */
int tl_meta_silu_backward(tl_structured *s, tl_tensor *grad_output, tl_tensor *self) {
    return backward_floating(s, grad_output, self, "silu_backward_cpu");
}

/* c10's checked conversion of an integer bound: first to int64 (hardtanh's
 * toLong), then to the tensor's type (clamp's); PyTorch's C type names */
static int bound_overflows(tl_scalar v, int64_t *out) {
    if (v.kind == TL_SCALAR_DOUBLE) {
        if (!(v.d >= -9223372036854775808.0 && v.d < 9223372036854775808.0)) return 1;
        *out = (int64_t)v.d;
    } else {
        *out = v.i;
    }
    return 0;
}

static int integer_bounds(tl_dtype dt, tl_scalar lo, tl_scalar hi) {
    int64_t l, h;
    if (bound_overflows(lo, &l) || bound_overflows(hi, &h))
        return tl_set_error(TL_ERR_RUNTIME, "value cannot be converted to type int64_t without overflow");
    if (dt == TL_UINT8 && (l < 0 || h < 0))
        return tl_set_error(TL_ERR_RUNTIME, "cannot do hardtanh on an unsigned type with negative limits");
    static const struct { tl_dtype dt; int64_t min, max; const char *name; } R[] = {
        {TL_UINT8, 0, 255, "uint8_t"}, {TL_INT8, -128, 127, "int8_t"},
        {TL_INT16, -32768, 32767, "int16_t"}, {TL_INT32, INT32_MIN, INT32_MAX, "int"}};
    for (size_t i = 0; i < sizeof R / sizeof R[0]; i++)
        if (R[i].dt == dt && (l < R[i].min || l > R[i].max || h < R[i].min || h > R[i].max))
            return tl_set_error(TL_ERR_RUNTIME, "value cannot be converted to type %s without overflow", R[i].name);
    return 0;
}

/* hardtanh: PyTorch's hardtanh_out checks, then clamp's unary_op config */
int tl_meta_hardtanh(tl_structured *s, tl_tensor *self, tl_scalar min_val, tl_scalar max_val) {
    const tl_dtype dt = tl_tensor_dtype(self);
    if (dt == TL_BOOL) return tl_set_error(TL_ERR_RUNTIME, "Bool inputs not supported for hardtanh");
    if (tl_dtype_is_integral(dt, 0) && integer_bounds(dt, min_val, max_val)) return -1;
    return tl_structured_build_unary_op(s, self);
}

int tl_meta_hardtanh_backward(tl_structured *s, tl_tensor *grad_output, tl_tensor *self, tl_scalar min_val,
                              tl_scalar max_val) {
    (void)min_val, (void)max_val;
    return backward_floating(s, grad_output, self, "hardshrink_backward_cpu");
}

/* relu6 = hardtanh(x, 0, 6) (CompositeImplicitAutograd, as PyTorch) */
tl_tensor *tl_native_relu6(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    return tl_ops_hardtanh(self, tl_scalar_from_int(0), tl_scalar_from_int(6));
}

tl_tensor *tl_native_relu6_(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    return tl_ops_hardtanh_(self, tl_scalar_from_int(0), tl_scalar_from_int(6));
}

/* ---- hardswish, hardsigmoid, softshrink, hardshrink, threshold, selu,
 * celu, log_sigmoid (PyTorch's meta functions and composites) */

int tl_meta_hardswish(tl_structured *s, tl_tensor *self) { return unary_floating(s, self, "hardswish_cpu"); }

int tl_meta_hardsigmoid(tl_structured *s, tl_tensor *self) { return unary_floating(s, self, "hardsigmoid_cpu"); }

int tl_meta_hardsigmoid_backward(tl_structured *s, tl_tensor *grad_output, tl_tensor *self) {
    return backward_floating(s, grad_output, self, "hardsigmoid_backward");
}

/* softshrink: PyTorch's softshrink_check (lambd within [0, the input
 * dtype's largest finite value]) before the iterator */
int tl_meta_softshrink(tl_structured *s, tl_tensor *self, tl_scalar lambd) {
    const tl_dtype dt = tl_tensor_dtype(self);
    const char *name = tl_dtype_scalar_name(dt);
    if (!tl_dtype_is_floating(dt))
        return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"softshrink_check\" not implemented for '%s'", name);
    const double hi = dt == TL_FLOAT64 ? 1.7976931348623157e308
                      : dt == TL_FLOAT16 ? 65504.0
                      : dt == TL_BFLOAT16 ? 3.3895313892515355e38 : 3.4028234663852886e38;
    const double l = scalar_to_double(lambd);
    if (!(l >= 0 && l <= hi))
        return tl_set_error(TL_ERR_RUNTIME, "lambda must be in range [0, %g] for input dtype %s, but found %g", hi,
                            name, l);
    return unary_floating(s, self, "softshrink_cpu");
}

int tl_meta_softshrink_backward(tl_structured *s, tl_tensor *grad_output, tl_tensor *self, tl_scalar lambd) {
    (void)lambd;
    return backward_floating(s, grad_output, self, "shrink_backward_cpu");
}

int tl_meta_hardshrink(tl_structured *s, tl_tensor *self, tl_scalar lambd) {
    (void)lambd;
    return unary_floating(s, self, "hardshrink_cpu");
}

int tl_meta_hardshrink_backward(tl_structured *s, tl_tensor *grad_out, tl_tensor *self, tl_scalar lambd) {
    (void)lambd;
    return backward_floating(s, grad_out, self, "shrink_backward_cpu");
}

/* threshold: every dtype but bool (the formula's table; PyTorch's
 * AT_DISPATCH_ALL_TYPES_AND2 names threshold_cpu) */
int tl_meta_threshold(tl_structured *s, tl_tensor *self, tl_scalar threshold, tl_scalar value) {
    (void)threshold, (void)value;
    return tl_structured_build_unary_op(s, self);
}

/* a standalone formula over an iterator of (out, a[, b]): the backward
 * operators PyTorch declares without out= (hardswish_backward) or with a
 * plain CPU kernel (log_sigmoid_*) */
static tl_tensor *iter_run(tl_tensor *a, tl_tensor *b, int (*run)(tl_iter *)) {
    tl_iter *it = tl_iter_new(b ? TL_ITER_BINARY_OP : TL_ITER_UNARY_OP);
    if (!it) return NULL;
    tl_tensor *result = NULL;
    if (tl_iter_add_output(it, NULL) == 0 && tl_iter_add_input(it, a) == 0 && (!b || tl_iter_add_input(it, b) == 0) &&
        tl_iter_build(it) == 0 && run(it) == 0)
        result = tl_iter_output(it, 0);
    tl_iter_free(it);
    return result;
}

tl_tensor *tl_native_hardswish_backward(tl_keyset ks, tl_tensor *grad_output, tl_tensor *self) {
    (void)ks;
    return iter_run(grad_output, self, tl_ufunc_hardswish_backward_run);
}

/* selu = elu(x, alpha, scale) with PyTorch's constants (CompositeImplicitAutograd) */
static const double SELU_ALPHA = 1.6732632423543772848170429916717, SELU_SCALE = 1.0507009873554804934193349852946;

tl_tensor *tl_native_selu(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    return tl_ops_elu(self, tl_scalar_from_double(SELU_ALPHA), tl_scalar_from_double(SELU_SCALE),
                      tl_scalar_from_int(1));
}

tl_tensor *tl_native_selu_(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    return tl_ops_elu_(self, tl_scalar_from_double(SELU_ALPHA), tl_scalar_from_double(SELU_SCALE),
                       tl_scalar_from_int(1));
}

/* celu = elu(x, alpha, 1, 1 / alpha) (CompositeExplicitAutograd: CeluBackward0) */
static int celu_inv_alpha(tl_scalar alpha, tl_scalar *inv) {
    const double a = scalar_to_double(alpha);
    if (a == 0) return tl_set_error(TL_ERR_RUNTIME, "ZeroDivisionError: alpha cannot be 0 for CELU");
    *inv = tl_scalar_from_double(1.0 / a);
    return 0;
}

tl_tensor *tl_native_celu(tl_keyset ks, tl_tensor *self, tl_scalar alpha) {
    (void)ks;
    tl_scalar inv;
    if (celu_inv_alpha(alpha, &inv)) return NULL;
    return tl_ops_elu(self, alpha, tl_scalar_from_int(1), inv);
}

tl_tensor *tl_native_celu_(tl_keyset ks, tl_tensor *self, tl_scalar alpha) {
    (void)ks;
    tl_scalar inv;
    if (celu_inv_alpha(alpha, &inv)) return NULL;
    return tl_ops_elu_(self, alpha, tl_scalar_from_int(1), inv);
}

/* log_sigmoid_forward: (output, buffer); the CPU buffer is empty, as
 * PyTorch's (only its CUDA kernel stores anything there) */
int tl_native_log_sigmoid_forward_cpu(tl_keyset ks, tl_tensor *self, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    const int64_t zero[1] = {0};
    tl_tensor *out = iter_run(self, NULL, tl_ufunc_log_sigmoid_run);
    if (!out) return -1;
    tl_tensor *buf = tl_empty(1, zero, tl_tensor_dtype(self), tl_tensor_device(self));
    if (!buf) {
        tl_tensor_release(out);
        return -1;
    }
    *ret0 = out;
    *ret1 = buf;
    return 0;
}

tl_tensor *tl_native_log_sigmoid_backward_cpu(tl_keyset ks, tl_tensor *grad_output, tl_tensor *self,
                                              tl_tensor *buffer) {
    (void)ks, (void)buffer;
    return iter_run(grad_output, self, tl_ufunc_log_sigmoid_backward_run);
}

/* log_sigmoid = log_sigmoid_forward(self)[0] (CompositeImplicitAutograd) */
tl_tensor *tl_native_log_sigmoid(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    tl_tensor *out = NULL, *buf = NULL;
    if (tl_ops_log_sigmoid_forward(self, &out, &buf)) return NULL;
    tl_tensor_release(buf);
    return out;
}
