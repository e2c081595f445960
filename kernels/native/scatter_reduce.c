/* scatter_reduce.two and index_reduce (yaml/native_functions.yaml, block
 * "scatter / index reductions and sign predicates"), both structured.
 *
 * PyTorch's CPU semantics: out starts as self (with include_self=False the
 * reduced positions are first set to the reduction's identity); each source
 * element is combined into its target in index order, in the tensor's own
 * dtype (float16 / bfloat16 through float, rounded per step, like c10::Half
 * arithmetic); amax / amin propagate NaN (std::max / std::min with a NaN
 * source winning); mean sums, then divides by the count of contributions
 * (plus one for self when included; floor division for integers). */
#include <math.h>
#include <stdint.h>

#include "shape_index.h"
#include "tl_half.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/add.h"
#include "ops/div.h"
#include "ops/eq.h"
#include "ops/index_add.h"
#include "ops/index_fill.h"
#include "ops/index_reduce.h"
#include "ops/masked_fill.h"
#include "ops/maximum.h"
#include "ops/minimum.h"
#include "ops/mul.h"
#include "ops/ones_like.h"
#include "ops/scatter.h"
#include "ops/scatter_add.h"
#include "ops/scatter_reduce.h"
#include "ops/zeros_like.h"
#include "tl_structured.h"

enum { SR_SUM, SR_PROD, SR_MEAN, SR_AMAX, SR_AMIN };

typedef struct {
    int op;
    tl_dtype dt;
} sr_ctx;

/* scatter_reduce's names (PyTorch's get_operator_enum with the new options) */
static int scatter_reduce_op(const char *reduce, int *op) {
    static const char *names[] = {"sum", "prod", "mean", "amax", "amin"};
    for (int k = 0; k < 5; k++)
        if (!strcmp(reduce, names[k])) {
            *op = k;
            return 0;
        }
    return tl_set_error(TL_ERR_RUNTIME, "reduce argument must be either sum, prod, mean, amax or amin, got %s", reduce);
}

/* index_reduce's names (no sum: that is index_add) */
static int index_reduce_op(const char *reduce, int *op) {
    if (strcmp(reduce, "sum") && !scatter_reduce_op(reduce, op)) return 0;
    tl_clear_error();
    return tl_set_error(TL_ERR_RUNTIME, "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but "
                                        "got %s.", reduce);
}

/* the value the reduced positions start from when self is excluded */
static tl_scalar sr_identity(tl_dtype dt, int op) {
    if (op == SR_PROD) return tl_scalar_from_int(1);
    if (op != SR_AMAX && op != SR_AMIN) return tl_scalar_from_int(0);
    const int mx = op == SR_AMAX;   /* amax starts from the lowest value */
    switch (dt) {
    case TL_BOOL: return tl_scalar_from_bool(!mx);
    case TL_UINT8: return tl_scalar_from_int(mx ? 0 : UINT8_MAX);
    case TL_INT8: return tl_scalar_from_int(mx ? INT8_MIN : INT8_MAX);
    case TL_INT16: return tl_scalar_from_int(mx ? INT16_MIN : INT16_MAX);
    case TL_INT32: return tl_scalar_from_int(mx ? INT32_MIN : INT32_MAX);
    case TL_INT64: return tl_scalar_from_int(mx ? INT64_MIN : INT64_MAX);
    default: return tl_scalar_from_double(mx ? -INFINITY : INFINITY);
    }
}

/* one step a <- a (op) b; integers wrap through the unsigned type U */
#define SR_STEP(a, b, op, U)                                                   \
    switch (op) {                                                              \
    case SR_PROD: a = (__typeof__(a))((U)a * (U)b); break;                     \
    case SR_AMAX: a = (b != b) ? b : (a < b ? b : a); break;                   \
    case SR_AMIN: a = (b != b) ? b : (b < a ? b : a); break;                   \
    default: a = (__typeof__(a))((U)a + (U)b); break;                          \
    }

#define SR_NATIVE(T, U)                                                        \
    static void sr_##T(char *src, char *x, const void *cp) {                   \
        T a, b;                                                                \
        memcpy(&a, x, sizeof a);                                               \
        memcpy(&b, src, sizeof b);                                             \
        SR_STEP(a, b, ((const sr_ctx *)cp)->op, U)                             \
        memcpy(x, &a, sizeof a);                                               \
    }
