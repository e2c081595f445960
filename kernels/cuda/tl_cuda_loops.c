/* Host side of the generated pointwise CUDA kernels (tl_cuda_loops.h). */
#include "tl_cuda_loops.h"

#include <stdint.h>
#include <string.h>

#include "tl_error.h"
#include "tl_half.h"
#include "tl_tensor.h"
#include "tl_ufunc.h"

static int64_t g_index_limit = INT32_MAX;

void tl_cuda_set_index_limit(int64_t limit) { g_index_limit = limit > 0 && limit <= INT32_MAX ? limit : INT32_MAX; }
int64_t tl_cuda_index_limit(void) { return g_index_limit; }

static int64_t itemsize(tl_dtype dt) {
    switch (dt) {
    case TL_BOOL: case TL_UINT8: case TL_INT8: return 1;
    case TL_INT16: case TL_FLOAT16: case TL_BFLOAT16: return 2;
    case TL_INT32: case TL_FLOAT32: return 4;
    default: return 8;
    }
}

int64_t tl_cuda_view_numel(const tl_cuda_view *v) {
    int64_t n = 1;
    for (int d = 0; d < v->ndim; d++) n *= v->shape[d];
    return n;
}

static int64_t abs64(int64_t x) { return x < 0 ? -x : x; }

int tl_cuda_can_use_32bit(const tl_cuda_view *v, int64_t limit) {
    if (tl_cuda_view_numel(v) > limit) return 0;
    for (int i = 0; i < v->nops; i++) {
        int64_t extent = 1;   /* PyTorch: 1 + sum (size - 1) * |stride| bytes */
        for (int d = 0; d < v->ndim; d++) extent += (v->shape[d] - 1) * abs64(v->strides[i][d]);
        if (extent > limit) return 0;
    }
    return 1;
}

/* PyTorch's get_dim_to_split: the dim with the largest byte extent in any operand */
static int dim_to_split(const tl_cuda_view *v) {
    int best = -1;
    int64_t best_extent = -1;
    for (int d = v->ndim - 1; d >= 0; d--) {
        if (v->shape[d] == 1) continue;
        for (int i = 0; i < v->nops; i++) {
            int64_t e = (v->shape[d] - 1) * abs64(v->strides[i][d]);
            if (e > best_extent) { best_extent = e; best = d; }
        }
    }
    return best;
}

int tl_cuda_split_32bit(const tl_cuda_view *v, int64_t limit, tl_cuda_piece_fn fn, void *ctx) {
    if (tl_cuda_view_numel(v) == 0) return 0;
    if (tl_cuda_can_use_32bit(v, limit)) return fn(v, ctx);
    int d = dim_to_split(v);
    if (d < 0 || v->shape[d] < 2)
        return tl_set_error(TL_ERR_RUNTIME, "a CUDA launch cannot address an element with 32-bit offsets");
    tl_cuda_view half = *v;
    const int64_t first = v->shape[d] / 2;
    half.shape[d] = first;
    if (tl_cuda_split_32bit(&half, limit, fn, ctx) < 0) return -1;
    half.shape[d] = v->shape[d] - first;
    for (int i = 0; i < v->nops; i++)
        if (half.data[i]) half.data[i] += first * v->strides[i][d];
    return tl_cuda_split_32bit(&half, limit, fn, ctx);
}

void tl_cuda_view_coalesce(tl_cuda_view *v) {
    int nd = 0;
    for (int d = 0; d < v->ndim; d++) {
        if (v->shape[d] == 1) continue;
        int merge = nd > 0;
        for (int i = 0; i < v->nops && merge; i++)
            merge = v->strides[i][d] == v->strides[i][nd - 1] * v->shape[nd - 1];
        if (merge) {
            v->shape[nd - 1] *= v->shape[d];
            continue;
        }
        v->shape[nd] = v->shape[d];
        for (int i = 0; i < v->nops; i++) v->strides[i][nd] = v->strides[i][d];
        nd++;
    }
    v->ndim = nd;
}

void tl_cuda_int_divider(uint32_t d, uint32_t *magic, uint32_t *shift) {
    uint32_t s = 0;
    while (s < 32 && ((uint64_t)1 << s) < d) s++;
    *shift = s;
    *magic = (uint32_t)((((uint64_t)1 << 32) * (((uint64_t)1 << s) - d)) / d + 1);
}

uint32_t tl_cuda_grid_size(int variant, int64_t n, int elems_per_thread) {
    const int64_t per_block = (int64_t)TL_CUDA_THREADS *
                              (variant == TL_CUDA_VARIANT_VEC ? elems_per_thread : TL_CUDA_STRIDED_VT);
    return (uint32_t)((n + per_block - 1) / per_block);
}

