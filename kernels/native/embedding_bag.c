/* embedding_bag / embedding_bag.padding_idx (CompositeImplicitAutograd),
 * _embedding_bag (CPU; (output, offset2bag, bag_size, max_indices)),
 * _embedding_bag_backward, _embedding_bag_dense_backward and
 * _embedding_bag_per_sample_weights_backward (CPU), as PyTorch 2.13's
 * EmbeddingBag.cpp: bags are the index ranges the offsets start (the last
 * runs to the end of the indices); padding_idx entries are skipped and,
 * for mean / max, not counted in bag_size; mean divides by max(bag_size,
 * 1); max keeps the first maximum and its weight row in max_indices (for
 * sum / mean max_indices is a copy of bag_size, which is zeros for sum).
 * Sums run in index order in the compute dtype (float32 for float16 /
 * bfloat16 / float32, float64). Bags go to the thread pool; the dense
 * backward scatters rows serially (bags share weight rows). */
#include <stdlib.h>
#include <string.h>

#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/_embedding_bag.h"
#include "ops/_embedding_bag_backward.h"
#include "ops/_embedding_bag_dense_backward.h"
#include "ops/_embedding_bag_per_sample_weights_backward.h"
#include "ops/embedding_bag.h"
#include "tl_tensor.h"
#include "nn_common.h"
#include "tl_kernel.h"
#include "../cpu/bag_kernel.h"

enum { MODE_SUM = 0, MODE_MEAN = 1, MODE_MAX = 2 };

typedef struct {
    int64_t n, nb, D, V, mode, pad;
    const int64_t *idx, *off, *o2b;
    const void *w, *psw;
    void *out;
    int64_t *bsz, *maxi;
    int f64;
} bag_ctx;

TL_DEFINE_STUB(tl_bag_stub, tl_bag_table)

#define BAG_FWD(T)                                                                                                    \
    static void bags_##T(const bag_ctx *c, int64_t b0, int64_t b1) {                                                  \
        const T *w = c->w, *psw = c->psw;                                                                             \
        const int64_t D = c->D, n = c->n, *idx = c->idx;                                                             \
        const tl_bag_sum_fn sum = (*(const tl_bag_table_t *)tl_bag_stub.current)[sizeof(T) == 8];                    \
        for (int64_t b = b0; b < b1; b++) {                                                                           \
            T *restrict o = (T *)c->out + b * c->D;                                                                   \
            int64_t *mi = c->mode == MODE_MAX ? c->maxi + b * c->D : NULL;                                            \
            const int64_t s = c->off[b], e = b + 1 < c->nb ? c->off[b + 1] : c->n;                                    \
            int first = 1;                                                                                            \
            if (mi) {                                                                                                 \
                memset(o, 0, (size_t)D * sizeof(T));                                                                  \
                memset(mi, 0, (size_t)D * sizeof(int64_t));                                                           \
            } else { /* sum / mean: the per-ISA bag sum */                                                            \
                const int64_t skipped = sum(w, idx, s, e, n, D, c->pad, psw, o);                                      \
                if (c->mode != MODE_SUM) c->bsz[b] -= skipped;                                                        \
            }                                                                                                         \
            for (int64_t i = s; mi && i < e; i++) {                                                                   \
                if (i + 16 < n) /* the prefetch of the bag sum (bag_kernel.c) */                                      \
                    for (int64_t p = 0; p < D * (int64_t)sizeof(T); p += 64)                                          \
                        __builtin_prefetch((const char *)(w + idx[i + 16] * D) + p);                                  \
                const int64_t r = idx[i];                                                                             \
                if (r == c->pad) {                                                                                    \
                    c->bsz[b]--;                                                                                      \
                    continue;                                                                                         \
                }                                                                                                     \
                const T *restrict row = w + r * D;                                                                    \
                for (int64_t d = 0; d < D; d++)                                                                       \
                    if (first || row[d] > o[d]) {                                                                     \
                        o[d] = row[d];                                                                                \
                        mi[d] = r;                                                                                    \
                    }                                                                                                 \
                first = 0;                                                                                            \
            }                                                                                                         \
            if (c->mode == MODE_MEAN) {                                                                               \
                const T div = (T)(c->bsz[b] > 1 ? c->bsz[b] : 1);                                                     \
                for (int64_t d = 0; d < c->D; d++) o[d] /= div;                                                       \
            }                                                                                                         \
        }                                                                                                             \
    }
BAG_FWD(float)
BAG_FWD(double)

