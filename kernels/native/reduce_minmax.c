/* amax / amin (structured), max() / min() (full), max.dim / min.dim (values,
 * indices), argmax / argmin (structured), max.other / min.other (=
 * maximum / minimum, as PyTorch's composite).
 *
 * NaN propagates: the value is NaN and the index that of the first NaN.
 * Ties: the first index (PyTorch's CPU kernels). Floating inputs go through
 * the per-ISA kernels of kernels/cpu/reduce_minmax_kernel.c: float32 amax/amin
 * over a contiguous input whose reduced dims are innermost (one SIMD row
 * kernel per output) or outermost (a column kernel across the kept inner
 * elements); argmax/argmin and max.dim/min.dim (and amax's other layouts)
 * over reduce_direct.h's view (float32 / float64 read in place, half types
 * and odd layouts through a float32 copy). Integers use the rows layout
 * (reduce_util.h: int64, exact for every input value).
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "reduce_direct.h"
#include "reduce_util.h"
#include "complex_ops.h"
#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/amax.h"
#include "ops/amin.h"
#include "ops/argmax.h"
#include "ops/argmin.h"
#include "ops/max.h"
#include "ops/maximum.h"
#include "ops/min.h"
#include "ops/minimum.h"
#include "tl_reduce_kernel.h"
#include "tl_structured.h"

TL_DEFINE_STUB(tl_minmax_f32_stub, tl_minmax_f32_table)
TL_DEFINE_STUB(tl_argbest_stub, tl_argbest_table)

/* integers: best value and its index in each of O rows of R (R >= 1) of
 * the int64 rows layout; vals / idx may be NULL */
static void best_i64(const int64_t *p, int64_t O, int64_t R, int is_max, int64_t *vals, int64_t *idx) {
    for (int64_t j = 0; j < O; j++) {
        const int64_t *r = p + j * R;
        int64_t b = r[0], bi = 0;
        for (int64_t k = 1; k < R; k++)
            if (is_max ? r[k] > b : r[k] < b) {
                b = r[k];
                bi = k;
            }
        if (vals) vals[j] = b;
        if (idx) idx[j] = bi;
    }
}

/* ---- floating inputs: the argbest kernels over the direct view */

typedef struct {
    tl_argbest_row_fn row;
    tl_argbest_col_fn col;
    int64_t isz;
    char *vals;        /* per output (the view's dtype), may be NULL */
    int64_t *idx;      /* per output, may be NULL */
    char *cvals;       /* per chunk of a chunked single output */
    int64_t *cidx;
} arg_ctx;

static void arg_row(void *c_, const void *p, int64_t R, int64_t o) {
    const arg_ctx *c = c_;
    const int64_t k = c->row(p, R);
    if (c->idx) c->idx[o] = k;
    if (c->vals) memcpy(c->vals + o * c->isz, (const char *)p + k * c->isz, (size_t)c->isz);
}
static void arg_col(void *c_, const void *p, int64_t R, int64_t stride, int64_t w, int64_t o) {
    const arg_ctx *c = c_;
    int64_t ibuf[TL_RD_COLS];
    double vbuf[TL_RD_COLS];
    c->col(p, R, stride, w, c->vals ? c->vals + o * c->isz : (char *)vbuf, c->idx ? c->idx + o : ibuf);
}
static void arg_chunk(void *c_, const void *p, int64_t len, int64_t i) {
    const arg_ctx *c = c_;
    const int64_t k = c->row(p, len);
    c->cidx[i] = i * (int64_t)TL_RD_CHUNK + k;
    memcpy(c->cvals + i * c->isz, (const char *)p + k * c->isz, (size_t)c->isz);
}

/* the chunk that wins: the first NaN, else the first strictly best */
#define TL_DEF_ARG_MERGE(NAME, T)                                                        \
    static int64_t arg_merge_##NAME(const T *v, int64_t n, int is_max) {                 \
        int64_t b = 0;                                                                   \
        for (int64_t i = 0; i < n && v[b] == v[b]; i++)                                  \
            if (v[i] != v[i] || (is_max ? v[i] > v[b] : v[i] < v[b])) b = i;             \
        return b;                                                                        \
    }
