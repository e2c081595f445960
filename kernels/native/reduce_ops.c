/* sum, mean, prod: structured meta (shape, PyTorch's dtype rules) and impl.
 *
 * dtype: `dtype=` if given; else the out= tensor's dtype for sum(..., out=);
 * else self's dtype, with bool and integer inputs summed as int64. As in
 * PyTorch, the input is first converted to the result dtype, then summed.
 * Accumulation: every leaf of up to 32768 contiguous elements is summed by the
 * per-ISA kernel (kernels/cpu/sum_kernel.c: float32 trees of 8 elements per
 * lane, widened into double), leaves are combined pairwise in float64: float32
 * results stay within 1e-6 relative of an exact sum at 2^24 elements and more
 * (same-sign data; in general 1e-6 of the sum of magnitudes).
 * Integers: int64 (wrapping); bool: `or`. mean = the same sum divided by the
 * reduced count in float64 before rounding to the result dtype.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "complex_ops.h"
#include "tl_error.h"
#include "tl_half.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/mean.h"
#include "ops/prod.h"
#include "ops/sum.h"
#include "tl_structured.h"
#include "tl_internal.h"
#include "tl_runtime.h"
#include "tl_tensor.h"
#include "tl_ufunc.h"
#include "reduce_util.h"
#include "../cpu/nansum_kernel.h"

enum { MAXD = 64 };

/* sum's and prod's result dtype: dtype=, else out='s, else self's with bool
 * and integers as int64 */
static tl_dtype sumlike_dtype(const tl_structured *s, const tl_tensor *self, tl_dtype dtype) {
    if (dtype != TL_DTYPE_UNDEFINED) return dtype;
    if (s && s->kind == TL_STRUCTURED_OUT && s->outputs[0]) return tl_tensor_dtype(s->outputs[0]);
    tl_dtype rt = tl_tensor_dtype(self);
    return tl_dtype_is_integral(rt, 1) ? TL_INT64 : rt;
}

static int sumlike_meta(tl_structured *s, const tl_tensor *self, uint64_t mask, bool keepdim, tl_dtype dtype) {
    int64_t shape[MAXD];
    const int64_t k = tl_rd_shape(self, mask, keepdim, shape);
    return tl_structured_set_output(s, 0, k, shape, NULL, sumlike_dtype(s, self, dtype));
}

int tl_meta_sum_dim_IntList(tl_structured *s, tl_tensor *self, const int64_t *dim, int64_t dim_len, bool keepdim,
                            tl_dtype dtype) {
    uint64_t mask;
    if (tl_rd_mask(self, dim, dim_len, &mask)) return -1;
    return sumlike_meta(s, self, mask, keepdim, dtype);
}

/* ---- impl */

/* leaf length: long enough that a leaf's fixed costs (the loop's exit, the
 * reduction of its 16 lanes, the call) stay well under 1% of streaming it
 * (leaves of 4096 floats cost ~3.5% from L3 in C); the double lanes then add
 * 256 terms each, far inside double's precision */
#define TL_SUM_BLOCK 32768

TL_DEFINE_STUB(tl_sum_leaf_stub, tl_sum_leaf_table)
TL_DEFINE_STUB(tl_sum_cols_stub, tl_sum_cols_table)
TL_DEFINE_STUB(tl_nansum_leaf_stub, tl_nansum_leaf_table)
TL_DEFINE_STUB(tl_nansum_cols_stub, tl_nansum_cols_table)
#define TL_SUM_COLS(dt) ((*(const tl_sum_cols_table_t *)tl_sum_cols_stub.current)[dt])
#define TL_NANSUM_COLS(dt) ((*(const tl_sum_cols_table_t *)tl_nansum_cols_stub.current)[dt])

/* float run: n elements of type T at p, stride st (elements), summed in
 * double; contiguous runs go pairwise over leaves of TL_SUM_BLOCK elements
 * summed by the per-ISA leaf kernel (kernels/cpu/sum_kernel.c; LEAF: sum's
 * table or nansum's) */
#define TL_DEF_FRUN(NAME, T, LOAD, DT, LEAF)                                         \
    static double frun_##NAME(const T *p, int64_t st, int64_t n) {                   \
        if (n > TL_SUM_BLOCK) {                                                      \
            const int64_t h = (n / 2 + TL_SUM_BLOCK - 1) / TL_SUM_BLOCK * TL_SUM_BLOCK; \
            return frun_##NAME(p, st, h) + frun_##NAME(p + h * st, st, n - h);       \
        }                                                                            \
        /* below one vector the leaf kernels add in double in order: inline */    \
        if (st == 1 && n >= 16) return LEAF(DT)(p, n);                               \
        double a = 0;                                                                \
        for (int64_t k = 0; k < n; k++) a += (double)LOAD(p[k * st]);                \
        return a;                                                                    \
    }
