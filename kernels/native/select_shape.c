/* block_diag and unique_consecutive (aten/src/ATen/native/TensorShape.cpp,
 * Unique.cpp). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tl_autograd_formulas.h"
#include "tl_error.h"
#include "tl_internal.h"
#include "tl_iter.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/block_diag.h"
#include "ops/index_select.h"
#include "ops/narrow.h"
#include "ops/reshape.h"
#include "ops/unique_consecutive.h"
#include "ops/unique_dim_consecutive.h"
#include "ops/zeros.h"
#include "tl_tensor.h"

/* ------------------------------------------------------------ block_diag */

/* each input's extent: 2-d as is, 1-d as one row, 0-d as 1 x 1 */
static void block_extent(int64_t nd, const int64_t *sizes, int64_t *d0, int64_t *d1) {
    *d0 = nd == 2 ? sizes[0] : 1;
    *d1 = nd == 2 ? sizes[1] : nd == 1 ? sizes[0] : 1;
}

tl_tensor *tl_native_block_diag(tl_keyset ks, tl_tensor *const *tensors, int64_t tensors_len) {
    (void)ks;
    if (tensors_len == 0) {
        const int64_t shape[2] = {1, 0};
        return tl_empty(2, shape, TL_FLOAT32, TL_CPU);
    }
    int64_t r0 = 0, r1 = 0;
    for (int64_t i = 0; i < tensors_len; i++) {
        const tl_tensor *t = tensors[i];
        if (t->ndim > 2)
            return tl_set_error(TL_ERR_RUNTIME,
                                "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input %lld has %lld "
                                "dimensions", (long long)i, (long long)t->ndim), NULL;
        int64_t d0, d1;
        block_extent(t->ndim, t->sizes, &d0, &d1);
        r0 += d0;
        r1 += d1;
    }
    const tl_dtype dt = tl_result_type(tensors_len, (tl_tensor **)tensors);
    const int64_t shape[2] = {r0, r1};
    tl_tensor *res = tl_zeros(2, shape, dt, TL_CPU);
    int64_t at0 = 0, at1 = 0;
    for (int64_t i = 0; res && i < tensors_len; i++) {
        int64_t d0, d1;
        block_extent(tensors[i]->ndim, tensors[i]->sizes, &d0, &d1);
        const int64_t ext[2] = {d0, d1};
        tl_tensor *src = tl_expand(tensors[i], 2, ext);
        tl_tensor *a = src ? tl_ops_narrow(res, 0, at0, d0) : NULL;
        tl_tensor *b = a ? tl_ops_narrow(a, 1, at1, d1) : NULL;
        const int rc = b ? tl_copy_(b, src) : -1;
        tl_tensor_release(src);
        tl_tensor_release(a);
        tl_tensor_release(b);
        if (rc) {
            tl_tensor_release(res);
            return NULL;
        }
        at0 += d0;
        at1 += d1;
    }
    return res;
}

int tl_ag_block_diag_backward(tl_tensor *grad, const int64_t *const *sizes, const int64_t *ndims, int64_t n,
                              const tl_dtype *dtypes, int64_t ndtypes, tl_tensor ***ret, int64_t *ret_len) {
    (void)dtypes; (void)ndtypes;   /* real dtypes only: no complex-to-real step */
    tl_tensor **out = calloc((size_t)(n ? n : 1), sizeof *out);
    if (!out) return tl_set_error(TL_ERR_MEMORY, "out of memory");
    int64_t at0 = 0, at1 = 0;
    for (int64_t i = 0; i < n; i++) {
        if (ndims[i] == 1 && sizes[i][0] == 0) {   /* an empty input: an empty gradient */
            const int64_t zero = 0;
            out[i] = tl_ops_zeros(&zero, 1, grad->dtype, -1, (int)tl__device_of(grad), false, false);
        } else {
            int64_t d0, d1;
            block_extent(ndims[i], sizes[i], &d0, &d1);
            tl_tensor *a = tl_ops_narrow(grad, 0, at0, d0);
            tl_tensor *b = a ? tl_ops_narrow(a, 1, at1, d1) : NULL;
            out[i] = b && ndims[i] < 2 ? tl_ops_reshape(b, sizes[i], ndims[i]) : (b ? (tl_tensor_retain(b), b) : NULL);
            tl_tensor_release(a);
            tl_tensor_release(b);
            at0 += d0;
            at1 += d1;
        }
        if (!out[i]) {
            tl_ag_tensor_list_release(out, n);
            return -1;
        }
    }
    *ret = out;
    *ret_len = n;
    return 0;
}

