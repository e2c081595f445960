/* Activations. relu / relu_: PyTorch has no relu.out, so relu is not a structured ufunc
 * operator; these kernels build the iterator themselves and run the loops
 * generated from the formula kernels/ufunc/relu.h (generated/kernels/ufunc_relu.c).
 * Registered for CPU and Meta (the iterator computes metadata only on Meta). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "random_draws.h"
#include "tl_error.h"
#include "tl_internal.h"
#include "tl_iter.h"
#include "tl_runtime.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/_prelu_kernel.h"
#include "ops/_prelu_kernel_backward.h"
#include "ops/cat.h"
#include "ops/celu.h"
#include "ops/elu.h"
#include "ops/elu_backward.h"
#include "ops/gelu.h"
#include "ops/gelu_backward.h"
#include "ops/glu.h"
#include "ops/glu_backward.h"
#include "ops/hardshrink.h"
#include "ops/hardshrink_backward.h"
#include "ops/hardsigmoid.h"
#include "ops/hardsigmoid_backward.h"
#include "ops/hardswish.h"
#include "ops/hardswish_backward.h"
#include "ops/hardtanh.h"
#include "ops/hardtanh_backward.h"
#include "ops/leaky_relu.h"
#include "ops/leaky_relu_backward.h"
#include "ops/log_sigmoid.h"
#include "ops/log_sigmoid_backward.h"
#include "ops/log_sigmoid_forward.h"
#include "ops/mish.h"
#include "ops/mul.h"
#include "ops/narrow.h"
#include "ops/prelu.h"
#include "ops/relu.h"
#include "ops/relu6.h"
#include "ops/reshape.h"
#include "ops/rrelu.h"
#include "ops/rrelu_with_noise.h"
#include "ops/rrelu_with_noise_backward.h"
#include "ops/rsub.h"
#include "ops/selu.h"
#include "ops/sigmoid.h"
#include "ops/silu_backward.h"
#include "ops/softplus.h"
#include "ops/softplus_backward.h"
#include "ops/softshrink.h"
#include "ops/softshrink_backward.h"
#include "ops/threshold.h"
#include "tl_structured.h"
#include "tl_tensor.h"
#include "ufunc_gelu.h"
#include "ufunc_gelu_backward.h"
#include "ufunc_gelu_backward_tanh.h"
#include "ufunc_gelu_tanh.h"
#include "ufunc_glu.h"
#include "ufunc_hardswish_backward.h"
#include "ufunc_log_sigmoid.h"
#include "ufunc_log_sigmoid_backward.h"
#include "ufunc_prelu.h"
#include "ufunc_prelu_backward_input.h"
#include "ufunc_prelu_backward_weight.h"
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

/* a standalone formula over an iterator of (out, a[, b[, c]]): the operators
 * PyTorch declares without out= (hardswish_backward, glu, _prelu_kernel) or
 * with a plain CPU kernel (log_sigmoid_*) */
static tl_tensor *iter_run3(tl_tensor *a, tl_tensor *b, tl_tensor *c, int (*run)(tl_iter *)) {
    tl_iter *it = tl_iter_new(b ? TL_ITER_BINARY_OP : TL_ITER_UNARY_OP);
    if (!it) return NULL;
    tl_tensor *result = NULL;
    if (tl_iter_add_output(it, NULL) == 0 && tl_iter_add_input(it, a) == 0 && (!b || tl_iter_add_input(it, b) == 0) &&
        (!c || tl_iter_add_input(it, c) == 0) && tl_iter_build(it) == 0 && run(it) == 0)
        result = tl_iter_output(it, 0);
    tl_iter_free(it);
    return result;
}

static tl_tensor *iter_run(tl_tensor *a, tl_tensor *b, int (*run)(tl_iter *)) { return iter_run3(a, b, NULL, run); }

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
    tl_tensor *buf = tl_empty(1, zero, tl_tensor_dtype(self), tl__device_of(self));
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

/* ---- glu (PyTorch's glu meta checks; a * sigmoid(b) over the halves) */

