/* Special math: lgamma, digamma, polygamma, erfinv, i0, special_i1, sinc, special_entr,
 * rad2deg, deg2rad, mvlgamma, frexp, xlogy, heaviside, ldexp, float_power.
 *
 * The arithmetic is generated from kernels/ufunc/<op>.h over tl_special.h
 * (docs/SPECIAL.md). Here: the meta functions, which configure the iterator as
 * PyTorch's TORCH_META_FUNC(op) do (UnaryOps.cpp: build_borrowing_unary_float_op,
 * so bool and integer inputs compute in the default float dtype), polygamma's
 * check of n, polygamma_ (CompositeExplicitAutograd in PyTorch) and the
 * degree conversions, which PyTorch writes as a multiplication by a wrapped
 * number (integers and bools promote to the default float dtype like any
 * tensor times a Python float); xlogy's and heaviside's meta functions and
 * the compositions PyTorch writes for xlogy's Scalar overloads, ldexp and
 * float_power. (The other binary operators' meta functions are derived from
 * their entries: build_binary_op.)
 */
#include <math.h>

#include "missing_ops.h"
#include "pointwise_math.h"
#include "tl_error.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/add.h"
#include "ops/arange.h"
#include "ops/copy.h"
#include "ops/deg2rad.h"
#include "ops/digamma.h"
#include "ops/erf.h"
#include "ops/erfc.h"
#include "ops/erfinv.h"
#include "ops/exp2.h"
#include "ops/expm1.h"
#include "ops/float_power.h"
#include "ops/frexp.h"
#include "ops/heaviside.h"
#include "ops/i0.h"
#include "ops/ldexp.h"
#include "ops/lgamma.h"
#include "ops/log1p.h"
#include "ops/log_softmax.h"
#include "ops/logit.h"
#include "ops/logsumexp.h"
#include "ops/mul.h"
#include "ops/mvlgamma.h"
#include "ops/polygamma.h"
#include "ops/pow.h"
#include "ops/rad2deg.h"
#include "ops/round.h"
#include "ops/sigmoid.h"
#include "ops/sinc.h"
#include "ops/softmax.h"
#include "ops/special_digamma.h"
#include "ops/special_entr.h"
#include "ops/special_erf.h"
#include "ops/special_erfc.h"
#include "ops/special_erfinv.h"
#include "ops/special_exp2.h"
#include "ops/special_expit.h"
#include "ops/special_expm1.h"
#include "ops/special_gammaln.h"
#include "ops/special_i0.h"
#include "ops/special_i1.h"
#include "ops/special_log1p.h"
#include "ops/special_log_softmax.h"
#include "ops/special_logit.h"
#include "ops/special_logsumexp.h"
#include "ops/special_ndtr.h"
#include "ops/special_polygamma.h"
#include "ops/special_psi.h"
#include "ops/special_round.h"
#include "ops/special_sinc.h"
#include "ops/special_softmax.h"
#include "ops/special_xlog1py.h"
#include "ops/special_xlogy.h"
#include "ops/sum.h"
#include "ops/to.h"
#include "ops/unsqueeze.h"
#include "ops/xlogy.h"
#include "tl_structured.h"
#include "tl_tensor.h"

#define TL_SPECIAL_FLOAT_META(op) \
    int tl_meta_##op(tl_structured *s, tl_tensor *self) { return tl_structured_build_unary_float_op(s, self); }
TL_SPECIAL_FLOAT_META(lgamma)
TL_SPECIAL_FLOAT_META(digamma)
TL_SPECIAL_FLOAT_META(erfinv)
TL_SPECIAL_FLOAT_META(i0)
TL_SPECIAL_FLOAT_META(special_i1)
TL_SPECIAL_FLOAT_META(sinc)
TL_SPECIAL_FLOAT_META(special_entr)

int tl_meta_polygamma(tl_structured *s, int64_t n, tl_tensor *self) {
    if (n < 0) return tl_set_error(TL_ERR_RUNTIME, "polygamma(n, x) does not support negative n.");
    return tl_structured_build_unary_float_op(s, self);
}

/* PyTorch's polygamma_: polygamma_out(self, n, self) */
tl_tensor *tl_native_polygamma_(tl_keyset ks, tl_tensor *self, int64_t n) {
    (void)ks;
    return tl_ops_polygamma_out(n, self, self);
}

