/* unique_dim and unique_dim_consecutive (aten/src/ATen/native/Unique.cpp,
 * _unique_dim_cpu_template): the distinct slices of self along dim.
 *
 * The slices become the rows of an [n, w] work copy (floating dtypes in
 * float64, the others in int64: both hold every value exactly). unique_dim
 * sorts the row indices lexicographically with PyTorch's comparator (a
 * column decides when one value is < or > the other, so a NaN column
 * decides nothing) in a stable merge sort; unique_dim_consecutive keeps the
 * input order. A group ends where a row is not equal to the previous one
 * (by value: -0.0 == 0.0, NaN never equal); the output holds each group's
 * first row. As in PyTorch the inverse and the counts are always computed,
 * whatever return_inverse / return_counts say. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/index_select.h"
#include "ops/movedim.h"
#include "ops/unique_dim.h"
#include "ops/unique_dim_consecutive.h"
#include "tl_tensor.h"

/* lexicographic order of rows a and b: -1, 0 or 1 */
static int row_cmp(const tl_tensor *rows, int64_t a, int64_t b, int64_t w) {
    if (rows->dtype == TL_FLOAT64) {
        const double *p = tl_tensor_data_ptr(rows), *x = p + a * w, *y = p + b * w;
        for (int64_t k = 0; k < w; k++) {
            if (x[k] < y[k]) return -1;
            if (x[k] > y[k]) return 1;
        }
        return 0;
    }
    const int64_t *p = tl_tensor_data_ptr(rows), *x = p + a * w, *y = p + b * w;
    for (int64_t k = 0; k < w; k++)
        if (x[k] != y[k]) return x[k] < y[k] ? -1 : 1;
    return 0;
}

/* rows a and b hold equal values (at::equal) */
static bool row_equal(const tl_tensor *rows, int64_t a, int64_t b, int64_t w) {
    if (rows->dtype == TL_FLOAT64) {
        const double *p = tl_tensor_data_ptr(rows), *x = p + a * w, *y = p + b * w;
        for (int64_t k = 0; k < w; k++)
            if (!(x[k] == y[k])) return false;
        return true;
    }
    const int64_t *p = tl_tensor_data_ptr(rows);
    return !memcmp(p + a * w, p + b * w, (size_t)w * sizeof *p);
}

/* stable bottom-up merge sort of idx[0, n) by row_cmp; tmp holds n */
static void sort_rows(const tl_tensor *rows, int64_t w, int64_t *idx, int64_t *tmp, int64_t n) {
    for (int64_t width = 1; width < n; width *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * width) {
            const int64_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            int64_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi) tmp[o++] = row_cmp(rows, idx[j], idx[i], w) < 0 ? idx[j++] : idx[i++];
            while (i < mid) tmp[o++] = idx[i++];
            while (j < hi) tmp[o++] = idx[j++];
        }
        memcpy(idx, tmp, (size_t)n * sizeof *idx);
    }
}

/* self's slices along d as contiguous [n, w] rows of the work dtype */
static tl_tensor *slice_rows(tl_tensor *self, int64_t d, int64_t n) {
    tl_tensor *moved = tl_ops_movedim_int(self, d, 0);
    const int64_t rs[2] = {n, moved ? moved->numel / n : 0};
    tl_tensor *r2 = moved ? tl_reshape(moved, 2, rs) : NULL;
    tl_tensor_release(moved);
    tl_tensor *wk = r2 ? tl_to_dtype(r2, tl_dtype_is_floating(self->dtype) ? TL_FLOAT64 : TL_INT64, 0) : NULL;
    tl_tensor_release(r2);
    tl_tensor *rows = wk ? tl_contiguous(wk) : NULL;
    tl_tensor_release(wk);
    return rows;
}

