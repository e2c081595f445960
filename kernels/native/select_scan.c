/* logcumsumexp and masked_scatter (aten/src/ATen/native/ReduceOps.cpp,
 * cpu/ReduceOpsKernel.cpp, TensorAdvancedIndexing.cpp).
 *
 * logcumsumexp scans rows (dim moved last, contiguous) with PyTorch's
 * log_add_exp step: log1p(exp(min - max)) + max, NaN carried along, equal
 * infinities kept as they are; float64 rows in double, the other floating
 * dtypes in float. Rows run on the thread pool. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "missing_ops.h"
#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/_logcumsumexp.h"
#include "ops/broadcast_tensors.h"
#include "ops/cat.h"
#include "ops/clone.h"
#include "ops/expand.h"
#include "ops/index_put.h"
#include "ops/logcumsumexp.h"
#include "ops/masked_scatter.h"
#include "ops/masked_scatter_backward.h"
#include "ops/masked_select.h"
#include "ops/slice.h"
#include "ops/sum.h"
#include "ops/view.h"
#include "tl_structured.h"
#include "tl_tensor.h"

/* ------------------------------------------------------------ logcumsumexp */

typedef struct {
    char *data;   /* rows of n elements, scanned in place */
    bool dbl;
    int64_t n;
} lcse_job;

#define LOG_ADD_EXP(T, LOG1P, EXP, x, y, out)                          \
    do {                                                               \
        const T mn_ = isnan(y) ? (y) : ((y) < (x) ? (y) : (x));        \
        const T mx_ = isnan(y) ? (y) : ((x) < (y) ? (y) : (x));        \
        if (mn_ != mx_ || isfinite(mn_)) (out) = LOG1P(EXP(mn_ - mx_)) + mx_; \
        else (out) = (x);                                              \
    } while (0)

static void lcse_rows(int64_t begin, int64_t end, void *ctx) {
    const lcse_job *j = ctx;
    for (int64_t r = begin; r < end; r++) {
        if (j->dbl) {
            double *p = (double *)j->data + r * j->n, acc = -INFINITY;
            for (int64_t i = 0; i < j->n; i++) {
                LOG_ADD_EXP(double, log1p, exp, p[i], acc, acc);
                p[i] = acc;
            }
        } else {
            float *p = (float *)j->data + r * j->n, acc = -INFINITY;
            for (int64_t i = 0; i < j->n; i++) {
                LOG_ADD_EXP(float, log1pf, expf, p[i], acc, acc);
                p[i] = acc;
            }
        }
    }
}

tl_tensor *tl_native__logcumsumexp_cpu(tl_keyset ks, tl_tensor *self, int64_t dim) {
    (void)ks;
    if (!tl_dtype_is_floating(self->dtype))
        return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"logcumsumexp_out_cpu\" not implemented for '%s'",
                            tl_dtype_scalar_name(self->dtype)), NULL;
    const int64_t d = tl__wrap_dim(dim, self->ndim, 1);
    if (d < 0) return NULL;
    if (self->ndim == 0 || self->numel == 0) return tl_to_dtype(self, self->dtype, 1);
    const int64_t nd = self->ndim, n = self->sizes[d];
    const bool dbl = self->dtype == TL_FLOAT64;
    tl_tensor *moved = tl_transpose(self, d, nd - 1);
    tl_tensor *w = moved ? tl_to_dtype(moved, dbl ? TL_FLOAT64 : TL_FLOAT32, 1) : NULL;   /* a fresh contiguous copy */
    tl_tensor *c = w ? tl_contiguous(w) : NULL;
    tl_tensor_release(moved);
    tl_tensor_release(w);
    if (!c) return NULL;
    lcse_job j = {tl_tensor_data_ptr(c), dbl, n};
    tl_parallel_for(c->numel / n, n >= 4096 ? 1 : 1 + 4096 / n, lcse_rows, &j);
    tl_tensor *back = tl_transpose(c, d, nd - 1);
    tl_tensor *r = back ? tl_to_dtype(back, self->dtype, 0) : NULL;
    tl_tensor *rc = r ? tl_contiguous(r) : NULL;
    tl_tensor_release(c);
    tl_tensor_release(back);
    tl_tensor_release(r);
    return rc;
}

tl_tensor *tl_native__logcumsumexp_out_cpu(tl_keyset ks, tl_tensor *self, int64_t dim, tl_tensor *out) {
    return tl_missing_copy_to_out(tl_native__logcumsumexp_cpu(ks, self, dim), out);
}

