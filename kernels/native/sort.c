/* Sorting and selection (aten/src/ATen/native/Sorting.cpp, TensorCompare.cpp,
 * Unique.cpp): sort / sort.stable, argsort, msort, topk, _unique2.
 *
 * One engine: each row along `dim` (a contiguous copy with dim moved last) is
 * turned into order-preserving unsigned keys (floats: sign-flipped bits,
 * -0.0 folded into 0.0, every NaN the largest key; signed ints: the sign bit
 * flipped; descending: the keys complemented) and sorted with a stable LSD
 * radix sort on (key, index) pairs, 8 bits a pass, skipping passes whose digit
 * is the same for every element; rows of up to 32 elements use insertion
 * sort. Every sort is therefore stable (PyTorch's stable=True order: equal
 * elements keep their order; NaN last ascending, first descending), rows run
 * on the thread pool, and values are read back from the input through the
 * sorted indices. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/_unique2.h"
#include "ops/argsort.h"
#include "ops/msort.h"
#include "ops/sort.h"
#include "ops/topk.h"
#include "tl_tensor.h"

/* ------------------------------------------------------------ keys */

static inline uint64_t key_f32(float f) {
    if (f != f) return UINT32_MAX;
    if (f == 0.0f) f = 0.0f;   /* -0.0 sorts with 0.0 */
    uint32_t u;
    memcpy(&u, &f, 4);
    return u & 0x80000000u ? ~u : u | 0x80000000u;
}

static inline uint64_t key_f64(double f) {
    if (f != f) return UINT64_MAX;
    if (f == 0.0) f = 0.0;
    uint64_t u;
    memcpy(&u, &f, 8);
    return u & 0x8000000000000000ull ? ~u : u | 0x8000000000000000ull;
}

/* the keys of row `src` (dtype dt; float16 / bfloat16 arrive as float32) and
 * their width in bytes */
static int row_keys(const void *src, tl_dtype dt, int64_t n, bool desc, uint64_t *key) {
    int width = 4;
    switch (dt) {
    case TL_FLOAT32: for (int64_t i = 0; i < n; i++) key[i] = key_f32(((const float *)src)[i]); break;
    case TL_FLOAT64: width = 8; for (int64_t i = 0; i < n; i++) key[i] = key_f64(((const double *)src)[i]); break;
    case TL_INT64:
        width = 8;
        for (int64_t i = 0; i < n; i++) key[i] = (uint64_t)((const int64_t *)src)[i] ^ 0x8000000000000000ull;
        break;
    case TL_INT32: for (int64_t i = 0; i < n; i++) key[i] = (uint32_t)((const int32_t *)src)[i] ^ 0x80000000u; break;
    case TL_INT16: for (int64_t i = 0; i < n; i++) key[i] = (uint32_t)(int32_t)((const int16_t *)src)[i] ^ 0x80000000u; break;
    case TL_INT8: for (int64_t i = 0; i < n; i++) key[i] = (uint32_t)(int32_t)((const int8_t *)src)[i] ^ 0x80000000u; break;
    default: for (int64_t i = 0; i < n; i++) key[i] = ((const uint8_t *)src)[i]; break;   /* uint8, bool */
    }
    if (desc) {
        const uint64_t m = width == 8 ? UINT64_MAX : UINT32_MAX;
        for (int64_t i = 0; i < n; i++) key[i] = ~key[i] & m;
    }
    return width;
}