TL_DEF_ARG_MERGE(f32, float)
TL_DEF_ARG_MERGE(f64, double)

/* values (kdt) and/or indices of floating self into vals / idx (either may be NULL) */
static int argbest_direct(const tl_tensor *self, uint64_t mask, int is_max, tl_dtype kdt, void *vals, int64_t *idx) {
    tl_rd_view v;
    if (tl_rd_view_init(&v, self, mask, kdt)) return -1;
    const tl_argbest_fns *k = &TL_ARGBEST(v.slot);
    arg_ctx c = {k->row[!is_max], k->col[!is_max], v.isz, vals, idx, NULL, NULL};
    int rc = 0;
    if (!tl_rd_view_chunked(&v)) {
        const tl_rd_work w = {arg_row, arg_col, &c};
        tl_rd_view_run(&v, &w);
    } else {
        const int64_t nch = tl_rd_chunk_count(&v);
        c.cidx = malloc((size_t)nch * (sizeof(int64_t) + (size_t)v.isz));
        if (!c.cidx) {
            rc = tl_set_error(TL_ERR_RUNTIME, "out of memory");
        } else {
            c.cvals = (char *)(c.cidx + nch);
            tl_rd_view_run_chunks(&v, arg_chunk, &c);
            const int64_t b = v.slot ? arg_merge_f64((const double *)c.cvals, nch, is_max)
                                     : arg_merge_f32((const float *)c.cvals, nch, is_max);
            if (idx) idx[0] = c.cidx[b];
            if (vals) memcpy(vals, c.cvals + b * v.isz, (size_t)v.isz);
            free(c.cidx);
        }
    }
    tl_rd_view_free(&v);
    return rc;
}

/* integers: the int64 rows layout */
static int best_rows_i64(const tl_tensor *self, uint64_t mask, int is_max, int64_t *vals, int64_t *idx) {
    int64_t O, R;
    tl_rd_counts(self, mask, &O, &R);
    tl_tensor *rows = tl_rd_rows(self, mask, TL_INT64);
    if (!rows) return -1;
    best_i64(tl_tensor_data_ptr(rows), O, R, is_max, vals, idx);
    tl_tensor_release(rows);
    return 0;
}

/* values and/or indices of the max/min over mask into vals_out (self's
 * dtype or any dtype a copy accepts) and idx_out (int64) */
static int minmax_core(const tl_tensor *self, uint64_t mask, int is_max, tl_tensor *vals_out, tl_tensor *idx_out) {
    const tl_tensor *shape_of = vals_out ? vals_out : idx_out;
    if (tl_tensor_numel(shape_of) == 0) return 0;
    if (tl_tensor_device(self) == TL_CUDA) return tl_cuda_minmax_into(self, mask, is_max, vals_out, idx_out);
    const tl_dtype dt = tl_tensor_dtype(self);
    const int fl = tl_dtype_is_floating(dt);
    /* the dtype values are computed in: exact for every input value */
    const tl_dtype vdt = !fl ? TL_INT64 : dt == TL_FLOAT64 ? TL_FLOAT64 : TL_FLOAT32;
    tl_tensor *vt = vals_out ? tl_rd_target(vals_out, vdt) : NULL;
    tl_tensor *it = idx_out ? tl_rd_target(idx_out, TL_INT64) : NULL;
    int rc = -1;
    if ((vals_out && !vt) || (idx_out && !it)) goto done;
    void *vp = vt ? tl_tensor_data_ptr(vt) : NULL;
    int64_t *ip = it ? tl_tensor_data_ptr(it) : NULL;
    rc = fl ? argbest_direct(self, mask, is_max, vdt, vp, ip) : best_rows_i64(self, mask, is_max, vp, ip);
    if (!rc && vt) { rc |= tl_rd_commit(vals_out, vt); vt = NULL; }
    if (!rc && it) { rc |= tl_rd_commit(idx_out, it); it = NULL; }
done:
    tl_tensor_release(vt);
    tl_tensor_release(it);
    return rc ? -1 : 0;
}