/* Long contiguous runs (a full reduction) are split across threads without
 * changing the result: the pairwise tree above is cut at depth TL_SUM_PAR_DEPTH,
 * its subtrees are summed in parallel and recombined in the same order, so the
 * bits do not depend on the thread count (nor on the depth). The subtrees are
 * dealt into one contiguous home range per thread, claimed in order from the
 * home's counter; a thread done with its home claims from the others', so one
 * that starts late or is preempted (a shared machine) leaves its share to the
 * others instead of finishing last with a fixed half, and 128 subtrees (128
 * KiB each at 2^24 float32) bound the imbalance to one small subtree. Homes,
 * not one shared counter: each thread streams one long range (the hardware
 * prefetchers keep their stream, and the same range comes back to the same
 * core's caches call after call): 2^22 float32 in L3 on two threads went from
 * 0.85x to 1.03x PyTorch's speed. */
#define TL_SUM_PAR_DEPTH 7
#define TL_SUM_PAR_MIN (1 << 18)
/* the cut depth for n elements: subtrees of at least TL_SUM_PAR_MIN / 4
 * elements (each claim moves the counter's cache line between cores, and
 * neighbouring results share lines: 128 subtrees of 8192 elements made a
 * 2^20 sum on two threads slower than PyTorch's), at most TL_SUM_PAR_DEPTH */
static int prun_depth(int64_t n) {
    int d = 0;
    while (d < TL_SUM_PAR_DEPTH && (n >> (d + 1)) >= TL_SUM_PAR_MIN / 4) d++;
    return d;
}
#define TL_DEF_PRUN(NAME, T)                                                          \
    typedef struct { const T *p; int64_t off[1 << TL_SUM_PAR_DEPTH], len[1 << TL_SUM_PAR_DEPTH]; \
                     double res[1 << TL_SUM_PAR_DEPTH]; int count, homes;                      \
                     struct { _Alignas(64) _Atomic int next; } home[1 << TL_SUM_PAR_DEPTH]; } prun_ctx_##NAME; \
    static void prun_split_##NAME(prun_ctx_##NAME *c, int64_t off, int64_t n, int depth) { \
        if (depth == 0 || n <= TL_SUM_BLOCK) {                                         \
            c->off[c->count] = off; c->len[c->count] = n; c->count++; return;          \
        }                                                                              \
        const int64_t h = (n / 2 + TL_SUM_BLOCK - 1) / TL_SUM_BLOCK * TL_SUM_BLOCK;    \
        prun_split_##NAME(c, off, h, depth - 1);                                       \
        prun_split_##NAME(c, off + h, n - h, depth - 1);                               \
    }                                                                                  \
    static double prun_join_##NAME(const prun_ctx_##NAME *c, int64_t n, int depth, int *i) { \
        if (depth == 0 || n <= TL_SUM_BLOCK) return c->res[(*i)++];                    \
        const int64_t h = (n / 2 + TL_SUM_BLOCK - 1) / TL_SUM_BLOCK * TL_SUM_BLOCK;    \
        const double a = prun_join_##NAME(c, h, depth - 1, i);                         \
        return a + prun_join_##NAME(c, n - h, depth - 1, i);                           \
    }                                                                                  \
    static void prun_body_##NAME(int64_t b, int64_t e, void *ctx) {                    \
        prun_ctx_##NAME *c = ctx;                                                      \
        (void)e;   /* chunk b: home b's subtrees first, in order, then the others' */  \
        for (int k = 0; k < c->homes; k++) {                                           \
            const int h = (int)((b + k) % c->homes), end = (h + 1) * c->count / c->homes; \
            for (int j; (j = atomic_fetch_add_explicit(&c->home[h].next, 1, memory_order_relaxed)) < end;) \
                c->res[j] = frun_##NAME(c->p + c->off[j], 1, c->len[j]);               \
        }                                                                              \
    }                                                                                  \
    static double prun_##NAME(const T *p, int64_t st, int64_t n) {                    \
        if (st != 1 || n < TL_SUM_PAR_MIN || tl_get_num_threads() < 2 || tl__in_parallel_region()) \
            return frun_##NAME(p, st, n);                                              \
        prun_ctx_##NAME c;                                                             \
        c.p = p; c.count = 0;                                                          \
        const int depth = prun_depth(n);                                               \
        prun_split_##NAME(&c, 0, n, depth);                                            \
        const int nt = tl_get_num_threads();                                           \
        c.homes = nt < c.count ? nt : c.count;                                         \
        for (int h = 0; h < c.homes; h++) atomic_init(&c.home[h].next, h * c.count / c.homes); \
        tl_parallel_for(c.homes, 1, prun_body_##NAME, &c);                             \
        int i = 0;                                                                     \
        return prun_join_##NAME(&c, n, depth, &i);                                     \
    }

