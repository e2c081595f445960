/* The in-place [A, R, B] view of a reduction's input and its threaded
 * drivers: see reduce_direct.h. */
#include "reduce_direct.h"

#include "reduce_util.h"
#include "tl_internal.h"

/* elements one thread should at least get */
#define TL_RD_GRAIN (1 << 15)

int tl_rd_view_init(tl_rd_view *v, const tl_tensor *x, uint64_t mask, tl_dtype cdt) {
    const int64_t nd = tl_tensor_ndim(x);
    const int64_t *sz = tl_tensor_sizes(x);
    int64_t O, R;
    tl_rd_counts(x, mask, &O, &R);
    v->hold = NULL;
    v->slot = cdt == TL_FLOAT64;
    v->isz = tl_dtype_itemsize(cdt);
    v->R = R;
    int first = 0, last = (int)nd - 1;
    while (first < nd && !(mask & (1ull << first))) first++;
    while (last >= 0 && !(mask & (1ull << last))) last--;
    int adjacent = 1;
    for (int i = first; i <= last; i++)
        if (!(mask & (1ull << i))) adjacent = 0;
    if (tl_tensor_dtype(x) == cdt && tl_tensor_is_contiguous(x) && adjacent) {
        int64_t A = 1, B = 1;
        for (int i = 0; i < first; i++) A *= sz[i];
        for (int i = last + 1; i < nd; i++) B *= sz[i];
        if (first > last) {   /* nothing reduced: every element its own output */
            A = O;
            B = 1;
        }
        v->A = A;
        v->B = B;
        v->data = tl_tensor_data_ptr(x);
        return 0;
    }
    v->hold = tl_rd_rows(x, mask, cdt);
    if (!v->hold) return -1;
    v->A = O;
    v->B = 1;
    v->data = tl_tensor_data_ptr(v->hold);
    return 0;
}

void tl_rd_view_free(tl_rd_view *v) {
    tl_tensor_release(v->hold);
    v->hold = NULL;
}

typedef struct {
    const tl_rd_view *v;
    const tl_rd_work *w;
    int64_t nc;   /* column chunks per a */
} run_ctx;

static void rows_body(int64_t b, int64_t e, void *c_) {
    const run_ctx *c = c_;
    const tl_rd_view *v = c->v;
    for (int64_t o = b; o < e; o++)
        c->w->row(c->w->ctx, v->R ? v->data + o * v->R * v->isz : NULL, v->R, o);
}

static void cols_body(int64_t b, int64_t e, void *c_) {
    const run_ctx *c = c_;
    const tl_rd_view *v = c->v;
    for (int64_t t = b; t < e; t++) {
        const int64_t a = t / c->nc, c0 = (t % c->nc) * TL_RD_COLS;
        const int64_t w = v->B - c0 < TL_RD_COLS ? v->B - c0 : TL_RD_COLS;
        c->w->col(c->w->ctx, v->data + (a * v->R * v->B + c0) * v->isz, v->R, v->B, w, a * v->B + c0);
    }
}

void tl_rd_view_run(const tl_rd_view *v, const tl_rd_work *w) {
    run_ctx c = {v, w, 0};
    const int64_t R = v->R > 0 ? v->R : 1;
    if (v->B == 1 || v->R == 0) {
        /* R == 0: every output from an empty row */
        tl_parallel_for(v->A * v->B, TL_RD_GRAIN / R + 1, rows_body, &c);
        return;
    }
    c.nc = (v->B + TL_RD_COLS - 1) / TL_RD_COLS;
    tl_parallel_for(v->A * c.nc, TL_RD_GRAIN / (R * TL_RD_COLS) + 1, cols_body, &c);
}

typedef struct {
    const tl_rd_view *v;
    void (*fn)(void *ctx, const void *p, int64_t len, int64_t i);
    void *ctx;
} chunk_ctx;

static void chunks_body(int64_t b, int64_t e, void *c_) {
    const chunk_ctx *c = c_;
    for (int64_t i = b; i < e; i++) {
        const int64_t off = i * TL_RD_CHUNK, len = c->v->R - off < TL_RD_CHUNK ? c->v->R - off : TL_RD_CHUNK;
        c->fn(c->ctx, c->v->data + off * c->v->isz, len, i);
    }
}

void tl_rd_view_run_chunks(const tl_rd_view *v, void (*fn)(void *ctx, const void *p, int64_t len, int64_t i),
                           void *ctx) {
    chunk_ctx c = {v, fn, ctx};
    tl_parallel_for(tl_rd_chunk_count(v), 1, chunks_body, &c);
}