#define AMAX_CHUNK (1 << 16)      /* elements per chunk of a long row */
#define AMAX_PAR_MIN (1 << 15)    /* fewest elements worth a thread */
#define SEL_MAX(a, x) ((x) > (a) || (x) != (x) ? (x) : (a))
#define SEL_MIN(a, x) ((x) < (a) || (x) != (x) ? (x) : (a))

typedef struct {
    const float *p;
    float *o, *part;
    int64_t O, R;
    tl_rowmax_f32_fn row;
    tl_colmax_f32_fn col;
    int is_max;
    int64_t nc;           /* chunks of a long row */
    _Atomic int64_t next; /* the next unclaimed chunk */
} f32_ctx;

static void f32_rows_body(int64_t b, int64_t e, void *c_) {
    const f32_ctx *c = c_;
    for (int64_t j = b; j < e; j++) c->o[j] = c->row(c->p + j * c->R, c->R);
}

/* one claimer per thread: chunks taken from a counter, so a thread that
 * starts late or is preempted leaves its share to the others (each chunk's
 * result has its own slot: the merge order does not change) */
static void f32_chunks_body(int64_t b, int64_t e, void *c_) {
    f32_ctx *c = c_;
    (void)b, (void)e;
    for (int64_t k; (k = atomic_fetch_add_explicit(&c->next, 1, memory_order_relaxed)) < c->nc;) {
        const int64_t s = k * AMAX_CHUNK, len = c->R - s < AMAX_CHUNK ? c->R - s : AMAX_CHUNK;
        c->part[k] = c->row(c->p + s, len);
    }
}

static void f32_cols_body(int64_t b, int64_t e, void *c_) {
    const f32_ctx *c = c_;
    const int64_t lo = b * 16, n = (e * 16 < c->O ? e * 16 : c->O) - lo;
    memcpy(c->o + lo, c->p + lo, (size_t)n * sizeof(float));
    for (int64_t r = 1; r < c->R; r++) c->col(c->o + lo, c->p + r * c->O + lo, n);
}

/* float32, contiguous, reduced dims a suffix (rows) or a prefix (columns) of
 * the dims: the SIMD kernels straight on the data, split across threads (every
 * output still computed in an order that does not depend on the thread count).
 * 1 = done, 0 = not this layout, -1 = error. */
static int amax_f32_fast(const tl_tensor *self, uint64_t mask, int is_max, tl_tensor *out) {
    if (tl_tensor_dtype(self) != TL_FLOAT32 || tl_tensor_dtype(out) != TL_FLOAT32 || !tl_tensor_is_contiguous(self) ||
        !tl_tensor_is_contiguous(out))
        return 0;
    const int64_t nd = tl_tensor_ndim(self);
    if (nd == 0 || mask == 0) return 0;
    int64_t first = 0, last = nd - 1;
    while (!(mask & (1ull << first))) first++;
    while (!(mask & (1ull << last))) last--;
    for (int64_t i = first; i <= last; i++)
        if (!(mask & (1ull << i))) return 0;   /* reduced dims not adjacent */
    int64_t O, R;
    tl_rd_counts(self, mask, &O, &R);
    const float *p = tl_tensor_data_ptr(self);
    float *o = tl_tensor_data_ptr(out);
    const int w = is_max ? 0 : 1;
    f32_ctx c = {p, o, NULL, O, R, TL_MINMAX_F32.row[w], TL_MINMAX_F32.col[w], is_max, 0, 0};
    if (last == nd - 1) {
        if (R <= AMAX_CHUNK || O >= 16) {   /* shape only: the same bits for any thread count */
            /* one output per row, rows across threads */
            tl_parallel_for(O, (AMAX_PAR_MIN + R - 1) / R, f32_rows_body, &c);
            return 1;
        }
        /* few long rows (a full reduction): each row in fixed chunks across
         * threads, the chunk results merged in order (independent of the
         * thread count; a NaN chunk makes the row NaN) */
        const int64_t nc = (R + AMAX_CHUNK - 1) / AMAX_CHUNK;
        float *part = malloc((size_t)nc * sizeof(float));
        if (!part) { tl_set_error(TL_ERR_RUNTIME, "out of memory"); return -1; }
        c.part = part;
        c.nc = nc;
        const int nt = tl_get_num_threads();
        for (int64_t j = 0; j < O; j++) {
            c.p = p + j * R;
            atomic_init(&c.next, 0);
            tl_parallel_for(nt < nc ? nt : nc, 1, f32_chunks_body, &c);
            float r = part[0];
            for (int64_t k = 1; k < nc; k++) r = is_max ? SEL_MAX(r, part[k]) : SEL_MIN(r, part[k]);
            o[j] = r;
        }
        free(part);
        return 1;
    }
    if (first == 0) {
        /* kept columns across threads (blocks of 16, each column by one thread) */
        tl_parallel_for((O + 15) / 16, (AMAX_PAR_MIN + 16 * R - 1) / (16 * R), f32_cols_body, &c);
        return 1;
    }
    return 0;
}

