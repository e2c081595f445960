/* Reductions that read float32 / float64 data in place (var/std, norms,
 * logsumexp, argmax/argmin, max.dim/min.dim): the input seen as [A, R, B]
 * (R the reduced elements, A * B outputs in the order of the result's
 * elements), and the threaded drivers that call a per-ISA row kernel
 * (B == 1: the reduced elements are contiguous) or column kernel (B > 1: a
 * kept dim is innermost, the kernel vectorizes across it).
 *
 * Layouts the in-place view cannot take (non-contiguous input, reduced dims
 * not adjacent, other dtypes) become one contiguous [O, R] copy in the
 * compute dtype (reduce_util.h's rows layout), still reduced by the row
 * kernels. Every output is computed by the same sequence of operations
 * whatever the thread count; a single long row (a full reduction) is cut
 * into fixed chunks of TL_RD_CHUNK elements whose partial results the caller
 * merges in order, so its bits do not depend on the thread count either. */
#ifndef TL_REDUCE_DIRECT_H
#define TL_REDUCE_DIRECT_H

#include <stdint.h>

#include "tl_tensor.h"

enum { TL_RD_CHUNK = 1 << 16, TL_RD_COLS = 512 };

typedef struct {
    const char *data;   /* element (a, r, b) at data + ((a * R + r) * B + b) * isz */
    tl_tensor *hold;    /* the copy data points into, if one was made */
    int64_t A, R, B, isz;
    int slot;           /* kernel table slot: 0 float32, 1 float64 */
} tl_rd_view;

/* the view of x reduced over mask, computing in cdt (FLOAT32 or FLOAT64);
 * in place when x has dtype cdt, is contiguous and its reduced dims are
 * adjacent; -1 on error */
int tl_rd_view_init(tl_rd_view *v, const tl_tensor *x, uint64_t mask, tl_dtype cdt);
void tl_rd_view_free(tl_rd_view *v);

/* per-output work: row(ctx, p, R, o) reduces the R contiguous elements at p
 * into output o (p is NULL when R == 0); col(ctx, p, R, stride, w, o)
 * reduces w columns (element i of column c at p[i * stride + c], in
 * elements) into outputs o .. o + w - 1. Outputs split across threads. */
typedef struct {
    void (*row)(void *ctx, const void *p, int64_t R, int64_t o);
    void (*col)(void *ctx, const void *p, int64_t R, int64_t stride, int64_t w, int64_t o);
    void *ctx;
} tl_rd_work;
void tl_rd_view_run(const tl_rd_view *v, const tl_rd_work *w);

/* a single output (A * B == 1) whose R elements are worth splitting */
static inline int tl_rd_view_chunked(const tl_rd_view *v) { return v->A * v->B == 1 && v->R > TL_RD_CHUNK; }
/* the chunks of a single output: fn(ctx, p, len, i) for i < count, across
 * threads; count = tl_rd_chunk_count(v) */
static inline int64_t tl_rd_chunk_count(const tl_rd_view *v) { return (v->R + TL_RD_CHUNK - 1) / TL_RD_CHUNK; }
void tl_rd_view_run_chunks(const tl_rd_view *v, void (*fn)(void *ctx, const void *p, int64_t len, int64_t i),
                           void *ctx);

#endif
