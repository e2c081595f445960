/* Pointwise math: pow (Tensor_Tensor / Tensor_Scalar /
 * Scalar), floor_divide, remainder, fmod, atan2, asin, acos, atan, sinh, cosh,
 * round (+ decimals), logit (+ logit_backward), nan_to_num, isnan, isinf,
 * isfinite.
 *
 * The arithmetic is generated from the formulas in kernels/ufunc/<op>.h
 * (docs/UFUNC.md). Here: the meta functions (TensorIterator configuration and
 * PyTorch's checks, BinaryOps.cpp / UnaryOps.cpp / Pow.cpp), the impls that
 * pick a loop by an argument's value (pow's exponent, round's decimals), and
 * the plain kernels of operators PyTorch does not make structured (logit,
 * nan_to_num, isnan ...: they build the iterator themselves, like relu).
 */
#include <math.h>
#include <string.h>

#include "pointwise_math.h"
#include "tl_error.h"
#include "tl_iter.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/acos.h"
#include "ops/asin.h"
#include "ops/atan.h"
#include "ops/atan2.h"
#include "ops/cosh.h"
#include "ops/div.h"
#include "ops/floor_divide.h"
#include "ops/fmod.h"
#include "ops/isfinite.h"
#include "ops/isinf.h"
#include "ops/isnan.h"
#include "ops/logit.h"
#include "ops/logit_backward.h"
#include "ops/nan_to_num.h"
#include "ops/pow.h"
#include "ops/remainder.h"
#include "ops/round.h"
#include "ops/sinh.h"
#include "tl_structured.h"
#include "tl_tensor.h"
#include "ufunc_isfinite.h"
#include "ufunc_isinf.h"
#include "ufunc_isnan.h"
#include "ufunc_logit.h"
#include "ufunc_logit_backward.h"
#include "ufunc_nan_to_num.h"
#include "ufunc_pow_2.h"
#include "ufunc_pow_3.h"
#include "ufunc_pow_m2.h"
#include "ufunc_pow_scalar.h"
#include "ufunc_reciprocal.h"
#include "ufunc_round.h"
#include "ufunc_round_decimals.h"
#include "ufunc_rsqrt.h"
#include "ufunc_sqrt.h"

int tl_pointwise_check_int_divisor(const tl_tensor *other, tl_dtype dt) {
    tl_tensor *z = tl_to_dtype(other, dt, 0);
    if (!z) return -1;
    tl_tensor *c = tl_contiguous(z);
    tl_tensor_release(z);
    if (!c) return -1;
    const int64_t n = tl_tensor_numel(c), isz = tl_tensor_itemsize(c);
    const char *p = tl_tensor_data_ptr(c);
    int zero = 0;
    for (int64_t i = 0; i < n && !zero; i++) {
        switch (isz) {
        case 1: zero = ((const uint8_t *)p)[i] == 0; break;
        case 2: zero = ((const int16_t *)p)[i] == 0; break;
        case 4: zero = ((const int32_t *)p)[i] == 0; break;
        default: zero = ((const int64_t *)p)[i] == 0; break;
        }
    }
    tl_tensor_release(c);
    return zero ? tl_set_error(TL_ERR_RUNTIME, "ZeroDivisionError") : 0;
}

/* v rounded to dtype dt (PyTorch's static_cast<scalar_t>, unchecked) */
static double to_dtype(double v, tl_dtype dt) {
    unsigned char buf[16];   /* one element of any dtype */
    tl_scalar r;
    if (tl_scalar_store(tl_scalar_from_double(v), dt, buf) != 0 || tl_scalar_load(buf, dt, &r) != 0) return v;
    return r.d;
}

/* torch.result_type(tensor, number) */
static tl_dtype result_type_scalar(tl_tensor *t, tl_scalar v, int scalar_first) {
    tl_tensor *w = tl_wrapped_scalar(v);
    if (!w) return TL_DTYPE_UNDEFINED;
    tl_tensor *ts[2] = {scalar_first ? w : t, scalar_first ? t : w};
    const tl_dtype dt = tl_result_type(2, ts);
    tl_tensor_release(w);
    return dt;
}

static double scalar_as_double(tl_scalar v) { return v.kind == TL_SCALAR_DOUBLE ? v.d : (double)v.i; }

