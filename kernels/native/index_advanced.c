/* Advanced indexing operators (yaml/native_functions.yaml, block "advanced
 * indexing"): index.Tensor (+ out), _index_put_impl_ (CPU, Meta) and
 * index_put / index_put_ (CompositeExplicitAutograd over _index_put_impl_).
 * Tensor.__getitem__ / __setitem__ (runtime/torchlet/_indexing.py) call them.
 *
 * PyTorch's rules (numpy's): `indices` has one entry per leading dim of self
 * (None = the whole dim); bool / uint8 masks stand for their nonzero
 * positions (one long index per mask dim); the index tensors broadcast
 * together; negative indices count from the end. When the indexed dims are
 * adjacent the broadcast index dims replace them in place, otherwise they go
 * first. Every index is bounds-checked before any element moves.
 *
 * Both operators reduce to rows: the result (or the value) is viewed as
 * [B, N, A] (B: the dims before the indexed ones when adjacent, N: the
 * broadcast index positions, A: the other dims), and row (b, n) of self starts
 * at boff[b] + noff[n]; a row is A elements at offsets aoff[]. */
#include <stdlib.h>

#include "missing_ops.h"
#include "shape_index.h"
#include "tl_half.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/_index_put_impl.h"
#include "ops/clone.h"
#include "ops/index.h"
#include "ops/index_put.h"

typedef struct {
    int64_t nd;                   /* self's dims */
    int64_t nb, na;               /* before / after dims of self */
    int64_t bdims[TL_MAX_DIMS];   /* self dims in B */
    int64_t adims[TL_MAX_DIMS];   /* self dims in A */
    int64_t bsh_nd;               /* broadcast index shape */
    int64_t bsh[TL_MAX_DIMS];
    int64_t res_nd;               /* result shape: B dims, broadcast shape, A dims */
    int64_t res[TL_MAX_DIMS];
    int64_t B, N, A;              /* row counts */
    int64_t *boff, *noff, *aoff;  /* element offsets into self (NULL for meta) */
    /* one index tensor: its values (checked) replace noff, saving a pass and
     * an N-sized buffer: index n is at ix[n] (wrapped) * ix_stride */
    tl_tensor *ix_hold;
    const int64_t *ix;
    int64_t ix_size, ix_stride;
    int a_dense;                  /* aoff[a] == a: a row is one memcpy */
} adv_index;

static void adv_free(adv_index *ai) {
    free(ai->boff);
    free(ai->noff);
    tl_tensor_release(ai->ix_hold);
    free(ai->aoff);
}

static int is_mask(const tl_tensor *t) { return t->dtype == TL_BOOL || t->dtype == TL_UINT8; }

/* the positions of a mask's true entries, one contiguous int64 [count] tensor
 * per mask dim (nonzero, transposed) */
static int mask_to_indices(tl_tensor *mask, tl_tensor **out) {
    const int64_t k = mask->ndim;
    tl_tensor *m = tl_contiguous(mask);
    if (!m) return -1;
    const uint8_t *p = (const uint8_t *)tl__data(m);
    int64_t count = 0;
    for (int64_t i = 0; i < m->numel; i++) count += p[i] != 0;
    int rc = 0;
    for (int64_t d = 0; d < k; d++) out[d] = NULL;
    for (int64_t d = 0; d < k && rc == 0; d++)
        if (!(out[d] = tl_empty(1, &count, TL_INT64, TL_CPU))) rc = -1;
    if (rc == 0 && count) {
        int64_t pos[TL_MAX_DIMS] = {0}, j = 0;
        for (int64_t i = 0; i < m->numel; i++) {
            if (p[i])
                for (int64_t d = 0; d < k; d++) ((int64_t *)tl__data(out[d]))[j] = pos[d];
            j += p[i] != 0;
            for (int64_t d = k - 1; d >= 0; d--) {
                if (++pos[d] < m->sizes[d]) break;
                pos[d] = 0;
            }
        }
    }
    tl_tensor_release(m);
    if (rc)
        for (int64_t d = 0; d < k; d++) tl_tensor_release(out[d]);
    return rc;
}

