/* Helpers of pow's derivative formulas, declared in
 * autograd/tl_autograd_formulas.h: PyTorch's
 * FunctionsManual.cpp pow_backward, pow_backward_self and
 * pow_backward_exponent, composed of entry points (tl_ops_*) so that they are
 * recorded under create_graph and differentiate again.
 *
 * PyTorch picks between two branches with at::where; torchlet has no where
 * yet, so the masked branch is folded into the operands instead, which gives
 * the same values without an inf * 0: self.pow(exponent - 1 + (exponent == 0))
 * is 1 where exponent == 0 (so exponent * it is 0), and
 * log(self + ((self == 0) & (exponent >= 0))) is log(1) = 0 where PyTorch
 * takes its zero branch. Complex operands take PyTorch's conj() and
 * handle_r_to_c as well.
 */
#include <complex.h>
#include <math.h>
#include <stdbool.h>

#include "tl_autograd_formulas.h"
#include "tl_error.h"
#include "tl_iter.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/add.h"
#include "ops/clone.h"
#include "ops/conj.h"
#include "ops/eq.h"
#include "ops/ge.h"
#include "ops/imag.h"
#include "ops/log.h"
#include "ops/logical_and.h"
#include "ops/masked_fill.h"
#include "ops/mul.h"
#include "ops/pow.h"
#include "ops/real.h"
#include "ops/sub.h"
#include "ops/to.h"
#include "ops/zeros_like.h"
#include "tl_tensor.h"

/* b = f(a...) steps: release the operands a step consumed; NULL propagates */
static tl_tensor *done2(tl_tensor *r, tl_tensor *x, tl_tensor *y) {
    tl_tensor_release(x);
    tl_tensor_release(y);
    return r;
}

static tl_tensor *mul(tl_tensor *a, tl_tensor *b) { return a && b ? tl_ops_mul_Tensor(a, b) : NULL; }

/* ---- complex operands: PyTorch's formulas with their conj() and
 * handle_r_to_c (the real part of a complex gradient of a real input) */

static bool is_complex_t(const tl_tensor *t) { return tl_dtype_is_complex(tl_tensor_dtype(t)); }

/* grad * conj(q), its real part when `like` is real; q released */
static tl_tensor *grad_conj_r_to_c(tl_tensor *grad, tl_tensor *q, const tl_tensor *like) {
    tl_tensor *c = q ? tl_ops_conj(q) : NULL;
    tl_tensor *r = done2(mul(grad, c), c, q);
    if (!r || is_complex_t(like) || !is_complex_t(r)) return r;
    tl_tensor *re = tl_ops_real(r);
    tl_tensor *out = re ? tl_ops_clone(re, -1) : NULL;
    return done2(out, re, r);
}

/* the where() masks of pow_backward_exponent: exponent >= 0, for a complex
 * exponent real(exponent) >= 0 with no imaginary part */
static tl_tensor *nonneg_exponent(tl_tensor *exponent) {
    if (!is_complex_t(exponent)) return tl_ops_ge_Scalar(exponent, tl_scalar_from_int(0));
    tl_tensor *re = tl_ops_real(exponent), *im = re ? tl_ops_imag(exponent) : NULL;
    tl_tensor *a = re ? tl_ops_ge_Scalar(re, tl_scalar_from_int(0)) : NULL;
    tl_tensor *b = im ? tl_ops_eq_Scalar(im, tl_scalar_from_int(0)) : NULL;
    tl_tensor *r = a && b ? tl_ops_logical_and(a, b) : NULL;
    tl_tensor_release(re), tl_tensor_release(im), tl_tensor_release(a), tl_tensor_release(b);
    return r;
}

/* pow_backward with a complex self or exponent: grad * (e * self.pow(e - 1)).conj() */
static tl_tensor *pow_backward_complex(tl_tensor *grad, tl_tensor *self, tl_scalar e) {
    const double re = e.kind == TL_SCALAR_COMPLEX || e.kind == TL_SCALAR_DOUBLE ? e.d : (double)e.i;
    const double im = e.kind == TL_SCALAR_COMPLEX ? e.im : 0;
    if (re == 0 && im == 0 && e.kind != TL_SCALAR_BOOL)
        return tl_ops_zeros_like(self, TL_DTYPE_UNDEFINED, -1, -1, false, false, 0);
    tl_tensor *p = tl_ops_pow_Tensor_Scalar(self, im != 0 ? tl_scalar_from_complex(re - 1, im)
                                                           : tl_scalar_from_double(re - 1));
    tl_tensor *q = done2(p ? tl_ops_mul_Scalar(p, e) : NULL, p, NULL);
    return grad_conj_r_to_c(grad, q, self);
}

/* grad * (exponent * self.pow(exponent - 1)); zeros for exponent 0. Exponent
 * 2 (x.pow(2): RMSNorm, variances) skips the pow, which would be a copy of
 * self: grad * (2 * self), the same values in two passes instead of three. */
