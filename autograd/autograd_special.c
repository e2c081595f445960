/* Helpers of the special-math derivative formulas, declared in
 * autograd/tl_autograd_formulas.h: PyTorch's FunctionsManual.cpp
 * sinc_backward, i1_backward, deg2rad_backward, rad2deg_backward and
 * mvlgamma_backward, composed
 * of entry points (tl_ops_*) so that they are recorded under create_graph and
 * differentiate again.
 */
#include <float.h>
#include <math.h>

#include "tl_autograd_formulas.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/abs.h"
#include "ops/add.h"
#include "ops/arange.h"
#include "ops/cos.h"
#include "ops/digamma.h"
#include "ops/div.h"
#include "ops/eq.h"
#include "ops/full.h"
#include "ops/gt.h"
#include "ops/i0.h"
#include "ops/mul.h"
#include "ops/reciprocal.h"
#include "ops/sin.h"
#include "ops/sub.h"
#include "ops/sum.h"
#include "ops/unsqueeze.h"
#include "ops/where.h"
#include "tl_tensor.h"

/* a 0-dim tensor of value v in self's dtype and device */
static tl_tensor *full0(tl_tensor *like, double v) {
    static const int64_t no_dims = 0;
    return tl_ops_full(&no_dims, 0, tl_scalar_from_double(v), tl_tensor_dtype(like), -1, (int)tl_tensor_device(like),
                       false, false);
}

/* grad * (pi x cos(pi x) - sin(pi x)) / (pi x^2), 0 where pi x^2 == 0 */
tl_tensor *tl_ag_sinc_backward(tl_tensor *grad, tl_tensor *self) {
    tl_tensor *px = NULL, *sq = NULL, *psq = NULL, *c = NULL, *pc = NULL, *s = NULL, *num = NULL, *gn = NULL,
              *out = NULL, *zero = NULL, *mask = NULL, *r = NULL;
    if (!(px = tl_ops_mul_Scalar(self, tl_scalar_from_double(M_PI)))) goto done;
    if (!(sq = tl_ops_mul_Tensor(self, self))) goto done;
    if (!(psq = tl_ops_mul_Scalar(sq, tl_scalar_from_double(M_PI)))) goto done;
    if (!(c = tl_ops_cos(px)) || !(pc = tl_ops_mul_Tensor(px, c)) || !(s = tl_ops_sin(px))) goto done;
    if (!(num = tl_ops_sub_Tensor(pc, s, tl_scalar_from_int(1)))) goto done;
    if (!(gn = tl_ops_mul_Tensor(grad, num)) || !(out = tl_ops_div_Tensor(gn, psq))) goto done;
    if (!(mask = tl_ops_eq_Scalar(psq, tl_scalar_from_double(0.0))) || !(zero = full0(grad, 0.0))) goto done;
    r = tl_ops_where_self(mask, zero, out);
done:
    tl_tensor_release(px);
    tl_tensor_release(sq);
    tl_tensor_release(psq);
    tl_tensor_release(c);
    tl_tensor_release(pc);
    tl_tensor_release(s);
    tl_tensor_release(num);
    tl_tensor_release(gn);
    tl_tensor_release(out);
    tl_tensor_release(zero);
    tl_tensor_release(mask);
    return r;
}

/* I1'(x) = I0(x) - I1(x) / x; 1/2 where |x| <= eps (PyTorch replaces x by eps
 * there, as `where` differentiates both branches) */
tl_tensor *tl_ag_i1_backward(tl_tensor *grad, tl_tensor *self, tl_tensor *result) {
    const double eps = tl_tensor_dtype(self) == TL_FLOAT64 ? DBL_EPSILON : (double)FLT_EPSILON;
    tl_tensor *ax = NULL, *big = NULL, *epst = NULL, *safe = NULL, *i0 = NULL, *rec = NULL, *q = NULL, *gx = NULL,
              *half = NULL, *w = NULL, *r = NULL;
    if (!(ax = tl_ops_abs(self)) || !(big = tl_ops_gt_Scalar(ax, tl_scalar_from_double(eps)))) goto done;
    if (!(epst = full0(self, eps)) || !(safe = tl_ops_where_self(big, self, epst))) goto done;
    if (!(i0 = tl_ops_i0(safe)) || !(rec = tl_ops_reciprocal(safe)) || !(q = tl_ops_mul_Tensor(result, rec))) goto done;
    if (!(gx = tl_ops_sub_Tensor(i0, q, tl_scalar_from_int(1)))) goto done;
    if (!(half = full0(self, 0.5)) || !(w = tl_ops_where_self(big, gx, half))) goto done;
    r = tl_ops_mul_Tensor(grad, w);
done:
    tl_tensor_release(ax);
    tl_tensor_release(big);
    tl_tensor_release(epst);
    tl_tensor_release(safe);
    tl_tensor_release(i0);
    tl_tensor_release(rec);
    tl_tensor_release(q);
    tl_tensor_release(gx);
    tl_tensor_release(half);
    tl_tensor_release(w);
    return r;
}

/* grad times the conversion factor (PyTorch: at::mul(grad, M_PI_180)) */
tl_tensor *tl_ag_deg2rad_backward(tl_tensor *grad) {
    return tl_ops_mul_Scalar(grad, tl_scalar_from_double(0.017453292519943295769236907684886127134428718885417));
}
tl_tensor *tl_ag_rad2deg_backward(tl_tensor *grad) {
    return tl_ops_mul_Scalar(grad, tl_scalar_from_double(57.295779513082320876798154814105170332405472466564));
}

/* mvlgamma: grad * sum_i digamma(x - i/2), the arguments built as the
 * forward builds them (PyTorch's mvlgamma_backward) */
tl_tensor *tl_ag_mvlgamma_backward(tl_tensor *grad, tl_tensor *self, int64_t p) {
    static const int64_t last = -1;
    tl_tensor *steps = NULL, *u = NULL, *args = NULL, *d = NULL, *s = NULL, *r = NULL;
    if (!(steps = tl_ops_arange_start_step(tl_scalar_from_double(-(double)p * 0.5 + 0.5), tl_scalar_from_double(0.5),
                                           tl_scalar_from_double(0.5), tl_tensor_dtype(self), -1,
                                           (int)tl_tensor_device(self), false, false)))
        goto done;
    if (!(u = tl_ops_unsqueeze(self, -1)) || !(args = tl_ops_add_Tensor(steps, u, tl_scalar_from_int(1)))) goto done;
    if (!(d = tl_ops_digamma(args)) || !(s = tl_ops_sum_dim_IntList(d, &last, 1, false, TL_DTYPE_UNDEFINED))) goto done;
    r = tl_ops_mul_Tensor(grad, s);
done:
    tl_tensor_release(steps);
    tl_tensor_release(u);
    tl_tensor_release(args);
    tl_tensor_release(d);
    tl_tensor_release(s);
    return r;
}