#define TL_SUM_LEAF(dt) ((*(const tl_sum_leaf_table_t *)tl_sum_leaf_stub.current)[dt])
#define TL_NANSUM_LEAF(dt) ((*(const tl_sum_leaf_table_t *)tl_nansum_leaf_stub.current)[dt])
#define TL_ID(x) (x)
/* nansum's loads: NaN read as 0 */
#define TL_NZ(x) ((x) == (x) ? (x) : 0)
#define TL_NZ_F16(x) TL_NZ(tl_f16_to_f32(x))
#define TL_NZ_BF16(x) TL_NZ(tl_bf16_to_f32(x))
TL_DEF_FRUN(f32, float, TL_ID, TL_FLOAT32, TL_SUM_LEAF)
TL_DEF_FRUN(f64, double, TL_ID, TL_FLOAT64, TL_SUM_LEAF)
TL_DEF_FRUN(f16, uint16_t, tl_f16_to_f32, TL_FLOAT16, TL_SUM_LEAF)
TL_DEF_FRUN(bf16, uint16_t, tl_bf16_to_f32, TL_BFLOAT16, TL_SUM_LEAF)
TL_DEF_FRUN(nan_f32, float, TL_NZ, TL_FLOAT32, TL_NANSUM_LEAF)
TL_DEF_FRUN(nan_f64, double, TL_NZ, TL_FLOAT64, TL_NANSUM_LEAF)
TL_DEF_FRUN(nan_f16, uint16_t, TL_NZ_F16, TL_FLOAT16, TL_NANSUM_LEAF)
TL_DEF_FRUN(nan_bf16, uint16_t, TL_NZ_BF16, TL_BFLOAT16, TL_NANSUM_LEAF)
TL_DEF_PRUN(f32, float)
TL_DEF_PRUN(f64, double)
TL_DEF_PRUN(f16, uint16_t)
TL_DEF_PRUN(bf16, uint16_t)
TL_DEF_PRUN(nan_f32, float)
TL_DEF_PRUN(nan_f64, double)
TL_DEF_PRUN(nan_f16, uint16_t)
TL_DEF_PRUN(nan_bf16, uint16_t)

/* the reduction walk: dims ordered outer..inner by |stride|, contiguous
 * neighbours merged; acc[j] for output j. Per innermost run: a leaf sum
 * (reduced innermost dim) or column sums (kept contiguous innermost dim:
 * together with the reduced dim above it, rows of it at a time). */
typedef struct {
    int64_t nd;
    int64_t size[MAXD], st[MAXD], ast[MAXD]; /* input stride (elements), acc stride (0: reduced) */
    int nan;                                  /* nansum: NaN read as 0 */
} walk;

/* dims the walk loops over with its index machinery: all but the innermost
 * run, and but the dim above it when the kernel takes both: column sums
 * (kept contiguous run under a reduced dim) or a batch of short reduced runs
 * (one per index of the kept dim above: many short rows, little overhead) */
static int64_t walk_outer_dims(const walk *w) {
    const int64_t nd = w->nd;
    if (nd < 2) return 0;
    const int cols = w->ast[nd - 1] == 1 && w->st[nd - 1] == 1 && w->ast[nd - 2] == 0;
    const int rows = w->ast[nd - 1] == 0 && w->ast[nd - 2] != 0 && w->size[nd - 1] < TL_SUM_PAR_MIN;
    return nd - 1 - (cols || rows);
}

#define TL_DEF_WALK(NAME, T, ACC, RUN_EXPR, ADD_EXPR, DT, COLS)                         \
    static void walk_##NAME(const walk *w, const T *base, ACC *acc) {                 \
        int64_t idx[MAXD] = {0};                                                        \
        const int64_t nd = w->nd, n = w->size[nd - 1], st = w->st[nd - 1], as = w->ast[nd - 1]; \
        const int64_t no = walk_outer_dims(w);                                          \
        for (;;) {                                                                      \
            const T *p = base;                                                          \
            ACC *a = acc;                                                               \
            for (int64_t d = 0; d < no; d++) { p += idx[d] * w->st[d]; a += idx[d] * w->ast[d]; } \
            if (no < nd - 1 && as == 0) {                                               \
                const int64_t r = w->size[nd - 2], rs = w->st[nd - 2], ra = w->ast[nd - 2]; \
                for (int64_t j = 0; j < r; j++) a[j * ra] = (ACC)(a[j * ra] + frun_##NAME(p + j * rs, st, n)); \
            } else if (no < nd - 1) {                                                   \
                COLS(DT)(a, p, n, w->size[nd - 2], w->st[nd - 2]);                      \
            } else if (as == 0) {                                                       \
                *a = (ACC)(*a + (RUN_EXPR));                                            \
            } else if (as == 1 && st == 1) {                                            \
                COLS(DT)(a, p, n, 1, 0);                                                \
            } else {                                                                    \
                for (int64_t k = 0; k < n; k++) a[k * as] = (ACC)(a[k * as] + (ADD_EXPR)); \
            }                                                                           \
            int64_t d = no - 1;                                                         \
            for (; d >= 0; d--) {                                                       \
                if (++idx[d] < w->size[d]) break;                                       \
                idx[d] = 0;                                                             \
            }                                                                           \
            if (d < 0) return;                                                          \
        }                                                                               \
    }