/* ------------------------------------------------ rad2deg, deg2rad
 * self * (180 / pi) and self * (pi / 180), the constants PyTorch writes */
#define TL_RAD2DEG 57.295779513082320876798154814105170332405472466564
#define TL_DEG2RAD 0.017453292519943295769236907684886127134428718885417

#define TL_DEGREE_OP(op, factor)                                                              \
    tl_tensor *tl_native_##op(tl_keyset ks, tl_tensor *self) {                                \
        (void)ks;                                                                             \
        return tl_pointwise_with_number(tl_ops_mul_Tensor, self, tl_scalar_from_double(factor), 0); \
    }                                                                                         \
    tl_tensor *tl_native_##op##_(tl_keyset ks, tl_tensor *self) {                             \
        (void)ks;                                                                             \
        return tl_pointwise_with_number(tl_ops_mul__Tensor, self, tl_scalar_from_double(factor), 0); \
    }                                                                                         \
    tl_tensor *tl_native_##op##_out(tl_keyset ks, tl_tensor *self, tl_tensor *out) {          \
        (void)ks;                                                                             \
        return tl_pointwise_with_number_out(tl_ops_mul_out, self, tl_scalar_from_double(factor), out); \
    }
TL_DEGREE_OP(rad2deg, TL_RAD2DEG)
TL_DEGREE_OP(deg2rad, TL_DEG2RAD)

/* ---------------------------------------------------------- mvlgamma
 * PyTorch's composition: sum_{i < p} lgamma(x - i/2) + p (p - 1) / 4 log pi,
 * with the arguments x + arange(-p/2 + 1/2, 1/2, 1/2) along a new last dim */
static tl_tensor *half_steps(tl_tensor *self, int64_t p, tl_dtype dtype) {
    tl_tensor *args = tl_ops_arange_start_step(tl_scalar_from_double(-(double)p * 0.5 + 0.5), tl_scalar_from_double(0.5),
                                               tl_scalar_from_double(0.5), dtype, -1, (int)tl_tensor_device(self),
                                               false, false);
    tl_tensor *u = args ? tl_ops_unsqueeze(self, -1) : NULL;
    tl_tensor *r = u ? tl_ops_add_Tensor(args, u, tl_scalar_from_int(1)) : NULL;
    tl_tensor_release(args);
    tl_tensor_release(u);
    return r;
}

/* an in-place op's result (a new reference to its operand) dropped: 0 or -1 */
static int inplace_done(tl_tensor *r) {
    tl_tensor_release(r);
    return r ? 0 : -1;
}

tl_tensor *tl_native_mvlgamma(tl_keyset ks, tl_tensor *self, int64_t p) {
    (void)ks;
    tl_dtype dt = tl_tensor_dtype(self);
    if (dt == TL_BOOL) {
        tl_set_error(TL_ERR_RUNTIME, "The input tensor may not be a boolean tensor.");
        return NULL;
    }
    if (p < 1) {
        tl_set_error(TL_ERR_RUNTIME, "p has to be greater than or equal to 1");
        return NULL;
    }
    if (tl_dtype_is_integral(dt, 1)) dt = tl_get_default_dtype();
    static const int64_t last = -1;
    const double c = (double)(p * (p - 1)) * 1.14472988584940017414 * 0.25;   /* p (p - 1) log(pi) / 4 */
    tl_tensor *args = half_steps(self, p, dt), *s = NULL;
    if (args && inplace_done(tl_ops_lgamma_(args)) == 0)
        s = tl_ops_sum_dim_IntList(args, &last, 1, false, TL_DTYPE_UNDEFINED);
    tl_tensor_release(args);
    if (s && inplace_done(tl_ops_add__Scalar(s, tl_scalar_from_double(c), tl_scalar_from_int(1)))) {
        tl_tensor_release(s);
        return NULL;
    }
    return s;
}

tl_tensor *tl_native_mvlgamma_(tl_keyset ks, tl_tensor *self, int64_t p) {
    tl_tensor *r = tl_native_mvlgamma(ks, self, p);
    if (!r) return NULL;
    tl_tensor *w = tl_ops_copy_(self, r, false);
    tl_tensor_release(r);
    return w;
}

