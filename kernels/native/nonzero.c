/* nonzero and its relatives.
 *
 *  - nonzero / nonzero.out (CPU): the [n, ndim] int64 coordinates of the
 *    elements that are not zero, in row-major order. Two passes over a
 *    contiguous copy: per chunk count, then (after a prefix sum) per chunk
 *    fill its own rows, so both passes run on the thread pool and the result
 *    does not depend on the thread count. Floats test `x != 0` (NaN counts,
 *    -0.0 does not); float16/bfloat16 test their bits without the sign.
 *  - nonzero_numpy / where(condition) (CompositeImplicitAutograd): the columns
 *    of nonzero as 1-D tensors (a 0-dim input counts as one element).
 *  - argwhere (CompositeImplicitAutograd): nonzero.
 *  - count_nonzero.dim_IntList (CPU): `(self != 0).sum(dim)`, a direct
 *    parallel count for all dims; count_nonzero(int? dim) calls it.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "missing_ops.h"
#include "shape_index.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/argwhere.h"
#include "ops/count_nonzero.h"
#include "ops/ne.h"
#include "ops/nonzero.h"
#include "ops/nonzero_numpy.h"
#include "ops/select.h"
#include "ops/sum.h"
#include "ops/unsqueeze.h"
#include "ops/where.h"
#include "tl_structured.h"

tl_tensor *tl_missing_copy_to_out(tl_tensor *result, tl_tensor *out) {
    if (result && result->dtype != out->dtype) {
        tl_set_error(TL_ERR_RUNTIME, "Expected out tensor to have dtype %s, but got %s instead",
                     tl_dtype_caffe2_name(result->dtype), tl_dtype_caffe2_name(out->dtype));
        tl_tensor_release(result);
        return NULL;
    }
    return tl_missing_cast_to_out(result, out);
}

tl_tensor *tl_missing_cast_to_out(tl_tensor *result, tl_tensor *out) {
    if (!result) return NULL;
    int rc = tl_structured_resize_out(out, result->ndim, result->sizes, TL_DTYPE_UNDEFINED);
    if (rc == 0 && out->device != TL_META) rc = tl_copy_(out, result);
    tl_tensor_release(result);
    if (rc) return NULL;
    tl_tensor_bump_version(out);
    tl_tensor_retain(out);
    return out;
}

/* ------------------------------------------------------------ the two passes */
typedef struct {
    const char *data;     /* contiguous input */
    tl_dtype dtype;
    int64_t numel, chunk; /* elements per chunk */
    int64_t *counts;      /* per chunk: nonzeros, then (fill pass) the first row */
    int64_t ndim;
    const int64_t *sizes;
    int64_t *rows;        /* [n, ndim] output, contiguous */
} nz_ctx;

/* `x != 0` per dtype: integer and bool bytes compared as stored; floats by
 * value; float16/bfloat16 by their bits without the sign (NaN counts) */
#define NZ_INT(T) (((const T *)p)[i] != 0)
#define NZ_HALF (((const uint16_t *)p)[i] & 0x7fffu)
#define NZ_DISPATCH(dtype, BODY)                                   \
    switch (dtype) {                                                \
    case TL_BOOL: case TL_UINT8: case TL_INT8: BODY(NZ_INT(uint8_t)); break; \
    case TL_INT16: BODY(NZ_INT(uint16_t)); break;                  \
    case TL_INT32: BODY(NZ_INT(uint32_t)); break;                  \
    case TL_INT64: BODY(NZ_INT(uint64_t)); break;                  \
    case TL_FLOAT16: case TL_BFLOAT16: BODY(NZ_HALF); break;       \
    case TL_FLOAT32: BODY(NZ_INT(float)); break;                   \
    case TL_FLOAT64: BODY(NZ_INT(double)); break;                  \
    default: break;                                                \
    }

static int64_t nz_count_range(const char *p, tl_dtype dt, int64_t b, int64_t e) {
    int64_t n = 0;
#define COUNT(TEST) for (int64_t i = b; i < e; i++) n += (TEST) ? 1 : 0
    NZ_DISPATCH(dt, COUNT)
#undef COUNT
    return n;
}

static void nz_count_chunks(int64_t cb, int64_t ce, void *vctx) {
    nz_ctx *c = (nz_ctx *)vctx;
    for (int64_t k = cb; k < ce; k++) {
        int64_t b = k * c->chunk, e = b + c->chunk < c->numel ? b + c->chunk : c->numel;
        c->counts[k] = nz_count_range(c->data, c->dtype, b, e);
    }
}