TL_DEF_WALK(f32, float, double, prun_f32(p, st, n), (double)p[k * st], TL_FLOAT32, TL_SUM_COLS)
TL_DEF_WALK(f64, double, double, prun_f64(p, st, n), p[k * st], TL_FLOAT64, TL_SUM_COLS)
TL_DEF_WALK(f16, uint16_t, double, prun_f16(p, st, n), (double)tl_f16_to_f32(p[k * st]), TL_FLOAT16, TL_SUM_COLS)
TL_DEF_WALK(bf16, uint16_t, double, prun_bf16(p, st, n), (double)tl_bf16_to_f32(p[k * st]), TL_BFLOAT16, TL_SUM_COLS)
TL_DEF_WALK(nan_f32, float, double, prun_nan_f32(p, st, n), (double)TL_NZ(p[k * st]), TL_FLOAT32, TL_NANSUM_COLS)
TL_DEF_WALK(nan_f64, double, double, prun_nan_f64(p, st, n), TL_NZ(p[k * st]), TL_FLOAT64, TL_NANSUM_COLS)
TL_DEF_WALK(nan_f16, uint16_t, double, prun_nan_f16(p, st, n), (double)TL_NZ_F16(p[k * st]), TL_FLOAT16,
            TL_NANSUM_COLS)
TL_DEF_WALK(nan_bf16, uint16_t, double, prun_nan_bf16(p, st, n), (double)TL_NZ_BF16(p[k * st]), TL_BFLOAT16,
            TL_NANSUM_COLS)

static uint64_t irun_sum(const void *p, tl_dtype dt, int64_t st, int64_t n) {
    uint64_t s = 0;
    switch (dt) {   /* st == 1 spelled out so that the loops vectorize */
#define C(D, T)                                                                              \
    case D:                                                                                  \
        if (st == 1) for (int64_t k = 0; k < n; k++) s += (uint64_t)(int64_t)((const T *)p)[k]; \
        else for (int64_t k = 0; k < n; k++) s += (uint64_t)(int64_t)((const T *)p)[k * st];  \
        break;
    C(TL_UINT8, uint8_t) C(TL_INT8, int8_t) C(TL_INT16, int16_t) C(TL_INT32, int32_t) C(TL_INT64, int64_t)
    C(TL_BOOL, uint8_t)
#undef C
    default: break;
    }
    return s;
}
static int64_t iload(const void *p, tl_dtype dt) {
    switch (dt) {
    case TL_UINT8: case TL_BOOL: return *(const uint8_t *)p;
    case TL_INT8: return *(const int8_t *)p;
    case TL_INT16: return *(const int16_t *)p;
    case TL_INT32: return *(const int32_t *)p;
    default: return *(const int64_t *)p;
    }
}
static void walk_int(const walk *w, const char *base, tl_dtype dt, int64_t isz, uint64_t *acc) {
    int64_t idx[MAXD] = {0};
    const int64_t nd = w->nd, n = w->size[nd - 1], st = w->st[nd - 1], as = w->ast[nd - 1];
    const int64_t no = walk_outer_dims(w);
    for (;;) {
        const char *p = base;
        uint64_t *a = acc;
        for (int64_t d = 0; d < no; d++) { p += idx[d] * w->st[d] * isz; a += idx[d] * w->ast[d]; }
        if (no < nd - 1 && as == 0) {
            const int64_t r = w->size[nd - 2], rs = w->st[nd - 2] * isz, ra = w->ast[nd - 2];
            for (int64_t j = 0; j < r; j++) a[j * ra] += irun_sum(p + j * rs, dt, st, n);
        } else if (no < nd - 1) TL_SUM_COLS(dt)(a, p, n, w->size[nd - 2], w->st[nd - 2]);
        else if (as == 0) *a += irun_sum(p, dt, st, n);
        else if (as == 1 && st == 1) TL_SUM_COLS(dt)(a, p, n, 1, 0);
        else
            for (int64_t k = 0; k < n; k++) a[k * as] += (uint64_t)iload(p + k * st * isz, dt);
        int64_t d = no - 1;
        for (; d >= 0; d--) {
            if (++idx[d] < w->size[d]) break;
            idx[d] = 0;
        }
        if (d < 0) return;
    }
}

/* x's elements (dtype dt) walked into acc (8-byte slots) */
static void walk_any(const walk *w, const char *base, tl_dtype dt, int64_t isz, void *acc) {
    if (w->nan) {
        switch (dt) {
        case TL_FLOAT32: walk_nan_f32(w, (const float *)base, acc); return;
        case TL_FLOAT64: walk_nan_f64(w, (const double *)base, acc); return;
        case TL_FLOAT16: walk_nan_f16(w, (const uint16_t *)base, acc); return;
        case TL_BFLOAT16: walk_nan_bf16(w, (const uint16_t *)base, acc); return;
        default: break;   /* integers have no NaN */
        }
    }
    switch (dt) {
    case TL_FLOAT32: walk_f32(w, (const float *)base, acc); break;
    case TL_FLOAT64: walk_f64(w, (const double *)base, acc); break;
    case TL_FLOAT16: walk_f16(w, (const uint16_t *)base, acc); break;
    case TL_BFLOAT16: walk_bf16(w, (const uint16_t *)base, acc); break;
    default: walk_int(w, base, dt, isz, acc); break;
    }
}

/* Threads: one kept dim (the largest) is split into ranges, each walked by
 * one thread. Every output is then still summed by one thread in the serial
 * order (column kernels treat each column alike whatever its range), so the
 * bits do not depend on the thread count. A kept contiguous innermost dim
 * is split in units of 16 elements (whole vectors). */
