/* Helpers shared by the shape and indexing kernels (shape_ops.c, index_ops.c):
 * PyTorch's shape strings, overlap checks, index dtype checks, the odometer,
 * and an element mover keyed by item size (the data-moving operators never
 * convert dtypes, so one copy per size serves all ten dtypes). */
#ifndef TL_SHAPE_INDEX_H
#define TL_SHAPE_INDEX_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "tl_internal.h"

/* "[2, 3]" into buf (truncated with "...]" when long) */
static inline const char *si_shape_str(char *buf, size_t n, int64_t ndim, const int64_t *sizes) {
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int64_t i = 0; i < ndim && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, i ? ", %lld" : "%lld", (long long)sizes[i]);
    if (k < n) snprintf(buf + k, n - k, "]");
    if (k >= n - 1 && n > 5) memcpy(buf + n - 5, "...]", 5);
    return buf;
}

/* the dimension count / size PyTorch's scatter/gather checks use: a 0-dim
 * tensor counts as one dimension of size 1 */
static inline int64_t si_nonempty_dim(const tl_tensor *t) { return t->ndim ? t->ndim : 1; }
static inline int64_t si_nonempty_size(const tl_tensor *t, int64_t d) { return t->ndim ? t->sizes[d] : 1; }
static inline int64_t si_nonempty_stride(const tl_tensor *t, int64_t d) { return t->ndim ? t->strides[d] : 0; }

/* [first, last] bytes a tensor can touch; 0 when it touches none */
static inline int si_extent(const tl_tensor *t, char **lo, char **hi) {
    if (t->numel == 0 || !t->storage->data) return 0;
    const int64_t isz = tl__itemsize(t->dtype);
    int64_t a = 0, b = 0;
    for (int64_t d = 0; d < t->ndim; d++) {
        const int64_t span = (t->sizes[d] - 1) * t->strides[d];
        if (span < 0) a += span; else b += span;
    }
    *lo = tl__data(t) + a * isz;
    *hi = tl__data(t) + (b + 1) * isz - 1;
    return 1;
}

/* PyTorch's assert_no_overlap (conservative: any shared byte range counts) */
static inline int si_check_no_overlap(const tl_tensor *out, const tl_tensor *in) {
    char *a0, *a1, *b0, *b1;
    if (!out || !in || out->storage != in->storage) return 0;
    if (!si_extent(out, &a0, &a1) || !si_extent(in, &b0, &b1)) return 0;
    if (a0 <= b1 && b0 <= a1)
        return tl_set_error(TL_ERR_RUNTIME, "unsupported operation: some elements of the input tensor and the "
                                            "written-to tensor refer to a single memory location. Please clone() "
                                            "the tensor before performing the operation.");
    return 0;
}

/* PyTorch's has_internal_overlap == MemOverlap::Yes: not non-overlapping and
 * dense (an empty tensor is), and a stride-0 dim of size > 1 */
static inline int si_has_internal_overlap(const tl_tensor *t) {
    if (tl_tensor_is_non_overlapping_and_dense(t)) return 0;
    for (int64_t d = 0; d < t->ndim; d++)
        if (t->strides[d] == 0 && t->sizes[d] > 1) return 1;
    return 0;
}

/* PyTorch's assert_no_internal_overlap */
static inline int si_check_no_internal_overlap(const tl_tensor *t) {
    if (si_has_internal_overlap(t))
        return tl_set_error(TL_ERR_RUNTIME, "unsupported operation: more than one element of the written-to "
                                            "tensor refers to a single memory location. Please clone() the "
                                            "tensor before performing the operation.");
    return 0;
}

static inline int si_is_index_dtype(tl_dtype dt) { return dt == TL_INT64 || dt == TL_INT32; }

/* one element of isz bytes */
static inline void si_move(char *dst, const char *src, int64_t isz) {
    switch (isz) {
    case 1: *dst = *src; break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 16: memcpy(dst, src, 16); break;   /* complex128 */
    default: memcpy(dst, src, 8); break;
    }
}

/* odometer over the dims of `sizes` except `skip` (-1: none): advances idx and
 * the byte offsets of up to 3 operands; returns 0 when done */
static inline int si_next(int64_t nd, const int64_t *sizes, int64_t skip, int64_t *idx, int nops,
                          const int64_t *const *strides, int64_t *off) {
    for (int64_t d = nd - 1; d >= 0; d--) {
        if (d == skip) continue;
        if (++idx[d] < sizes[d]) {
            for (int k = 0; k < nops; k++) off[k] += strides[k][d];
            return 1;
        }
        for (int k = 0; k < nops; k++) off[k] -= (idx[d] - 1) * strides[k][d];
        idx[d] = 0;
    }
    return 0;
}

/* index_ops.c, shared with scatter_reduce.c: PyTorch's index_func_meta_impl
 * (errors name `func`_()); scatter_meta_impl without the reduce check; one
 * pass over index's positions calling fn(direct at p, indexed at p with
 * p[dim] = index[p]) after bounds-checking index[p] */
struct tl_structured;
typedef void (*si_elem_fn)(char *direct, char *indexed, const void *ctx);
int si_index_func_meta(struct tl_structured *s, tl_tensor *self, int64_t dim, tl_tensor *index, tl_tensor *source,
                       const char *func);
int si_scatter_meta(struct tl_structured *s, tl_tensor *self, int64_t dim, tl_tensor *index, tl_tensor *src);
int si_scatter_run(tl_tensor *index, tl_tensor *direct, tl_tensor *indexed, int64_t dim, si_elem_fn fn,
                   const void *ctx);

/* chunk / unsafe_chunk (shape_ops.c) */
int tl__chunk_pieces(tl_tensor *self, int64_t chunks, int64_t dim, bool unsafe, tl_tensor ***ret, int64_t *ret_len);

/* index_ops.c, shared with the CUDA kernels (kernels/cuda/tl_cuda_index.c):
 * index_select's checks and resize (-1 error, 1 nothing to compute, 0 go on),
 * embedding's index dtype check (PyTorch's checkScalarTypes wording) */
int si_index_select_prepare(tl_tensor *self, int64_t dim, tl_tensor *index, tl_tensor *result, int64_t *dim_out);
int si_check_embedding_indices(const tl_tensor *indices, const char *fn);
/* index_fill_'s checks: the wrapped dim, or -1 */
int64_t si_index_fill_check(tl_tensor *self, int64_t dim, tl_tensor *index);
/* masked_fill.Tensor's value: a 0-dim tensor, read on the host */
int si_masked_fill_value(tl_tensor *value, tl_scalar *out);

/* advanced indexing (index_advanced.c) for a device kernel: the CPU path's
 * checks and result shape over host copies of the indices; the result read
 * as [rows, A dims of self] has row r starting at element offset rows[r] of
 * self (malloc'd: the caller frees it) */
typedef struct si_adv_plan {
    int64_t res_nd, res[TL_MAX_DIMS];
    int64_t na, adims[TL_MAX_DIMS];
    int64_t nrows, *rows;
} si_adv_plan;
int si_adv_plan_make(tl_tensor *self, tl_tensor *const *host_indices, int64_t n, si_adv_plan *plan);

#endif