/* PyTorch's check message names self's dtype as the result type */
tl_tensor *tl_native_mvlgamma_out(tl_keyset ks, tl_tensor *self, int64_t p, tl_tensor *out) {
    tl_tensor *r = tl_native_mvlgamma(ks, self, p);
    if (!r) return NULL;
    if (!tl_can_cast(tl_tensor_dtype(r), tl_tensor_dtype(out))) {
        tl_set_error(TL_ERR_RUNTIME, "mvlgamma: result type %s can't be cast to the desired output type %s",
                     tl_dtype_scalar_name(tl_tensor_dtype(self)), tl_dtype_scalar_name(tl_tensor_dtype(r)));
        tl_tensor_release(r);
        return NULL;
    }
    return tl_missing_copy_to_out(r, out);
}

/* ------------------------------------------------------------ xlogy */
int tl_meta_xlogy_Tensor(tl_structured *s, tl_tensor *self, tl_tensor *other) {
    return tl_structured_build_binary_float_op(s, self, other);
}

/* the Scalar overloads: the number wrapped (PyTorch's wrapped_scalar_tensor) */
tl_tensor *tl_native_xlogy_Scalar_Self(tl_keyset ks, tl_scalar self, tl_tensor *other) {
    (void)ks;
    return tl_pointwise_with_number(tl_ops_xlogy_Tensor, other, self, 1);
}
tl_tensor *tl_native_xlogy_Scalar_Other(tl_keyset ks, tl_tensor *self, tl_scalar other) {
    (void)ks;
    return tl_pointwise_with_number(tl_ops_xlogy_Tensor, self, other, 0);
}
tl_tensor *tl_native_xlogy__Scalar_Other(tl_keyset ks, tl_tensor *self, tl_scalar other) {
    (void)ks;
    return tl_pointwise_with_number(tl_ops_xlogy__Tensor, self, other, 0);
}
tl_tensor *tl_native_xlogy_OutScalar_Self(tl_keyset ks, tl_scalar self, tl_tensor *other, tl_tensor *out) {
    (void)ks;
    tl_tensor *w = tl_wrapped_scalar(self);
    if (!w) return NULL;
    tl_tensor *r = tl_ops_xlogy_OutTensor(w, other, out);
    tl_tensor_release(w);
    return r;
}
tl_tensor *tl_native_xlogy_OutScalar_Other(tl_keyset ks, tl_tensor *self, tl_scalar other, tl_tensor *out) {
    (void)ks;
    return tl_pointwise_with_number_out(tl_ops_xlogy_OutTensor, self, other, out);
}

/* -------------------------------------------------------- heaviside */
int tl_meta_heaviside(tl_structured *s, tl_tensor *self, tl_tensor *values) {
    const tl_tensor *out = s->kind == TL_STRUCTURED_OUT ? s->outputs[0] : NULL;
    if (tl_tensor_dtype(self) != tl_tensor_dtype(values) || (out && tl_tensor_dtype(out) != tl_tensor_dtype(self)))
        return tl_set_error(TL_ERR_RUNTIME, "heaviside is not yet implemented for tensors with different dtypes.");
    return tl_structured_build_binary_op(s, self, values);
}

/* ------------------------------------------------------------ ldexp
 * self * 2 ** other (pow(2.0, other): integer exponents give the default
 * float dtype) */
static tl_tensor *pow2(tl_tensor *other) { return tl_ops_pow_Scalar(tl_scalar_from_double(2.0), other); }

tl_tensor *tl_native_ldexp(tl_keyset ks, tl_tensor *self, tl_tensor *other) {
    (void)ks;
    tl_tensor *p = pow2(other);
    tl_tensor *r = p ? tl_ops_mul_Tensor(self, p) : NULL;
    tl_tensor_release(p);
    return r;
}
tl_tensor *tl_native_ldexp_out(tl_keyset ks, tl_tensor *self, tl_tensor *other, tl_tensor *out) {
    (void)ks;
    tl_tensor *p = pow2(other);
    tl_tensor *r = p ? tl_ops_mul_out(self, p, out) : NULL;
    tl_tensor_release(p);
    return r;
}
tl_tensor *tl_native_ldexp_(tl_keyset ks, tl_tensor *self, tl_tensor *other) {
    (void)ks;
    return tl_ops_ldexp_out(self, other, self);
}