tl_tensor *tl_native_logcumsumexp(tl_keyset ks, tl_tensor *self, int64_t dim) {
    (void)ks;
    return tl_ops__logcumsumexp(self, dim);
}

tl_tensor *tl_native_logcumsumexp_out(tl_keyset ks, tl_tensor *self, int64_t dim, tl_tensor *out) {
    (void)ks;
    if (out->dtype != self->dtype)
        return tl_set_error(TL_ERR_RUNTIME, "Expected out tensor to have dtype %s, but got %s instead",
                            tl_dtype_caffe2_name(self->dtype), tl_dtype_caffe2_name(out->dtype)), NULL;
    return tl_ops__logcumsumexp_out(self, dim, out);
}

/* ------------------------------------------------------------ masked_scatter */

/* source's first elements, in order, written where the mask (broadcast to
 * self) is true */
tl_tensor *tl_native_masked_scatter__cpu(tl_keyset ks, tl_tensor *self, tl_tensor *mask, tl_tensor *source) {
    (void)ks;
    if (source->dtype != self->dtype)
        return tl_set_error(TL_ERR_RUNTIME, "masked_scatter: expected self and source to have same dtypes but got%s and %s",
                            tl_dtype_scalar_name(self->dtype), tl_dtype_scalar_name(source->dtype)), NULL;
    if (mask->dtype != TL_BOOL)
        return tl_set_error(TL_ERR_RUNTIME, "masked_scatter_ only supports boolean masks, but got mask with dtype %s",
                            tl_dtype_scalar_name(mask->dtype)), NULL;
    tl_tensor *m = tl_ops_expand(mask, self->sizes, self->ndim, false);
    tl_tensor *cnt = m ? tl_ops_sum_dim_IntList(m, NULL, 0, false, TL_INT64) : NULL;
    tl_scalar c;
    tl_tensor *res = NULL, *flat = NULL, *part = NULL;
    if (!cnt || tl_tensor_item(cnt, &c)) goto done;
    if (source->numel < c.i) {
        tl_set_error(TL_ERR_RUNTIME, "Number of elements of source < number of ones in mask");
        goto done;
    }
    const int64_t n = source->numel;
    flat = tl_reshape(source, 1, &n);
    part = flat ? tl_ops_slice_Tensor(flat, 0, 0, true, c.i, true, 1) : NULL;
    res = part ? tl_ops_index_put_(self, &m, 1, part, false) : NULL;
done:
    tl_tensor_release(m);
    tl_tensor_release(cnt);
    tl_tensor_release(flat);
    tl_tensor_release(part);
    return res;
}

/* self and mask broadcast together, a contiguous copy of self scattered into */
tl_tensor *tl_native_masked_scatter(tl_keyset ks, tl_tensor *self, tl_tensor *mask, tl_tensor *source) {
    (void)ks;
    tl_tensor *in[2] = {mask, self}, **bt = NULL;
    int64_t nb = 0;
    if (tl_ops_broadcast_tensors(in, 2, &bt, &nb)) return NULL;
    tl_tensor *c = tl_ops_clone(bt[1], TL_CONTIGUOUS_FORMAT);
    tl_tensor *r = c ? tl_ops_masked_scatter_(c, bt[0], source) : NULL;
    tl_tensor_release(c);
    tl_tensor_list_free(bt, nb);
    return r;
}

/* grad at the mask, zero-padded to sizes' element count, viewed as sizes */
tl_tensor *tl_native_masked_scatter_backward_symint(tl_keyset ks, tl_tensor *grad_output, tl_tensor *mask,
                                                    const int64_t *sizes, int64_t sizes_len) {
    (void)ks;
    int64_t numel = 1;
    for (int64_t i = 0; i < sizes_len; i++) numel *= sizes[i];
    tl_tensor *sel = tl_ops_masked_select(grad_output, mask);
    if (!sel) return NULL;
    const int64_t diff = numel - sel->numel;
    if (diff > 0) {
        tl_tensor *z = tl_zeros(1, &diff, grad_output->dtype, TL_CPU);
        tl_tensor *parts[2] = {sel, z};
        tl_tensor *cat = z ? tl_ops_cat(parts, 2, 0) : NULL;
        tl_tensor_release(z);
        tl_tensor_release(sel);
        if (!cat) return NULL;
        sel = cat;
    }
    tl_tensor *r = tl_ops_view(sel, sizes, sizes_len);
    tl_tensor_release(sel);
    return r;
}