/* ------------------------------------------------------------------ pow */
int tl_meta_pow_Tensor_Tensor(tl_structured *s, tl_tensor *self, tl_tensor *exponent) {
    return tl_structured_build_borrowing_binary_op(s, self, exponent);
}

/* Pow.cpp: numpy's rule for integers, then a unary op in
 * result_type(self, exponent) (int ** 2.5 is float32, bool ** 2 int64) */
int tl_meta_pow_Tensor_Scalar(tl_structured *s, tl_tensor *self, tl_scalar exponent) {
    if (tl_dtype_is_integral(tl_tensor_dtype(self), 1) && exponent.kind != TL_SCALAR_DOUBLE && exponent.i < 0)
        return tl_set_error(TL_ERR_RUNTIME, "Integers to negative integer powers are not allowed.");
    const tl_dtype dt = result_type_scalar(self, exponent, 0);
    if (dt == TL_DTYPE_UNDEFINED) return -1;
    const tl_tensor *in[1] = {self};   /* PyTorch: build_output_borrowing_argument_owning_unary_op(out, self.to(dt)) */
    return tl_structured_build_as(s, TL_ITER_UNARY_OP, 1, in, dt);
}

/* pow_Tensor_Scalar_out of a complex result (or a complex exponent): the
 * same 0 / 1 cases and fast paths (sqrt, rsqrt, reciprocal, x * x, x * x * x,
 * 1 / (x * x)) for an exponent with no imaginary part; else cpow with the
 * exponent as a wrapped complex number, through pow.Tensor_Tensor_out */
static int pow_complex_scalar(tl_structured *s, tl_tensor *self, tl_scalar exponent, tl_tensor *out) {
    tl_iter *it = s->iter;
    const double re = exponent.kind == TL_SCALAR_COMPLEX || exponent.kind == TL_SCALAR_DOUBLE ? exponent.d
                                                                                              : (double)exponent.i;
    const bool real = exponent.kind != TL_SCALAR_COMPLEX || exponent.im == 0;
    if (tl_iter_is_meta(it)) return 0;
    if (real && (re == 0.0 || re == 1.0)) {
        if (tl_iter_numel(it) == 0) return 0;
        if (re == 0.0) return tl_fill_(out, tl_scalar_from_int(1));
        return out == self ? 0 : tl_copy_(out, self);
    }
    if (real && re == 2) return tl_ufunc_pow_2_run(it);
    if (real && re == 3) return tl_ufunc_pow_3_run(it);
    if (real && re == -2) return tl_ufunc_pow_m2_run(it);
    if (real && re == 0.5) return tl_ufunc_sqrt_run(it);
    if (real && re == -0.5) return tl_ufunc_rsqrt_run(it);
    if (real && re == -1) return tl_ufunc_reciprocal_run(it);
    if (tl_iter_numel(it) == 0) return 0;
    tl_tensor *x = tl_to_dtype(self, tl_iter_common_dtype(it), 0);
    tl_tensor *w = x ? tl_wrapped_scalar(exponent.kind == TL_SCALAR_COMPLEX ? exponent
                                                                           : tl_scalar_from_complex(re, 0)) : NULL;
    tl_tensor *r = w ? tl_ops_pow_Tensor_Tensor_out(x, w, out) : NULL;
    tl_tensor_release(x), tl_tensor_release(w), tl_tensor_release(r);
    return r ? 0 : -1;
}

/* PyTorch's pow_Tensor_Scalar_out: exponent 0 (or False) fills 1, 1 (or True)
 * copies self (converted to out's dtype; in place: nothing to do). Then its
 * fast paths by the exponent's value (pow_tensor_scalar_optimized_kernel,
 * sqrt / rsqrt / reciprocal for 0.5 / -0.5 / -1) where PyTorch takes them: float32,
 * float64, bfloat16 (they differ from pow on -0.0 and -inf: sqrt(-0.0) is -0.0),
 * and x * x, x * x * x for integers (exact either way); float16 and the rest: pow
 * with the exponent converted once */