static void release_all(tl_tensor **ts, int64_t n) {
    for (int64_t i = 0; i < n; i++) tl_tensor_release(ts[i]);
}

/* offsets of every multi-index over `dims` of self (odometer), n = product */
static int64_t *dim_offsets(const tl_tensor *self, const int64_t *dims, int64_t nd, int64_t n) {
    int64_t *o = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    if (!o) return NULL;
    int64_t idx[TL_MAX_DIMS] = {0}, off = 0;
    for (int64_t i = 0; i < n; i++) {
        o[i] = off;
        for (int64_t k = nd - 1; k >= 0; k--) {
            const int64_t d = dims[k];
            if (++idx[k] < self->sizes[d]) {
                off += self->strides[d];
                break;
            }
            off -= (idx[k] - 1) * self->strides[d];
            idx[k] = 0;
        }
    }
    return o;
}

/* Checks the indices against self and fills ai (offsets only when with_data). */
static int adv_prepare(tl_tensor *self, tl_tensor *const *indices, int64_t n, int with_data, adv_index *ai) {
    char b1[256], b2[256];
    memset(ai, 0, sizeof *ai);
    ai->nd = self->ndim;
    /* per self dim: the index tensor (new reference) or NULL */
    tl_tensor *per[TL_MAX_DIMS] = {0};
    int64_t used = 0, ntensors = 0;
    for (int64_t i = 0; i < n; i++) {
        tl_tensor *t = indices[i];
        used += t && is_mask(t) ? t->ndim : 1;
        if (t && !is_mask(t) && !si_is_index_dtype(t->dtype))
            return tl_set_error(TL_ERR_INDEX, "tensors used as indices must be long, int, byte or bool tensors");
    }
    if (n == 0) return tl_set_error(TL_ERR_INDEX, "at least one index must be provided");
    if (used > self->ndim)
        return tl_set_error(TL_ERR_INDEX, "too many indices for tensor of dimension %lld (got %lld)",
                            (long long)self->ndim, (long long)used);
    int64_t d = 0;
    for (int64_t i = 0; i < n; i++) {
        tl_tensor *t = indices[i];
        if (!t) {
            d++;
            continue;
        }
        if (!is_mask(t)) {
            tl_tensor_retain(t);
            per[d++] = t;
            ntensors++;
            continue;
        }
        if (t->dtype == TL_UINT8)
            tl__warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead.");
        if (t->ndim == 0) {
            release_all(per, TL_MAX_DIMS);
            return tl_set_error(TL_ERR_INDEX, "a 0-dim bool index is not supported by the index operators "
                                              "(Tensor.__getitem__ handles it)");
        }
        for (int64_t j = 0; j < t->ndim; j++)
            if (t->sizes[j] != self->sizes[d + j]) {
                release_all(per, TL_MAX_DIMS);
                return tl_set_error(TL_ERR_INDEX, "The shape of the mask %s at index %lld does not match the shape of "
                                                  "the indexed tensor %s at index %lld",
                                    si_shape_str(b1, sizeof b1, t->ndim, t->sizes), (long long)j,
                                    si_shape_str(b2, sizeof b2, self->ndim, self->sizes), (long long)(d + j));
            }
        if (t->device == TL_META) {
            release_all(per, TL_MAX_DIMS);
            return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "indexing with a bool mask on the meta device: the result "
                                                        "shape depends on the mask's data");
        }
        if (mask_to_indices(t, per + d)) {
            release_all(per, TL_MAX_DIMS);
            return -1;
        }
        d += t->ndim;
        ntensors += t->ndim;
    }
    if (ntensors == 0) return tl_set_error(TL_ERR_INDEX, "at least one index must be provided");
    /* broadcast the index tensors together */
    int64_t bnd = 0, bsh[TL_MAX_DIMS];
    int ok = 1;
    for (int64_t k = 0; k < self->ndim; k++) {
        const tl_tensor *t = per[k];
        if (!t) continue;
        if (t->ndim > bnd) {
            for (int64_t j = bnd; j < t->ndim; j++) bsh[j] = 1;
            memmove(bsh + (t->ndim - bnd), bsh, sizeof(int64_t) * (size_t)bnd);
            for (int64_t j = 0; j < t->ndim - bnd; j++) bsh[j] = 1;
            bnd = t->ndim;
        }
        for (int64_t j = 0; j < t->ndim; j++) {
            int64_t *s = &bsh[bnd - t->ndim + j];
            const int64_t v = t->sizes[j];
            if (*s == 1) *s = v;
            else if (v != 1 && v != *s) ok = 0;
        }
    }
    if (!ok) {
        char msg[1024];
        size_t k = 0;
        for (int64_t i = 0; i < self->ndim && k < sizeof msg; i++)
            if (per[i])
                k += (size_t)snprintf(msg + k, sizeof msg - k, "%s%s", k ? ", " : "",
                                      si_shape_str(b1, sizeof b1, per[i]->ndim, per[i]->sizes));
        release_all(per, TL_MAX_DIMS);
        return tl_set_error(TL_ERR_INDEX, "shape mismatch: indexing tensors could not be broadcast together with shapes %s",
                            msg);
    }
    /* adjacent indexed dims keep their place; separated ones go first */
    int64_t first = -1, last = -1;
    for (int64_t k = 0; k < self->ndim; k++)
        if (per[k]) {
            if (first < 0) first = k;
            last = k;
        }
    int adjacent = 1;
    for (int64_t k = first; k <= last; k++) adjacent &= per[k] != NULL;
    ai->bsh_nd = bnd;
    memcpy(ai->bsh, bsh, sizeof(int64_t) * (size_t)bnd);
    ai->B = ai->A = ai->N = 1;
    for (int64_t k = 0; k < self->ndim; k++) {
        if (per[k]) continue;
        if (adjacent && k < first) {
            ai->bdims[ai->nb++] = k;
            ai->B *= self->sizes[k];
        } else {
            ai->adims[ai->na++] = k;
            ai->A *= self->sizes[k];
        }
    }
    for (int64_t j = 0; j < bnd; j++) ai->N *= bsh[j];
    for (int64_t k = 0; k < ai->nb; k++) ai->res[ai->res_nd++] = self->sizes[ai->bdims[k]];
    for (int64_t j = 0; j < bnd; j++) ai->res[ai->res_nd++] = bsh[j];
    for (int64_t k = 0; k < ai->na; k++) ai->res[ai->res_nd++] = self->sizes[ai->adims[k]];
    if (!with_data) {
        release_all(per, TL_MAX_DIMS);
        return 0;
    }
    /* offsets of the index positions, every index checked */
    int rc = 0;
    if (ntensors > 1) ai->noff = malloc(sizeof(int64_t) * (size_t)(ai->N ? ai->N : 1));
    ai->boff = dim_offsets(self, ai->bdims, ai->nb, ai->B);
    ai->aoff = dim_offsets(self, ai->adims, ai->na, ai->A);
    if ((ntensors > 1 && !ai->noff) || !ai->boff || !ai->aoff) rc = tl_set_error(TL_ERR_MEMORY, "out of memory");
    /* PyTorch's message names the index tensor's ordinal as the "dimension" */
    for (int64_t k = 0, ord = 0; k < self->ndim && rc == 0 && ai->N; k++) {
        if (!per[k]) continue;
        tl_tensor *t = per[k];
        if (t->device == TL_META) {
            rc = tl_set_error(TL_ERR_NOT_IMPLEMENTED, "indexing a CPU tensor with a meta index tensor");
            break;
        }
        tl_tensor *l = tl_to_dtype(t, TL_INT64, 0);
        tl_tensor *e = l ? tl_expand(l, bnd, bsh) : NULL;
        tl_tensor *c = e ? tl_contiguous(e) : NULL;
        if (c) {
            const int64_t *iv = (const int64_t *)tl__data(c);
            const int64_t size = self->sizes[k], stride = self->strides[k];
            /* min / max first (vectorizes); the element loop only when needed */
            int64_t lo = 0, hi = 0;
            for (int64_t j = 0; j < ai->N; j++) {
                lo = iv[j] < lo ? iv[j] : lo;
                hi = iv[j] > hi ? iv[j] : hi;
            }
            const int bad = lo < -size || hi >= size;
            for (int64_t j = 0; (bad || ai->noff) && j < ai->N; j++) {
                int64_t v = iv[j];
                if (v < -size || v >= size) {
                    rc = tl_set_error(TL_ERR_INDEX, "index %lld is out of bounds for dimension %lld with size %lld",
                                      (long long)v, (long long)ord, (long long)size);
                    break;
                }
                if (ai->noff) ai->noff[j] = (ord ? ai->noff[j] : 0) + (v + ((v >> 63) & size)) * stride;
            }
            if (!ai->noff) {
                tl_tensor_retain(c);
                ai->ix_hold = c;
                ai->ix = iv;
                ai->ix_size = size;
                ai->ix_stride = stride;
            }
        } else {
            rc = -1;
        }
        tl_tensor_release(c);
        tl_tensor_release(e);
        tl_tensor_release(l);
        ord++;
    }
    release_all(per, TL_MAX_DIMS);
    if (rc == 0) {
        ai->a_dense = 1;
        for (int64_t a = 0; a < ai->A && ai->a_dense; a++) ai->a_dense = ai->aoff[a] == a;
    } else {
        adv_free(ai);
    }
    return rc;
}

