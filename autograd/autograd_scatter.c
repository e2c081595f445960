/* Derivative helpers of scatter_reduce.two and index_reduce
 * (yaml/derivatives.yaml, block "scatter / index reductions"): PyTorch's
 * scatter_reduce_backward and index_reduce_backward (FunctionsManual.cpp),
 * composed of operators so that they are differentiable again.
 *
 * The two share one body: they differ only in how a tensor of self's shape
 * is read at the source positions (gather / index_select), how source-shaped
 * values are added into self's shape (scatter_add / index_add), how the
 * reduced positions are zeroed (scatter / index_fill) and which forward
 * operator is re-run for prod. Not modelled: PyTorch's DelayedError that
 * makes a second derivative of prod raise when two zeros of src meet in one
 * position (the first derivative is the same).
 *
 * Also sgn's derivative (PyTorch's sgn_backward). */
#include <string.h>

#include "tl_autograd_formulas.h"
#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/abs.h"
#include "ops/bitwise_and.h"
#include "ops/conj.h"
#include "ops/div.h"
#include "ops/eq.h"
#include "ops/gather.h"
#include "ops/index_add.h"
#include "ops/index_fill.h"
#include "ops/index_reduce.h"
#include "ops/index_select.h"
#include "ops/masked_fill.h"
#include "ops/mul.h"
#include "ops/ones_like.h"
#include "ops/scatter.h"
#include "ops/scatter_add.h"
#include "ops/scatter_reduce.h"
#include "ops/sub.h"
#include "ops/to.h"
#include "ops/where.h"
#include "ops/zeros_like.h"
#include "tl_tensor.h"

typedef tl_ag_tmp sr_tmp;

static tl_tensor *keep(sr_tmp *a, tl_tensor *t) { return tl_ag_tmp_keep(a, t); }

/* the scatter- or index-flavoured primitives */
typedef struct {
    int indexed;   /* 0 scatter_reduce (index like src), 1 index_reduce (index a vector along dim) */
    int64_t dim;
    tl_tensor *index;
    const char *reduce;
    bool include_self;
} sr_kind;

/* x (self's shape) read at the source positions */
static tl_tensor *take_at(const sr_kind *k, tl_tensor *x) {
    return k->indexed ? tl_ops_index_select(x, k->dim, k->index) : tl_ops_gather(x, k->dim, k->index, false);
}

/* x + v placed at the source positions */
static tl_tensor *add_at(const sr_kind *k, tl_tensor *x, tl_tensor *v) {
    return k->indexed ? tl_ops_index_add(x, k->dim, k->index, v, tl_scalar_from_int(1))
                      : tl_ops_scatter_add(x, k->dim, k->index, v);
}

static tl_tensor *zero_at(const sr_kind *k, tl_tensor *x) {
    return k->indexed ? tl_ops_index_fill_int_Scalar(x, k->dim, k->index, tl_scalar_from_int(0))
                      : tl_ops_scatter_value(x, k->dim, k->index, tl_scalar_from_int(0));
}

static tl_tensor *forward(const sr_kind *k, tl_tensor *self, tl_tensor *src) {
    return k->indexed ? tl_ops_index_reduce(self, k->dim, k->index, src, k->reduce, k->include_self)
                      : tl_ops_scatter_reduce_two(self, k->dim, k->index, src, k->reduce, k->include_self);
}

static tl_tensor *like(tl_tensor *t, int one) {
    return one ? tl_ops_ones_like(t, TL_DTYPE_UNDEFINED, -1, -1, false, false, -1)
               : tl_ops_zeros_like(t, TL_DTYPE_UNDEFINED, -1, -1, false, false, -1);
}

static tl_tensor *as_dtype(tl_tensor *t, tl_dtype dt) { return t ? tl_ops_to_dtype(t, dt, false, false, -1) : NULL; }

/* x.masked_fill(x == v, fill) */
static tl_tensor *replace(sr_tmp *a, tl_tensor *x, double v, double fill) {
    tl_tensor *m = x ? keep(a, tl_ops_eq_Scalar(x, tl_scalar_from_double(v))) : NULL;
    return m ? keep(a, tl_ops_masked_fill_Scalar(x, m, tl_scalar_from_double(fill))) : NULL;
}