static int glu_halves(tl_tensor *self, int64_t dim, int64_t *wrap, tl_tensor **a, tl_tensor **b) {
    const int64_t nd = tl_tensor_ndim(self);
    if (nd == 0) return tl_set_error(TL_ERR_RUNTIME, "glu does not support scalars because halving size must be even");
    const int64_t w = tl__wrap_dim(dim, nd, 0);
    if (w < 0) return -1;
    const int64_t n = tl_tensor_size(self, w);
    if (n % 2)
        return tl_set_error(TL_ERR_RUNTIME, "Halving dimension must be even, but dimension %lld is size %lld",
                            (long long)w, (long long)n);
    *wrap = w;
    if (!(*a = tl_ops_narrow(self, w, 0, n / 2))) return -1;
    if (!(*b = tl_ops_narrow(self, w, n / 2, n / 2))) {
        tl_tensor_release(*a);
        return -1;
    }
    return 0;
}

tl_tensor *tl_native_glu_cpu(tl_keyset ks, tl_tensor *self, int64_t dim) {
    (void)ks;
    int64_t w;
    tl_tensor *a, *b;
    if (glu_halves(self, dim, &w, &a, &b)) return NULL;
    tl_tensor *r = iter_run(a, b, tl_ufunc_glu_run);
    tl_tensor_release(a);
    tl_tensor_release(b);
    return r;
}

/* PyTorch's glu_backward: [grad * s, grad * s * (1 - s) * a] along dim, s = sigmoid(b) */
tl_tensor *tl_native_glu_backward_cpu(tl_keyset ks, tl_tensor *grad_output, tl_tensor *self, int64_t dim) {
    (void)ks;
    int64_t w;
    tl_tensor *a, *b, *sb = NULL, *g1 = NULL, *one_m = NULL, *t = NULL, *g2 = NULL, *r = NULL;
    if (glu_halves(self, dim, &w, &a, &b)) return NULL;
    if ((sb = tl_ops_sigmoid(b)) && (g1 = tl_ops_mul_Tensor(grad_output, sb)) &&
        (one_m = tl_ops_rsub_Scalar(sb, tl_scalar_from_int(1), tl_scalar_from_int(1))) &&
        (t = tl_ops_mul_Tensor(g1, one_m)) && (g2 = tl_ops_mul_Tensor(t, a))) {
        tl_tensor *parts[2] = {g1, g2};
        r = tl_ops_cat(parts, 2, w);
    }
    tl_tensor_release(a);
    tl_tensor_release(b);
    tl_tensor_release(sb);
    tl_tensor_release(g1);
    tl_tensor_release(one_m);
    tl_tensor_release(t);
    tl_tensor_release(g2);
    return r;
}

/* ---- prelu: PyTorch's checks and weight reshape (CompositeImplicitAutograd)
 * over _prelu_kernel (x > 0 ? x : w * x, the weight broadcast) */
tl_tensor *tl_native_prelu(tl_keyset ks, tl_tensor *self, tl_tensor *weight) {
    (void)ks;
    const int64_t nd = tl_tensor_ndim(self);
    if (tl_tensor_dtype(self) != tl_tensor_dtype(weight)) {
        tl_set_error(TL_ERR_RUNTIME, "prelu: Type promoting not supported. Got %s and %s",
                     tl_dtype_scalar_name(tl_tensor_dtype(self)), tl_dtype_scalar_name(tl_tensor_dtype(weight)));
        return NULL;
    }
    const int64_t wn = tl_tensor_numel(weight);
    if (wn != 1) {
        if (nd == 0) {
            tl_set_error(TL_ERR_RUNTIME, "Not allow zero-dim input tensor.");
            return NULL;
        }
        const int64_t channels = nd > 1 ? tl_tensor_size(self, 1) : 1;
        if (channels != wn) {
            tl_set_error(TL_ERR_RUNTIME, "Mismatch of parameter numbers and input channel size. Found parameter "
                         "numbers = %lld and channel size = %lld.", (long long)wn, (long long)channels);
            return NULL;
        }
    }
    if (tl_tensor_ndim(weight) > 1) {
        tl_set_error(TL_ERR_RUNTIME, "prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = %lld",
                     (long long)tl_tensor_ndim(weight));
        return NULL;
    }
    if (nd == tl_tensor_ndim(weight)) return tl_ops__prelu_kernel(self, weight);
    int64_t shape[64];
    if (nd > 64) {
        tl_set_error(TL_ERR_RUNTIME, "prelu: too many dimensions");
        return NULL;
    }
    for (int64_t i = 0; i < nd; i++) shape[i] = 1;
    if (nd > 1) shape[1] = wn;
    tl_tensor *w = tl_ops_reshape(weight, shape, nd);
    if (!w) return NULL;
    tl_tensor *r = tl_ops__prelu_kernel(self, w);
    tl_tensor_release(w);
    return r;
}