/* stable sort of idx[0..n) by key (both permuted together); tmp: 2n scratch */
static void sort_pairs(uint64_t *key, int64_t *idx, int64_t n, int width, uint64_t *tk, int64_t *ti) {
    if (n <= 32) {
        for (int64_t i = 1; i < n; i++) {
            const uint64_t k = key[i];
            const int64_t x = idx[i];
            int64_t j = i;
            for (; j > 0 && key[j - 1] > k; j--) {
                key[j] = key[j - 1];
                idx[j] = idx[j - 1];
            }
            key[j] = k;
            idx[j] = x;
        }
        return;
    }
    int64_t hist[8][256];
    memset(hist, 0, sizeof hist);
    for (int64_t i = 0; i < n; i++)
        for (int p = 0; p < width; p++) hist[p][(key[i] >> (8 * p)) & 0xff]++;
    uint64_t *ka = key, *kb = tk;
    int64_t *ia = idx, *ib = ti;
    for (int p = 0; p < width; p++) {
        int64_t *h = hist[p], sum = 0;
        bool skip = false;
        for (int b = 0; b < 256; b++)
            if (h[b] == n) skip = true;
        if (skip) continue;
        for (int b = 0; b < 256; b++) {
            const int64_t c = h[b];
            h[b] = sum;
            sum += c;
        }
        for (int64_t i = 0; i < n; i++) {
            const int64_t o = h[(ka[i] >> (8 * p)) & 0xff]++;
            kb[o] = ka[i];
            ib[o] = ia[i];
        }
        uint64_t *kt = ka; ka = kb; kb = kt;
        int64_t *it = ia; ia = ib; ib = it;
    }
    if (ka != key) {
        memcpy(key, ka, (size_t)n * sizeof *key);
        memcpy(idx, ia, (size_t)n * sizeof *idx);
    }
}

/* ------------------------------------------------------------ rows */

typedef struct {
    const char *keysrc;   /* rows of the key dtype */
    const char *valsrc;   /* rows of the input dtype */
    tl_dtype kdt;
    int64_t kitem, vitem, n, k;
    bool desc;
    char *vals;           /* rows of k values (NULL: none wanted) */
    int64_t *inds;        /* rows of k indices */
    int err;
} sort_job;

static void sort_rows(int64_t begin, int64_t end, void *ctx) {
    sort_job *j = ctx;
    const int64_t n = j->n;
    uint64_t *key = malloc((size_t)(2 * n + 1) * sizeof *key);
    int64_t *idx = malloc((size_t)(2 * n + 1) * sizeof *idx);
    if (!key || !idx) {
        j->err = 1;
        free(key);
        free(idx);
        return;
    }
    for (int64_t r = begin; r < end; r++) {
        const int width = row_keys(j->keysrc + r * n * j->kitem, j->kdt, n, j->desc, key);
        for (int64_t i = 0; i < n; i++) idx[i] = i;
        sort_pairs(key, idx, n, width, key + n, idx + n);
        memcpy(j->inds + r * j->k, idx, (size_t)j->k * sizeof *idx);
        if (!j->vals) continue;
        const char *src = j->valsrc + r * n * j->vitem;
        char *dst = j->vals + r * j->k * j->vitem;
        switch (j->vitem) {
        case 1: for (int64_t i = 0; i < j->k; i++) dst[i] = src[idx[i]]; break;
        case 2: for (int64_t i = 0; i < j->k; i++) ((uint16_t *)dst)[i] = ((const uint16_t *)src)[idx[i]]; break;
        case 4: for (int64_t i = 0; i < j->k; i++) ((uint32_t *)dst)[i] = ((const uint32_t *)src)[idx[i]]; break;
        default: for (int64_t i = 0; i < j->k; i++) ((uint64_t *)dst)[i] = ((const uint64_t *)src)[idx[i]]; break;
        }
    }
    free(key);
    free(idx);
}

/* values / indices of the first k of each row along dim, sorted ascending or
 * descending; either output may be skipped (NULL). Outputs are contiguous. */