static int sr_backward(const sr_kind *k, sr_tmp *a, tl_tensor *grad, tl_tensor *self, tl_tensor *src,
                       tl_tensor *result, tl_tensor **gself, tl_tensor **gsrc) {
    const tl_dtype dt = self->dtype;
    tl_tensor *gs = NULL, *gx = NULL;
    if (!strcmp(k->reduce, "sum")) {
        gs = grad;
        gx = keep(a, take_at(k, grad));
    } else if (!strcmp(k->reduce, "prod")) {
        /* exclusive products, zeros of self / src handled explicitly */
        tl_tensor *ms = replace(a, self, 0, 1);
        tl_tensor *msr = ms ? keep(a, forward(k, ms, src)) : NULL;
        tl_tensor *gm = msr ? keep(a, tl_ops_mul_Tensor(grad, msr)) : NULL;
        gs = gm ? keep(a, tl_ops_div_Tensor(gm, ms)) : NULL;
        tl_tensor *sz = gs ? keep(a, tl_ops_eq_Scalar(src, tl_scalar_from_int(0))) : NULL;
        tl_tensor *z = sz ? keep(a, like(self, 0)) : NULL;
        tl_tensor *szf = z ? keep(a, as_dtype(sz, dt)) : NULL;
        tl_tensor *nz = szf ? keep(a, add_at(k, z, szf)) : NULL;
        tl_tensor *nzs = nz ? keep(a, take_at(k, nz)) : NULL;
        tl_tensor *one = nzs ? keep(a, tl_ops_eq_Scalar(nzs, tl_scalar_from_int(1))) : NULL;
        tl_tensor *single = one ? keep(a, tl_ops_bitwise_and_Tensor(sz, one)) : NULL;
        tl_tensor *msrc = single ? keep(a, tl_ops_masked_fill_Scalar(src, single, tl_scalar_from_int(1))) : NULL;
        tl_tensor *msrcr = msrc ? keep(a, forward(k, self, msrc)) : NULL;
        tl_tensor *g1 = msrcr ? keep(a, tl_ops_mul_Tensor(grad, msrcr)) : NULL;
        tl_tensor *t1 = g1 ? keep(a, take_at(k, g1)) : NULL;
        tl_tensor *g2 = t1 ? keep(a, tl_ops_mul_Tensor(grad, result)) : NULL;
        tl_tensor *t2 = g2 ? keep(a, take_at(k, g2)) : NULL;
        tl_tensor *den = t2 ? keep(a, tl_ops_masked_fill_Scalar(src, sz, tl_scalar_from_int(1))) : NULL;
        tl_tensor *q = den ? keep(a, tl_ops_div_Tensor(t2, den)) : NULL;
        gx = q ? keep(a, tl_ops_where_self(single, t1, q)) : NULL;
    } else if (!strcmp(k->reduce, "mean")) {
        tl_tensor *n0 = keep(a, like(grad, k->include_self));
        tl_tensor *ones = n0 ? keep(a, like(src, 1)) : NULL;
        tl_tensor *n1 = ones ? keep(a, add_at(k, n0, ones)) : NULL;
        tl_tensor *n = n1 ? replace(a, n1, 0, 1) : NULL;
        gs = n ? keep(a, tl_ops_div_Tensor(grad, n)) : NULL;
        tl_tensor *nsrc = gs ? keep(a, take_at(k, n)) : NULL;
        tl_tensor *gt = nsrc ? keep(a, take_at(k, grad)) : NULL;
        gx = gt ? keep(a, tl_ops_div_Tensor(gt, nsrc)) : NULL;
    } else {
        /* amax / amin: the gradient evenly split among the elements equal to the result */
        tl_tensor *value = keep(a, take_at(k, result));
        tl_tensor *sm = value ? keep(a, tl_ops_eq_Tensor(self, result)) : NULL;
        tl_tensor *xm = sm ? keep(a, tl_ops_eq_Tensor(src, value)) : NULL;
        tl_tensor *smf = xm ? keep(a, as_dtype(sm, dt)) : NULL;
        tl_tensor *xmf = smf ? keep(a, as_dtype(xm, dt)) : NULL;
        tl_tensor *cnt = xmf ? keep(a, add_at(k, smf, xmf)) : NULL;
        tl_tensor *gd = cnt ? keep(a, tl_ops_div_Tensor(grad, cnt)) : NULL;
        gs = gd ? keep(a, tl_ops_mul_Tensor(sm, gd)) : NULL;
        tl_tensor *gdx = gs ? keep(a, take_at(k, gd)) : NULL;
        gx = gdx ? keep(a, tl_ops_mul_Tensor(xm, gdx)) : NULL;
    }
    if (gs && gx && !k->include_self) gs = keep(a, zero_at(k, gs));
    if (!gs || !gx) return -1;
    tl_tensor_retain(gs);
    tl_tensor_retain(gx);
    *gself = gs;
    *gsrc = gx;
    return 0;
}