tl_tensor *tl_native__prelu_kernel(tl_keyset ks, tl_tensor *self, tl_tensor *weight) {
    (void)ks;
    return iter_run(self, weight, tl_ufunc_prelu_run);
}

/* (grad_input, grad_weight), both of the broadcast shape as PyTorch's
 * (autograd sums grad_weight to the weight's shape) */
int tl_native__prelu_kernel_backward(tl_keyset ks, tl_tensor *grad_output, tl_tensor *self, tl_tensor *weight,
                                     tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    tl_tensor *gi = iter_run3(self, weight, grad_output, tl_ufunc_prelu_backward_input_run);
    if (!gi) return -1;
    tl_tensor *gw = iter_run3(self, weight, grad_output, tl_ufunc_prelu_backward_weight_run);
    if (!gw) {
        tl_tensor_release(gi);
        return -1;
    }
    *ret0 = gi;
    *ret1 = gw;
    return 0;
}

/* ---- rrelu: PyTorch's rrelu_with_noise. Training: each element x <= 0 is
 * scaled by a slope r drawn from U(lower, upper) (the generator, or the
 * default one), which `noise` records (1 elsewhere); eval: leaky_relu with
 * slope (lower + upper) / 2. */

static double rrelu_eval_slope(tl_scalar lower, tl_scalar upper) {
    return (scalar_to_double(lower) + scalar_to_double(upper)) / 2;
}

static bool same_shape(tl_tensor *a, tl_tensor *b) {
    if (tl_tensor_ndim(a) != tl_tensor_ndim(b)) return false;
    for (int64_t i = 0; i < tl_tensor_ndim(a); i++)
        if (tl_tensor_size(a, i) != tl_tensor_size(b, i)) return false;
    return true;
}

/* "[2, 3]" */
static void shape_str(char *buf, size_t n, tl_tensor *t) {
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int64_t i = 0; i < tl_tensor_ndim(t) && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, i ? ", %lld" : "%lld", (long long)tl_tensor_size(t, i));
    if (k < n) snprintf(buf + k, n - k, "]");
}

/* the training output (a new tensor of self's shape and dtype); noise (of
 * self's shape) filled with the slopes */
static tl_tensor *rrelu_train(tl_tensor *self, tl_tensor *noise, tl_scalar lower, tl_scalar upper,
                              tl_generator *generator) {
    const tl_dtype dt = tl_tensor_dtype(self);
    if (!tl_dtype_is_floating(dt)) {
        tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"rrelu_with_noise_out_cpu\" not implemented for '%s'",
                     tl_dtype_scalar_name(dt));
        return NULL;
    }
    const int64_t nd = tl_tensor_ndim(self), *sz = tl_tensor_sizes(self);
    if (!same_shape(self, noise)) {
        char a[256], b[256];
        shape_str(a, sizeof a, self);
        shape_str(b, sizeof b, noise);
        tl_set_error(TL_ERR_RUNTIME, "noise tensor shape must match self tensor shape. Got self.shape = %s "
                     "noise.shape = %s", a, b);
        return NULL;
    }
    tl_generator *g = generator ? generator : tl_default_generator();
    const double lo = scalar_to_double(lower), hi = scalar_to_double(upper);
    tl_tensor *x = tl_empty(nd, sz, TL_FLOAT64, TL_CPU), *o = tl_empty(nd, sz, TL_FLOAT64, TL_CPU),
              *r = tl_empty(nd, sz, TL_FLOAT64, TL_CPU), *out = NULL;
    if (!x || !o || !r || tl_copy_(x, self)) goto done;
    {
        const double *xv = tl_tensor_data_ptr(x);
        double *ov = tl_tensor_data_ptr(o), *rv = tl_tensor_data_ptr(r);
        /* PyTorch's loop: uniform_real_distribution<double>(lower, upper), rounded to the opmath type */
        const bool dbl = tl_tensor_dtype(self) == TL_FLOAT64;
        tl_generator_lock(g);
        for (int64_t i = 0, n = tl_tensor_numel(x); i < n; i++) {
            double s = 1.0;
            if (xv[i] <= 0) {
                s = tl_draw_uniform_f64(g, lo, hi);
                if (!dbl) s = (float)s;
            }
            rv[i] = s;
            ov[i] = xv[i] <= 0 ? xv[i] * s : xv[i];
        }
        tl_generator_unlock(g);
    }
    /* noise is written through its data as PyTorch's kernel writes it: its
     * version is left alone (autograd saved it before the call); a strided
     * noise takes tl_copy_ */
    if (tl_tensor_is_contiguous(noise)) {
        const double *rv = tl_tensor_data_ptr(r);
        char *nv = tl_tensor_data_ptr(noise);
        const tl_dtype ndt = tl_tensor_dtype(noise);
        const int64_t isz = tl_dtype_itemsize(ndt);
        for (int64_t i = 0, n = tl_tensor_numel(r); i < n; i++)
            tl_scalar_store(tl_scalar_from_double(rv[i]), ndt, nv + i * isz);
    } else if (tl_copy_(noise, r)) {
        goto done;
    }
    out = tl_to_dtype(o, dt, 0);