int tl_impl_pow_Tensor_Scalar_out(tl_structured *s, tl_tensor *self, tl_scalar exponent, tl_tensor *out) {
    tl_iter *it = s->iter;
    const tl_dtype dt = tl_iter_common_dtype(it);
    if (exponent.kind == TL_SCALAR_COMPLEX || tl_dtype_is_complex(dt)) return pow_complex_scalar(s, self, exponent, out);
    const double e = scalar_as_double(exponent);
    if (!tl_iter_is_meta(it) && (e == 0.0 || e == 1.0)) {   /* a bool exponent is 0 / 1 too */
        if (tl_iter_numel(it) == 0) return 0;
        if (e == 0.0) return tl_fill_(out, tl_scalar_from_int(1));
        return out == self ? 0 : tl_copy_(out, self);
    }
    if (exponent.kind != TL_SCALAR_BOOL && dt != TL_BOOL && dt != TL_FLOAT16) {
        if (e == 2) return tl_ufunc_pow_2_run(it);
        if (e == 3) return tl_ufunc_pow_3_run(it);
        if (tl_dtype_is_floating(dt)) {
            if (e == -2) return tl_ufunc_pow_m2_run(it);
            if (e == 0.5) return tl_ufunc_sqrt_run(it);
            if (e == -0.5) return tl_ufunc_rsqrt_run(it);
            if (e == -1) return tl_ufunc_reciprocal_run(it);
        }
    }
    return tl_ufunc_pow_scalar_run(it, exponent);
}

/* pow(number, tensor): the result has the exponent's shape and
 * result_type(number, exponent) (an out= keeps its own dtype) */
int tl_meta_pow_Scalar(tl_structured *s, tl_scalar self, tl_tensor *exponent) {
    tl_dtype dt = s->kind == TL_STRUCTURED_OUT && s->outputs[0] ? tl_tensor_dtype(s->outputs[0])
                                                                : result_type_scalar(exponent, self, 1);
    if (dt == TL_DTYPE_UNDEFINED) return -1;
    return tl_structured_set_output(s, 0, tl_tensor_ndim(exponent), tl_tensor_sizes(exponent), NULL, dt);
}

/* 1 ** x is 1 for any x (NaN too); otherwise pow.Tensor_Tensor_out with the
 * number wrapped (PyTorch's pow_Scalar_out). A bool base never counts as 1. */
int tl_impl_pow_Scalar_out(tl_structured *s, tl_scalar self, tl_tensor *exponent, tl_tensor *out) {
    (void)s;
    if (self.kind != TL_SCALAR_BOOL && scalar_as_double(self) == 1.0) return tl_fill_(out, tl_scalar_from_int(1));
    tl_tensor *w = tl_wrapped_scalar(self);
    if (!w) return -1;
    tl_tensor *r = tl_ops_pow_Tensor_Tensor_out(w, exponent, out);
    tl_tensor_release(w);
    if (!r) return -1;
    tl_tensor_release(r);
    return 0;
}

/* ---------------------------------------------- Scalar overloads, wrapped */
tl_tensor *tl_pointwise_with_number(tl_pointwise_binary_fn fn, tl_tensor *t, tl_scalar number, int number_first) {
    tl_tensor *w = tl_wrapped_scalar(number);
    if (!w) return NULL;
    tl_tensor *r = number_first ? fn(w, t) : fn(t, w);
    tl_tensor_release(w);
    return r;
}

tl_tensor *tl_pointwise_with_number_out(tl_pointwise_binary_out_fn fn, tl_tensor *self, tl_scalar number,
                                        tl_tensor *out) {
    tl_tensor *w = tl_wrapped_scalar(number);
    if (!w) return NULL;
    tl_tensor *r = fn(self, w, out);
    tl_tensor_release(w);
    return r;
}

/* ------------------------------------------------------- floor_divide
 * PyTorch's floor_divide is div(..., rounding_mode="floor") (div_floor_stub),
 * redispatched below autograd: floor_divide is in PyTorch's
 * DONT_REQUIRE_DERIVATIVE list, its result never requires grad */
static tl_keyset below_autograd(tl_keyset ks) { return tl_keyset_below(ks, TL_KEY_AUTOGRAD_OTHER); }