tl_tensor *tl_ag_pow_backward(tl_tensor *grad, tl_tensor *self, tl_scalar exponent) {
    if (is_complex_t(self) || exponent.kind == TL_SCALAR_COMPLEX) return pow_backward_complex(grad, self, exponent);
    const double e = tl_ag_scalar_to_double(exponent);
    if (exponent.kind != TL_SCALAR_BOOL && e == 0.0)
        return tl_ops_zeros_like(self, TL_DTYPE_UNDEFINED, -1, -1, false, false, 0);
    if (exponent.kind != TL_SCALAR_BOOL && e == 2.0) {
        tl_tensor *q = tl_ops_mul_Scalar(self, exponent);
        return done2(mul(grad, q), q, NULL);
    }
    tl_tensor *p = tl_ops_pow_Tensor_Scalar(self, tl_scalar_from_double(e - 1.0));
    tl_tensor *q = p ? tl_ops_mul_Scalar(p, tl_scalar_from_double(e)) : NULL;
    return done2(mul(grad, q), p, q);
}

/* where(exponent == 0, 0, grad * (exponent * self.pow(exponent - 1))) */
tl_tensor *tl_ag_pow_backward_self(tl_tensor *grad, tl_tensor *self, tl_tensor *exponent) {
    tl_tensor *m = tl_ops_eq_Scalar(exponent, tl_scalar_from_int(0));
    tl_tensor *e1 = m ? tl_ops_sub_Scalar(exponent, tl_scalar_from_int(1), tl_scalar_from_int(1)) : NULL;
    tl_tensor *e2 = done2(e1 ? tl_ops_add_Tensor(e1, m, tl_scalar_from_int(1)) : NULL, e1, m);
    tl_tensor *p = done2(e2 ? tl_ops_pow_Tensor_Tensor(self, e2) : NULL, e2, NULL);
    tl_tensor *q = done2(p ? tl_ops_mul_Tensor(exponent, p) : NULL, p, NULL);
    if (is_complex_t(self) || is_complex_t(exponent)) return grad_conj_r_to_c(grad, q, self);
    return done2(mul(grad, q), q, NULL);
}

/* grad * where((self == 0) & (exponent >= 0), 0, result * self.to(result_type(self, exponent)).log()) */
tl_tensor *tl_ag_pow_backward_exponent(tl_tensor *grad, tl_tensor *self, tl_tensor *exponent, tl_tensor *result) {
    tl_tensor *both[2] = {self, exponent};
    const tl_dtype dt = tl_result_type(2, both);
    tl_tensor *z = tl_ops_eq_Scalar(self, tl_scalar_from_int(0));
    tl_tensor *ge = z ? nonneg_exponent(exponent) : NULL;
    tl_tensor *cond = done2(mul(z, ge), z, ge);
    tl_tensor *s = cond ? tl_ops_to_dtype(self, dt, false, false, -1) : NULL;
    tl_tensor *s1 = done2(s ? tl_ops_add_Tensor(s, cond, tl_scalar_from_int(1)) : NULL, s, cond);
    tl_tensor *lg = done2(s1 ? tl_ops_log(s1) : NULL, s1, NULL);
    tl_tensor *q = done2(mul(result, lg), lg, NULL);
    if (is_complex_t(result)) return grad_conj_r_to_c(grad, q, exponent);
    return done2(mul(grad, q), q, NULL);
}

/* pow(number, exponent): grad * result * log(base); base 0: 0 where
 * exponent >= 0, grad * -inf where it is negative (log of the >= 0 mask) */
tl_tensor *tl_ag_pow_backward_exponent_scalar(tl_tensor *grad, tl_scalar self, tl_tensor *exponent,
                                              tl_tensor *result) {
    if (is_complex_t(result)) {   /* (result * log(base)).conj(), base complex; log(0) = -inf */
        const double re = self.kind == TL_SCALAR_COMPLEX || self.kind == TL_SCALAR_DOUBLE ? self.d : (double)self.i;
        const double im = self.kind == TL_SCALAR_COMPLEX ? self.im : 0;
        const double _Complex lb = clog(CMPLX(re, im));
        tl_tensor *q = tl_ops_mul_Scalar(result, tl_scalar_from_complex(creal(lb), cimag(lb)));
        if (q && re == 0 && im == 0) {   /* where(exponent >= 0, 0, ...) */
            tl_tensor *ge = nonneg_exponent(exponent);
            tl_tensor *m = ge ? tl_ops_masked_fill_Scalar(q, ge, tl_scalar_from_int(0)) : NULL;
            tl_tensor_release(ge), tl_tensor_release(q);
            q = m;
        }
        return grad_conj_r_to_c(grad, q, exponent);
    }
    if (self.kind != TL_SCALAR_BOOL && tl_ag_scalar_to_double(self) == 0.0) {
        tl_tensor *ge = tl_ops_ge_Scalar(exponent, tl_scalar_from_int(0));
        tl_tensor *lg = done2(ge ? tl_ops_log(ge) : NULL, ge, NULL);
        return done2(mul(grad, lg), lg, NULL);
    }
    tl_tensor *q = tl_ops_mul_Scalar(result, tl_scalar_from_double(log(tl_ag_scalar_to_double(self))));
    return done2(mul(grad, q), q, NULL);
}
