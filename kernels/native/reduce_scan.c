/* cumsum / cumprod (structured: functional, in-place, out=) and flip.
 *
 * Scans: result dtype `dtype=` if given, else the out= / in-place tensor's,
 * else self's with bool and integers as int64 (PyTorch's cum_ops_meta). The
 * input is converted to the result dtype and accumulated in float64
 * (floating: PyTorch's CPU acc type) or wrapping int64.
 *
 * float32 / float64 results (scan_f): the input made contiguous in the
 * result dtype and seen as [A, R, B] (R the scanned dim), written straight
 * into out when out is contiguous. B == 1: per-ISA row scans
 * (kernels/cpu/scan_kernel.c: float32 SIMD, float64 PyTorch's sequential
 * loop), rows across threads; a float32 row longer than SCAN_CHUNK is
 * scanned in fixed chunks, each from the identity, plus the
 * carry of the chunks before it (with few rows: the chunk totals on the
 * threads, the carries in order, then the chunks on the threads again;
 * otherwise one pass per row: the same operations, so the same bits for any
 * thread count). B > 1: the column kernel down R, blocks of SCAN_COLS kept
 * columns across threads. Other dtypes: the scanned dim moved innermost
 * (rows layout, reduce_util.h), scalar loops, the rows permuted back into out.
 */
#include <stdlib.h>
#include <string.h>

#include "reduce_util.h"
#include "complex_ops.h"
#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/cumprod.h"
#include "ops/cumsum.h"
#include "ops/flip.h"
#include "tl_runtime.h"
#include "tl_scan_kernel.h"
#include "tl_structured.h"

TL_DEFINE_STUB(tl_scan_stub, tl_scan_table)

enum { SCAN_CHUNK = 1 << 16, SCAN_COLS = 512, SCAN_GRAIN = 1 << 15 };

typedef struct {
    const char *p;
    char *o;
    int64_t A, R, B, isz;
    int64_t nc, chunk;          /* B == 1: chunks per row and their length; B > 1: column blocks */
    double id, *carry;          /* carry: per chunk, A * nc (two-pass rows) */
    const tl_scan_fns *k;
    int is_prod;
} scan_ctx;

static int64_t chunk_len(const scan_ctx *c, int64_t q) {
    return c->R - q * c->chunk < c->chunk ? c->R - q * c->chunk : c->chunk;
}

/* whole rows, one pass each (chunk by chunk, the carry in order) */
static void rows_body(int64_t b, int64_t e, void *c_) {
    const scan_ctx *c = c_;
    for (int64_t a = b; a < e; a++) {
        double carry = c->id;
        for (int64_t q = 0; q < c->nc; q++) {
            const int64_t off = (a * c->R + q * c->chunk) * c->isz;
            const double t = c->k->row[c->is_prod](c->p + off, c->o + off, chunk_len(c, q), carry, 1);
            carry = c->is_prod ? carry * t : carry + t;
        }
    }
}

/* two-pass rows: pass 1 the chunk totals into carry[], pass 2 the chunks */
static void totals_body(int64_t b, int64_t e, void *c_) {
    const scan_ctx *c = c_;
    for (int64_t i = b; i < e; i++) {
        const int64_t a = i / c->nc, q = i % c->nc, off = (a * c->R + q * c->chunk) * c->isz;
        c->carry[i] = c->k->row[c->is_prod](c->p + off, NULL, chunk_len(c, q), c->id, 0);
    }
}
static void chunks_body(int64_t b, int64_t e, void *c_) {
    const scan_ctx *c = c_;
    for (int64_t i = b; i < e; i++) {
        const int64_t a = i / c->nc, q = i % c->nc, off = (a * c->R + q * c->chunk) * c->isz;
        c->k->row[c->is_prod](c->p + off, c->o + off, chunk_len(c, q), c->carry[i], 1);
    }
}

static void cols_body(int64_t b, int64_t e, void *c_) {
    const scan_ctx *c = c_;
    double acc[SCAN_COLS];
    for (int64_t i = b; i < e; i++) {
        const int64_t a = i / c->nc, c0 = (i % c->nc) * SCAN_COLS;
        const int64_t w = c->B - c0 < SCAN_COLS ? c->B - c0 : SCAN_COLS, off = (a * c->R * c->B + c0) * c->isz;
        c->k->col[c->is_prod](c->p + off, c->o + off, c->R, c->B, w, acc);
    }
}