/* the plan of a device kernel (kernels/cuda/tl_cuda_index.c): the checks and
 * shapes above over host copies of the indices, the start of every row */
int si_adv_plan_make(tl_tensor *self, tl_tensor *const *host_indices, int64_t n, si_adv_plan *plan) {
    adv_index ai;
    memset(plan, 0, sizeof *plan);
    if (adv_prepare(self, host_indices, n, 1, &ai)) return -1;
    plan->res_nd = ai.res_nd;
    memcpy(plan->res, ai.res, sizeof(int64_t) * (size_t)ai.res_nd);
    plan->na = ai.na;
    memcpy(plan->adims, ai.adims, sizeof(int64_t) * (size_t)ai.na);
    plan->nrows = ai.B * ai.N;
    plan->rows = malloc(sizeof(int64_t) * (size_t)(plan->nrows ? plan->nrows : 1));
    if (!plan->rows) {
        adv_free(&ai);
        return tl_set_error(TL_ERR_MEMORY, "out of memory");
    }
    for (int64_t r = 0; r < plan->nrows; r++) {
        const int64_t b = r / (ai.N ? ai.N : 1), j = r - b * ai.N;
        plan->rows[r] = ai.boff[b] + (ai.noff ? ai.noff[j] : (ai.ix[j] + ((ai.ix[j] >> 63) & ai.ix_size)) * ai.ix_stride);
    }
    adv_free(&ai);
    return 0;
}

