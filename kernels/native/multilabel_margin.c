/* multilabel_margin_loss (CompositeImplicitAutograd: the output of
 * multilabel_margin_loss_forward), multilabel_margin_loss_forward and
 * multilabel_margin_loss_backward (CPU), PyTorch 2.13's
 * LossMultiLabelMargin.cpp: per row, the targets up to the first -1 mark
 * is_target; loss = sum over targets j and non-targets d of max(0, 1 -
 * x[j] + x[d]) / dim, summed in double (PyTorch's CPU accumulate type),
 * each row's sum rounded to the input dtype as PyTorch's inner function
 * returns it. float32 / float64 only (PyTorch's dispatch). Rows are
 * independent and cheap; they run serially. */
#include <stdlib.h>
#include <string.h>

#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/multilabel_margin_loss.h"
#include "ops/multilabel_margin_loss_backward.h"
#include "ops/multilabel_margin_loss_forward.h"
#include "tl_tensor.h"
#include "nn_common.h"

enum { RED_NONE = 0, RED_MEAN = 1, RED_SUM = 2 };

/* PyTorch's multilabel_margin_loss_shape_check: nframe, dim */
static int shape_check(const tl_tensor *x, const tl_tensor *t, int64_t *nframe, int64_t *dim) {
    const int64_t nd = tl_tensor_ndim(x), *s = tl_tensor_sizes(x);
    char a[256], b[256];
    fmt_shape(a, sizeof a, s, nd);
    fmt_shape(b, sizeof b, tl_tensor_sizes(t), tl_tensor_ndim(t));
    if (!((nd == 2 && s[1] != 0) || (nd == 1 && s[0] != 0) || nd == 0))
        return tl_set_error(TL_ERR_RUNTIME, "Expected non-empty vector or matrix with optional 0-dim batch size, but "
                            "got: %s", a);
    int ok;
    if (nd <= 1) {
        *nframe = 1;
        *dim = nd == 0 ? 1 : s[0];
        ok = tl_tensor_ndim(t) <= 1 && tl_tensor_numel(t) == *dim;
    } else {
        *nframe = s[0];
        *dim = s[1];
        ok = tl_tensor_ndim(t) == 2 && tl_tensor_sizes(t)[0] == *nframe && tl_tensor_sizes(t)[1] == *dim;
    }
    if (!ok) return tl_set_error(TL_ERR_RUNTIME, "inconsistent target size: %s for input of size: %s", b, a);
    return 0;
}

static int check_dtype(const tl_tensor *x, const char *name) {
    const tl_dtype dt = tl_tensor_dtype(x);
    if (dt == TL_FLOAT32 || dt == TL_FLOAT64) return 0;
    return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", name, tl_dtype_scalar_name(dt));
}

/* the per-frame loop, forward (row sums into rows[]) or backward (grad rows) */
#define MLM(T)                                                                                                        \
    static void fwd_##T(const T *x, const int64_t *tg, T *ist, int64_t nframe, int64_t dim, double *rows) {           \
        for (int64_t f = 0; f < nframe; f++, x += dim, tg += dim, ist += dim) {                                       \
            for (int64_t k = 0; k < dim && tg[k] >= 0; k++) ist[tg[k]] = 1;                                           \
            double sum = 0;                                                                                           \
            for (int64_t k = 0; k < dim && tg[k] >= 0; k++) {                                                         \
                const T xt = x[tg[k]];                                                                                \
                for (int64_t d = 0; d < dim; d++)                                                                     \
                    if (ist[d] == 0) {                                                                                \
                        const T z = 1 - xt + x[d];                                                                    \
                        if (z > 0) sum += z;                                                                          \
                    }                                                                                                 \
            }                                                                                                         \
            rows[f] = (double)(T)sum;                                                                                 \
        }                                                                                                             \
    }                                                                                                                 \
    static void bwd_##T(const T *x, const int64_t *tg, const T *ist, int64_t nframe, int64_t dim, T g, T *gi) {       \
        for (int64_t f = 0; f < nframe; f++, x += dim, tg += dim, ist += dim, gi += dim)                              \
            for (int64_t k = 0; k < dim && tg[k] >= 0; k++) {                                                         \
                const int64_t j = tg[k];                                                                              \
                const T xt = x[j];                                                                                    \
                for (int64_t d = 0; d < dim; d++)                                                                     \
                    if (ist[d] == 0) {                                                                                \
                        const T z = 1 - xt + x[d];                                                                    \
                        if (z > 0) {                                                                                  \
                            gi[j] -= g;                                                                               \
                            gi[d] += g;                                                                               \
                        }                                                                                             \
                    }                                                                                                 \
            }                                                                                                         \
    }