#define TL_SUM_WALK_PAR_MIN (1 << 16)
typedef struct {
    const walk *w;
    const char *base;
    void *acc;
    tl_dtype dt;
    int64_t isz, d, unit;
} pwalk_ctx;

static void pwalk_body(int64_t b, int64_t e, void *ctx_) {
    const pwalk_ctx *c = ctx_;
    walk w = *c->w;
    const int64_t d = c->d, lo = b * c->unit, hi = e * c->unit < w.size[d] ? e * c->unit : w.size[d];
    w.size[d] = hi - lo;
    walk_any(&w, c->base + lo * w.st[d] * c->isz, c->dt, c->isz, (char *)c->acc + lo * w.ast[d] * 8);
}

static void walk_run(const walk *w, const char *base, tl_dtype dt, int64_t isz, void *acc, int64_t numel) {
    const int64_t nd = w->nd;
    int64_t d = -1;
    for (int64_t i = 0; i < nd; i++)
        if (w->ast[i] != 0 && w->size[i] > 1 && (d < 0 || w->size[i] > w->size[d])) d = i;
    const int nt = tl_get_num_threads();
    /* a few kept outputs over long reduced runs: prun splits each run instead */
    const int long_runs = w->ast[nd - 1] == 0 && w->st[nd - 1] == 1 && w->size[nd - 1] >= TL_SUM_PAR_MIN;
    if (d < 0 || nt < 2 || tl__in_parallel_region() || numel < TL_SUM_WALK_PAR_MIN ||
        (long_runs && w->size[d] < 4 * nt)) {
        walk_any(w, base, dt, isz, acc);
        return;
    }
    pwalk_ctx c = {w, base, acc, dt, isz, d, d == nd - 1 && w->st[d] == 1 ? 16 : 1};
    const int64_t units = (w->size[d] + c.unit - 1) / c.unit;
    const int64_t per_unit = numel / units > 0 ? numel / units : 1;
    tl_parallel_for(units, (TL_SUM_WALK_PAR_MIN + per_unit - 1) / per_unit, pwalk_body, &c);
}

/* the walk of x's dims for a reduction over mask: acc strides contiguous over
 * the kept dims, dims ordered by |stride| descending (size-1 dims dropped),
 * neighbours merged when both are reduced or both kept and they lie back to
 * back (input and acc): a whole contiguous tensor becomes one run, summed
 * pairwise */
static void build_walk(const tl_tensor *x, uint64_t mask, walk *w) {
    const int64_t nd = tl_tensor_ndim(x);
    w->nan = 0;
    int64_t ast[MAXD], m = 1;
    const int64_t *sz = tl_tensor_sizes(x), *st = tl_tensor_strides(x);
    for (int64_t i = nd - 1; i >= 0; i--) {
        if (mask & (1ull << i)) ast[i] = 0;
        else { ast[i] = m; m *= sz[i]; }
    }
    int64_t order[MAXD], k = 0;
    for (int64_t i = 0; i < nd; i++)
        if (sz[i] != 1) order[k++] = i;
    for (int64_t i = 1; i < k; i++) {
        int64_t v = order[i], j = i;
        int64_t sv = st[v] < 0 ? -st[v] : st[v];
        while (j > 0) {
            int64_t u = order[j - 1];
            int64_t su = st[u] < 0 ? -st[u] : st[u];
            if (su >= sv) break;
            order[j] = u;
            j--;
        }
        order[j] = v;
    }
    if (k == 0) { w->nd = 1; w->size[0] = 1; w->st[0] = 1; w->ast[0] = 0; return; }
    w->nd = 0;
    for (int64_t i = 0; i < k; i++) {
        const int64_t s_ = sz[order[i]], t_ = st[order[i]], a_ = ast[order[i]], o = w->nd - 1;
        if (o >= 0 && w->st[o] == t_ * s_ && w->ast[o] == a_ * s_) {
            w->size[o] *= s_; w->st[o] = t_; w->ast[o] = a_;
        } else {
            w->size[w->nd] = s_; w->st[w->nd] = t_; w->ast[w->nd] = a_; w->nd++;
        }
    }
}

/* Many outputs from one 2-D pass (a reduced dim over a kept contiguous one,
 * or kept rows of a reduced run) into a contiguous float32/float64 out: each
 * block of outputs is walked into a small local float64 buffer and rounded
 * straight into out, blocks across threads. No output-sized float64 buffer
 * (its page faults cost as much as the sum); the same arithmetic per output. */
enum { DIRECT_BLOCK = 4096, DIRECT_MIN = 4096 };   /* DIRECT_BLOCK: the kernel's column block */
typedef struct {
    const walk *w;
    const char *base;
    void *out;
    tl_dtype rt;
    int64_t isz, d, bw;   /* bw: outputs per block */
    double div;
    int64_t blocks;
    _Atomic int64_t next; /* the next unclaimed block */
} direct_ctx;