/* ------------------------------------------------------------ gather rows */

typedef struct {
    const adv_index *ai;
    const char *src;
    char *dst;
    int64_t isz;
} adv_ctx;

/* rows r in [b, e) of the [B, N, A] view: (row / N, row % N) kept as a
 * counter pair (a division per element would cost more than the move) */
#define ROW_LOOP(BODY)                                                                  \
    const int64_t N = c->ai->N, *bo = c->ai->boff, *no = c->ai->noff, *ix = c->ai->ix; \
    const int64_t isize = c->ai->ix_size, istride = c->ai->ix_stride;                  \
    int64_t bi = b / N, j = b % N;                                                      \
    for (int64_t r = b; r < e; r++) {                                                   \
        const int64_t base = bo[bi] + (no ? no[j] : (ix[j] + ((ix[j] >> 63) & isize)) * istride); \
        BODY;                                                                           \
        if (++j == N) {                                                                 \
            j = 0;                                                                      \
            bi++;                                                                       \
        }                                                                               \
    }

#define ADV_GATHER_ELEMS(T)                                                          \
    static void gather_elems_##T(int64_t b, int64_t e, void *p) {                     \
        const adv_ctx *c = p;                                                          \
        const T *s = (const T *)c->src;                                                \
        T *d = (T *)c->dst;                                                            \
        if (c->ai->B == 1 && !c->ai->noff) { /* x[idx]: a plain gather loop */          \
            const int64_t *ix = c->ai->ix, sz = c->ai->ix_size, st = c->ai->ix_stride;    \
            s += c->ai->boff[0];                                                         \
            for (int64_t r = b; r < e; r++) d[r] = s[(ix[r] + ((ix[r] >> 63) & sz)) * st]; \
            return;                                                                      \
        }                                                                                \
        ROW_LOOP(d[r] = s[base])                                                       \
    }                                                                                  \
    static void gather_rows_##T(int64_t b, int64_t e, void *p) {                      \
        const adv_ctx *c = p;                                                          \
        const int64_t A = c->ai->A, *ao = c->ai->aoff;                                 \
        const T *s = (const T *)c->src;                                                \
        T *d = (T *)c->dst;                                                            \
        ROW_LOOP(for (int64_t a = 0; a < A; a++) d[r * A + a] = s[base + ao[a]])       \
    }