int tl_cuda_pick_variant(const tl_cuda_view *v, const tl_cuda_ufunc_kernels *k) {
    for (int i = 0; i < v->nops; i++)
        if (!v->cpu_scalar[i] && v->dtype[i] != k->dtypes[i]) return TL_CUDA_VARIANT_CAST;
    if (v->ndim > 1) return TL_CUDA_VARIANT_STRIDED;
    for (int i = 0; i < v->nops; i++) {
        if (v->cpu_scalar[i]) continue;
        const int64_t size = itemsize(v->dtype[i]);
        if (v->ndim == 1 && v->strides[i][0] != size) return TL_CUDA_VARIANT_STRIDED;
        if ((uintptr_t)v->data[i] % (uintptr_t)(size * k->vec_size)) return TL_CUDA_VARIANT_STRIDED;
    }
    return TL_CUDA_VARIANT_VEC;
}

/* ---------------------------------------------------------------- launching */
typedef struct {
    const tl_cuda_ufunc_kernels *k;
    tl_cuda_ufunc_params *p;
} launch_ctx;

static int launch_piece(const tl_cuda_view *piece, void *arg) {
    launch_ctx *c = arg;
    tl_cuda_ufunc_params *p = c->p;
    tl_cuda_view v = *piece;
    tl_cuda_view_coalesce(&v);
    const int variant = tl_cuda_pick_variant(&v, c->k);
    const int64_t n = tl_cuda_view_numel(&v);
    p->numel = (uint32_t)n;
    p->ndim = (uint32_t)v.ndim;
    for (int i = 0; i < v.nops; i++) p->data[i] = (uint64_t)(uintptr_t)v.data[i];
    for (int d = 0; d < v.ndim; d++) {
        p->sizes[d] = (uint32_t)v.shape[d];
        tl_cuda_int_divider(p->sizes[d], &p->div_magic[d], &p->div_shift[d]);
        for (int i = 0; i < v.nops; i++) p->strides[d][i] = (int32_t)v.strides[i][d];
    }
    tl_cuda_function *f = variant == TL_CUDA_VARIANT_VEC       ? c->k->vec
                          : variant == TL_CUDA_VARIANT_STRIDED ? c->k->strided
                                                               : c->k->cast;
    const unsigned grid[3] = {tl_cuda_grid_size(variant, n, c->k->elems_per_thread), 1, 1};
    const unsigned block[3] = {TL_CUDA_THREADS, 1, 1};
    void *args[1] = {p};
    return tl_cuda_launch(f, grid, block, 0, args);
}

/* a one-element host tensor's value, in the compute type of dtype `as` */
static int host_scalar(const void *src, tl_dtype stored, tl_dtype as, tl_opmath *out) {
    tl_scalar s;
    if (tl_scalar_load(src, stored, &s) < 0) return -1;
    *out = tl_opmath_from_scalar(s, as);
    return 0;
}

int tl_cuda_ufunc_launch_view(const tl_cuda_ufunc_op *op, tl_dtype common, const tl_cuda_view *view,
                              const tl_scalar *args) {
    tl_cuda_view copy = *view;
    tl_cuda_view *v = &copy;
    if ((unsigned)common >= (unsigned)TL_NUM_DTYPES || !op->table[common].vec)
        return tl_set_error(TL_ERR_NOT_IMPLEMENTED, op->not_implemented, tl_dtype_scalar_name(common));
    const tl_cuda_ufunc_kernels *k = &op->table[common];
    if (v->nops != op->nin + 1)
        return tl_set_error(TL_ERR_RUNTIME, "CUDA ufunc launch: %d operands for %d inputs", v->nops, op->nin);
    if (v->ndim > TL_CUDA_MAX_DIMS)
        return tl_set_error(TL_ERR_RUNTIME, "CUDA kernels take at most %d dims (got %d)", TL_CUDA_MAX_DIMS,
                            v->ndim);
    tl_cuda_ufunc_params p;
    memset(&p, 0, sizeof p);
    for (int a = 0; a < op->nargs; a++) {
        if (tl_ufunc_scalar_check(args[a], common) < 0) return -1;
        p.args[a] = tl_opmath_from_scalar(args[a], common);
    }
    for (int i = 1; i < v->nops; i++) {
        if (!v->cpu_scalar[i]) continue;
        if (host_scalar(v->data[i], v->dtype[i], k->dtypes[i], &p.in_scalar[i]) < 0) return -1;
        p.scalar_mask |= 1u << i;
        v->data[i] = NULL;
        for (int d = 0; d < v->ndim; d++) v->strides[i][d] = 0;
    }
    for (int i = 0; i < v->nops; i++) p.dtypes[i] = (int32_t)v->dtype[i];
    launch_ctx c = {k, &p};
    return tl_cuda_split_32bit(v, g_index_limit, launch_piece, &c);
}