SR_NATIVE(uint8_t, uint8_t)
SR_NATIVE(int8_t, uint8_t)
SR_NATIVE(int16_t, uint16_t)
SR_NATIVE(int32_t, uint32_t)
SR_NATIVE(int64_t, uint64_t)
SR_NATIVE(float, float)
SR_NATIVE(double, double)

/* float16 / bfloat16: through float, rounded back each step */
static void sr_half(char *src, char *x, const void *cp) {
    const sr_ctx *c = cp;
    uint16_t ha, hb;
    memcpy(&ha, x, 2);
    memcpy(&hb, src, 2);
    const int bf = c->dt == TL_BFLOAT16;
    float a = bf ? tl_bf16_to_f32(ha) : tl_f16_to_f32(ha), b = bf ? tl_bf16_to_f32(hb) : tl_f16_to_f32(hb);
    SR_STEP(a, b, c->op, float)
    ha = bf ? tl_f32_to_bf16(a) : tl_f32_to_f16(a);
    memcpy(x, &ha, 2);
}

/* bool: sum / mean or, prod and; max or, min and */
static void sr_bool(char *src, char *x, const void *cp) {
    const int op = ((const sr_ctx *)cp)->op;
    const int and_ = op == SR_PROD || op == SR_AMIN;
    *x = and_ ? (*x && *src) : (*x || *src);
}

static si_elem_fn sr_fn(tl_dtype dt) {
    switch (dt) {
    case TL_BOOL: return sr_bool;
    case TL_UINT8: return sr_uint8_t;
    case TL_INT8: return sr_int8_t;
    case TL_INT16: return sr_int16_t;
    case TL_INT32: return sr_int32_t;
    case TL_INT64: return sr_int64_t;
    case TL_FLOAT16:
    case TL_BFLOAT16: return sr_half;
    case TL_FLOAT32: return sr_float;
    default: return sr_double;
    }
}

/* mean: out /= max(count, 1), count = (include_self ? 1 : 0) + contributions,
 * counted by `add_ones` (scatter_add_ / index_add_ of ones like the source) */
static int sr_mean_divide(tl_tensor *out, tl_tensor *src, bool include_self,
                          int (*add_ones)(tl_tensor *count, tl_tensor *ones, const void *ctx), const void *ctx) {
    tl_tensor *ones = tl_ops_ones_like(src, TL_DTYPE_UNDEFINED, -1, -1, false, false, -1);
    tl_tensor *count = !ones ? NULL
                     : include_self ? tl_ops_ones_like(out, TL_DTYPE_UNDEFINED, -1, -1, false, false, -1)
                                    : tl_ops_zeros_like(out, TL_DTYPE_UNDEFINED, -1, -1, false, false, -1);
    int rc = count && !add_ones(count, ones, ctx) ? 0 : -1;
    tl_tensor *zero = rc ? NULL : tl_ops_eq_Scalar(count, tl_scalar_from_int(0));
    tl_tensor *r = zero ? tl_ops_masked_fill__Scalar(count, zero, tl_scalar_from_int(1)) : NULL;
    tl_tensor *q = !r ? NULL
                 : tl__dtype_is_floating(out->dtype) ? tl_ops_div__Tensor(out, count)
                                                     : tl_ops_div__Tensor_mode(out, count, "floor");
    rc = q ? 0 : -1;
    tl_tensor_release(q);
    tl_tensor_release(r);
    tl_tensor_release(zero);
    tl_tensor_release(count);
    tl_tensor_release(ones);
    return rc;
}

/* ------------------------------------------------------------ scatter_reduce */

int tl_meta_scatter_reduce_two(tl_structured *s, tl_tensor *self, int64_t dim, tl_tensor *index, tl_tensor *src,
                               const char *reduce, bool include_self) {
    (void)include_self;
    int op;
    if (si_scatter_meta(s, self, dim, index, src)) return -1;
    return scatter_reduce_op(reduce, &op);
}

typedef struct {
    int64_t dim;
    tl_tensor *index;
} sr_scatter_ctx;

static int sr_scatter_ones(tl_tensor *count, tl_tensor *ones, const void *cp) {
    const sr_scatter_ctx *c = cp;
    tl_tensor *r = tl_ops_scatter_add_(count, c->dim, c->index, ones);
    tl_tensor_release(r);
    return r ? 0 : -1;
}