/* ------------------------------------------------------ float_power
 * pow in float64 whatever the inputs (PyTorch's CompositeImplicitAutograd
 * float_power: both sides converted with .to(kDouble), numbers toDouble());
 * an out= or in-place tensor must already be float64 */
static tl_scalar as_double(tl_scalar v) { return tl_scalar_from_double(v.kind == TL_SCALAR_DOUBLE ? v.d : (double)v.i); }
static tl_tensor *to_f64(tl_tensor *t) { return tl_ops_to_dtype(t, TL_FLOAT64, false, false, -1); }

static int float_power_check(const tl_tensor *t, const char *what) {
    if (tl_tensor_dtype(t) == TL_FLOAT64) return 0;
    return tl_set_error(TL_ERR_RUNTIME, "the %s has dtype %s but the operation's result requires dtype Double", what,
                        tl_dtype_scalar_name(tl_tensor_dtype(t)));
}

tl_tensor *tl_native_float_power(tl_keyset ks, tl_tensor *self, tl_tensor *exponent) {
    (void)ks;
    tl_tensor *a = to_f64(self), *b = a ? to_f64(exponent) : NULL;
    tl_tensor *r = b ? tl_ops_pow_Tensor_Tensor(a, b) : NULL;
    tl_tensor_release(a);
    tl_tensor_release(b);
    return r;
}
tl_tensor *tl_native_float_power_out(tl_keyset ks, tl_tensor *self, tl_tensor *exponent, tl_tensor *out) {
    (void)ks;
    if (float_power_check(out, "output given to float_power")) return NULL;
    tl_tensor *a = to_f64(self), *b = a ? to_f64(exponent) : NULL;
    tl_tensor *r = b ? tl_ops_pow_Tensor_Tensor_out(a, b, out) : NULL;
    tl_tensor_release(a);
    tl_tensor_release(b);
    return r;
}
tl_tensor *tl_native_float_power__float_power_Scalar(tl_keyset ks, tl_scalar self, tl_tensor *exponent) {
    (void)ks;
    tl_tensor *b = to_f64(exponent);
    tl_tensor *r = b ? tl_ops_pow_Scalar(as_double(self), b) : NULL;
    tl_tensor_release(b);
    return r;
}
tl_tensor *tl_native_float_power_out__float_power_Scalar_out(tl_keyset ks, tl_scalar self, tl_tensor *exponent,
                                                             tl_tensor *out) {
    (void)ks;
    if (float_power_check(out, "output given to float_power")) return NULL;
    tl_tensor *b = to_f64(exponent);
    tl_tensor *r = b ? tl_ops_pow_Scalar_out(as_double(self), b, out) : NULL;
    tl_tensor_release(b);
    return r;
}
tl_tensor *tl_native_float_power__float_power_Tensor_Scalar(tl_keyset ks, tl_tensor *self, tl_scalar exponent) {
    (void)ks;
    tl_tensor *a = to_f64(self);
    tl_tensor *r = a ? tl_ops_pow_Tensor_Scalar(a, as_double(exponent)) : NULL;
    tl_tensor_release(a);
    return r;
}
tl_tensor *tl_native_float_power_out__float_power_Tensor_Scalar_out(tl_keyset ks, tl_tensor *self, tl_scalar exponent,
                                                                    tl_tensor *out) {
    (void)ks;
    if (float_power_check(out, "output given to float_power")) return NULL;
    tl_tensor *a = to_f64(self);
    tl_tensor *r = a ? tl_ops_pow_Tensor_Scalar_out(a, as_double(exponent), out) : NULL;
    tl_tensor_release(a);
    return r;
}
tl_tensor *tl_native_float_power_(tl_keyset ks, tl_tensor *self, tl_scalar exponent) {
    (void)ks;
    if (float_power_check(self, "base given to float_power_")) return NULL;
    return tl_ops_pow__Scalar(self, as_double(exponent));
}
tl_tensor *tl_native_float_power___float_power__Tensor(tl_keyset ks, tl_tensor *self, tl_tensor *exponent) {
    (void)ks;
    if (float_power_check(self, "base given to float_power_")) return NULL;
    tl_tensor *b = to_f64(exponent);
    tl_tensor *r = b ? tl_ops_pow__Tensor(self, b) : NULL;
    tl_tensor_release(b);
    return r;
}

