/* cumsum / cumprod (structured: functional, in-place, out=) and flip.
 *
 * Scans: result dtype `dtype=` if given, else the out= / in-place tensor's,
 * else self's with bool and integers as int64 (PyTorch's cum_ops_meta). The
 * input is converted to the result dtype, the scanned dim moved innermost
 * (rows layout, reduce_util.h), accumulated in float64 (floating: PyTorch's
 * CPU acc type) or wrapping int64, and the rows permuted back into out.
 */
#include <string.h>

#include "reduce_util.h"
#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops.h"
#include "tl_structured.h"

static int cum_meta(tl_structured *s, const tl_tensor *self, int64_t dim, tl_dtype dtype) {
    int64_t d;
    if (tl_rd_wrap_dim(self, dim, &d)) return -1;
    tl_dtype dt = dtype;
    if (dt == TL_DTYPE_UNDEFINED) {
        if (s->kind != TL_STRUCTURED_FUNCTIONAL && s->outputs[0]) dt = tl_tensor_dtype(s->outputs[0]);
        else dt = tl_dtype_is_integral(tl_tensor_dtype(self), 1) ? TL_INT64 : tl_tensor_dtype(self);
    }
    return tl_structured_set_output(s, 0, tl_tensor_ndim(self), tl_tensor_sizes(self), NULL, dt);
}

static int cum_impl(const tl_tensor *self, int64_t dim, int is_prod, tl_tensor *out) {
    if (tl_tensor_numel(out) == 0) return 0;
    int64_t d;
    if (tl_rd_wrap_dim(self, dim, &d)) return -1;
    const int64_t nd = tl_tensor_ndim(self);
    const tl_dtype rt = tl_tensor_dtype(out), cdt = tl_rd_compute_dtype(rt);
    tl_tensor *x = tl_to_dtype(self, rt, 0);
    if (!x) return -1;
    const uint64_t mask = nd ? 1ull << d : 0;
    tl_tensor *rows = tl_rd_rows(x, mask, cdt);
    tl_tensor_release(x);
    if (!rows) return -1;
    int64_t O, R;
    tl_rd_counts(self, mask, &O, &R);
    /* the result in rows order: [other dims..., dim] */
    int64_t shape[TL_RD_MAXD], perm[TL_RD_MAXD], inv[TL_RD_MAXD], k = 0;
    const int64_t *sz = tl_tensor_sizes(self);
    for (int64_t i = 0; i < nd; i++)
        if (i != d) perm[k++] = i;
    if (nd) perm[k++] = d;
    for (int64_t i = 0; i < nd; i++) {
        shape[i] = sz[perm[i]];
        inv[perm[i]] = i;
    }
    tl_tensor *res = tl_empty(nd, shape, cdt, TL_CPU);
    int rc = -1;
    if (res) {
        if (cdt == TL_FLOAT64) {
            const double *p = tl_tensor_data_ptr(rows);
            double *o = tl_tensor_data_ptr(res);
            for (int64_t j = 0; j < O; j++) {
                double a = is_prod ? 1 : 0;
                for (int64_t q = 0; q < R; q++) {
                    a = is_prod ? a * p[j * R + q] : a + p[j * R + q];
                    o[j * R + q] = a;
                }
            }
        } else {
            const int64_t *p = tl_tensor_data_ptr(rows);
            int64_t *o = tl_tensor_data_ptr(res);
            for (int64_t j = 0; j < O; j++) {
                uint64_t a = is_prod ? 1 : 0;   /* wraps like PyTorch's int64 */
                for (int64_t q = 0; q < R; q++) {
                    a = is_prod ? a * (uint64_t)p[j * R + q] : a + (uint64_t)p[j * R + q];
                    o[j * R + q] = (int64_t)a;
                }
            }
        }
        tl_tensor *back = nd ? tl_permute(res, nd, inv) : tl_alias(res);
        if (back) {
            rc = tl_copy_(out, back);
            tl_tensor_release(back);
        }
        tl_tensor_release(res);
    }
    tl_tensor_release(rows);
    return rc;
}

int tl_meta_cumsum(tl_structured *s, tl_tensor *self, int64_t dim, tl_dtype dtype) { return cum_meta(s, self, dim, dtype); }
int tl_meta_cumprod(tl_structured *s, tl_tensor *self, int64_t dim, tl_dtype dtype) { return cum_meta(s, self, dim, dtype); }
int tl_impl_cumsum_out(tl_structured *s, tl_tensor *self, int64_t dim, tl_dtype dtype, tl_tensor *out) {
    (void)s; (void)dtype;
    return cum_impl(self, dim, 0, out);
}
int tl_impl_cumprod_out(tl_structured *s, tl_tensor *self, int64_t dim, tl_dtype dtype, tl_tensor *out) {
    (void)s; (void)dtype;
    return cum_impl(self, dim, 1, out);
}

/* ---- flip: a copy with the listed dims reversed (dims=[]: a plain copy) */

tl_tensor *tl_native_flip(tl_keyset ks, tl_tensor *self, const int64_t *dims, int64_t dims_len) {
    (void)ks;
    uint64_t mask = 0;
    if (dims_len > 0 && tl_rd_mask(self, dims, dims_len, &mask)) return NULL;
    const int64_t nd = tl_tensor_ndim(self);
    tl_tensor *out = tl_empty(nd, tl_tensor_sizes(self), tl_tensor_dtype(self), TL_CPU);
    if (!out) return NULL;
    /* a view of self walking the flipped dims backwards: offset at the last
     * element, negated strides (the runtime's copy reads any strides) */
    const int64_t *sz = tl_tensor_sizes(self), *st = tl_tensor_strides(self);
    int64_t strides[TL_RD_MAXD], off = tl_tensor_storage_offset(self);
    for (int64_t i = 0; i < nd; i++) {
        strides[i] = st[i];
        if ((mask & (1ull << i)) && sz[i] > 1) {
            off += (sz[i] - 1) * st[i];
            strides[i] = -st[i];
        }
    }
    int rc = -1;
    if (tl_tensor_numel(self) == 0) {
        rc = 0;
    } else {
        tl_tensor *v = tl__tensor_alloc(tl_tensor_storage(self), off, nd, sz, strides, tl_tensor_dtype(self));
        if (v) {
            rc = tl_copy_(out, v);
            tl_tensor_release(v);
        }
    }
    if (rc) {
        tl_tensor_release(out);
        return NULL;
    }
    return out;
}
