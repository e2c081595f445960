/* Selection by index or mask and the NaN-skipping reductions
 * (aten/src/ATen/native/TensorAdvancedIndexing.cpp, ReduceOps.cpp):
 * masked_select (+ backward), take, take_along_dim, nansum, nanmean.
 * Written over torchlet's operators (index with a bool mask, index_select,
 * gather, sum), with PyTorch's checks and messages. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "missing_ops.h"
#include "reduce_util.h"
#include "complex_ops.h"
#include "tl_autograd_formulas.h"
#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/broadcast_tensors.h"
#include "ops/broadcast_to.h"
#include "ops/div.h"
#include "ops/gather.h"
#include "ops/index.h"
#include "ops/index_put.h"
#include "ops/index_select.h"
#include "ops/isnan.h"
#include "ops/logical_not.h"
#include "ops/masked_fill.h"
#include "ops/masked_select.h"
#include "ops/masked_select_backward.h"
#include "ops/nanmean.h"
#include "ops/nansum.h"
#include "ops/remainder.h"
#include "ops/reshape.h"
#include "ops/sum.h"
#include "ops/take.h"
#include "ops/take_along_dim.h"
#include "ops/view.h"
#include "tl_structured.h"
#include "tl_tensor.h"

/* ------------------------------------------------------------ masked_select */

/* self and mask broadcast together (PyTorch's expand_outplace), a 0-dim
 * pair as one element (the index operators take no 0-dim bool index): 0 or -1 */
static int broadcast_pair(tl_tensor *a, tl_tensor *b, tl_tensor **ra, tl_tensor **rb) {
    tl_tensor *in[2] = {a, b}, **out = NULL;
    int64_t n = 0;
    if (tl_ops_broadcast_tensors(in, 2, &out, &n)) return -1;
    *ra = out[0];
    *rb = out[1];
    free(out);
    if ((*ra)->ndim == 0) {
        const int64_t one = 1;
        tl_tensor *x = tl_ops_reshape(*ra, &one, 1), *y = x ? tl_ops_reshape(*rb, &one, 1) : NULL;
        tl_tensor_release(*ra);
        tl_tensor_release(*rb);
        *ra = x;
        *rb = y;
        if (!y) {
            tl_tensor_release(x);
            return -1;
        }
    }
    return 0;
}

tl_tensor *tl_native_masked_select_cpu(tl_keyset ks, tl_tensor *self, tl_tensor *mask) {
    (void)ks;
    if (mask->dtype != TL_BOOL) return tl_set_error(TL_ERR_RUNTIME, "masked_select: expected BoolTensor for mask"), NULL;
    tl_tensor *s, *m;
    if (broadcast_pair(self, mask, &s, &m)) return NULL;
    /* a bool mask index: the selected elements in row-major order */
    tl_tensor *r = tl_ops_index_Tensor(s, &m, 1);
    tl_tensor_release(s);
    tl_tensor_release(m);
    return r;
}

tl_tensor *tl_native_masked_select_out_cpu(tl_keyset ks, tl_tensor *self, tl_tensor *mask, tl_tensor *out) {
    if (out->dtype != self->dtype)
        return tl_set_error(TL_ERR_RUNTIME, "masked_select(): self and result must have the same scalar type"), NULL;
    return tl_missing_copy_to_out(tl_native_masked_select_cpu(ks, self, mask), out);
}

/* zeros of the broadcast shape with grad written at the mask, summed back to
 * input's shape */
tl_tensor *tl_native_masked_select_backward(tl_keyset ks, tl_tensor *grad, tl_tensor *input, tl_tensor *mask) {
    (void)ks;
    tl_tensor *s, *m;
    if (broadcast_pair(input, mask, &s, &m)) return NULL;
    tl_tensor *z = tl_zeros(s->ndim, s->sizes, input->dtype, TL_CPU);
    tl_tensor_release(s);
    tl_tensor *r = z ? tl_ops_index_put(z, &m, 1, grad, false) : NULL;
    tl_tensor_release(z);
    tl_tensor_release(m);
    if (!r || (r->ndim == input->ndim && !memcmp(r->sizes, input->sizes, (size_t)r->ndim * sizeof(int64_t))))
        return r;
    tl_tensor *summed = tl_ag_sum_to(r, input->sizes, input->ndim);
    tl_tensor_release(r);
    return summed;
}

/* ------------------------------------------------------------ take */

/* index flattened, checked against self's numel and wrapped (PyTorch's take
 * messages); a new int64 tensor */