MLM(float)
MLM(double)

/* target values in [-1, dim) (PyTorch's "target is out of range") */
static int check_range(const tl_tensor *t, int64_t dim) {
    const int64_t *v = tl_tensor_data_ptr(t);
    for (int64_t i = 0, n = tl_tensor_numel(t); i < n; i++)
        if (v[i] < -1 || v[i] >= (dim > 0 ? dim : 1))
            return tl_set_error(TL_ERR_RUNTIME, "argument #2 'target' is out of range");
    return 0;
}

int tl_native_multilabel_margin_loss_forward_cpu(tl_keyset ks, tl_tensor *self, tl_tensor *target, int64_t reduction,
                                                 tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    int64_t nframe, dim;
    if (shape_check(self, target, &nframe, &dim)) return -1;
    if (tl_tensor_dtype(target) != TL_INT64)
        return tl_set_error(TL_ERR_RUNTIME, "Expected tensor for argument #2 'target' to have one of the following "
                            "scalar types: Long; but got %s instead (while checking arguments for "
                            "multilabel_margin_loss_forward_out_cpu_template)",
                            tl_dtype_caffe2_name(tl_tensor_dtype(target)));
    if (check_dtype(self, "multilabel_margin_loss_forward_out_frame")) return -1;
    const tl_dtype dt = tl_tensor_dtype(self);
    const int scalar = reduction != RED_NONE || tl_tensor_ndim(target) <= 1;
    tl_tensor *x = tl_contiguous(self), *t = x ? tl_contiguous(target) : NULL;
    tl_tensor *ist = t ? tl_zeros(tl_tensor_ndim(target), tl_tensor_sizes(target), dt, TL_CPU) : NULL;
    tl_tensor *out = ist ? tl_empty(scalar ? 0 : 1, &nframe, dt, TL_CPU) : NULL;
    double *rows = out ? calloc((size_t)(nframe > 0 ? nframe : 1), sizeof(double)) : NULL;
    int rc = -1;
    if (!rows) goto done;
    if (tl_tensor_numel(self) == 0) {
        if (scalar) rc = tl_fill_(out, tl_scalar_from_double(0));
        else rc = 0;
        goto done_ok;
    }
    if (check_range(t, dim)) goto done;
    if (dt == TL_FLOAT32) fwd_float(tl_tensor_data_ptr(x), tl_tensor_data_ptr(t), tl_tensor_data_ptr(ist), nframe, dim, rows);
    else fwd_double(tl_tensor_data_ptr(x), tl_tensor_data_ptr(t), tl_tensor_data_ptr(ist), nframe, dim, rows);
    if (scalar) {
        double sum = 0;
        for (int64_t f = 0; f < nframe; f++) sum += rows[f];
        sum /= (double)dim;
        if (reduction == RED_MEAN) sum /= (double)nframe;
        rc = tl_fill_(out, tl_scalar_from_double(sum));
    } else {
        for (int64_t f = 0; f < nframe; f++) {
            if (dt == TL_FLOAT32) ((float *)tl_tensor_data_ptr(out))[f] = (float)(rows[f] / (double)dim);
            else ((double *)tl_tensor_data_ptr(out))[f] = rows[f] / (double)dim;
        }
        rc = 0;
    }
done_ok:
    if (rc == 0) {
        *ret0 = out;
        *ret1 = ist;
        out = ist = NULL;
    }
done:
    free(rows);
    tl_tensor_release(x);
    tl_tensor_release(t);
    tl_tensor_release(ist);
    tl_tensor_release(out);
    return rc;
}