static void run_bags(int64_t b, int64_t e, void *ctx) {
    const bag_ctx *c = ctx;
    if (c->f64) bags_double(c, b, e);
    else bags_float(c, b, e);
}

/* ------------------------------------------------------------ checks */

static int check_weight(const tl_tensor *w) {
    const tl_dtype dt = tl_tensor_dtype(w);
    if (tl_dtype_is_floating(dt)) return 0;
    return tl_set_error(TL_ERR_RUNTIME, "Expected tensor for argument #1 'weight' to have one of the following scalar "
                        "types: Half, BFloat16, Float, Double; but got %s instead (while checking arguments for "
                        "embedding_bag)", tl_dtype_caffe2_name(dt));
}

static int check_index_dtype(const tl_tensor *t, const char *arg, int pos) {
    const tl_dtype dt = tl_tensor_dtype(t);
    if (dt == TL_INT64 || dt == TL_INT32) return 0;
    return tl_set_error(TL_ERR_RUNTIME, "Expected tensor for argument #%d '%s' to have one of the following scalar "
                        "types: Long, Int; but got %s instead (while checking arguments for embedding_bag)", pos, arg,
                        tl_dtype_caffe2_name(dt));
}

/* the bag layout: int64 indices / offsets (contiguous copies), the bag count,
 * PyTorch's offset and index checks */
static int bag_layout(tl_tensor *weight, tl_tensor *indices, tl_tensor *offsets, bool include_last_offset,
                      tl_tensor **idx, tl_tensor **off, int64_t *nb) {
    *idx = *off = NULL;
    if (check_weight(weight) || check_index_dtype(indices, "indices", 2) || check_index_dtype(offsets, "offsets", 3))
        return -1;
    if (tl_tensor_ndim(indices) != 1 && tl_tensor_ndim(indices) != 2)
        return tl_set_error(TL_ERR_RUNTIME, "input has to be a 1D or 2D Tensor, but got Tensor of dimension %lld",
                            (long long)tl_tensor_ndim(indices));
    if (tl_tensor_ndim(offsets) != 1)
        return tl_set_error(TL_ERR_RUNTIME, "offsets has to be a 1D Tensor, but got Tensor of dimension %lld",
                            (long long)tl_tensor_ndim(offsets));
    if (tl_tensor_ndim(weight) != 2)
        return tl_set_error(TL_ERR_RUNTIME, "weight has to be a 2D Tensor, but got Tensor of dimension %lld",
                            (long long)tl_tensor_ndim(weight));
    if (!(*idx = contig_as(indices, TL_INT64)) || !(*off = contig_as(offsets, TL_INT64))) return -1;
    const int64_t n = tl_tensor_numel(*idx), no = tl_tensor_numel(*off), V = tl_tensor_sizes(weight)[0];
    const int64_t *iv = tl_tensor_data_ptr(*idx), *ov = tl_tensor_data_ptr(*off);
    if (include_last_offset && no < 1)
        return tl_set_error(TL_ERR_RUNTIME, "include_last_offset: number of offset should be at least 1");
    *nb = include_last_offset ? no - 1 : no;
    if (no > 0 && ov[0] != 0)
        return tl_set_error(TL_ERR_RUNTIME, "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to "
                            "start from position 0. However, got %lld", (long long)ov[0]);
    if (no > 0 && ov[no - 1] > n)
        return tl_set_error(TL_ERR_RUNTIME, "offsets[-1] can not be greater than input's length %lld but got "
                            "offsets[-1] of %lld", (long long)n, (long long)ov[no - 1]);
    for (int64_t i = 1; i < no; i++)
        if (ov[i] < ov[i - 1])
            return tl_set_error(TL_ERR_RUNTIME, "offsets must be non-decreasing, but got offsets[%lld] = %lld after "
                                "%lld", (long long)i, (long long)ov[i], (long long)ov[i - 1]);
    for (int64_t i = 0; i < n; i++)
        if (iv[i] < 0 || iv[i] >= V)
            return tl_set_error(TL_ERR_RUNTIME, "Index %lld of input takes value %lld which is not in the valid range "
                                "[0, %lld)", (long long)i, (long long)iv[i], (long long)V);
    return 0;
}

/* ------------------------------------------------------------ forward */