/* PyTorch's checks on zero-sized dimensions; n == 0 gives the empty result */
static int empty_dims(tl_tensor *self, int64_t d, tl_tensor **ret0, tl_tensor **ret1, tl_tensor **ret2) {
    int64_t zeros = 0;
    for (int64_t k = 0; k < self->ndim; k++) zeros += self->sizes[k] == 0;
    if (self->sizes[d] != 0)
        return zeros ? tl_set_error(TL_ERR_RUNTIME,
                                    "There are 0 sized dimensions, and they aren't selected, so unique cannot be "
                                    "applied") : 0;
    if (zeros != 1)
        return tl_set_error(TL_ERR_RUNTIME,
                            "Number of zero sized dimensions is more than one, so unique cannot be applied ");
    const int64_t zero = 0;
    *ret0 = tl_empty(self->ndim, self->sizes, self->dtype, TL_CPU);
    *ret1 = *ret0 ? tl_empty(1, &zero, TL_INT64, TL_CPU) : NULL;
    *ret2 = *ret1 ? tl_empty(1, &zero, TL_INT64, TL_CPU) : NULL;
    if (*ret2) return 1;
    tl_tensor_release(*ret0);
    tl_tensor_release(*ret1);
    return -1;
}

static int unique_dim_impl(tl_tensor *self, int64_t dim, bool consecutive, tl_tensor **ret0, tl_tensor **ret1,
                       tl_tensor **ret2) {
    const int64_t d = tl__wrap_dim(dim, self->ndim, 0);
    if (d < 0) return -1;
    const int e = empty_dims(self, d, ret0, ret1, ret2);
    if (e) return e < 0 ? -1 : 0;
    const int64_t n = self->sizes[d];
    tl_tensor *rows = slice_rows(self, d, n);
    if (!rows) return -1;
    const int64_t w = rows->sizes[1];
    int64_t *idx = malloc((size_t)n * sizeof *idx), *tmp = malloc((size_t)n * sizeof *tmp);
    tl_tensor *firsts = NULL, *out = NULL, *inv = tl_empty(1, &n, TL_INT64, TL_CPU), *cnt = NULL;
    int rc = -1;
    if (!idx || !tmp) {
        tl_set_error(TL_ERR_MEMORY, "out of memory");
        goto done;
    }
    for (int64_t i = 0; i < n; i++) idx[i] = i;
    if (!consecutive) sort_rows(rows, w, idx, tmp, n);
    /* tmp[g]: the sorted position where group g starts */
    int64_t u = 0;
    for (int64_t i = 0; i < n; i++)
        if (i == 0 || !row_equal(rows, idx[i], idx[i - 1], w)) tmp[u++] = i;
    firsts = tl_empty(1, &u, TL_INT64, TL_CPU);
    cnt = tl_empty(1, &u, TL_INT64, TL_CPU);
    if (!firsts || !cnt || !inv) goto done;
    int64_t *fp = tl_tensor_data_ptr(firsts), *cp = tl_tensor_data_ptr(cnt), *ip = tl_tensor_data_ptr(inv);
    for (int64_t g = 0; g < u; g++) {
        const int64_t end = g + 1 < u ? tmp[g + 1] : n;
        fp[g] = idx[tmp[g]];
        cp[g] = end - tmp[g];
        for (int64_t i = tmp[g]; i < end; i++) ip[idx[i]] = g;
    }
    out = tl_ops_index_select(self, d, firsts);
    rc = out ? 0 : -1;
done:
    free(idx);
    free(tmp);
    tl_tensor_release(rows);
    tl_tensor_release(firsts);
    if (rc) {
        tl_tensor_release(inv);
        tl_tensor_release(cnt);
        return -1;
    }
    *ret0 = out;
    *ret1 = inv;
    *ret2 = cnt;
    return 0;
}

int tl_native_unique_dim_cpu(tl_keyset ks, tl_tensor *self, int64_t dim, bool sorted, bool return_inverse,
                             bool return_counts, tl_tensor **ret0, tl_tensor **ret1, tl_tensor **ret2) {
    (void)ks; (void)sorted;   /* always sorted, as PyTorch's CPU kernel */
    (void)return_inverse; (void)return_counts;   /* both always computed */
    return unique_dim_impl(self, dim, false, ret0, ret1, ret2);
}

int tl_native_unique_dim_consecutive_cpu(tl_keyset ks, tl_tensor *self, int64_t dim, bool return_inverse,
                                         bool return_counts, tl_tensor **ret0, tl_tensor **ret1, tl_tensor **ret2) {
    (void)ks; (void)return_inverse; (void)return_counts;
    return unique_dim_impl(self, dim, true, ret0, ret1, ret2);
}