/* a 16-byte element (complex128), moved whole */
typedef struct {
    uint64_t w[2];
} elem16;

ADV_GATHER_ELEMS(uint8_t)
ADV_GATHER_ELEMS(uint16_t)
ADV_GATHER_ELEMS(uint32_t)
ADV_GATHER_ELEMS(uint64_t)
ADV_GATHER_ELEMS(elem16)

static void gather_dense_rows(int64_t b, int64_t e, void *p) {
    const adv_ctx *c = p;
    const int64_t bytes = c->ai->A * c->isz;
    ROW_LOOP(memcpy(c->dst + r * bytes, c->src + base * c->isz, (size_t)bytes))
}

static tl_range_fn pick(int64_t isz, tl_range_fn f1, tl_range_fn f2, tl_range_fn f4, tl_range_fn f8,
                        tl_range_fn f16) {
    return isz == 1 ? f1 : isz == 2 ? f2 : isz == 4 ? f4 : isz == 16 ? f16 : f8;
}

/* rows of self selected by ai into the contiguous dst ([B, N, A]) */
static void gather_run(const adv_index *ai, const tl_tensor *self, char *dst) {
    const int64_t isz = tl__itemsize(self->dtype), rows = ai->B * ai->N;
    adv_ctx c = {ai, tl__data(self), dst, isz};
    if (rows == 0 || ai->A == 0) return;
    tl_range_fn fn;
    if (ai->A == 1)
        fn = pick(isz, gather_elems_uint8_t, gather_elems_uint16_t, gather_elems_uint32_t, gather_elems_uint64_t,
                  gather_elems_elem16);
    else if (ai->a_dense)
        fn = gather_dense_rows;
    else
        fn = pick(isz, gather_rows_uint8_t, gather_rows_uint16_t, gather_rows_uint32_t, gather_rows_uint64_t,
                  gather_rows_elem16);
    const int64_t grain = (1 << 15) / (ai->A * isz);
    tl_parallel_for(rows, grain > 0 ? grain : 1, fn, &c);
}