/* ------------------------------------------------------------ unique_consecutive */

/* element i of the flattened values (work dtype) equals element i - 1:
 * floats by value (NaN never equal, -0.0 == 0.0) */
static bool same_prev(const tl_tensor *vals, int64_t i) {
    if (vals->dtype == TL_FLOAT64) {
        const double *p = tl_tensor_data_ptr(vals);
        return p[i] == p[i - 1];
    }
    const int64_t *p = tl_tensor_data_ptr(vals);
    return p[i] == p[i - 1];
}

int tl_native_unique_consecutive_cpu(tl_keyset ks, tl_tensor *self, bool return_inverse, bool return_counts,
                                     int64_t dim, bool dim_has, tl_tensor **ret0, tl_tensor **ret1,
                                     tl_tensor **ret2) {
    (void)ks;
    /* a dim (but dim 0 of a 1-d tensor): PyTorch's unique_dim_consecutive */
    if (dim_has && !(dim == 0 && self->ndim == 1))
        return tl_native_unique_dim_consecutive_cpu(ks, self, dim, return_inverse, return_counts, ret0, ret1, ret2);
    const int64_t n = self->numel;
    tl_tensor *flat = tl_reshape(self, 1, &n);
    tl_tensor *wk = flat ? tl_to_dtype(flat, tl_dtype_is_floating(self->dtype) ? TL_FLOAT64 : TL_INT64, 0) : NULL;
    tl_tensor *rows = wk ? tl_contiguous(wk) : NULL;
    tl_tensor_release(wk);
    int64_t *first = rows ? malloc((size_t)(n + 1) * sizeof *first) : NULL;
    tl_tensor *out = NULL, *inv = NULL, *cnt = NULL, *fi = NULL;
    int rc = -1;
    if (!first) {
        if (rows) tl_set_error(TL_ERR_MEMORY, "out of memory");
        goto done;
    }
    int64_t u = 0;
    for (int64_t i = 0; i < n; i++)
        if (i == 0 || !same_prev(rows, i)) first[u++] = i;
    first[u] = n;
    const int64_t zero = 0;
    fi = tl_empty(1, &u, TL_INT64, TL_CPU);
    if (!fi) goto done;
    memcpy(tl_tensor_data_ptr(fi), first, (size_t)u * sizeof *first);
    out = tl_ops_index_select(flat, 0, fi);
    inv = return_inverse ? tl_empty(self->ndim, self->sizes, TL_INT64, TL_CPU) : tl_empty(1, &zero, TL_INT64, TL_CPU);
    cnt = return_counts ? tl_empty(1, &u, TL_INT64, TL_CPU) : tl_empty(1, &zero, TL_INT64, TL_CPU);
    if (!out || !inv || !cnt) goto done;
    int64_t *ip = tl_tensor_data_ptr(inv), *cp = tl_tensor_data_ptr(cnt);
    for (int64_t g = 0; g < u; g++) {
        if (return_counts) cp[g] = first[g + 1] - first[g];
        if (return_inverse)
            for (int64_t i = first[g]; i < first[g + 1]; i++) ip[i] = g;
    }
    rc = 0;
done:
    free(first);
    tl_tensor_release(flat);
    tl_tensor_release(rows);
    tl_tensor_release(fi);
    if (rc) {
        tl_tensor_release(out);
        tl_tensor_release(inv);
        tl_tensor_release(cnt);
        return -1;
    }
    *ret0 = out;
    *ret1 = inv;
    *ret2 = cnt;
    return 0;
}