int tl_native__embedding_bag_cpu(tl_keyset ks, tl_tensor *weight, tl_tensor *indices, tl_tensor *offsets,
                                 bool scale_grad_by_freq, int64_t mode, bool sparse, tl_tensor *per_sample_weights,
                                 bool include_last_offset, int64_t padding_idx, tl_tensor **ret0, tl_tensor **ret1,
                                 tl_tensor **ret2, tl_tensor **ret3) {
    (void)ks;
    (void)scale_grad_by_freq;
    (void)sparse;
    tl_tensor *idx = NULL, *off = NULL, *w = NULL, *psw = NULL, *out = NULL, *o2b = NULL, *bsz = NULL, *maxi = NULL;
    int64_t nb = 0;
    int rc = -1;
    if (mode < MODE_SUM || mode > MODE_MAX) {
        tl_set_error(TL_ERR_RUNTIME, "`mode` must be sum, mean, or max.");
        return -1;
    }
    if (bag_layout(weight, indices, offsets, include_last_offset, &idx, &off, &nb)) goto done;
    const tl_dtype dt = tl_tensor_dtype(weight), ct = compute_dtype(dt);
    const int64_t n = tl_tensor_numel(idx), D = tl_tensor_sizes(weight)[1];
    if (per_sample_weights) {
        if (mode != MODE_SUM) {
            tl_set_error(TL_ERR_RUNTIME, "embedding_bag: per_sample_weights only supported with mode='sum'");
            goto done;
        }
        if (tl_tensor_dtype(per_sample_weights) != dt || tl_tensor_ndim(per_sample_weights) != 1 ||
            tl_tensor_numel(per_sample_weights) != n) {
            tl_set_error(TL_ERR_RUNTIME, "embedding_bag: per_sample_weights must be a 1-D tensor of the weight's dtype "
                         "with one value per index");
            goto done;
        }
        if (!(psw = contig_as(per_sample_weights, ct))) goto done;
    }
    const int64_t oshape[2] = {nb, D}, nb1 = nb;
    if (!(w = contig_as(weight, ct)) || !(out = tl_empty(2, oshape, ct, TL_CPU)) ||
        !(o2b = nb > 0 ? tl_empty(1, &n, TL_INT64, TL_CPU) : tl_zeros(1, &n, TL_INT64, TL_CPU)) || !(bsz = tl_zeros(1, &nb1, TL_INT64, TL_CPU)) ||
        !(maxi = mode == MODE_MAX ? tl_zeros(2, oshape, TL_INT64, TL_CPU) : tl_zeros(1, &nb1, TL_INT64, TL_CPU)))
        goto done;
    const int64_t *ov = tl_tensor_data_ptr(off);
    int64_t *o2bv = tl_tensor_data_ptr(o2b), *bv = tl_tensor_data_ptr(bsz);
    /* offsets[0] is 0 and the last bag runs to the end: with a bag, every index gets its bag */
    for (int64_t b = 0; b < nb; b++) {
        const int64_t s = ov[b], e = b + 1 < nb ? ov[b + 1] : n;
        for (int64_t i = s; i < e; i++) o2bv[i] = b;
        if (mode != MODE_SUM) bv[b] = e - s;
    }
    bag_ctx c = {n, nb, D, tl_tensor_sizes(weight)[0], mode, padding_idx, tl_tensor_data_ptr(idx), ov, o2bv,
                 tl_tensor_data_ptr(w), psw ? tl_tensor_data_ptr(psw) : NULL, tl_tensor_data_ptr(out), bv,
                 mode == MODE_MAX ? tl_tensor_data_ptr(maxi) : NULL, ct == TL_FLOAT64};
    if (nb > 0) {
        const int64_t grain = 16384 / (D * (n / nb + 1) + 1);
        tl_parallel_for(nb, grain > 0 ? grain : 1, run_bags, &c);
    }
    if (mode != MODE_MAX && tl_copy_(maxi, bsz)) goto done;
    if (ct != dt) {
        tl_tensor *r = tl_to_dtype(out, dt, 0);
        tl_tensor_release(out);
        if (!(out = r)) goto done;
    }
    *ret0 = out;
    *ret1 = o2b;
    *ret2 = bsz;
    *ret3 = maxi;
    out = o2b = bsz = maxi = NULL;
    rc = 0;
done:
    tl_tensor_release(idx);
    tl_tensor_release(off);
    tl_tensor_release(w);
    tl_tensor_release(psw);
    tl_tensor_release(out);
    tl_tensor_release(o2b);
    tl_tensor_release(bsz);
    tl_tensor_release(maxi);
    return rc;
}