static int index_into(tl_tensor *self, tl_tensor *const *indices, int64_t n, tl_tensor *result, int resize_warn) {
    char b1[256], b2[256];
    adv_index ai;
    if (self->dtype != result->dtype)
        return tl_set_error(TL_ERR_RUNTIME, "index_out: self (%s) and result (%s) must have the same scalar type",
                            tl_dtype_scalar_name(self->dtype), tl_dtype_scalar_name(result->dtype));
    if (si_check_no_internal_overlap(result) || si_check_no_overlap(result, self)) return -1;
    for (int64_t i = 0; i < n; i++)
        if (indices[i] && si_check_no_overlap(result, indices[i])) return -1;
    if (adv_prepare(self, indices, n, self->device != TL_META, &ai)) return -1;
    int rc = 0;
    if (result->ndim != ai.res_nd || memcmp(result->sizes, ai.res, sizeof(int64_t) * (size_t)ai.res_nd) != 0) {
        if (resize_warn && result->numel != 0)
            tl__warn("An output with one or more elements was resized since it had shape %s, which does not match the "
                     "required output shape %s. This behavior is deprecated, and in a future PyTorch release outputs "
                     "will not be resized unless they have zero elements. You can explicitly reuse an out tensor t by "
                     "resizing it, inplace, to zero elements with t.resize_(0).",
                     si_shape_str(b1, sizeof b1, result->ndim, result->sizes),
                     si_shape_str(b2, sizeof b2, ai.res_nd, ai.res));
        rc = tl_resize_(result, ai.res_nd, ai.res);
    }
    if (rc == 0 && self->device != TL_META && result->numel) {
        if (tl_tensor_is_contiguous(result)) {
            gather_run(&ai, self, tl__data(result));
        } else {
            tl_tensor *tmp = tl_empty(ai.res_nd, ai.res, result->dtype, TL_CPU);
            if (tmp) gather_run(&ai, self, tl__data(tmp));
            rc = tmp ? tl_copy_(result, tmp) : -1;
            tl_tensor_release(tmp);
        }
    }
    adv_free(&ai);
    return rc;
}

tl_tensor *tl_native_index_cpu(tl_keyset ks, tl_tensor *self, tl_tensor *const *indices, int64_t indices_len) {
    (void)ks;
    const int64_t zero = 0;
    tl_tensor *r = tl_empty(1, &zero, self->dtype, tl__device_of(self));
    if (r && index_into(self, indices, indices_len, r, 0)) {
        tl_tensor_release(r);
        return NULL;
    }
    return r;
}

tl_tensor *tl_native_index_out_cpu(tl_keyset ks, tl_tensor *self, tl_tensor *const *indices, int64_t indices_len,
                                   tl_tensor *out) {
    (void)ks;
    if (index_into(self, indices, indices_len, out, 1)) return NULL;
    tl_tensor_bump_version(out);
    tl_tensor_retain(out);
    return out;
}

/* ---------------------------------------------------------------- index_put */

#define ADV_PUT(T)                                                                          \
    static void put_rows_##T(int64_t b, int64_t e, void *p) {                               \
        const adv_ctx *c = p; /* src: the value as [B, N, A]; dst: self */                   \
        const int64_t A = c->ai->A, *ao = c->ai->aoff;                                       \
        const T *s = (const T *)c->src;                                                      \
        T *d = (T *)c->dst;                                                                  \
        ROW_LOOP(for (int64_t a = 0; a < A; a++) d[base + ao[a]] = s[r * A + a])             \
    }
ADV_PUT(uint8_t)
ADV_PUT(uint16_t)
ADV_PUT(uint32_t)
ADV_PUT(uint64_t)
ADV_PUT(elem16)

/* accumulate: sequential, so repeated indices add up in index order */
#define ADV_ACC(NAME, T, ADD)                                                   \
    static void acc_##NAME(const adv_ctx *c) {                                   \
        const int64_t b = 0, e = c->ai->B * c->ai->N, A = c->ai->A, *ao = c->ai->aoff; \
        const T *s = (const T *)c->src;                                          \
        T *d = (T *)c->dst;                                                      \
        if (c->ai->B == 1 && A == 1 && !c->ai->noff) { /* x.index_put_((idx,), v, True) */ \
            const int64_t *ix = c->ai->ix, sz = c->ai->ix_size, st = c->ai->ix_stride;  \
            T *d0 = d + c->ai->boff[0];                                            \
            for (int64_t r = b; r < e; r++) {                                      \
                T *x = d0 + (ix[r] + ((ix[r] >> 63) & sz)) * st;                   \
                const T y = s[r];                                                  \
                *x = ADD;                                                          \
            }                                                                      \
            (void)ao;                                                              \
            return;                                                                \
        }                                                                          \
        ROW_LOOP(for (int64_t a = 0; a < A; a++) {                               \
            T *x = d + base + ao[a];                                             \
            const T y = s[r * A + a];                                            \
            *x = ADD;                                                            \
        })                                                                       \
    }