static void direct_body(int64_t b, int64_t e, void *ctx_) {
    const direct_ctx *c = ctx_;
    double acc[DIRECT_BLOCK];
    for (int64_t blk = b; blk < e; blk++) {
        walk w = *c->w;
        const int64_t o0 = blk * c->bw, m = w.size[c->d] - o0 < c->bw ? w.size[c->d] - o0 : c->bw;
        w.size[c->d] = m;
        memset(acc, 0, (size_t)m * sizeof acc[0]);
        walk_any(&w, c->base + o0 * w.st[c->d] * c->isz, c->rt, c->isz, acc);
        if (c->rt == TL_FLOAT32)
            for (int64_t i = 0; i < m; i++) ((float *)c->out)[o0 + i] = (float)(acc[i] / c->div);
        else
            for (int64_t i = 0; i < m; i++) ((double *)c->out)[o0 + i] = acc[i] / c->div;
    }
}

/* one claimer per thread: blocks taken from a counter, so a thread that
 * starts late or is preempted leaves its share to the others */
static void direct_claim_body(int64_t b, int64_t e, void *ctx_) {
    direct_ctx *c = ctx_;
    (void)b, (void)e;
    for (int64_t k; (k = atomic_fetch_add_explicit(&c->next, 1, memory_order_relaxed)) < c->blocks;)
        direct_body(k, k + 1, c);
}

static int sum_direct(const walk *w, const tl_tensor *x, tl_tensor *out, int mean) {
    const tl_dtype rt = tl_tensor_dtype(out);
    if (w->nd != 2 || !(rt == TL_FLOAT32 || rt == TL_FLOAT64) || tl_tensor_dtype(x) != rt ||
        !tl_tensor_is_contiguous(out) || tl_tensor_numel(out) < DIRECT_MIN)
        return 0;
    const int64_t d = w->ast[0] == 0 ? 1 : 0;   /* the kept dim */
    if (w->ast[d] != 1 || w->ast[1 - d] != 0) return 0;
    /* blocks of up to DIRECT_BLOCK outputs, at least one per thread (in
     * whole vectors of 16): sum(a2, 0) of (4096, 4096) is one block on one
     * thread, two of 2048 on two. Each output's arithmetic is the same in
     * any block, so the bits do not depend on the split. */
    const int nt = tl__in_parallel_region() ? 1 : tl_get_num_threads();
    int64_t per_thread = ((w->size[d] + nt - 1) / nt + 15) / 16 * 16;
    /* rows (a reduced inner run per output): 8 blocks per thread, claimed
     * (the row sums do not care how the rows are grouped); columns keep
     * one block per thread, whose width is the length of the row segments
     * the column kernel streams */
    if (d == 0 && nt > 1) per_thread = (per_thread / 8 + 15) / 16 * 16;
    const int64_t bw = per_thread < DIRECT_BLOCK ? per_thread : DIRECT_BLOCK;
    direct_ctx c = {w, (const char *)tl_tensor_data_ptr(x), tl_tensor_data_ptr(out), rt, tl_tensor_itemsize(x), d, bw,
                    mean ? (double)w->size[1 - d] : 1.0, 0, 0};
    const int64_t blocks = (w->size[d] + bw - 1) / bw;
    c.blocks = blocks;
    atomic_init(&c.next, 0);
    int64_t threads = (tl_tensor_numel(x) + TL_SUM_WALK_PAR_MIN - 1) / TL_SUM_WALK_PAR_MIN;
    if (threads > nt) threads = nt;
    if (threads > blocks) threads = blocks;
    tl_parallel_for(threads, 1, direct_claim_body, &c);
    return 1;
}

/* sum over the dims of mask into out (in out's dtype); mean: divided by the
 * reduced count (floating results only); nan: NaN read as 0 (nansum) */
