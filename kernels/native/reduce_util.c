/* Shared plumbing of the reduction kernels: see reduce_util.h. */
#include "reduce_util.h"

#include "tl_error.h"
#include "tl_internal.h"

int tl_rd_mask(const tl_tensor *self, const int64_t *dim, int64_t dim_len, uint64_t *mask) {
    const int64_t nd = tl_tensor_ndim(self);
    *mask = 0;
    if (!dim || dim_len == 0) {
        *mask = nd == 64 ? ~0ull : ((1ull << nd) - 1);
        return 0;
    }
    const int64_t lim = nd > 0 ? nd : 1;
    for (int64_t i = 0; i < dim_len; i++) {
        int64_t d = dim[i];
        if (d < -lim || d >= lim)
            return tl_set_error(TL_ERR_INDEX, "Dimension out of range (expected to be in range of [%lld, %lld], but got %lld)",
                                (long long)-lim, (long long)(lim - 1), (long long)d);
        if (d < 0) d += lim;
        if (*mask & (1ull << d))
            return tl_set_error(TL_ERR_RUNTIME, "dim %lld appears multiple times in the list of dims", (long long)d);
        *mask |= 1ull << d;
    }
    if (nd == 0) *mask = 0;
    return 0;
}

int tl_rd_wrap_dim(const tl_tensor *self, int64_t dim, int64_t *out) {
    const int64_t nd = tl_tensor_ndim(self);
    const int64_t lim = nd > 0 ? nd : 1;
    if (dim < -lim || dim >= lim)
        return tl_set_error(TL_ERR_INDEX, "Dimension out of range (expected to be in range of [%lld, %lld], but got %lld)",
                            (long long)-lim, (long long)(lim - 1), (long long)dim);
    *out = dim < 0 ? dim + lim : dim;
    return 0;
}

int64_t tl_rd_shape(const tl_tensor *self, uint64_t mask, bool keepdim, int64_t *shape) {
    const int64_t nd = tl_tensor_ndim(self);
    const int64_t *sz = tl_tensor_sizes(self);
    int64_t k = 0;
    for (int64_t i = 0; i < nd; i++) {
        if (mask & (1ull << i)) {
            if (keepdim) shape[k++] = 1;
        } else {
            shape[k++] = sz[i];
        }
    }
    return k;
}

void tl_rd_counts(const tl_tensor *self, uint64_t mask, int64_t *O, int64_t *R) {
    const int64_t nd = tl_tensor_ndim(self);
    const int64_t *sz = tl_tensor_sizes(self);
    int64_t o = 1, r = 1;
    for (int64_t i = 0; i < nd; i++) {
        if (mask & (1ull << i)) r *= sz[i];
        else o *= sz[i];
    }
    *O = o;
    *R = r;
}

tl_dtype tl_rd_compute_dtype(tl_dtype dt) { return tl_dtype_is_floating(dt) ? TL_FLOAT64 : TL_INT64; }

tl_tensor *tl_rd_rows(const tl_tensor *x, uint64_t mask, tl_dtype cdt) {
    const int64_t nd = tl_tensor_ndim(x);
    int64_t perm[TL_RD_MAXD], k = 0;
    for (int64_t i = 0; i < nd; i++)
        if (!(mask & (1ull << i))) perm[k++] = i;
    for (int64_t i = 0; i < nd; i++)
        if (mask & (1ull << i)) perm[k++] = i;
    tl_tensor *p = nd > 0 ? tl_permute(x, nd, perm) : tl_alias(x);
    if (!p) return NULL;
    tl_tensor *c = tl_to_dtype(p, cdt, 0);
    tl_tensor_release(p);
    if (!c) return NULL;
    tl_tensor *r = tl_contiguous(c);
    tl_tensor_release(c);
    return r;
}

tl_tensor *tl_rd_target(tl_tensor *out, tl_dtype cdt) {
    if (tl_tensor_dtype(out) == cdt && tl_tensor_is_contiguous(out)) {
        tl_tensor_retain(out);
        return out;
    }
    return tl_empty(tl_tensor_ndim(out), tl_tensor_sizes(out), cdt, TL_CPU);
}

int tl_rd_commit(tl_tensor *out, tl_tensor *target) {
    int rc = 0;
    if (target != out) rc = tl_copy_(out, target);
    tl_tensor_release(target);
    return rc;
}

int tl_rd_check_nonempty(const tl_tensor *self, uint64_t mask, bool dim_given, const char *name, int index_error) {
    if (tl_tensor_numel(self) != 0) return 0;
    if (!dim_given) {
        if (index_error)
            return tl_set_error(TL_ERR_INDEX, "%s(): Expected reduction dim to be specified for input.numel() == 0.", name);
        return tl_set_error(TL_ERR_RUNTIME, "%s(): Expected reduction dim to be specified for input.numel() == 0. "
                            "Specify the reduction dim with the 'dim' argument.", name);
    }
    const int64_t nd = tl_tensor_ndim(self);
    const int64_t *sz = tl_tensor_sizes(self);
    for (int64_t i = 0; i < nd; i++)
        if ((mask & (1ull << i)) && sz[i] == 0)
            return tl_set_error(TL_ERR_INDEX, "%s(): Expected reduction dim %lld to have non-zero size.", name, (long long)i);
    return 0;
}

int tl_rd_arg_mask(const tl_tensor *self, int64_t dim, bool dim_has, uint64_t *mask) {
    if (!dim_has) return tl_rd_mask(self, NULL, 0, mask);
    int64_t d;
    if (tl_rd_wrap_dim(self, dim, &d)) return -1;
    *mask = tl_tensor_ndim(self) ? 1ull << d : 0;
    return 0;
}