tl_tensor *tl_native_floor_divide(tl_keyset ks, tl_tensor *self, tl_tensor *other) {
    return tl_ops_div_Tensor_mode_redispatch(below_autograd(ks), self, other, "floor");
}
tl_tensor *tl_native_floor_divide__Tensor(tl_keyset ks, tl_tensor *self, tl_tensor *other) {
    return tl_ops_div__Tensor_mode_redispatch(below_autograd(ks), self, other, "floor");
}
tl_tensor *tl_native_floor_divide_out(tl_keyset ks, tl_tensor *self, tl_tensor *other, tl_tensor *out) {
    return tl_ops_div_out_mode_redispatch(below_autograd(ks), self, other, "floor", out);
}
tl_tensor *tl_native_floor_divide_Scalar(tl_keyset ks, tl_tensor *self, tl_scalar other) {
    (void)ks;
    return tl_pointwise_with_number(tl_ops_floor_divide, self, other, 0);
}
tl_tensor *tl_native_floor_divide__Scalar(tl_keyset ks, tl_tensor *self, tl_scalar other) {
    (void)ks;
    return tl_pointwise_with_number(tl_ops_floor_divide__Tensor, self, other, 0);
}

/* ---------------------------------------------------- remainder, fmod
 * common dtype (build_borrowing_binary_op); an integer zero divisor is
 * refused here, before the loop writes anything */
static int int_division_meta(tl_structured *s, tl_tensor *self, tl_tensor *other) {
    if (tl_structured_build_borrowing_binary_op(s, self, other)) return -1;
    const tl_dtype dt = tl_iter_common_dtype(s->iter);
    if (tl_dtype_is_integral(dt, 0) && !tl_iter_is_meta(s->iter) && tl_iter_numel(s->iter) > 0)
        return tl_pointwise_check_int_divisor(other, dt);
    return 0;
}

int tl_meta_remainder_Tensor(tl_structured *s, tl_tensor *self, tl_tensor *other) {
    return int_division_meta(s, self, other);
}
int tl_meta_fmod_Tensor(tl_structured *s, tl_tensor *self, tl_tensor *other) {
    return int_division_meta(s, self, other);
}

/* op.Scalar, op_.Scalar, op.Scalar_out: the Tensor overloads with the number wrapped */
#define TL_WRAPPED_SCALAR_OVERLOADS(op)                                                                   \
    tl_tensor *tl_native_##op##_Scalar(tl_keyset ks, tl_tensor *self, tl_scalar other) {                  \
        (void)ks;                                                                                         \
        return tl_pointwise_with_number(tl_ops_##op##_Tensor, self, other, 0);                            \
    }                                                                                                     \
    tl_tensor *tl_native_##op##__Scalar(tl_keyset ks, tl_tensor *self, tl_scalar other) {                 \
        (void)ks;                                                                                         \
        return tl_pointwise_with_number(tl_ops_##op##__Tensor, self, other, 0);                           \
    }                                                                                                     \
    tl_tensor *tl_native_##op##_Scalar_out(tl_keyset ks, tl_tensor *self, tl_scalar other, tl_tensor *out) { \
        (void)ks;                                                                                         \
        return tl_pointwise_with_number_out(tl_ops_##op##_Tensor_out, self, other, out);                  \
    }
TL_WRAPPED_SCALAR_OVERLOADS(remainder)
TL_WRAPPED_SCALAR_OVERLOADS(fmod)

/* remainder(number, tensor) */
tl_tensor *tl_native_remainder_Scalar_Tensor(tl_keyset ks, tl_scalar self, tl_tensor *other) {
    (void)ks;
    return tl_pointwise_with_number(tl_ops_remainder_Tensor, other, self, 1);
}

/* ------------------------------------ atan2 and the unary trigonometry
 * float ops: integer and bool inputs compute in the default float dtype */
int tl_meta_atan2(tl_structured *s, tl_tensor *self, tl_tensor *other) {
    return tl_structured_build_binary_float_op(s, self, other);
}
#define TL_UNARY_FLOAT_META(op) \
    int tl_meta_##op(tl_structured *s, tl_tensor *self) { return tl_structured_build_unary_float_op(s, self); }
TL_UNARY_FLOAT_META(asin)
TL_UNARY_FLOAT_META(acos)
TL_UNARY_FLOAT_META(atan)
TL_UNARY_FLOAT_META(sinh)
TL_UNARY_FLOAT_META(cosh)

/* ------------------------------------------------------------------ round
 * the input's dtype (build_borrowing_unary_op: an out= of another dtype is
 * refused); integers are kept as they are, decimals need floats */
int tl_meta_round(tl_structured *s, tl_tensor *self) { return tl_structured_build_unary_op(s, self); }
int tl_meta_round_decimals(tl_structured *s, tl_tensor *self, int64_t decimals) {
    (void)decimals;
    return tl_structured_build_unary_op(s, self);
}