static int sr_run(const sr_kind *k, tl_tensor *grad, tl_tensor *self, tl_tensor *src, tl_tensor *result,
                  tl_tensor **grad_self, tl_tensor **grad_src) {
    *grad_self = *grad_src = NULL;
    if (!grad) return 0;
    sr_tmp a = {.n = 0};
    const int rc = sr_backward(k, &a, grad, self, src, result, grad_self, grad_src);
    tl_ag_tmp_release(&a);
    return rc;
}

int tl_ag_scatter_reduce_backward(tl_tensor *grad, tl_tensor *self, int64_t dim, tl_tensor *index, tl_tensor *src,
                                  const char *reduce, bool include_self, tl_tensor *result, tl_tensor **grad_self,
                                  tl_tensor **grad_src) {
    const sr_kind k = {0, dim, index, reduce, include_self};
    return sr_run(&k, grad, self, src, result, grad_self, grad_src);
}

int tl_ag_index_reduce_backward(tl_tensor *grad, tl_tensor *self, int64_t dim, tl_tensor *index, tl_tensor *source,
                                const char *reduce, bool include_self, tl_tensor *result, tl_tensor **grad_self,
                                tl_tensor **grad_source) {
    const sr_kind k = {1, dim, index, reduce, include_self};
    return sr_run(&k, grad, self, source, result, grad_self, grad_source);
}

/* PyTorch's sgn_backward: (g - sgn^2 conj(g)) / (2 |x|), 0 where x == 0.
 * For real x the terms cancel: zero everywhere (PyTorch gives 0 for a NaN x
 * or a non-finite grad too, so no arithmetic is done there) */
tl_tensor *tl_ag_sgn_backward(tl_tensor *self, tl_tensor *grad, tl_tensor *result) {
    if (!tl_dtype_is_complex(tl_tensor_dtype(self))) return like(grad, 0);
    tl_tensor *a = tl_ops_abs(self), *s2 = tl_ops_mul_Tensor(result, result), *gc = tl_ops_conj(grad);
    tl_tensor *p = s2 && gc ? tl_ops_mul_Tensor(s2, gc) : NULL;
    tl_tensor *num = p ? tl_ops_sub_Tensor(grad, p, tl_scalar_from_int(1)) : NULL;
    tl_tensor *den = a ? tl_ops_mul_Scalar(a, tl_scalar_from_int(2)) : NULL;
    tl_tensor *q = num && den ? tl_ops_div_Tensor(num, den) : NULL;
    tl_tensor *z = a ? tl_ops_eq_Scalar(a, tl_scalar_from_int(0)) : NULL;
    tl_tensor *r = q && z ? tl_ops_masked_fill_Scalar(q, z, tl_scalar_from_int(0)) : NULL;
    tl_tensor_release(a), tl_tensor_release(s2), tl_tensor_release(gc), tl_tensor_release(p);
    tl_tensor_release(num), tl_tensor_release(den), tl_tensor_release(q), tl_tensor_release(z);
    return r;
}