/* ------------------------------------------------- torchlet.special
 * special_<name>(self) and special_<name>.out -> <op>, <op>.out
 * (CompositeImplicitAutograd, PyTorch's aliases) */
#define TL_SPECIAL_ALIAS(name, op)                                                        \
    tl_tensor *tl_native_special_##name(tl_keyset ks, tl_tensor *self) {                  \
        (void)ks;                                                                         \
        return tl_ops_##op(self);                                                         \
    }                                                                                     \
    tl_tensor *tl_native_special_##name##_out(tl_keyset ks, tl_tensor *self, tl_tensor *out) { \
        (void)ks;                                                                         \
        return tl_ops_##op##_out(self, out);                                              \
    }
TL_SPECIAL_ALIAS(expm1, expm1)
TL_SPECIAL_ALIAS(exp2, exp2)
TL_SPECIAL_ALIAS(psi, digamma)
TL_SPECIAL_ALIAS(digamma, digamma)
TL_SPECIAL_ALIAS(gammaln, lgamma)
TL_SPECIAL_ALIAS(erf, erf)
TL_SPECIAL_ALIAS(erfc, erfc)
TL_SPECIAL_ALIAS(erfinv, erfinv)
TL_SPECIAL_ALIAS(i0, i0)
TL_SPECIAL_ALIAS(expit, sigmoid)
TL_SPECIAL_ALIAS(sinc, sinc)
TL_SPECIAL_ALIAS(log1p, log1p)

tl_tensor *tl_native_special_polygamma(tl_keyset ks, int64_t n, tl_tensor *self) {
    (void)ks;
    return tl_ops_polygamma(n, self);
}
tl_tensor *tl_native_special_polygamma_out(tl_keyset ks, int64_t n, tl_tensor *self, tl_tensor *out) {
    (void)ks;
    return tl_ops_polygamma_out(n, self, out);
}
tl_tensor *tl_native_special_logit(tl_keyset ks, tl_tensor *self, double eps, bool eps_has) {
    (void)ks;
    return tl_ops_logit(self, eps, eps_has);
}
tl_tensor *tl_native_special_logit_out(tl_keyset ks, tl_tensor *self, double eps, bool eps_has, tl_tensor *out) {
    (void)ks;
    return tl_ops_logit_out(self, eps, eps_has, out);
}
tl_tensor *tl_native_special_round(tl_keyset ks, tl_tensor *self, int64_t decimals) {
    (void)ks;
    return tl_ops_round_decimals(self, decimals);
}
tl_tensor *tl_native_special_round_out(tl_keyset ks, tl_tensor *self, int64_t decimals, tl_tensor *out) {
    (void)ks;
    return tl_ops_round_decimals_out(self, decimals, out);
}
tl_tensor *tl_native_special_log_softmax(tl_keyset ks, tl_tensor *self, int64_t dim, tl_dtype dtype) {
    (void)ks;
    return tl_ops_log_softmax_int(self, dim, dtype);
}
tl_tensor *tl_native_special_softmax(tl_keyset ks, tl_tensor *self, int64_t dim, tl_dtype dtype) {
    (void)ks;
    return tl_ops_softmax_int(self, dim, dtype);
}
tl_tensor *tl_native_special_logsumexp(tl_keyset ks, tl_tensor *self, const int64_t *dim, int64_t dim_len,
                                       bool keepdim) {
    (void)ks;
    return tl_ops_logsumexp(self, dim, dim_len, keepdim);
}
tl_tensor *tl_native_special_logsumexp_out(tl_keyset ks, tl_tensor *self, const int64_t *dim, int64_t dim_len,
                                           bool keepdim, tl_tensor *out) {
    (void)ks;
    return tl_ops_logsumexp_out(self, dim, dim_len, keepdim, out);
}