int tl_impl_round_decimals_out(tl_structured *s, tl_tensor *self, int64_t decimals, tl_tensor *out) {
    (void)self;
    (void)out;
    /* PyTorch's messages: decimals == 0 goes to round's float kernel (integers
     * are only kept by round() itself), any other value to round_decimals' */
    const tl_dtype dt = tl_iter_common_dtype(s->iter);
    if (!tl_dtype_is_floating(dt))
        return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'",
                            decimals == 0 ? "round_vml_cpu" : "round_cpu", tl_dtype_scalar_name(dt));
    if (decimals == 0) return tl_ufunc_round_run(s->iter);
    return tl_ufunc_round_decimals_run(s->iter, tl_scalar_from_int(decimals));
}

/* ------------------------------------------------------ plain iterator kernels */
/* builds a one-input iterator into out (NULL: allocated); output_dtype fixes
 * what the loop stores (bool predicates) */
static tl_iter *unary_iter(uint32_t flags, tl_tensor *self, tl_tensor *out, tl_dtype output_dtype) {
    tl_iter *it = tl_iter_new(flags);
    if (!it) return NULL;
    if (tl_iter_add_output(it, out) != 0 || tl_iter_add_input(it, self) != 0 ||
        (output_dtype != TL_DTYPE_UNDEFINED && tl_iter_set_output_dtype(it, output_dtype) != 0) ||
        tl_iter_build(it) != 0) {
        tl_iter_free(it);
        return NULL;
    }
    return it;
}

/* the output of a run (new reference) or NULL; bumps a written out=/in-place tensor */
static tl_tensor *finish(tl_iter *it, int rc, tl_tensor *out) {
    tl_tensor *r = rc == 0 ? tl_iter_output(it, 0) : NULL;
    tl_iter_free(it);
    if (r && out && tl_tensor_device(out) != TL_META) tl_tensor_bump_version(out);
    return r;
}

/* logit's clamp bounds as PyTorch's kernels compute them, in the dtype:
 * lo = eps, hi = 1 - eps (float16: hi = 0.99902 for eps = 0.001) */
static void logit_bounds(double eps, tl_dtype dt, double *lo, double *hi) {
    *lo = to_dtype(eps, dt);
    *hi = to_dtype(1.0 - *lo, dt);
}

/* logit: unary float op (integers compute in the default float dtype); eps
 * clamps to [eps, 1 - eps]; no eps (or a negative one, like PyTorch) clamps nothing */
static tl_tensor *logit_run(tl_tensor *self, double eps, bool eps_has, tl_tensor *out) {
    tl_iter *it = unary_iter(TL_ITER_UNARY_OP | TL_ITER_INT_TO_FLOAT, self, out, TL_DTYPE_UNDEFINED);
    if (!it) return NULL;
    double lo = -INFINITY, hi = INFINITY;
    if (eps_has && eps >= 0) logit_bounds(eps, tl_iter_common_dtype(it), &lo, &hi);
    return finish(it, tl_ufunc_logit_run(it, tl_scalar_from_double(lo), tl_scalar_from_double(hi)), out);
}

tl_tensor *tl_native_logit(tl_keyset ks, tl_tensor *self, double eps, bool eps_has) {
    (void)ks;
    return logit_run(self, eps, eps_has, NULL);
}
tl_tensor *tl_native_logit_(tl_keyset ks, tl_tensor *self, double eps, bool eps_has) {
    (void)ks;
    return logit_run(self, eps, eps_has, self);
}
tl_tensor *tl_native_logit_out(tl_keyset ks, tl_tensor *self, double eps, bool eps_has, tl_tensor *out) {
    (void)ks;
    return logit_run(self, eps, eps_has, out);
}

/* logit_backward: PyTorch's kernel; outside [eps, 1 - eps] 0, outside [0, 1]
 * without eps NaN */
int tl_meta_logit_backward(tl_structured *s, tl_tensor *grad_output, tl_tensor *self, double eps, bool eps_has) {
    (void)eps;
    (void)eps_has;
    return tl_structured_build_borrowing_binary_op(s, grad_output, self);
}
int tl_impl_logit_backward_out(tl_structured *s, tl_tensor *grad_output, tl_tensor *self, double eps, bool eps_has,
                               tl_tensor *grad_input) {
    (void)grad_output;
    (void)self;
    (void)grad_input;
    const int clamp = eps_has && eps >= 0;
    double lo = 0.0, hi = 1.0;
    if (clamp) logit_bounds(eps, tl_iter_common_dtype(s->iter), &lo, &hi);
    return tl_ufunc_logit_backward_run(s->iter, tl_scalar_from_double(lo), tl_scalar_from_double(hi),
                                       tl_scalar_from_bool(!clamp));
}