ADV_ACC(bool, uint8_t, (uint8_t)(*x | y))
ADV_ACC(u8, uint8_t, (uint8_t)(*x + y))
ADV_ACC(i8, int8_t, (int8_t)(uint8_t)((uint8_t)*x + (uint8_t)y))
ADV_ACC(i16, int16_t, (int16_t)(uint16_t)((uint16_t)*x + (uint16_t)y))
ADV_ACC(i32, int32_t, (int32_t)((uint32_t)*x + (uint32_t)y))
ADV_ACC(i64, int64_t, (int64_t)((uint64_t)*x + (uint64_t)y))
ADV_ACC(f16, uint16_t, tl_f32_to_f16_portable(tl_f16_to_f32_portable(*x) + tl_f16_to_f32_portable(y)))
ADV_ACC(bf16, uint16_t, tl_f32_to_bf16(tl_bf16_to_f32(*x) + tl_bf16_to_f32(y)))
ADV_ACC(f32, float, *x + y)
ADV_ACC(f64, double, *x + y)

static int index_put_impl(tl_tensor *self, tl_tensor *const *indices, int64_t n, tl_tensor *values, bool accumulate) {
    char b1[256], b2[256];
    adv_index ai;
    for (int64_t d = 0; d < self->ndim; d++)
        if (self->strides[d] == 0 && self->sizes[d] > 1) {
            tl__warn("Use of index_put_ on expanded tensors is deprecated. Please clone() the tensor before performing "
                     "this operation. This also applies to advanced indexing e.g. tensor[indices] = tensor");
            break;
        }
    if (si_check_no_overlap(self, values)) return -1;
    for (int64_t i = 0; i < n; i++)
        if (indices[i] && si_check_no_overlap(self, indices[i])) return -1;
    const int with_data = self->device != TL_META;
    if (adv_prepare(self, indices, n, with_data, &ai)) return -1;
    /* values broadcast to the indexing result (PyTorch's is_expandable_to) */
    int ok = values->ndim <= ai.res_nd;
    for (int64_t j = 0; ok && j < values->ndim; j++) {
        const int64_t v = values->sizes[values->ndim - 1 - j], r = ai.res[ai.res_nd - 1 - j];
        ok = v == r || v == 1;
    }
    int rc = 0;
    if (!ok)
        rc = tl_set_error(TL_ERR_RUNTIME, "shape mismatch: value tensor of shape %s cannot be broadcast to indexing "
                                          "result of shape %s",
                          si_shape_str(b1, sizeof b1, values->ndim, values->sizes),
                          si_shape_str(b2, sizeof b2, ai.res_nd, ai.res));
    else if (values->dtype != self->dtype)
        rc = tl_set_error(TL_ERR_RUNTIME, "Index put requires the source and destination dtypes match, got %s for the "
                                          "destination and %s for the source.",
                          tl_dtype_scalar_name(self->dtype), tl_dtype_scalar_name(values->dtype));
    if (rc || !with_data || ai.B * ai.N * ai.A == 0) {
        if (with_data) adv_free(&ai);
        return rc;
    }
    tl_tensor *e = tl_expand(values, ai.res_nd, ai.res);
    tl_tensor *v = e ? tl_contiguous(e) : NULL;
    if (!v) {
        rc = -1;
    } else {
        const int64_t isz = tl__itemsize(self->dtype);
        adv_ctx c = {&ai, tl__data(v), tl__data(self), isz};
        if (!accumulate) {
            /* repeated indices: one of the values wins (PyTorch: undefined) */
            tl_range_fn fn = pick(isz, put_rows_uint8_t, put_rows_uint16_t, put_rows_uint32_t, put_rows_uint64_t,
                                  put_rows_elem16);
            const int64_t grain = (1 << 15) / (ai.A * isz);
            tl_parallel_for(ai.B * ai.N, grain > 0 ? grain : 1, fn, &c);
        } else {
            switch (self->dtype) {
            case TL_BOOL: acc_bool(&c); break;
            case TL_UINT8: acc_u8(&c); break;
            case TL_INT8: acc_i8(&c); break;
            case TL_INT16: acc_i16(&c); break;
            case TL_INT32: acc_i32(&c); break;
            case TL_INT64: acc_i64(&c); break;
            case TL_FLOAT16: acc_f16(&c); break;
            case TL_BFLOAT16: acc_bf16(&c); break;
            case TL_FLOAT32: acc_f32(&c); break;
            default: acc_f64(&c); break;
            }
        }
    }
    tl_tensor_release(v);
    tl_tensor_release(e);
    adv_free(&ai);
    return rc;
}