/* rows of the nonzeros in [b, e), from row `row`: the coordinates of b once,
 * then an odometer */
static void nz_fill_range(const nz_ctx *c, int64_t b, int64_t e, int64_t row) {
    const int64_t nd = c->ndim;
    int64_t idx[TL_MAX_DIMS];
    for (int64_t d = nd - 1, r = b; d >= 0; d--) {
        idx[d] = r % c->sizes[d];
        r /= c->sizes[d];
    }
    int64_t *out = c->rows + row * nd;
    const char *p = c->data;
#define FILL(TEST)                                                      \
    for (int64_t i = b; i < e; i++) {                                   \
        if (TEST) {                                                     \
            memcpy(out, idx, sizeof(int64_t) * (size_t)nd);             \
            out += nd;                                                  \
        }                                                               \
        for (int64_t d = nd - 1; d >= 0 && ++idx[d] == c->sizes[d]; d--) idx[d] = 0; \
    }
    NZ_DISPATCH(c->dtype, FILL)
#undef FILL
}

static void nz_fill_chunks(int64_t cb, int64_t ce, void *vctx) {
    nz_ctx *c = (nz_ctx *)vctx;
    for (int64_t k = cb; k < ce; k++) {
        int64_t b = k * c->chunk, e = b + c->chunk < c->numel ? b + c->chunk : c->numel;
        nz_fill_range(c, b, e, c->counts[k]);
    }
}

/* chunks of at least the grain size, a few per thread */
static int64_t nz_setup(nz_ctx *c, const tl_tensor *x) {
    c->data = tl__data(x);
    c->dtype = x->dtype;
    c->numel = x->numel;
    c->ndim = x->ndim;
    c->sizes = x->sizes;
    int64_t grain = tl_get_grain_size(), nchunks = 4 * (int64_t)tl_get_num_threads();
    if (nchunks * grain > c->numel) nchunks = c->numel / grain;
    if (nchunks < 1) nchunks = 1;
    c->chunk = (c->numel + nchunks - 1) / nchunks;
    if (c->chunk < 1) c->chunk = 1;
    return (c->numel + c->chunk - 1) / c->chunk;
}

/* the number of nonzeros of a contiguous tensor (all threads) */
static int64_t nz_count_all(const tl_tensor *x) {
    nz_ctx c;
    const int64_t nchunks = nz_setup(&c, x);
    int64_t counts_small[64];
    c.counts = nchunks <= 64 ? counts_small : (int64_t *)malloc(sizeof(int64_t) * (size_t)nchunks);
    if (!c.counts) return tl_set_error(TL_ERR_MEMORY, "nonzero: out of memory");
    tl_parallel_for(nchunks, 1, nz_count_chunks, &c);
    int64_t n = 0;
    for (int64_t k = 0; k < nchunks; k++) n += c.counts[k];
    if (c.counts != counts_small) free(c.counts);
    return n;
}

/* nonzero into `out` (int64, resized to [n, ndim]; strided: through a temporary) */
static int nonzero_into(tl_tensor *self, tl_tensor *out) {
    if (tl_dtype_is_complex(self->dtype)) {   /* complex: the positions of self != 0 */
        tl_tensor *ne = tl_ops_ne_Scalar(self, tl_scalar_from_int(0));
        const int rc = ne ? nonzero_into(ne, out) : -1;
        tl_tensor_release(ne);
        return rc;
    }
    if (out->dtype != TL_INT64)
        return tl_set_error(TL_ERR_RUNTIME, "nonzero: Expected out tensor to have scalar type Long but got scalar type%s",
                            tl_dtype_scalar_name(out->dtype));
    if (self->ndim >= TL_MAX_DIMS) return tl_set_error(TL_ERR_RUNTIME, "nonzero: too many dimensions");
    tl_tensor *x = tl_contiguous(self);
    if (!x) return -1;
    nz_ctx c;
    const int64_t nchunks = x->numel ? nz_setup(&c, x) : 0;
    int64_t *counts = (int64_t *)malloc(sizeof(int64_t) * (size_t)(nchunks + 1));
    if (!counts) {
        tl_tensor_release(x);
        return tl_set_error(TL_ERR_MEMORY, "nonzero: out of memory");
    }
    c.counts = counts;
    if (nchunks) tl_parallel_for(nchunks, 1, nz_count_chunks, &c);
    int64_t n = 0;
    for (int64_t k = 0; k < nchunks; k++) {  /* counts -> first row of each chunk */
        int64_t m = counts[k];
        counts[k] = n;
        n += m;
    }
    const int64_t shape[2] = {n, x->ndim};
    int rc = tl_structured_resize_out(out, 2, shape, TL_DTYPE_UNDEFINED);
    tl_tensor *dst = NULL;
    if (rc == 0) dst = tl_tensor_is_contiguous(out) ? (tl_tensor_retain(out), out) : tl_empty(2, shape, TL_INT64, TL_CPU);
    if (!dst) rc = -1;
    if (rc == 0 && n > 0) {
        c.rows = (int64_t *)tl__data(dst);
        if (x->ndim > 0) tl_parallel_for(nchunks, 1, nz_fill_chunks, &c);
        if (dst != out) rc = tl_copy_(out, dst);
    }
    tl_tensor_release(dst);
    free(counts);
    tl_tensor_release(x);
    return rc;
}