done:
    tl_tensor_release(x);
    tl_tensor_release(o);
    tl_tensor_release(r);
    return out;
}

tl_tensor *tl_native_rrelu_with_noise_cpu(tl_keyset ks, tl_tensor *self, tl_tensor *noise, tl_scalar lower,
                                          tl_scalar upper, bool training, tl_generator *generator) {
    (void)ks;
    if (!training) return tl_ops_leaky_relu(self, tl_scalar_from_double(rrelu_eval_slope(lower, upper)));
    return rrelu_train(self, noise, lower, upper, generator);
}

tl_tensor *tl_native_rrelu_with_noise_cpu_(tl_keyset ks, tl_tensor *self, tl_tensor *noise, tl_scalar lower,
                                           tl_scalar upper, bool training, tl_generator *generator) {
    (void)ks;
    if (!training) return tl_ops_leaky_relu_(self, tl_scalar_from_double(rrelu_eval_slope(lower, upper)));
    tl_tensor *o = rrelu_train(self, noise, lower, upper, generator);
    if (!o) return NULL;
    const int rc = tl_copy_(self, o);
    tl_tensor_release(o);
    if (rc) return NULL;
    tl_tensor_bump_version(self);
    tl_tensor_retain(self);
    return self;
}

/* noise * grad while training, leaky_relu_backward otherwise (PyTorch's
 * CompositeExplicitAutograd kernel) */
tl_tensor *tl_native_rrelu_with_noise_backward(tl_keyset ks, tl_tensor *grad_output, tl_tensor *self,
                                               tl_tensor *noise, tl_scalar lower, tl_scalar upper, bool training,
                                               bool self_is_result) {
    (void)ks;
    if (training) return tl_ops_mul_Tensor(noise, grad_output);
    return tl_ops_leaky_relu_backward(grad_output, self, tl_scalar_from_double(rrelu_eval_slope(lower, upper)),
                                      self_is_result);
}

/* rrelu / rrelu_ (CompositeImplicitAutograd): rrelu_with_noise with a fresh noise */
static int rrelu_bounds(tl_scalar lower, tl_scalar upper) {
    if (scalar_to_double(lower) > scalar_to_double(upper))
        return tl_set_error(TL_ERR_RUNTIME, "Lower bound should be less than or equal to the upper bound");
    return 0;
}

tl_tensor *tl_native_rrelu(tl_keyset ks, tl_tensor *self, tl_scalar lower, tl_scalar upper, bool training,
                           tl_generator *generator) {
    (void)ks;
    if (rrelu_bounds(lower, upper)) return NULL;
    tl_tensor *noise = tl_empty_like(self);
    if (!noise) return NULL;
    tl_tensor *r = tl_ops_rrelu_with_noise(self, noise, lower, upper, training, generator);
    tl_tensor_release(noise);
    return r;
}

tl_tensor *tl_native_rrelu_(tl_keyset ks, tl_tensor *self, tl_scalar lower, tl_scalar upper, bool training,
                            tl_generator *generator) {
    (void)ks;
    if (rrelu_bounds(lower, upper)) return NULL;
    tl_tensor *noise = tl_empty_like(self);
    if (!noise) return NULL;
    tl_tensor *r = tl_ops_rrelu_with_noise_(self, noise, lower, upper, training, generator);
    tl_tensor_release(noise);
    return r;
}