/* nan_to_num: floats through the loop (defaults: 0, the dtype's largest and
 * lowest finite values); integers and bool are copied */
static double dtype_max(tl_dtype dt) {
    switch (dt) {
    case TL_FLOAT16: return 65504.0;
    case TL_BFLOAT16: return 3.3895313892515355e38;
    case TL_FLOAT32: return 3.4028234663852886e38;
    default: return 1.7976931348623157e308;
    }
}

static tl_tensor *nan_to_num_run(tl_tensor *self, double nan, bool nan_has, double posinf, bool posinf_has,
                                 double neginf, bool neginf_has, tl_tensor *out) {
    const tl_dtype dt = tl_tensor_dtype(self);
    if (out && tl_tensor_dtype(out) != dt) {
        tl_set_error(TL_ERR_RUNTIME, "nan_to_num: dtype of out: %s should be same as input: %s",
                     tl_dtype_scalar_name(tl_tensor_dtype(out)), tl_dtype_scalar_name(dt));
        return NULL;
    }
    tl_iter *it = unary_iter(TL_ITER_UNARY_OP, self, out, TL_DTYPE_UNDEFINED);
    if (!it) return NULL;
    int rc = 0;
    if (tl_dtype_is_floating(dt)) {
        /* PyTorch's static_cast<scalar_t>: unchecked, 1e10 becomes inf in float16
         * (the runner's overflow check then has nothing to refuse) */
        const double m = dtype_max(dt);
        rc = tl_ufunc_nan_to_num_run(it, tl_scalar_from_double(to_dtype(nan_has ? nan : 0.0, dt)),
                                     tl_scalar_from_double(to_dtype(posinf_has ? posinf : m, dt)),
                                     tl_scalar_from_double(to_dtype(neginf_has ? neginf : -m, dt)));
    } else if (!tl_iter_is_meta(it) && out != self) {
        tl_tensor *o = tl_iter_output(it, 0);
        rc = o ? tl_copy_(o, self) : -1;
        tl_tensor_release(o);
    }
    return finish(it, rc, out);
}

tl_tensor *tl_native_nan_to_num(tl_keyset ks, tl_tensor *self, double nan, bool nan_has, double posinf,
                                bool posinf_has, double neginf, bool neginf_has) {
    (void)ks;
    return nan_to_num_run(self, nan, nan_has, posinf, posinf_has, neginf, neginf_has, NULL);
}
tl_tensor *tl_native_nan_to_num_(tl_keyset ks, tl_tensor *self, double nan, bool nan_has, double posinf,
                                 bool posinf_has, double neginf, bool neginf_has) {
    (void)ks;
    return nan_to_num_run(self, nan, nan_has, posinf, posinf_has, neginf, neginf_has, self);
}
tl_tensor *tl_native_nan_to_num_out(tl_keyset ks, tl_tensor *self, double nan, bool nan_has, double posinf,
                                    bool posinf_has, double neginf, bool neginf_has, tl_tensor *out) {
    (void)ks;
    return nan_to_num_run(self, nan, nan_has, posinf, posinf_has, neginf, neginf_has, out);
}

/* isnan / isinf / isfinite: a bool tensor of self's shape (integers: all
 * False / False / True, from the loops too) */
typedef int (*predicate_run_fn)(tl_iter *it);
static tl_tensor *predicate(tl_tensor *self, predicate_run_fn run) {
    const uint32_t flags = TL_ITER_PROMOTE_INPUTS | TL_ITER_CAST_TO_OUTPUTS | TL_ITER_RESIZE_OUTPUTS;
    tl_iter *it = unary_iter(flags, self, NULL, TL_BOOL);
    if (!it) return NULL;
    return finish(it, run(it), NULL);
}

tl_tensor *tl_native_isnan(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    return predicate(self, tl_ufunc_isnan_run);
}
tl_tensor *tl_native_isinf(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    return predicate(self, tl_ufunc_isinf_run);
}
tl_tensor *tl_native_isfinite(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    return predicate(self, tl_ufunc_isfinite_run);
}