static tl_tensor *take_index(tl_tensor *self, tl_tensor *index) {
    if (index->dtype != TL_INT64)
        return tl_set_error(TL_ERR_RUNTIME, "take(): Expected a long tensor for index, but got %s",
                            tl_dtype_scalar_name(index->dtype)), NULL;
    const int64_t n = self->numel, m = index->numel;
    if (n == 0 && m != 0) return tl_set_error(TL_ERR_INDEX, "take(): tried to take from an empty tensor"), NULL;
    tl_tensor *flat = tl_reshape(index, 1, &m);
    tl_tensor *idx = flat ? tl_to_dtype(flat, TL_INT64, 1) : NULL;
    tl_tensor_release(flat);
    if (!idx) return NULL;
    int64_t *p = tl_tensor_data_ptr(idx);
    for (int64_t i = 0; i < m; i++) {
        if (p[i] < -n || p[i] >= n) {
            tl_set_error(TL_ERR_INDEX, "out of range: tried to access index %lld on a tensor of %lld elements.",
                         (long long)p[i], (long long)n);
            tl_tensor_release(idx);
            return NULL;
        }
        if (p[i] < 0) p[i] += n;
    }
    return idx;
}

tl_tensor *tl_native_take(tl_keyset ks, tl_tensor *self, tl_tensor *index) {
    (void)ks;
    tl_tensor *idx = take_index(self, index);
    if (!idx) return NULL;
    const int64_t n = self->numel;
    tl_tensor *flat = tl_reshape(self, 1, &n);
    tl_tensor *sel = flat ? tl_ops_index_select(flat, 0, idx) : NULL;
    tl_tensor *r = sel ? tl_reshape(sel, index->ndim, index->sizes) : NULL;
    tl_tensor_release(flat);
    tl_tensor_release(idx);
    tl_tensor_release(sel);
    return r;
}

tl_tensor *tl_native_take_out(tl_keyset ks, tl_tensor *self, tl_tensor *index, tl_tensor *out) {
    if (out->dtype != self->dtype)
        return tl_set_error(TL_ERR_RUNTIME, "take(): self and out expected to have the same dtype, but got self.dtype = %s and out.dtype = %s",
                            tl_dtype_scalar_name(self->dtype), tl_dtype_scalar_name(out->dtype)), NULL;
    return tl_missing_copy_to_out(tl_native_take(ks, self, index), out);
}

/* ------------------------------------------------------------ take_along_dim */

/* PyTorch's take_along_dim: self and indices broadcast except along dim, then
 * gather; without dim, both flattened (view(-1), as PyTorch) */
tl_tensor *tl_native_take_along_dim(tl_keyset ks, tl_tensor *self, tl_tensor *indices, int64_t dim, bool dim_has) {
    (void)ks;
    if (indices->dtype != TL_INT64)
        return tl_set_error(TL_ERR_RUNTIME, "torch.take_along_dim(): dtype of indices should be Long but got %s",
                            tl_dtype_scalar_name(indices->dtype)), NULL;
    if (!dim_has) {
        const int64_t m1 = -1;
        tl_tensor *a = tl_ops_view(self, &m1, 1), *b = a ? tl_ops_view(indices, &m1, 1) : NULL;
        tl_tensor *r = b ? tl_ops_gather(a, 0, b, false) : NULL;
        tl_tensor_release(a);
        tl_tensor_release(b);
        return r;
    }
    if (self->ndim != indices->ndim)
        return tl_set_error(TL_ERR_RUNTIME,
                            "torch.take_along_dim(): input and indices should have the same number of dimensions, "
                            "but got %lld dimensions for input, and %lld dimensions for indices",
                            (long long)self->ndim, (long long)indices->ndim), NULL;
    const int64_t d = tl__wrap_dim(dim, self->ndim, 1);
    if (d < 0) return NULL;
    const int64_t nd = self->ndim;
    int64_t ss[TL_MAX_DIMS], is[TL_MAX_DIMS];
    for (int64_t i = 0; i < nd; i++) {
        /* each takes the other's size where it is 1 (PyTorch's infer_size, its message) */
        const int64_t a = self->sizes[i], b = indices->sizes[i];
        if (i != d && a != b && a != 1 && b != 1)
            return tl_set_error(TL_ERR_RUNTIME,
                                "The size of tensor a (%lld) must match the size of tensor b (%lld) at non-singleton "
                                "dimension %lld", (long long)a, (long long)b, (long long)i), NULL;
        ss[i] = i == d ? a : (a == 1 ? b : a);
        is[i] = i == d ? b : (a == 1 ? b : a);
    }
    tl_tensor *sb = tl_ops_broadcast_to(self, ss, nd);
    tl_tensor *ib = sb ? tl_ops_broadcast_to(indices, is, nd) : NULL;
    /* PyTorch 2.13 takes indices along dim modulo its size (-1 and 5 of 5 are 4 and 0) */
    tl_tensor *iw = ib && ss[d] > 0 ? tl_ops_remainder_Scalar(ib, tl_scalar_from_int(ss[d])) : ib;
    if (iw && iw == ib) tl_tensor_retain(iw);
    tl_tensor *r = iw ? tl_ops_gather(sb, d, iw, false) : NULL;
    tl_tensor_release(sb);
    tl_tensor_release(ib);
    tl_tensor_release(iw);
    return r;
}