static int amax_core(const tl_tensor *self, uint64_t mask, int is_max, tl_tensor *out) {
    if (tl_tensor_numel(out) == 0) return 0;
    if (tl_tensor_device(self) == TL_CUDA) return tl_cuda_minmax_into(self, mask, is_max, out, NULL);
    const int f = amax_f32_fast(self, mask, is_max, out);
    if (f) return f < 0 ? -1 : 0;
    return minmax_core(self, mask, is_max, out, NULL);
}

/* ---- amax / amin (int[1] dim=[]: every dim when empty) */

static int amax_meta(tl_structured *s, const char *name, tl_tensor *self, const int64_t *dim, int64_t dim_len,
                     bool keepdim) {
    if (tl__refuse_complex(self, 1, name[1] == 'm' && name[2] == 'a' ? "max_values_cpu" : "min_values_cpu"))
        return -1;
    uint64_t mask;
    if (tl_rd_mask(self, dim, dim_len, &mask)) return -1;
    if (tl_rd_check_nonempty(self, mask, dim_len > 0, name, 0)) return -1;
    if (s->kind == TL_STRUCTURED_OUT && s->outputs[0] && tl_tensor_dtype(s->outputs[0]) != tl_tensor_dtype(self))
        return tl_set_error(TL_ERR_RUNTIME, "Expected the dtype for input and out to match, but got %s for input's dtype "
                            "and %s for out's dtype.", tl_dtype_scalar_name(tl_tensor_dtype(self)),
                            tl_dtype_scalar_name(tl_tensor_dtype(s->outputs[0])));
    int64_t shape[TL_RD_MAXD];
    const int64_t k = tl_rd_shape(self, mask, keepdim, shape);
    return tl_structured_set_output(s, 0, k, shape, NULL, tl_tensor_dtype(self));
}

int tl_meta_amax(tl_structured *s, tl_tensor *self, const int64_t *dim, int64_t dim_len, bool keepdim) {
    return amax_meta(s, "amax", self, dim, dim_len, keepdim);
}
int tl_meta_amin(tl_structured *s, tl_tensor *self, const int64_t *dim, int64_t dim_len, bool keepdim) {
    return amax_meta(s, "amin", self, dim, dim_len, keepdim);
}

int tl_impl_amax_out(tl_structured *s, tl_tensor *self, const int64_t *dim, int64_t dim_len, bool keepdim,
                     tl_tensor *out) {
    (void)s; (void)keepdim;
    uint64_t mask;
    if (tl_rd_mask(self, dim, dim_len, &mask)) return -1;
    return amax_core(self, mask, 1, out);
}
int tl_impl_amin_out(tl_structured *s, tl_tensor *self, const int64_t *dim, int64_t dim_len, bool keepdim,
                     tl_tensor *out) {
    (void)s; (void)keepdim;
    uint64_t mask;
    if (tl_rd_mask(self, dim, dim_len, &mask)) return -1;
    return amax_core(self, mask, 0, out);
}