/* embedding_bag.padding_idx (CompositeImplicitAutograd): PyTorch's
 * padding_idx range check and wrap, then _embedding_bag (PyTorch takes
 * _embedding_bag_forward_only when weight needs no gradient: same values) */
int tl_native_embedding_bag__embedding_bag_padding_idx(tl_keyset ks, tl_tensor *weight, tl_tensor *indices, tl_tensor *offsets,
                                        bool scale_grad_by_freq, int64_t mode, bool sparse,
                                        tl_tensor *per_sample_weights, bool include_last_offset, int64_t padding_idx,
                                        bool padding_idx_has, tl_tensor **ret0, tl_tensor **ret1, tl_tensor **ret2,
                                        tl_tensor **ret3) {
    (void)ks;
    int64_t pad = -1;
    if (padding_idx_has) {
        if (tl_tensor_ndim(weight) < 1) return tl_set_error(TL_ERR_RUNTIME, "weight has to be a 2D Tensor");
        const int64_t V = tl_tensor_sizes(weight)[0];
        if (padding_idx < -V || padding_idx >= V)
            return tl_set_error(TL_ERR_RUNTIME, "padding_idx must be within the number of embeddings, -%lld through "
                                "%lld, but got %lld", (long long)V, (long long)(V - 1), (long long)padding_idx);
        pad = padding_idx < 0 ? padding_idx + V : padding_idx;
    }
    return tl_ops__embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights,
                                 include_last_offset, pad, ret0, ret1, ret2, ret3);
}

int tl_native_embedding_bag(tl_keyset ks, tl_tensor *weight, tl_tensor *indices, tl_tensor *offsets,
                            bool scale_grad_by_freq, int64_t mode, bool sparse, tl_tensor *per_sample_weights,
                            bool include_last_offset, tl_tensor **ret0, tl_tensor **ret1, tl_tensor **ret2,
                            tl_tensor **ret3) {
    return tl_native_embedding_bag__embedding_bag_padding_idx(ks, weight, indices, offsets, scale_grad_by_freq, mode, sparse,
                                               per_sample_weights, include_last_offset, 0, false, ret0, ret1, ret2,
                                               ret3);
}

/* ------------------------------------------------------------ backward */

#define BAG_BWD(T)                                                                                                    \
    static void dense_bwd_##T(const T *g, const int64_t *idx, const int64_t *o2b, const int64_t *bsz,                 \
                              const int64_t *maxi, const T *psw, const int64_t *cnt, int64_t n, int64_t nb,            \
                              int64_t D, int64_t mode, int64_t pad, T *gw) {                                          \
        if (mode == MODE_MAX) {                                                                                       \
            for (int64_t b = 0; b < nb; b++)                                                                          \
                if (bsz[b] > 0)                                                                                       \
                    for (int64_t d = 0; d < D; d++) gw[maxi[b * D + d] * D + d] += g[b * D + d];                      \
            return;                                                                                                   \
        }                                                                                                             \
        for (int64_t i = 0; i < n; i++) {                                                                             \
            const int64_t r = idx[i], b = o2b[i];                                                                     \
            if (r == pad) continue;                                                                                   \
            T s = psw ? psw[i] : (T)1;                                                                                \
            if (mode == MODE_MEAN) s /= (T)bsz[b];                                                                    \
            if (cnt) s /= (T)cnt[r];                                                                                  \
            for (int64_t d = 0; d < D; d++) gw[r * D + d] += g[b * D + d] * s;                                        \
        }                                                                                                             \
    }
BAG_BWD(float)
BAG_BWD(double)