/* float32 / float64 out (dtype rt): scanned along dim d */
static int scan_f(const tl_tensor *self, int64_t d, int is_prod, tl_tensor *out) {
    const tl_dtype rt = tl_tensor_dtype(out);
    tl_tensor *cv = tl_to_dtype(self, rt, 0), *x = cv ? tl_contiguous(cv) : NULL;
    tl_tensor_release(cv);
    if (!x) return -1;
    /* out written in place unless it is not contiguous or overlaps x elsewhere */
    const int direct = tl_tensor_is_contiguous(out) &&
                       (tl_tensor_storage(out) != tl_tensor_storage(x) ||
                        tl_tensor_data_ptr(out) == tl_tensor_data_ptr(x));
    tl_tensor *o = direct ? out : tl_empty(tl_tensor_ndim(x), tl_tensor_sizes(x), rt, TL_CPU);
    if (!o) {
        tl_tensor_release(x);
        return -1;
    }
    const int64_t nd = tl_tensor_ndim(x), *sz = tl_tensor_sizes(x);
    scan_ctx c = {tl_tensor_data_ptr(x), tl_tensor_data_ptr(o), 1, nd ? sz[d] : 1, 1, tl_tensor_itemsize(x), 1,
                  SCAN_CHUNK, is_prod ? 1.0 : 0.0, NULL, &TL_SCAN(rt == TL_FLOAT64), is_prod};
    for (int64_t i = 0; i < nd; i++) {
        if (i < d) c.A *= sz[i];
        if (i > d) c.B *= sz[i];
    }
    int rc = 0;
    if (c.B > 1) {
        c.nc = (c.B + SCAN_COLS - 1) / SCAN_COLS;
        tl_parallel_for(c.A * c.nc, SCAN_GRAIN / (c.R * SCAN_COLS) + 1, cols_body, &c);
    } else {
        if (rt == TL_FLOAT64) c.chunk = c.R;   /* PyTorch's sequential loop, never chunked */
        c.nc = (c.R + c.chunk - 1) / c.chunk;
        const int nt = tl_get_num_threads();
        if (c.nc == 1 || c.A >= 2 * nt || nt == 1 || tl__in_parallel_region()) {
            tl_parallel_for(c.A, SCAN_GRAIN / c.R + 1, rows_body, &c);
        } else if (!(c.carry = malloc((size_t)(c.A * c.nc) * sizeof(double)))) {
            rc = tl_set_error(TL_ERR_RUNTIME, "out of memory");
        } else {
            tl_parallel_for(c.A * c.nc, 1, totals_body, &c);
            for (int64_t a = 0; a < c.A; a++) {   /* totals -> carries, in order */
                double carry = c.id;
                for (int64_t q = 0; q < c.nc; q++) {
                    const double t = c.carry[a * c.nc + q];
                    c.carry[a * c.nc + q] = carry;
                    carry = is_prod ? carry * t : carry + t;
                }
            }
            tl_parallel_for(c.A * c.nc, 1, chunks_body, &c);
            free(c.carry);
        }
    }
    if (!rc && !direct) rc = tl_copy_(out, o);
    if (!direct) tl_tensor_release(o);
    tl_tensor_release(x);
    return rc ? -1 : 0;
}

static int cum_meta(tl_structured *s, const tl_tensor *self, int64_t dim, tl_dtype dtype) {
    int64_t d;
    if (tl_rd_wrap_dim(self, dim, &d)) return -1;
    tl_dtype dt = dtype;
    if (dt == TL_DTYPE_UNDEFINED) {
        if (s->kind != TL_STRUCTURED_FUNCTIONAL && s->outputs[0]) dt = tl_tensor_dtype(s->outputs[0]);
        else dt = tl_dtype_is_integral(tl_tensor_dtype(self), 1) ? TL_INT64 : tl_tensor_dtype(self);
    }
    return tl_structured_set_output(s, 0, tl_tensor_ndim(self), tl_tensor_sizes(self), NULL, dt);
}