/* xlogy's special_ spellings */
tl_tensor *tl_native_special_xlogy(tl_keyset ks, tl_tensor *self, tl_tensor *other) {
    (void)ks;
    return tl_ops_xlogy_Tensor(self, other);
}
tl_tensor *tl_native_special_xlogy_out(tl_keyset ks, tl_tensor *self, tl_tensor *other, tl_tensor *out) {
    (void)ks;
    return tl_ops_xlogy_OutTensor(self, other, out);
}
tl_tensor *tl_native_special_xlogy__special_xlogy_self_scalar(tl_keyset ks, tl_scalar self, tl_tensor *other) {
    (void)ks;
    return tl_ops_xlogy_Scalar_Self(self, other);
}
tl_tensor *tl_native_special_xlogy__special_xlogy_other_scalar(tl_keyset ks, tl_tensor *self, tl_scalar other) {
    (void)ks;
    return tl_ops_xlogy_Scalar_Other(self, other);
}
tl_tensor *tl_native_special_xlogy_out__special_xlogy_self_scalar_out(tl_keyset ks, tl_scalar self, tl_tensor *other,
                                                                      tl_tensor *out) {
    (void)ks;
    return tl_ops_xlogy_OutScalar_Self(self, other, out);
}
tl_tensor *tl_native_special_xlogy_out__special_xlogy_other_scalar_out(tl_keyset ks, tl_tensor *self,
                                                                       tl_scalar other, tl_tensor *out) {
    (void)ks;
    return tl_ops_xlogy_OutScalar_Other(self, other, out);
}

/* special_xlog1py: x * log1p(y), a binary float op (the formula in
 * kernels/ufunc/special_xlog1py.h); its Scalar overloads wrap the number */
int tl_meta_special_xlog1py(tl_structured *s, tl_tensor *self, tl_tensor *other) {
    return tl_structured_build_binary_float_op(s, self, other);
}
tl_tensor *tl_native_special_xlog1py_self_scalar(tl_keyset ks, tl_scalar self, tl_tensor *other) {
    (void)ks;
    return tl_pointwise_with_number(tl_ops_special_xlog1py, other, self, 1);
}
tl_tensor *tl_native_special_xlog1py_other_scalar(tl_keyset ks, tl_tensor *self, tl_scalar other) {
    (void)ks;
    return tl_pointwise_with_number(tl_ops_special_xlog1py, self, other, 0);
}
tl_tensor *tl_native_special_xlog1py_self_scalar_out(tl_keyset ks, tl_scalar self, tl_tensor *other, tl_tensor *out) {
    (void)ks;
    tl_tensor *w = tl_wrapped_scalar(self);
    tl_tensor *r = w ? tl_ops_special_xlog1py_out(w, other, out) : NULL;
    tl_tensor_release(w);
    return r;
}
tl_tensor *tl_native_special_xlog1py_other_scalar_out(tl_keyset ks, tl_tensor *self, tl_scalar other,
                                                      tl_tensor *out) {
    (void)ks;
    return tl_pointwise_with_number_out(tl_ops_special_xlog1py_out, self, other, out);
}

/* special_ndtr: (1 + erf(x / sqrt 2)) * 0.5, PyTorch's composition */
static tl_tensor *ndtr_sum(tl_tensor *self) {
    tl_tensor *xs = NULL, *e = NULL, *r = NULL;
    if ((xs = tl_ops_mul_Scalar(self, tl_scalar_from_double(0.70710678118654752440))) && (e = tl_ops_erf(xs)))
        r = tl_ops_add_Scalar(e, tl_scalar_from_int(1), tl_scalar_from_int(1));
    tl_tensor_release(xs);
    tl_tensor_release(e);
    return r;
}
tl_tensor *tl_native_special_ndtr(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    tl_tensor *s = ndtr_sum(self);
    tl_tensor *r = s ? tl_ops_mul_Scalar(s, tl_scalar_from_double(0.5)) : NULL;
    tl_tensor_release(s);
    return r;
}
tl_tensor *tl_native_special_ndtr_out(tl_keyset ks, tl_tensor *self, tl_tensor *out) {
    (void)ks;
    tl_tensor *s = ndtr_sum(self);
    tl_tensor *r = s ? tl_pointwise_with_number_out(tl_ops_mul_out, s, tl_scalar_from_double(0.5), out) : NULL;
    tl_tensor_release(s);
    return r;
}