static int sort_core(tl_tensor *self, int64_t dim, int64_t k, bool desc, tl_tensor **values, tl_tensor **indices) {
    const int64_t nd = self->ndim;
    const int64_t d = tl__wrap_dim(dim, nd, 1);
    if (d < 0) return -1;
    int64_t shape[TL_MAX_DIMS];
    for (int64_t i = 0; i < nd; i++) shape[i] = i == d ? k : self->sizes[i];
    tl_tensor *vo = values ? tl_empty(nd, shape, self->dtype, tl__device_of(self)) : NULL;
    tl_tensor *io = tl_empty(nd, shape, TL_INT64, tl__device_of(self));
    if ((values && !vo) || !io) goto fail;
    if (self->device != TL_META && k > 0 && io->numel > 0) {
        const int64_t last = nd ? nd - 1 : 0, n = nd ? self->sizes[d] : 1;
        tl_tensor *moved = nd ? tl_transpose(self, d, last) : tl_alias(self);
        tl_tensor *vsrc = moved ? tl_contiguous(moved) : NULL;
        tl_tensor_release(moved);
        const bool half = self->dtype == TL_FLOAT16 || self->dtype == TL_BFLOAT16;
        tl_tensor *ksrc = vsrc && half ? tl_to_dtype(vsrc, TL_FLOAT32, 0) : vsrc;
        if (ksrc && ksrc == vsrc) tl_tensor_retain(ksrc);
        /* results in the moved layout, copied back through a transposed view */
        int64_t mshape[TL_MAX_DIMS];
        for (int64_t i = 0; i < nd; i++) mshape[i] = shape[i];
        if (nd) {
            mshape[d] = shape[last];
            mshape[last] = k;
        }
        const bool direct = d == last;
        tl_tensor *vt = !values ? NULL : direct ? (tl_tensor_retain(vo), vo) : tl_empty(nd, mshape, self->dtype, TL_CPU);
        tl_tensor *it = direct ? (tl_tensor_retain(io), io) : tl_empty(nd, mshape, TL_INT64, TL_CPU);
        int rc = -1;
        if (vsrc && ksrc && it && (!values || vt)) {
            sort_job j = {tl_tensor_data_ptr(ksrc), tl_tensor_data_ptr(vsrc), ksrc->dtype,
                          tl_dtype_itemsize(ksrc->dtype), tl_dtype_itemsize(self->dtype), n, k, desc,
                          vt ? tl_tensor_data_ptr(vt) : NULL, tl_tensor_data_ptr(it), 0};
            const int64_t rows = io->numel / k;
            tl_parallel_for(rows, n >= 4096 ? 1 : 1 + 4096 / (n ? n : 1), sort_rows, &j);
            rc = j.err ? tl_set_error(TL_ERR_MEMORY, "out of memory") : 0;
            if (!rc && !direct) {
                tl_tensor *iv = tl_transpose(io, d, last);
                rc = iv ? tl_copy_(iv, it) : -1;
                tl_tensor_release(iv);
                if (!rc && values) {
                    tl_tensor *vv = tl_transpose(vo, d, last);
                    rc = vv ? tl_copy_(vv, vt) : -1;
                    tl_tensor_release(vv);
                }
            }
        }
        tl_tensor_release(vsrc);
        tl_tensor_release(ksrc);
        tl_tensor_release(vt);
        tl_tensor_release(it);
        if (rc) goto fail;
    }
    if (values) *values = vo;
    *indices = io;
    return 0;
fail:
    tl_tensor_release(vo);
    tl_tensor_release(io);
    return -1;
}

/* ------------------------------------------------------------ sort / argsort / msort */

int tl_native_sort_stable(tl_keyset ks, tl_tensor *self, bool stable, bool stable_has, int64_t dim, bool descending,
                          tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks; (void)stable; (void)stable_has;   /* every sort here is stable */
    const int64_t d = tl__wrap_dim(dim, self->ndim, 1);
    if (d < 0) return -1;
    return sort_core(self, dim, self->ndim ? self->sizes[d] : 1, descending, ret0, ret1);
}

int tl_native_sort(tl_keyset ks, tl_tensor *self, int64_t dim, bool descending, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    return tl_ops_sort_stable(self, false, true, dim, descending, ret0, ret1);
}

tl_tensor *tl_native_argsort(tl_keyset ks, tl_tensor *self, int64_t dim, bool descending) {
    (void)ks;
    tl_tensor *v = NULL, *i = NULL;
    if (tl_ops_sort(self, dim, descending, &v, &i)) return NULL;
    tl_tensor_release(v);
    return i;
}

tl_tensor *tl_native_argsort_stable(tl_keyset ks, tl_tensor *self, bool stable, int64_t dim, bool descending) {
    (void)ks;
    tl_tensor *v = NULL, *i = NULL;
    if (tl_ops_sort_stable(self, stable, true, dim, descending, &v, &i)) return NULL;
    tl_tensor_release(v);
    return i;
}

tl_tensor *tl_native_msort(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    tl_tensor *v = NULL, *i = NULL;
    if (tl_ops_sort(self, 0, false, &v, &i)) return NULL;
    tl_tensor_release(i);
    return v;
}

/* ------------------------------------------------------------ topk */