static int cum_impl(const tl_tensor *self, int64_t dim, int is_prod, tl_tensor *out) {
    if (tl_tensor_numel(out) == 0) return 0;
    int64_t d;
    if (tl_rd_wrap_dim(self, dim, &d)) return -1;
    const int64_t nd = tl_tensor_ndim(self);
    const tl_dtype rt = tl_tensor_dtype(out);
    const tl_dtype cdt = tl_dtype_is_complex(rt) ? TL_COMPLEX128 : tl_rd_compute_dtype(rt);
    if (rt == TL_FLOAT32 || rt == TL_FLOAT64) return scan_f(self, d, is_prod, out);
    tl_tensor *x = tl_to_dtype(self, rt, 0);
    if (!x) return -1;
    const uint64_t mask = nd ? 1ull << d : 0;
    tl_tensor *rows = tl_rd_rows(x, mask, cdt);
    tl_tensor_release(x);
    if (!rows) return -1;
    int64_t O, R;
    tl_rd_counts(self, mask, &O, &R);
    /* the result in rows order: [other dims..., dim] */
    int64_t shape[TL_RD_MAXD], perm[TL_RD_MAXD], inv[TL_RD_MAXD], k = 0;
    const int64_t *sz = tl_tensor_sizes(self);
    for (int64_t i = 0; i < nd; i++)
        if (i != d) perm[k++] = i;
    if (nd) perm[k++] = d;
    for (int64_t i = 0; i < nd; i++) {
        shape[i] = sz[perm[i]];
        inv[perm[i]] = i;
    }
    tl_tensor *res = tl_empty(nd, shape, cdt, TL_CPU);
    int rc = -1;
    if (res) {
        if (cdt == TL_COMPLEX128) {   /* sequential, in complex128 (PyTorch's acc_type), c10's product */
            const double *p = tl_tensor_data_ptr(rows);
            double *o = tl_tensor_data_ptr(res);
            for (int64_t j = 0; j < O; j++) {
                double ar = is_prod ? 1 : 0, ai = 0;
                for (int64_t q = 0; q < R; q++) {
                    const double br = p[2 * (j * R + q)], bi = p[2 * (j * R + q) + 1];
                    if (is_prod) {
                        const double r = ar * br - ai * bi;
                        ai = ar * bi + ai * br, ar = r;
                    } else {
                        ar += br, ai += bi;
                    }
                    o[2 * (j * R + q)] = ar, o[2 * (j * R + q) + 1] = ai;
                }
            }
        } else if (cdt == TL_FLOAT64) {
            const double *p = tl_tensor_data_ptr(rows);
            double *o = tl_tensor_data_ptr(res);
            for (int64_t j = 0; j < O; j++) {
                double a = is_prod ? 1 : 0;
                for (int64_t q = 0; q < R; q++) {
                    a = is_prod ? a * p[j * R + q] : a + p[j * R + q];
                    o[j * R + q] = a;
                }
            }
        } else {
            const int64_t *p = tl_tensor_data_ptr(rows);
            int64_t *o = tl_tensor_data_ptr(res);
            for (int64_t j = 0; j < O; j++) {
                uint64_t a = is_prod ? 1 : 0;   /* wraps like PyTorch's int64 */
                for (int64_t q = 0; q < R; q++) {
                    a = is_prod ? a * (uint64_t)p[j * R + q] : a + (uint64_t)p[j * R + q];
                    o[j * R + q] = (int64_t)a;
                }
            }
        }
        tl_tensor *back = nd ? tl_permute(res, nd, inv) : tl_alias(res);
        if (back) {
            rc = tl_copy_(out, back);
            tl_tensor_release(back);
        }
        tl_tensor_release(res);
    }
    tl_tensor_release(rows);
    return rc;
}

int tl_meta_cumsum(tl_structured *s, tl_tensor *self, int64_t dim, tl_dtype dtype) { return cum_meta(s, self, dim, dtype); }
int tl_meta_cumprod(tl_structured *s, tl_tensor *self, int64_t dim, tl_dtype dtype) { return cum_meta(s, self, dim, dtype); }
int tl_impl_cumsum_out(tl_structured *s, tl_tensor *self, int64_t dim, tl_dtype dtype, tl_tensor *out) {
    (void)s; (void)dtype;
    return cum_impl(self, dim, 0, out);
}
int tl_impl_cumprod_out(tl_structured *s, tl_tensor *self, int64_t dim, tl_dtype dtype, tl_tensor *out) {
    (void)s; (void)dtype;
    return cum_impl(self, dim, 1, out);
}

/* ---- flip: a copy with the listed dims reversed (dims=[]: a plain copy) */

tl_tensor *tl_native_flip(tl_keyset ks, tl_tensor *self, const int64_t *dims, int64_t dims_len) {
    (void)ks;
    uint64_t mask = 0;
    if (dims_len > 0 && tl_rd_mask(self, dims, dims_len, &mask)) return NULL;
    const int64_t nd = tl_tensor_ndim(self);
    tl_tensor *out = tl_empty(nd, tl_tensor_sizes(self), tl_tensor_dtype(self), TL_CPU);
    if (!out) return NULL;
    /* a view of self walking the flipped dims backwards: offset at the last
     * element, negated strides (the runtime's copy reads any strides) */
    const int64_t *sz = tl_tensor_sizes(self), *st = tl_tensor_strides(self);
    int64_t strides[TL_RD_MAXD], off = tl_tensor_storage_offset(self);
    for (int64_t i = 0; i < nd; i++) {
        strides[i] = st[i];
        if ((mask & (1ull << i)) && sz[i] > 1) {
            off += (sz[i] - 1) * st[i];
            strides[i] = -st[i];
        }
    }
    int rc = -1;
    if (tl_tensor_numel(self) == 0) {
        rc = 0;
    } else {
        tl_tensor *v = tl__tensor_alloc(tl_tensor_storage(self), off, nd, sz, strides, tl_tensor_dtype(self));
        if (v) {
            rc = tl_copy_(out, v);
            tl_tensor_release(v);
        }
    }
    if (rc) {
        tl_tensor_release(out);
        return NULL;
    }
    return out;
}