tl_tensor *tl_native_nonzero_out_cpu(tl_keyset ks, tl_tensor *self, tl_tensor *out) {
    (void)ks;
    if (nonzero_into(self, out)) return NULL;
    tl_tensor_retain(out);
    return out;
}

tl_tensor *tl_native_nonzero_cpu(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    const int64_t shape[2] = {0, self->ndim};
    tl_tensor *out = tl_empty(2, shape, TL_INT64, TL_CPU);
    if (!out) return NULL;
    if (nonzero_into(self, out)) {
        tl_tensor_release(out);
        return NULL;
    }
    return out;
}

/* the columns of nonzero (views of one [n, ndim] result, as unbind(1) gives) */
int tl_native_nonzero_numpy(tl_keyset ks, tl_tensor *self, tl_tensor ***ret, int64_t *ret_len) {
    (void)ks;
    tl_tensor *x = self->ndim == 0 ? tl_ops_unsqueeze(self, 0) : (tl_tensor_retain(self), self);
    if (!x) return -1;
    tl_tensor *nz = tl_ops_nonzero(x);
    tl_tensor_release(x);
    if (!nz) return -1;
    const int64_t nd = nz->sizes[1];
    tl_tensor **cols = (tl_tensor **)malloc(sizeof(tl_tensor *) * (size_t)(nd ? nd : 1));
    if (!cols) {
        tl_tensor_release(nz);
        return tl_set_error(TL_ERR_MEMORY, "nonzero_numpy: out of memory");
    }
    for (int64_t d = 0; d < nd; d++) {
        cols[d] = tl_ops_select_int(nz, 1, d);
        if (!cols[d]) {
            tl_tensor_list_free(cols, d);
            tl_tensor_release(nz);
            return -1;
        }
    }
    tl_tensor_release(nz);
    *ret = cols;
    *ret_len = nd;
    return 0;
}

int tl_native_where(tl_keyset ks, tl_tensor *condition, tl_tensor ***ret, int64_t *ret_len) {
    (void)ks;
    return tl_ops_nonzero_numpy(condition, ret, ret_len);
}

tl_tensor *tl_native_argwhere(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    return tl_ops_nonzero(self);
}

/* ------------------------------------------------------------ count_nonzero */
tl_tensor *tl_native_count_nonzero_cpu(tl_keyset ks, tl_tensor *self, const int64_t *dim, int64_t dim_len) {
    (void)ks;
    if (dim_len == 0 && !tl_dtype_is_complex(self->dtype)) {  /* every element: one parallel count */
        tl_tensor *x = tl_contiguous(self);
        if (!x) return NULL;
        int64_t n = x->numel ? nz_count_all(x) : 0;
        tl_tensor_release(x);
        if (n < 0) return NULL;
        return tl_scalar_tensor(tl_scalar_from_int(n), TL_INT64, TL_CPU);
    }
    tl_tensor *ne = tl_ops_ne_Scalar(self, tl_scalar_from_int(0));
    if (!ne) return NULL;
    tl_tensor *r = tl_ops_sum_dim_IntList(ne, dim, dim_len, false, TL_INT64);
    tl_tensor_release(ne);
    return r;
}

tl_tensor *tl_native_count_nonzero(tl_keyset ks, tl_tensor *self, int64_t dim, bool dim_has) {
    (void)ks;
    return tl_ops_count_nonzero_dim_IntList(self, &dim, dim_has ? 1 : 0);
}