tl_tensor *tl_native_take_along_dim_out(tl_keyset ks, tl_tensor *self, tl_tensor *indices, int64_t dim, bool dim_has,
                                        tl_tensor *out) {
    return tl_missing_copy_to_out(tl_native_take_along_dim(ks, self, indices, dim, dim_has), out);
}

/* ------------------------------------------------------------ nansum / nanmean */

/* integers: sum; floats: sum's reduction with NaN read as 0 inside its loops
 * (tl_rd_nansum); a float input with an integer dtype= is zeroed first, then
 * summed (the conversion of NaN to an integer is undefined) */
tl_tensor *tl_native_nansum(tl_keyset ks, tl_tensor *self, const int64_t *dim, int64_t dim_len, bool keepdim,
                            tl_dtype dtype) {
    (void)ks;
    if (tl__refuse_complex(self, 0, "nansum on CPU does not support complex inputs")) return NULL;
    if (!tl_dtype_is_floating(self->dtype)) return tl_ops_sum_dim_IntList(self, dim, dim_len, keepdim, dtype);
    if (dtype == TL_DTYPE_UNDEFINED || tl_dtype_is_floating(dtype))
        return tl_rd_nansum(self, dim, dim_len, keepdim, dtype);
    tl_tensor *nan = tl_ops_isnan(self);
    tl_tensor *z = nan ? tl_ops_masked_fill_Scalar(self, nan, tl_scalar_from_double(0.0)) : NULL;
    tl_tensor *r = z ? tl_ops_sum_dim_IntList(z, dim, dim_len, keepdim, dtype) : NULL;
    tl_tensor_release(nan);
    tl_tensor_release(z);
    return r;
}

tl_tensor *tl_native_nansum_out(tl_keyset ks, tl_tensor *self, const int64_t *dim, int64_t dim_len, bool keepdim,
                                tl_dtype dtype, tl_tensor *out) {
    return tl_missing_copy_to_out(tl_native_nansum(ks, self, dim, dim_len, keepdim, dtype), out);
}

/* nansum divided by the count of non-NaN elements */
tl_tensor *tl_native_nanmean(tl_keyset ks, tl_tensor *self, const int64_t *dim, int64_t dim_len, bool keepdim,
                             tl_dtype dtype) {
    (void)ks;
    if (!tl_dtype_is_floating(self->dtype))
        return tl_set_error(TL_ERR_RUNTIME, "nanmean(): expected input to have floating point or complex dtype but got %s",
                            tl_dtype_scalar_name(self->dtype)), NULL;
    tl_tensor *nan = tl_ops_isnan(self);
    tl_tensor *keep = nan ? tl_ops_logical_not(nan) : NULL;
    tl_tensor *cnt = keep ? tl_ops_sum_dim_IntList(keep, dim, dim_len, keepdim, TL_DTYPE_UNDEFINED) : NULL;
    tl_tensor *s = cnt ? tl_ops_nansum(self, dim, dim_len, keepdim, dtype) : NULL;
    tl_tensor *r = s ? tl_ops_div_Tensor(s, cnt) : NULL;
    tl_tensor_release(nan);
    tl_tensor_release(keep);
    tl_tensor_release(cnt);
    tl_tensor_release(s);
    return r;
}

tl_tensor *tl_native_nanmean_out(tl_keyset ks, tl_tensor *self, const int64_t *dim, int64_t dim_len, bool keepdim,
                                 tl_dtype dtype, tl_tensor *out) {
    return tl_missing_copy_to_out(tl_native_nanmean(ks, self, dim, dim_len, keepdim, dtype), out);
}