/* ---- max() / min(): 0-dim result of self's dtype; the unary_out variants
 * accept any out dtype (the value is copied into it, resized to []) */

static tl_tensor *full_minmax(tl_tensor *self, int is_max) {
    const char *name = is_max ? "max" : "min";
    if (tl__refuse_complex(self, 1, is_max ? "max_all" : "min_all")) return NULL;
    if (tl_rd_check_nonempty(self, 0, false, name, 0)) return NULL;
    tl_tensor *out = tl_empty(0, NULL, tl_tensor_dtype(self), tl__device_of(self));
    if (!out) return NULL;
    uint64_t mask;
    if (tl_rd_mask(self, NULL, 0, &mask) || amax_core(self, mask, is_max, out)) {
        tl_tensor_release(out);
        return NULL;
    }
    return out;
}

static tl_tensor *full_minmax_out(tl_tensor *self, tl_tensor *out, int is_max) {
    tl_tensor *r = full_minmax(self, is_max);
    if (!r) return NULL;
    int rc = tl_structured_resize_out(out, 0, NULL, TL_DTYPE_UNDEFINED);
    if (!rc) rc = tl_copy_(out, r);
    tl_tensor_release(r);
    if (rc) return NULL;
    tl_tensor_bump_version(out);
    tl_tensor_retain(out);
    return out;
}

tl_tensor *tl_native_max(tl_keyset ks, tl_tensor *self) { (void)ks; return full_minmax(self, 1); }
tl_tensor *tl_native_min(tl_keyset ks, tl_tensor *self) { (void)ks; return full_minmax(self, 0); }
tl_tensor *tl_native_max_unary_out(tl_keyset ks, tl_tensor *self, tl_tensor *out) {
    (void)ks;
    return full_minmax_out(self, out, 1);
}
tl_tensor *tl_native_min_unary_out(tl_keyset ks, tl_tensor *self, tl_tensor *out) {
    (void)ks;
    return full_minmax_out(self, out, 0);
}

/* ---- max.dim / min.dim: (values, indices); not structured (the generator
 * has no multi-output structured groups), the out= variant resizes and
 * checks both outputs the way structured kernels do */

static int dim_minmax(tl_tensor *self, int64_t dim, bool keepdim, int is_max, tl_tensor *vals, tl_tensor *idx,
                      tl_tensor **ret0, tl_tensor **ret1) {
    if (tl__refuse_complex(self, 0, is_max ? "max(): does not support complex input"
                                           : "min(): does not support complex input"))
        return -1;
    int64_t d;
    if (tl_rd_wrap_dim(self, dim, &d)) return -1;
    const uint64_t mask = tl_tensor_ndim(self) ? 1ull << d : 0;
    if (tl_rd_check_nonempty(self, mask, true, is_max ? "max" : "min", 0)) return -1;
    int64_t shape[TL_RD_MAXD];
    const int64_t k = tl_rd_shape(self, mask, keepdim, shape);
    tl_structured s;
    tl_structured_init(&s, vals ? TL_STRUCTURED_OUT : TL_STRUCTURED_FUNCTIONAL, tl_tensor_device(self), 0);
    int rc = 0;
    if (vals) rc = tl_structured_propose(&s, 0, vals) || tl_structured_propose(&s, 1, idx);
    if (!rc) rc = tl_structured_set_output(&s, 0, k, shape, NULL, tl_tensor_dtype(self));
    if (!rc) rc = tl_structured_set_output(&s, 1, k, shape, NULL, TL_INT64);
    if (!rc) rc = minmax_core(self, mask, is_max, s.outputs[0], s.outputs[1]);
    if (!rc) {
        if (vals) {
            tl_tensor_bump_version(s.outputs[0]);
            tl_tensor_bump_version(s.outputs[1]);
        }
        *ret0 = s.outputs[0];
        *ret1 = s.outputs[1];
        s.outputs[0] = s.outputs[1] = NULL;
    }
    tl_structured_cleanup(&s);
    return rc ? -1 : 0;
}