static int sum_core(tl_tensor *self, uint64_t mask, tl_tensor *out, int mean, int nan) {
    const tl_dtype rt = tl_tensor_dtype(out);
    const int64_t onumel = tl_tensor_numel(out);
    if (onumel == 0) return 0;
    if (tl_dtype_is_complex(rt)) {
        /* complex: the real and imaginary parts summed as reals, a trailing
         * dim of 2 that mask leaves alone */
        tl_tensor *x = tl_to_dtype(self, rt, 0);
        tl_tensor *xr = x ? tl__complex_as_real(x) : NULL, *outr = xr ? tl__complex_as_real(out) : NULL;
        const int rc = outr ? sum_core(xr, mask, outr, mean, nan) : -1;
        tl_tensor_release(outr);
        tl_tensor_release(xr);
        tl_tensor_release(x);
        return rc;
    }
    /* PyTorch converts the input to the result dtype first. An integer (or
     * bool) input summed into an integer result needs no copy: wrapping
     * 64-bit sums of the original values truncate to the same result. */
    const tl_dtype sdt = tl_tensor_dtype(self);
    const int int_direct = tl_dtype_is_integral(rt, 0) && tl_dtype_is_integral(sdt, 1);
    tl_tensor *x = tl_to_dtype(self, int_direct ? sdt : rt, 0);
    if (!x) return -1;
    const int floating = tl_dtype_is_floating(rt);
    const int64_t xnumel = tl_tensor_numel(x);
    walk w;
    if (xnumel > 0) {
        build_walk(x, mask, &w);
        w.nan = nan;
        if (sum_direct(&w, x, out, mean)) {
            tl_tensor_release(x);
            return 0;
        }
    }
    uint64_t small[16] = {0};   /* most reductions have few outputs: no heap buffer */
    void *accbuf = onumel <= 16 ? (void *)small : calloc((size_t)onumel, 8);
    if (!accbuf) {
        tl_tensor_release(x);
        return tl_set_error(TL_ERR_MEMORY, "sum: out of memory");
    }
    if (xnumel > 0)
        walk_run(&w, (const char *)tl_tensor_data_ptr(x), tl_tensor_dtype(x), tl_tensor_itemsize(x), accbuf, xnumel);
    tl_tensor_release(x);
    if (mean && floating) {
        int64_t O, R;
        tl_rd_counts(self, mask, &O, &R);
        for (int64_t i = 0; i < onumel; i++) ((double *)accbuf)[i] /= (double)R;
    }
    int rc = -1;
    if (tl_tensor_is_contiguous(out) && (rt == TL_FLOAT32 || rt == TL_FLOAT64 || rt == TL_INT64)) {
        /* the common case: convert straight into out */
        void *d = tl_tensor_data_ptr(out);
        if (rt == TL_FLOAT64 || rt == TL_INT64) memcpy(d, accbuf, (size_t)onumel * 8);
        else
            for (int64_t i = 0; i < onumel; i++) ((float *)d)[i] = (float)((const double *)accbuf)[i];
        if (accbuf != small) free(accbuf);
        return 0;
    }
    /* otherwise into a contiguous temporary of the output's shape, then copied */
    tl_tensor *tmp = tl_empty(tl_tensor_ndim(out), tl_tensor_sizes(out), floating ? TL_FLOAT64 : TL_INT64, TL_CPU);
    if (tmp) {
        if (floating) memcpy(tl_tensor_data_ptr(tmp), accbuf, (size_t)onumel * 8);
        else if (rt == TL_BOOL) {
            int64_t *d = tl_tensor_data_ptr(tmp);
            for (int64_t i = 0; i < onumel; i++) d[i] = ((uint64_t *)accbuf)[i] != 0;
        } else memcpy(tl_tensor_data_ptr(tmp), accbuf, (size_t)onumel * 8);
        rc = tl_copy_(out, tmp);
        tl_tensor_release(tmp);
    }
    if (accbuf != small) free(accbuf);
    return rc;
}

int tl_impl_sum_out(tl_structured *s, tl_tensor *self, const int64_t *dim, int64_t dim_len, bool keepdim,
                    tl_dtype dtype, tl_tensor *out) {
    (void)s; (void)keepdim; (void)dtype;
    uint64_t mask;
    if (tl_rd_mask(self, dim, dim_len, &mask)) return -1;
    return sum_core(self, mask, out, 0, 0);
}

/* nansum of a floating result dtype (kernels/native/select_index.c): sum's
 * walk with NaN read as 0 inside the loops, into a new tensor of sum's shape
 * and result dtype (dtype=, else self's) */
tl_tensor *tl_rd_nansum(tl_tensor *self, const int64_t *dim, int64_t dim_len, bool keepdim, tl_dtype dtype) {
    uint64_t mask;
    if (tl_rd_mask(self, dim, dim_len, &mask)) return NULL;
    int64_t shape[MAXD];
    const int64_t k = tl_rd_shape(self, mask, keepdim, shape);
    tl_tensor *out = tl_empty(k, shape, sumlike_dtype(NULL, self, dtype), tl__device_of(self));
    if (out && (tl_tensor_device(self) == TL_CUDA ? tl_cuda_nansum_into(self, mask, out)
                                                   : sum_core(self, mask, out, 0, 1))) {
        tl_tensor_release(out);
        return NULL;
    }
    return out;
}

/* sum(self, dtype): the dim_IntList overload over every dim */
tl_tensor *tl_native_sum(tl_keyset ks, tl_tensor *self, tl_dtype dtype) {
    (void)ks;
    return tl_ops_sum_dim_IntList(self, NULL, 0, false, dtype);
}

/* ---- mean (yaml: mean.dim / mean.out structured; mean, mean.dtype_out composite) */

int tl_meta_mean_dim(tl_structured *s, tl_tensor *self, const int64_t *dim, int64_t dim_len, bool keepdim,
                     tl_dtype dtype) {
    tl_dtype in = dtype != TL_DTYPE_UNDEFINED ? dtype : tl_tensor_dtype(self);
    if (dtype == TL_DTYPE_UNDEFINED && tl_dtype_is_integral(in, 1)) in = TL_INT64;
    if (!tl_dtype_is_floating(in) && !tl_dtype_is_complex(in))
        return tl_set_error(TL_ERR_RUNTIME, "mean(): could not infer output dtype. %s dtype must be either a floating "
                            "point or complex dtype. Got: %s", dtype != TL_DTYPE_UNDEFINED ? "Optional" : "Input",
                            tl_dtype_scalar_name(dtype != TL_DTYPE_UNDEFINED ? dtype : tl_tensor_dtype(self)));
    uint64_t mask;
    if (tl_rd_mask(self, dim, dim_len, &mask)) return -1;
    tl_dtype rt = dtype;
    if (rt == TL_DTYPE_UNDEFINED)
        rt = s->kind == TL_STRUCTURED_OUT && s->outputs[0] ? tl_tensor_dtype(s->outputs[0]) : tl_tensor_dtype(self);
    int64_t shape[MAXD];
    const int64_t k = tl_rd_shape(self, mask, keepdim, shape);
    return tl_structured_set_output(s, 0, k, shape, NULL, rt);
}