int tl_native_topk(tl_keyset ks, tl_tensor *self, int64_t k, int64_t dim, bool largest, bool sorted,
                   tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks; (void)sorted;   /* always sorted: a stable order is one of the orders sorted=False allows */
    const int64_t d = tl__wrap_dim(dim, self->ndim, 1);
    if (d < 0) return -1;
    const int64_t n = self->ndim ? self->sizes[d] : 1;
    if (k < 0 || k > n) return tl_set_error(TL_ERR_RUNTIME, "selected index k out of range");
    return sort_core(self, dim, k, largest, ret0, ret1);
}

/* ------------------------------------------------------------ unique */

/* PyTorch's _unique2 on the flattened input: the sorted distinct values
 * (equal by value: -0.0 with 0.0, every NaN its own), the index of each
 * element's value among them (self's shape) and the count of each. Always
 * sorted (sorted=False allows any order). */
int tl_native__unique2_cpu(tl_keyset ks, tl_tensor *self, bool sorted, bool return_inverse, bool return_counts,
                           tl_tensor **ret0, tl_tensor **ret1, tl_tensor **ret2) {
    (void)ks; (void)sorted;
    const int64_t n = self->numel, zero = 0;
    tl_tensor *flat = tl_reshape(self, 1, &n);
    tl_tensor *sv = NULL, *si = NULL, *out = NULL, *inv = NULL, *cnt = NULL;
    if (!flat || sort_core(flat, 0, n, false, &sv, &si)) goto fail;
    const int64_t *perm = tl_tensor_data_ptr(si);
    const bool fl = tl_dtype_is_floating(self->dtype);
    tl_tensor *keyt = fl && self->dtype != TL_FLOAT64 ? tl_to_dtype(sv, TL_FLOAT32, 0) : sv;
    if (!keyt) goto fail;
    if (keyt == sv) tl_tensor_retain(keyt);
    /* group starts: element i of the sorted values differs from i - 1 */
    int64_t *start = malloc((size_t)(n + 1) * sizeof *start), u = 0;
    if (!start) {
        tl_tensor_release(keyt);
        tl_set_error(TL_ERR_MEMORY, "out of memory");
        goto fail;
    }
    const char *kv = tl_tensor_data_ptr(keyt);
    const int64_t item = tl_dtype_itemsize(keyt->dtype);
    for (int64_t i = 0; i < n; i++) {
        bool same = false;
        if (i > 0) {
            if (keyt->dtype == TL_FLOAT32) {
                const float a = ((const float *)kv)[i - 1], b = ((const float *)kv)[i];
                same = a == b;
            } else if (keyt->dtype == TL_FLOAT64) {
                const double a = ((const double *)kv)[i - 1], b = ((const double *)kv)[i];
                same = a == b;
            } else {
                same = memcmp(kv + (i - 1) * item, kv + i * item, (size_t)item) == 0;
            }
        }
        if (!same) start[u++] = i;
    }
    start[u] = n;
    tl_tensor_release(keyt);
    out = tl_empty(1, &u, self->dtype, TL_CPU);
    inv = return_inverse ? tl_empty(self->ndim, self->sizes, TL_INT64, TL_CPU) : tl_empty(1, &zero, TL_INT64, TL_CPU);
    cnt = return_counts ? tl_empty(1, &u, TL_INT64, TL_CPU) : tl_empty(1, &zero, TL_INT64, TL_CPU);
    if (!out || !inv || !cnt) {
        free(start);
        goto fail;
    }
    const int64_t vitem = tl_dtype_itemsize(self->dtype);
    const char *vals = tl_tensor_data_ptr(sv);
    char *o = tl_tensor_data_ptr(out);
    int64_t *ip = tl_tensor_data_ptr(inv), *cp = tl_tensor_data_ptr(cnt);
    for (int64_t g = 0; g < u; g++) {
        memcpy(o + g * vitem, vals + start[g] * vitem, (size_t)vitem);
        if (return_counts) cp[g] = start[g + 1] - start[g];
        if (return_inverse)
            for (int64_t i = start[g]; i < start[g + 1]; i++) ip[perm[i]] = g;
    }
    free(start);
    tl_tensor_release(flat);
    tl_tensor_release(sv);
    tl_tensor_release(si);
    *ret0 = out;
    *ret1 = inv;
    *ret2 = cnt;
    return 0;
fail:
    tl_tensor_release(flat);
    tl_tensor_release(sv);
    tl_tensor_release(si);
    tl_tensor_release(out);
    tl_tensor_release(inv);
    tl_tensor_release(cnt);
    return -1;
}