int tl_native_max_dim(tl_keyset ks, tl_tensor *self, int64_t dim, bool keepdim, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    return dim_minmax(self, dim, keepdim, 1, NULL, NULL, ret0, ret1);
}
int tl_native_min_dim(tl_keyset ks, tl_tensor *self, int64_t dim, bool keepdim, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    return dim_minmax(self, dim, keepdim, 0, NULL, NULL, ret0, ret1);
}
int tl_native_max_out(tl_keyset ks, tl_tensor *self, int64_t dim, bool keepdim, tl_tensor *max, tl_tensor *max_values,
                      tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    return dim_minmax(self, dim, keepdim, 1, max, max_values, ret0, ret1);
}
int tl_native_min_out(tl_keyset ks, tl_tensor *self, int64_t dim, bool keepdim, tl_tensor *min, tl_tensor *min_indices,
                      tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    return dim_minmax(self, dim, keepdim, 0, min, min_indices, ret0, ret1);
}

/* ---- argmax / argmin (int? dim: None flattens; keepdim then keeps every dim as 1) */

static int arg_meta(tl_structured *s, const char *name, tl_tensor *self, int64_t dim, bool dim_has, bool keepdim,
                    uint64_t *mask_out) {
    if (tl_dtype_is_complex(tl_tensor_dtype(self)))
        return tl_set_error(TL_ERR_RUNTIME, "%s(): does not support complex input", name);
    if (tl_tensor_dtype(self) == TL_BOOL)
        return tl_set_error(TL_ERR_RUNTIME, "%s(): does not support bool input", name);
    uint64_t mask;
    if (tl_rd_arg_mask(self, dim, dim_has, &mask)) return -1;
    if (tl_rd_check_nonempty(self, mask, dim_has, name, 1)) return -1;
    if (mask_out) *mask_out = mask;
    if (!s) return 0;
    int64_t shape[TL_RD_MAXD];
    const int64_t k = tl_rd_shape(self, mask, keepdim, shape);
    return tl_structured_set_output(s, 0, k, shape, NULL, TL_INT64);
}

int tl_meta_argmax(tl_structured *s, tl_tensor *self, int64_t dim, bool dim_has, bool keepdim) {
    return arg_meta(s, "argmax", self, dim, dim_has, keepdim, NULL);
}
int tl_meta_argmin(tl_structured *s, tl_tensor *self, int64_t dim, bool dim_has, bool keepdim) {
    return arg_meta(s, "argmin", self, dim, dim_has, keepdim, NULL);
}
int tl_impl_argmax_out(tl_structured *s, tl_tensor *self, int64_t dim, bool dim_has, bool keepdim, tl_tensor *out) {
    (void)s;
    uint64_t mask;
    if (arg_meta(NULL, "argmax", self, dim, dim_has, keepdim, &mask)) return -1;
    return minmax_core(self, mask, 1, NULL, out);
}
int tl_impl_argmin_out(tl_structured *s, tl_tensor *self, int64_t dim, bool dim_has, bool keepdim, tl_tensor *out) {
    (void)s;
    uint64_t mask;
    if (arg_meta(NULL, "argmin", self, dim, dim_has, keepdim, &mask)) return -1;
    return minmax_core(self, mask, 0, NULL, out);
}

/* ---- max.other / min.other: PyTorch's CompositeImplicitAutograd aliases */

tl_tensor *tl_native_max_other(tl_keyset ks, tl_tensor *self, tl_tensor *other) {
    (void)ks;
    return tl_ops_maximum(self, other);
}
tl_tensor *tl_native_min_other(tl_keyset ks, tl_tensor *self, tl_tensor *other) {
    (void)ks;
    return tl_ops_minimum(self, other);
}
tl_tensor *tl_native_max_out_other(tl_keyset ks, tl_tensor *self, tl_tensor *other, tl_tensor *out) {
    (void)ks;
    return tl_ops_maximum_out(self, other, out);
}
tl_tensor *tl_native_min_out_other(tl_keyset ks, tl_tensor *self, tl_tensor *other, tl_tensor *out) {
    (void)ks;
    return tl_ops_minimum_out(self, other, out);
}