tl_tensor *tl_native_multilabel_margin_loss_backward_cpu(tl_keyset ks, tl_tensor *grad_output, tl_tensor *self,
                                                         tl_tensor *target, int64_t reduction, tl_tensor *is_target) {
    (void)ks;
    int64_t nframe, dim;
    if (shape_check(self, target, &nframe, &dim) || check_dtype(self, "multilabel_margin_loss_backward_out_frame"))
        return NULL;
    if (tl_tensor_ndim(is_target) != tl_tensor_ndim(target) ||
        memcmp(tl_tensor_sizes(is_target), tl_tensor_sizes(target), (size_t)tl_tensor_ndim(target) * sizeof(int64_t))) {
        tl_set_error(TL_ERR_RUNTIME, "inconsistent is_target size");
        return NULL;
    }
    const tl_dtype dt = tl_tensor_dtype(self);
    const int scalar = reduction != RED_NONE || tl_tensor_ndim(grad_output) == 0;
    if (!scalar && (tl_tensor_ndim(grad_output) != 1 || tl_tensor_sizes(grad_output)[0] != nframe)) {
        tl_set_error(TL_ERR_RUNTIME, "inconsistent grad_output size");
        return NULL;
    }
    tl_tensor *x = tl_contiguous(self), *t = x ? tl_contiguous(target) : NULL;
    tl_tensor *ist = t ? contig_as(is_target, dt) : NULL, *go = ist ? contig_as(grad_output, TL_FLOAT64) : NULL;
    tl_tensor *gi = go ? tl_zeros(tl_tensor_ndim(self), tl_tensor_sizes(self), dt, TL_CPU) : NULL;
    if (gi && tl_tensor_numel(self) > 0) {
        if (check_range(t, dim)) {
            tl_tensor_release(gi);
            gi = NULL;
        } else {
            const double g = reduction == RED_MEAN ? 1. / (double)(nframe * dim) : 1. / (double)dim;
            const double *gv = tl_tensor_data_ptr(go);
            if (dt == TL_FLOAT32)
                bwd_float(tl_tensor_data_ptr(x), tl_tensor_data_ptr(t), tl_tensor_data_ptr(ist), nframe, dim,
                          (float)g, tl_tensor_data_ptr(gi));
            else
                bwd_double(tl_tensor_data_ptr(x), tl_tensor_data_ptr(t), tl_tensor_data_ptr(ist), nframe, dim, g,
                           tl_tensor_data_ptr(gi));
            /* scaled by grad_output: one value, or one per row */
            for (int64_t f = 0; f < nframe; f++)
                for (int64_t d = 0; d < dim; d++) {
                    const double s = gv[scalar ? 0 : f];
                    if (dt == TL_FLOAT32) ((float *)tl_tensor_data_ptr(gi))[f * dim + d] *= (float)s;
                    else ((double *)tl_tensor_data_ptr(gi))[f * dim + d] *= s;
                }
        }
    }
    tl_tensor_release(x);
    tl_tensor_release(t);
    tl_tensor_release(ist);
    tl_tensor_release(go);
    return gi;
}

/* multilabel_margin_loss (CompositeImplicitAutograd): the forward's output */
tl_tensor *tl_native_multilabel_margin_loss(tl_keyset ks, tl_tensor *self, tl_tensor *target, int64_t reduction) {
    (void)ks;
    tl_tensor *out = NULL, *ist = NULL;
    if (tl_ops_multilabel_margin_loss_forward(self, target, reduction, &out, &ist)) return NULL;
    tl_tensor_release(ist);
    return out;
}