int tl_impl_mean_out(tl_structured *s, tl_tensor *self, const int64_t *dim, int64_t dim_len, bool keepdim,
                     tl_dtype dtype, tl_tensor *out) {
    (void)s; (void)keepdim; (void)dtype;
    uint64_t mask;
    if (tl_rd_mask(self, dim, dim_len, &mask)) return -1;
    return sum_core(self, mask, out, 1, 0);
}

tl_tensor *tl_native_mean(tl_keyset ks, tl_tensor *self, tl_dtype dtype) {
    (void)ks;
    return tl_ops_mean_dim(self, NULL, 0, false, dtype);
}

tl_tensor *tl_native_mean_dtype_out(tl_keyset ks, tl_tensor *self, tl_dtype dtype, tl_tensor *out) {
    (void)ks;
    return tl_ops_mean_out(self, NULL, 0, false, dtype, out);
}

/* ---- prod (yaml: prod CPU; prod.dim_int / prod.int_out structured). The
 * input is converted to the result dtype (sum's rule), then multiplied in
 * float64 (floating results), complex128 (complex) or wrapping int64 (integers). */

static int prod_core(tl_tensor *self, uint64_t mask, tl_tensor *out) {
    const tl_dtype rt = tl_tensor_dtype(out);
    const tl_dtype cdt = tl_dtype_is_complex(rt) ? TL_COMPLEX128 : tl_rd_compute_dtype(rt);
    if (tl_tensor_numel(out) == 0) return 0;
    tl_tensor *x = tl_to_dtype(self, rt, 0);
    if (!x) return -1;
    tl_tensor *rows = tl_rd_rows(x, mask, cdt);
    tl_tensor_release(x);
    if (!rows) return -1;
    int64_t O, R;
    tl_rd_counts(self, mask, &O, &R);
    tl_tensor *t = tl_rd_target(out, cdt);
    if (!t) {
        tl_tensor_release(rows);
        return -1;
    }
    if (cdt == TL_COMPLEX128) {   /* c10::complex's product: no C99 inf / NaN recovery */
        const double *p = tl_tensor_data_ptr(rows);
        double *o = tl_tensor_data_ptr(t);
        for (int64_t j = 0; j < O; j++) {
            double ar = 1, ai = 0;
            for (int64_t k = 0; k < R; k++) {
                const double br = p[2 * (j * R + k)], bi = p[2 * (j * R + k) + 1], r = ar * br - ai * bi;
                ai = ar * bi + ai * br, ar = r;
            }
            o[2 * j] = ar, o[2 * j + 1] = ai;
        }
    } else if (cdt == TL_FLOAT64) {
        const double *p = tl_tensor_data_ptr(rows);
        double *o = tl_tensor_data_ptr(t);
        for (int64_t j = 0; j < O; j++) {
            double a = 1;
            for (int64_t k = 0; k < R; k++) a *= p[j * R + k];
            o[j] = a;
        }
    } else {
        const int64_t *p = tl_tensor_data_ptr(rows);
        int64_t *o = tl_tensor_data_ptr(t);
        for (int64_t j = 0; j < O; j++) {
            uint64_t a = 1;   /* wraps like PyTorch's int64 product */
            for (int64_t k = 0; k < R; k++) a *= (uint64_t)p[j * R + k];
            o[j] = (int64_t)a;
        }
    }
    tl_tensor_release(rows);
    return tl_rd_commit(out, t);
}

int tl_meta_prod_dim_int(tl_structured *s, tl_tensor *self, int64_t dim, bool keepdim, tl_dtype dtype) {
    uint64_t mask;
    if (tl_rd_mask(self, &dim, 1, &mask)) return -1;
    return sumlike_meta(s, self, mask, keepdim, dtype);
}

int tl_impl_prod_out(tl_structured *s, tl_tensor *self, int64_t dim, bool keepdim, tl_dtype dtype, tl_tensor *out) {
    (void)s; (void)keepdim; (void)dtype;
    uint64_t mask;
    if (tl_rd_mask(self, &dim, 1, &mask)) return -1;
    return prod_core(self, mask, out);
}

tl_tensor *tl_native_prod(tl_keyset ks, tl_tensor *self, tl_dtype dtype) {
    (void)ks;
    tl_tensor *out = tl_empty(0, NULL, sumlike_dtype(NULL, self, dtype), tl__device_of(self));
    if (!out) return NULL;
    uint64_t mask;
    if (tl_rd_mask(self, NULL, 0, &mask) ||
        (tl_tensor_device(self) == TL_CUDA ? tl_cuda_prod_into(self, mask, out) : prod_core(self, mask, out))) {
        tl_tensor_release(out);
        return NULL;
    }
    return out;
}