tl_tensor *tl_native__index_put_impl_(tl_keyset ks, tl_tensor *self, tl_tensor *const *indices, int64_t indices_len,
                                      tl_tensor *values, bool accumulate, bool unsafe) {
    (void)ks;
    (void)unsafe;
    if (index_put_impl(self, indices, indices_len, values, accumulate)) return NULL;
    tl_tensor_bump_version(self);
    tl_tensor_retain(self);
    return self;
}

/* index_put_ / index_put: PyTorch's CompositeExplicitAutograd kernels */
tl_tensor *tl_native_index_put_(tl_keyset ks, tl_tensor *self, tl_tensor *const *indices, int64_t indices_len,
                                tl_tensor *values, bool accumulate) {
    (void)ks;
    return tl_ops__index_put_impl_(self, indices, indices_len, values, accumulate, false);
}

/* the functional forms: a clone of self, written in place */
static tl_tensor *put_into_clone(tl_tensor *self, tl_tensor *const *indices, int64_t n, tl_tensor *values,
                                 bool accumulate, bool unsafe) {
    tl_tensor *c = tl_ops_clone(self, -1);
    if (!c) return NULL;
    tl_tensor *r = tl_ops__index_put_impl_(c, indices, n, values, accumulate, unsafe);
    tl_tensor_release(c);
    return r;
}

tl_tensor *tl_native_index_put(tl_keyset ks, tl_tensor *self, tl_tensor *const *indices, int64_t indices_len,
                               tl_tensor *values, bool accumulate) {
    (void)ks;
    return put_into_clone(self, indices, indices_len, values, accumulate, false);
}

/* the autogen variants (PyTorch generates them: a functional result copied
 * into out, resized like resize_output) */
tl_tensor *tl_native_index_put_out(tl_keyset ks, tl_tensor *self, tl_tensor *const *indices, int64_t indices_len,
                                   tl_tensor *values, bool accumulate, tl_tensor *out) {
    (void)ks;
    tl_tensor *r = tl_ops_index_put(self, indices, indices_len, values, accumulate);
    return r ? tl_missing_copy_to_out(r, out) : NULL;
}

tl_tensor *tl_native__index_put_impl(tl_keyset ks, tl_tensor *self, tl_tensor *const *indices, int64_t indices_len,
                                     tl_tensor *values, bool accumulate, bool unsafe) {
    (void)ks;
    return put_into_clone(self, indices, indices_len, values, accumulate, unsafe);
}

tl_tensor *tl_native__index_put_impl_out(tl_keyset ks, tl_tensor *self, tl_tensor *const *indices, int64_t indices_len,
                                         tl_tensor *values, bool accumulate, bool unsafe, tl_tensor *out) {
    (void)ks;
    tl_tensor *r = tl_ops__index_put_impl(self, indices, indices_len, values, accumulate, unsafe);
    return r ? tl_missing_copy_to_out(r, out) : NULL;
}