static int cmp_i64(const void *a, const void *b) {
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* the scale_grad_by_freq divisor of each weight row, as PyTorch's CPU
 * kernel computes it: the rows' occurrence counts, but the u-th distinct
 * index (ascending) is divided by the count of sorted_indices[u] -- the
 * group number used as a position in the sorted indices -- rather than by
 * its own count (so rows after a repeated index take a neighbour's count) */
static int64_t *freq_divisors(const int64_t *iv, int64_t n, int64_t num_weights) {
    int64_t *cnt = calloc((size_t)num_weights, sizeof(int64_t)), *div = calloc((size_t)num_weights, sizeof(int64_t));
    int64_t *sorted = malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
    if (!cnt || !div || !sorted) {
        free(cnt);
        free(div);
        free(sorted);
        tl_set_error(TL_ERR_RUNTIME, "out of memory");
        return NULL;
    }
    for (int64_t i = 0; i < n; i++) cnt[iv[i]]++;
    memcpy(sorted, iv, (size_t)n * sizeof(int64_t));
    qsort(sorted, (size_t)n, sizeof(int64_t), cmp_i64);
    for (int64_t i = 0, u = 0; i < n; u++) {
        const int64_t v = sorted[i];
        div[v] = cnt[sorted[u]];
        while (i < n && sorted[i] == v) i++;
    }
    free(cnt);
    free(sorted);
    return div;
}

tl_tensor *tl_native__embedding_bag_dense_backward_cpu(tl_keyset ks, tl_tensor *grad, tl_tensor *indices,
                                                       tl_tensor *offset2bag, tl_tensor *bag_size,
                                                       tl_tensor *maximum_indices, int64_t num_weights,
                                                       bool scale_grad_by_freq, int64_t mode,
                                                       tl_tensor *per_sample_weights, int64_t padding_idx) {
    (void)ks;
    if (tl_tensor_ndim(grad) != 2) {
        tl_set_error(TL_ERR_RUNTIME, "_embedding_bag_dense_backward: grad must be 2-D");
        return NULL;
    }
    const tl_dtype dt = tl_tensor_dtype(grad), ct = compute_dtype(dt);
    const int64_t nb = tl_tensor_sizes(grad)[0], D = tl_tensor_sizes(grad)[1], n = tl_tensor_numel(indices);
    tl_tensor *g = contig_as(grad, ct), *idx = g ? contig_as(indices, TL_INT64) : NULL;
    tl_tensor *o2b = idx ? contig_as(offset2bag, TL_INT64) : NULL, *bsz = o2b ? contig_as(bag_size, TL_INT64) : NULL;
    tl_tensor *maxi = bsz ? contig_as(maximum_indices, TL_INT64) : NULL;
    tl_tensor *psw = maxi && per_sample_weights ? contig_as(per_sample_weights, ct) : NULL;
    const int64_t shape[2] = {num_weights, D};
    tl_tensor *gw = maxi && (psw || !per_sample_weights) ? tl_zeros(2, shape, ct, TL_CPU) : NULL;
    int64_t *cnt = NULL;
    int ok = gw != NULL;
    const int64_t *iv = ok ? tl_tensor_data_ptr(idx) : NULL;
    if (ok && (tl_tensor_numel(o2b) < n || tl_tensor_numel(bsz) < nb ||
               (mode == MODE_MAX && tl_tensor_numel(maxi) < nb * D))) {
        tl_set_error(TL_ERR_RUNTIME, "_embedding_bag_dense_backward: offset2bag, bag_size or maximum_indices do not "
                     "match the gradient");
        ok = 0;
    }
    for (int64_t i = 0; ok && i < n; i++)
        if (iv[i] < 0 || iv[i] >= num_weights) {
            tl_set_error(TL_ERR_INDEX, "index %lld is out of bounds for %lld embeddings", (long long)iv[i],
                         (long long)num_weights);
            ok = 0;
        }
    if (ok && scale_grad_by_freq && num_weights > 0 && !(cnt = freq_divisors(iv, n, num_weights))) ok = 0;
    if (ok) {
        const int64_t *o2bv = tl_tensor_data_ptr(o2b), *bv = tl_tensor_data_ptr(bsz), *mv = tl_tensor_data_ptr(maxi);
        for (int64_t i = 0; mode == MODE_MAX && i < nb * D; i++)
            if (mv[i] < 0 || mv[i] >= num_weights) ok = 0;
        if (!ok) tl_set_error(TL_ERR_INDEX, "_embedding_bag_dense_backward: maximum_indices out of range");
        else if (ct == TL_FLOAT64)
            dense_bwd_double(tl_tensor_data_ptr(g), iv, o2bv, bv, mv, psw ? tl_tensor_data_ptr(psw) : NULL, cnt, n,
                             nb, D, mode, padding_idx, tl_tensor_data_ptr(gw));
        else
            dense_bwd_float(tl_tensor_data_ptr(g), iv, o2bv, bv, mv, psw ? tl_tensor_data_ptr(psw) : NULL, cnt, n,
                            nb, D, mode, padding_idx, tl_tensor_data_ptr(gw));
    }
    free(cnt);
    tl_tensor_release(g);
    tl_tensor_release(idx);
    tl_tensor_release(o2b);
    tl_tensor_release(bsz);
    tl_tensor_release(maxi);
    tl_tensor_release(psw);
    if (!ok) {
        tl_tensor_release(gw);
        return NULL;
    }
    if (ct == dt) return gw;
    tl_tensor *r = tl_to_dtype(gw, dt, 0);
    tl_tensor_release(gw);
    return r;
}

/* _embedding_bag_backward: the dense backward (torchlet has no sparse
 * tensors, so sparse=True raises) */
tl_tensor *tl_native__embedding_bag_backward_symint(tl_keyset ks, tl_tensor *grad, tl_tensor *indices,
                                                    tl_tensor *offsets, tl_tensor *offset2bag, tl_tensor *bag_size,
                                                    tl_tensor *maximum_indices, int64_t num_weights,
                                                    bool scale_grad_by_freq, int64_t mode, bool sparse,
                                                    tl_tensor *per_sample_weights, int64_t padding_idx) {
    (void)ks;
    (void)offsets;
    if (sparse) {
        tl_set_error(TL_ERR_NOT_IMPLEMENTED, "embedding_bag: sparse gradients are not supported (torchlet has no "
                     "sparse tensors)");
        return NULL;
    }
    return tl_ops__embedding_bag_dense_backward(grad, indices, offset2bag, bag_size, maximum_indices, num_weights,
                                                scale_grad_by_freq, mode, per_sample_weights, padding_idx);
}

/* d loss / d per_sample_weights[i] = grad[bag(i)] . weight[indices[i]] (0 for padding) */
tl_tensor *tl_native__embedding_bag_per_sample_weights_backward_cpu(tl_keyset ks, tl_tensor *grad, tl_tensor *weight,
                                                                    tl_tensor *indices, tl_tensor *offsets,
                                                                    tl_tensor *offset2bag, int64_t mode,
                                                                    int64_t padding_idx) {
    (void)ks;
    (void)offsets;
    if (mode != MODE_SUM) {
        tl_set_error(TL_ERR_RUNTIME, "embedding_bag_backward: per_sample_weights only supported for mode='sum'");
        return NULL;
    }
    const tl_dtype dt = tl_tensor_dtype(grad);
    const int64_t n = tl_tensor_numel(indices), D = tl_tensor_ndim(grad) == 2 ? tl_tensor_sizes(grad)[1] : 0;
    tl_tensor *g = contig_as(grad, TL_FLOAT64), *w = g ? contig_as(weight, TL_FLOAT64) : NULL;
    tl_tensor *idx = w ? contig_as(indices, TL_INT64) : NULL, *o2b = idx ? contig_as(offset2bag, TL_INT64) : NULL;
    tl_tensor *r = o2b ? tl_empty(1, &n, TL_FLOAT64, TL_CPU) : NULL;
    if (r) {
        const double *gv = tl_tensor_data_ptr(g), *wv = tl_tensor_data_ptr(w);
        const int64_t *iv = tl_tensor_data_ptr(idx), *bv = tl_tensor_data_ptr(o2b);
        double *rv = tl_tensor_data_ptr(r);
        const int64_t V = tl_tensor_ndim(w) == 2 ? tl_tensor_sizes(w)[0] : 0, nb = tl_tensor_ndim(g) == 2 ?
                                                                                  tl_tensor_sizes(g)[0] : 0;
        for (int64_t i = 0; i < n; i++) {
            double s = 0;
            if (iv[i] != padding_idx && (iv[i] < 0 || iv[i] >= V || bv[i] < 0 || bv[i] >= nb)) {
                tl_set_error(TL_ERR_INDEX, "_embedding_bag_per_sample_weights_backward: index out of range");
                tl_tensor_release(r);
                r = NULL;
                break;
            }
            if (iv[i] != padding_idx)
                for (int64_t d = 0; d < D; d++) s += gv[bv[i] * D + d] * wv[iv[i] * D + d];
            rv[i] = s;
        }
    }
    if (r && tl_tensor_numel(g) > 0 && tl_tensor_sizes(w)[1] != D) {
        tl_set_error(TL_ERR_RUNTIME, "_embedding_bag_per_sample_weights_backward: grad and weight sizes differ");
        tl_tensor_release(r);
        r = NULL;
    }
    tl_tensor_release(g);
    tl_tensor_release(w);
    tl_tensor_release(idx);
    tl_tensor_release(o2b);
    if (!r || dt == TL_FLOAT64) return r;
    tl_tensor *c = tl_to_dtype(r, dt, 0);
    tl_tensor_release(r);
    return c;
}