int tl_impl_scatter_reduce_two(tl_structured *s, tl_tensor *self, int64_t dim, tl_tensor *index, tl_tensor *src,
                               const char *reduce, bool include_self, tl_tensor *out) {
    (void)s;
    int op;
    if (scatter_reduce_op(reduce, &op)) return -1;
    if (op == SR_MEAN && out->dtype == TL_BOOL)
        return tl_set_error(TL_ERR_NOT_IMPLEMENTED,
                            "\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'");
    const int64_t d = tl__wrap_dim(dim, self->ndim, 1);
    if (out != self && tl_copy_(out, self)) return -1;
    if (index->numel == 0) return 0;
    if (!include_self) {
        tl_tensor *r = tl_ops_scatter__value(out, d, index, sr_identity(out->dtype, op));
        if (!r) return -1;
        tl_tensor_release(r);
    }
    const sr_ctx c = {op, out->dtype};
    if (si_scatter_run(index, src, out, d, sr_fn(out->dtype), &c)) return -1;
    const sr_scatter_ctx sc = {d, index};
    return op == SR_MEAN ? sr_mean_divide(out, src, include_self, sr_scatter_ones, &sc) : 0;
}

/* -------------------------------------------------------------- index_reduce */

int tl_meta_index_reduce(tl_structured *s, tl_tensor *self, int64_t dim, tl_tensor *index, tl_tensor *source,
                         const char *reduce, bool include_self) {
    (void)include_self;
    int op;
    if (index_reduce_op(reduce, &op)) return -1;
    return si_index_func_meta(s, self, dim, index, source, "index_reduce");
}

static int sr_index_ones(tl_tensor *count, tl_tensor *ones, const void *cp) {
    const sr_scatter_ctx *c = cp;
    tl_tensor *r = tl_ops_index_add_(count, c->dim, c->index, ones, tl_scalar_from_int(1));
    tl_tensor_release(r);
    return r ? 0 : -1;
}

/* o <- o (op) v, elementwise over one slice (maximum / minimum propagate NaN
 * from either side, as std::max / std::min with the NaN-source rule do) */
static int ir_slice(tl_tensor *o, tl_tensor *v, int op) {
    tl_tensor *r = op == SR_PROD   ? tl_ops_mul__Tensor(o, v)
                 : op == SR_AMAX ? tl_ops_maximum_out(o, v, o)
                 : op == SR_AMIN ? tl_ops_minimum_out(o, v, o)
                                 : tl_ops_add__Tensor(o, v, tl_scalar_from_int(1));
    tl_tensor_release(r);
    return r ? 0 : -1;
}

/* out <- self, then out.select(dim, index[i]) (op)= source.select(dim, i) */
int tl_impl_index_reduce_cpu_out(tl_structured *s, tl_tensor *self, int64_t dim, tl_tensor *index, tl_tensor *source,
                                 const char *reduce, bool include_self, tl_tensor *out) {
    (void)s;
    TL_WARN_ONCE("index_reduce() is in beta and the API may change at any time.");
    int op;
    if (index_reduce_op(reduce, &op)) return -1;
    if (out->dtype == TL_BOOL)   /* PyTorch's dispatch has no Bool loop */
        return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"index_func_\" not implemented for 'Bool'");
    const int64_t d = tl__wrap_dim(dim, self->ndim, 1), n = index->numel, size = self->ndim ? self->sizes[d] : 1;
    if (out != self && tl_copy_(out, self)) return -1;
    tl_tensor *ix = tl_to_dtype(index, TL_INT64, 0);
    tl_tensor *ixc = ix ? tl_contiguous(ix) : NULL;
    tl_tensor_release(ix);
    if (!ixc) return -1;
    int rc = 0;
    if (!include_self) {
        tl_tensor *r = tl_ops_index_fill__int_Scalar(out, d, ixc, sr_identity(out->dtype, op));
        rc = r ? 0 : -1;
        tl_tensor_release(r);
    }
    const int64_t *idx = (const int64_t *)tl__data(ixc);
    for (int64_t i = 0; i < n && !rc; i++)
        if (idx[i] < 0 || idx[i] >= size) rc = tl_set_error(TL_ERR_INDEX, "index out of range in self");
    for (int64_t i = 0; i < n && !rc; i++) {
        tl_tensor *o = self->ndim ? tl_select(out, d, idx[i]) : tl_alias(out);
        tl_tensor *v = source->ndim ? tl_select(source, d, i) : tl_alias(source);
        rc = o && v ? ir_slice(o, v, op) : -1;
        tl_tensor_release(o);
        tl_tensor_release(v);
    }
    const sr_scatter_ctx sc = {d, ixc};
    if (!rc && op == SR_MEAN) rc = sr_mean_divide(out, source, include_self, sr_index_ones, &sc);
    tl_tensor_release(ixc);
    return rc;
}