/* ------------------------------------------------------------ frexp
 * x = mantissa * 2^exponent, |mantissa| in [0.5, 1) (C's frexp; 0, inf and
 * NaN keep their value with exponent 0). Computed on a contiguous copy in
 * float64, or float32 for the narrower floats (their mantissas are exact
 * there), then stored in the outputs (PyTorch's frexp_out: self's dtype and
 * int32, outputs resized like a TensorIterator's) */
static int frexp_compute(tl_tensor *self, tl_tensor **mantissa, tl_tensor **exponent) {
    const tl_dtype dt = tl_tensor_dtype(self), wd = dt == TL_FLOAT64 ? TL_FLOAT64 : TL_FLOAT32;
    tl_tensor *x = tl_to_dtype(self, wd, 0), *c = x ? tl_contiguous(x) : NULL, *m = NULL, *e = NULL;
    tl_tensor_release(x);
    if (c) {
        m = tl_empty(tl_tensor_ndim(c), tl_tensor_sizes(c), wd, tl_tensor_device(c));
        e = m ? tl_empty(tl_tensor_ndim(c), tl_tensor_sizes(c), TL_INT32, tl_tensor_device(c)) : NULL;
    }
    if (e && tl_tensor_device(c) != TL_META) {
        const int64_t n = tl_tensor_numel(c);
        int32_t *ep = tl_tensor_data_ptr(e);
        int ex = 0;
        if (wd == TL_FLOAT64) {
            const double *xp = tl_tensor_data_ptr(c);
            double *mp = tl_tensor_data_ptr(m);
            for (int64_t i = 0; i < n; i++) {
                mp[i] = frexp(xp[i], &ex);
                ep[i] = ex;
            }
        } else {
            const float *xp = tl_tensor_data_ptr(c);
            float *mp = tl_tensor_data_ptr(m);
            for (int64_t i = 0; i < n; i++) {
                mp[i] = frexpf(xp[i], &ex);
                ep[i] = ex;
            }
        }
    }
    tl_tensor_release(c);
    tl_tensor *mm = e && dt != wd ? tl_to_dtype(m, dt, 0) : (tl_tensor_retain(m), m);
    tl_tensor_release(m);
    if (!e || !mm) {
        tl_tensor_release(mm);
        tl_tensor_release(e);
        return -1;
    }
    *mantissa = mm;
    *exponent = e;
    return 0;
}

static int frexp_check_float(const tl_tensor *self) {
    if (tl_dtype_is_floating(tl_tensor_dtype(self))) return 0;
    return tl_set_error(TL_ERR_RUNTIME, "torch.frexp() only supports floating-point dtypes");
}

int tl_native_frexp(tl_keyset ks, tl_tensor *self, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    if (frexp_check_float(self)) return -1;
    return frexp_compute(self, ret0, ret1);
}

int tl_native_frexp_out(tl_keyset ks, tl_tensor *self, tl_tensor *mantissa, tl_tensor *exponent, tl_tensor **ret0,
                        tl_tensor **ret1) {
    (void)ks;
    if (frexp_check_float(self)) return -1;
    if (tl_tensor_dtype(mantissa) != tl_tensor_dtype(self))
        return tl_set_error(TL_ERR_RUNTIME, "torch.frexp() expects mantissa to have dtype %s but got %s",
                            tl_dtype_caffe2_name(tl_tensor_dtype(self)), tl_dtype_caffe2_name(tl_tensor_dtype(mantissa)));
    if (tl_tensor_dtype(exponent) != TL_INT32)
        return tl_set_error(TL_ERR_RUNTIME, "torch.frexp() expects exponent to have int dtype but got %s",
                            tl_dtype_caffe2_name(tl_tensor_dtype(exponent)));
    tl_tensor *m = NULL, *e = NULL;
    if (frexp_compute(self, &m, &e)) return -1;
    tl_tensor *r0 = tl_missing_copy_to_out(m, mantissa);
    tl_tensor *r1 = r0 ? tl_missing_copy_to_out(e, exponent) : (tl_tensor_release(e), NULL);
    if (!r1) {
        tl_tensor_release(r0);
        return -1;
    }
    *ret0 = r0;
    *ret1 = r1;
    return 0;
}
