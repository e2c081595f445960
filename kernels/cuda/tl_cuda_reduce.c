/* CUDA reductions: sum, mean, amax / amin, argmax / argmin, prod, any / all,
 * linalg_vector_norm (the structured impls tl_impl_<kernel>_cuda registered
 * for the CUDA key; the meta functions are the CPU's, kernels/native/
 * reduce_*.c) and the device side of the unstructured ones whose CPU kernels
 * hand CUDA inputs here: var / std (+ mean), logsumexp, the whole-tensor
 * prod, max / min (whole and .dim). The input's dims split into kept
 * dims (one output each combination) and reduced dims, both innermost first,
 * size-1 dims dropped and mergeable neighbours merged; the plan picks threads
 * per block and, for few outputs over many elements, a two-pass split; the
 * kernels are generated/cuda/reduce.cu (kernels/cuda/tl_cuda_reduce.cuh).
 * As in torchlet's CPU kernels, sum and mean first convert the input to the
 * result dtype when they differ. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tl_cuda_guard.h"
#include "tl_cuda_loops.h"
#include "tl_cuda_reduce.h"
#include "tl_error.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/_log_softmax.h"
#include "ops/_log_softmax_backward_data.h"
#include "ops/_softmax.h"
#include "ops/_softmax_backward_data.h"
#include "ops/all.h"
#include "ops/amax.h"
#include "ops/amin.h"
#include "ops/any.h"
#include "ops/argmax.h"
#include "ops/argmin.h"
#include "ops/count_nonzero.h"
#include "ops/cumprod.h"
#include "ops/cumsum.h"
#include "ops/linalg_vector_norm.h"
#include "ops/mean.h"
#include "ops/narrow.h"
#include "ops/ne.h"
#include "ops/prod.h"
#include "ops/sum.h"
#include "tl_internal.h"
#include "tl_structured.h"
#include "../native/nn_common.h"
#include "../native/reduce_util.h"

_Static_assert(sizeof(tl_cuda_reduce_params) == TL_CUDA_REDUCE_PARAMS_SIZE,
               "tl_cuda_reduce_params: the C and CUDA layouts must agree");

static const char *const OP_NAMES[TL_CUDA_REDUCE_NOPS] = {
    "sum", "mean", "amax", "amin", "argmax", "argmin", "prod", "var", "std", "logsumexp", "any", "all",
    "norm", "norm", "norm", "norm", "norm", "norm", "nansum"};

enum { MIN_PER_THREAD = 4, PER_THREAD_SPLIT = 16, TARGET_BLOCKS = 1024, MAX_GRID = 65536 };

void tl_cuda_reduce_make_plan(int64_t nout, int64_t nred, tl_cuda_reduce_plan *plan) {
    unsigned threads = 32;   /* a warp, doubled while each thread would get more than MIN_PER_THREAD elements */
    while (threads < TL_CUDA_REDUCE_MAX_THREADS && (int64_t)threads * MIN_PER_THREAD < nred) threads *= 2;
    int64_t splits = 1, chunk = nred;
    /* few outputs, long rows: split rows into chunks of >= PER_THREAD_SPLIT
     * elements per thread until about TARGET_BLOCKS blocks run */
    if (nout < TARGET_BLOCKS && nred >= 2 * (int64_t)threads * PER_THREAD_SPLIT) {
        int64_t want = (TARGET_BLOCKS + nout - 1) / nout, most = nred / ((int64_t)threads * PER_THREAD_SPLIT);
        splits = want < most ? want : most;
        if (splits > 1) {
            chunk = (nred + splits - 1) / splits;
            chunk = (chunk + threads - 1) / threads * threads;
            splits = (nred + chunk - 1) / chunk;
        } else {
            splits = 1;
        }
    }
    const int64_t blocks = nout * splits;
    plan->threads = threads;
    plan->splits = (uint32_t)splits;
    plan->chunk = (uint32_t)chunk;
    plan->grid = (unsigned)(blocks < MAX_GRID ? blocks : MAX_GRID);
    unsigned ct = 32;
    while (ct < TL_CUDA_REDUCE_MAX_THREADS && ct < splits) ct *= 2;
    plan->combine_threads = ct;
    plan->combine_grid = (unsigned)(nout < MAX_GRID ? nout : MAX_GRID);
}

/* one dim of the launch: size and byte strides (input; output for kept dims) */
typedef struct rd_dim {
    int64_t size, in, out;
} rd_dim;

/* merges dim i+1 (outer) into dim i where both strides continue it; drops size 1 */
static int coalesce(rd_dim *d, int n, int with_out) {
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (d[i].size == 1) continue;
        if (m > 0 && d[i].in == d[m - 1].size * d[m - 1].in &&
            (!with_out || d[i].out == d[m - 1].size * d[m - 1].out)) {
            d[m - 1].size *= d[i].size;
            continue;
        }
        d[m++] = d[i];
    }
    return m;
}

/* 1 + the largest byte offset of a layout (PyTorch's 32-bit rule) */
static int64_t extent(const rd_dim *d, int n, int out, int64_t isz) {
    int64_t e = isz;
    for (int i = 0; i < n; i++) {
        const int64_t st = out ? d[i].out : d[i].in;
        e += (d[i].size - 1) * (st < 0 ? -st : st);
    }
    return e;
}

static int launch(const tl_cuda_reduce_kernels *k, tl_cuda_reduce_params *p, const tl_cuda_reduce_plan *plan,
                  const tl_tensor *x) {
    void *args[1] = {p};
    const unsigned grid[3] = {plan->grid, 1, 1}, block[3] = {plan->threads, 1, 1};
    if (plan->splits == 1) return tl_cuda_launch(k->rows, grid, block, 0, args);
    /* the partials: from the input's allocator (the caching allocator on a
     * device; freed after queueing pass 2, stream-ordered as PyTorch's) */
    const int64_t nbytes = (int64_t)p->nout * plan->splits * k->acc_bytes;
    tl_tensor *ws = tl_empty(1, &nbytes, TL_UINT8, tl_tensor_device(x));
    if (!ws) return -1;
    p->partial = (uint64_t)(uintptr_t)tl__data(ws);
    const unsigned grid2[3] = {plan->combine_grid, 1, 1}, block2[3] = {plan->combine_threads, 1, 1};
    int rc = tl_cuda_launch(k->rows, grid, block, 0, args);
    if (rc == 0) rc = tl_cuda_launch(k->combine, grid2, block2, 0, args);
    tl_tensor_release(ws);
    return rc;
}

/* the launch's struct for reducing the dims in mask of x into out (out: x's
 * shape with those dims removed or kept as 1, or x's own shape for softmax,
 * whose one reduced dim's output stride goes to red_out_stride); 1 when
 * there is nothing to launch; with may_split, when offsets exceed 32 bits:
 * 2 when the kept dims are to be split (each output's reduced elements fit,
 * or the kept dims do not), 3 when the reduced dims are */
static int make_params_ex(const char *name, const tl_tensor *x, uint64_t mask, const tl_tensor *out,
                          tl_cuda_reduce_params *p, int may_split) {
    if (tl_tensor_numel(out) == 0) return 1;
    int64_t nout = 1;   /* the kept dims' combinations (softmax's out has every element of x) */
    const tl_dtype dt = tl_tensor_dtype(x);
    const int64_t nd = tl_tensor_ndim(x), isz = tl__itemsize(dt), osz = tl__itemsize(tl_tensor_dtype(out));
    const int keepdim = tl_tensor_ndim(out) == nd;
    rd_dim kept[TL_RD_MAXD], red[TL_RD_MAXD];
    int nk = 0, nr = 0;
    int64_t nred = 1;
    /* innermost first; an output dim is the input dim (keepdim) or the kept dims' count */
    int64_t okept = keepdim ? 0 : nd - __builtin_popcountll(mask);
    for (int64_t d = nd - 1; d >= 0; d--) {
        const int64_t size = x->sizes[d], in = x->strides[d] * isz;
        if (mask >> d & 1) {
            red[nr++] = (rd_dim){size, in, keepdim ? out->strides[d] * osz : 0};
            nred *= size;
        } else {
            const int64_t od = keepdim ? d : --okept;
            kept[nk++] = (rd_dim){size, in, out->strides[od] * osz};
            nout *= size;
        }
    }
    nk = coalesce(kept, nk, 1);
    nr = nred == 0 ? 0 : coalesce(red, nr, 0);   /* nothing to reduce: no divisor of a size 0 */
    rd_dim all[2 * TL_RD_MAXD];
    memcpy(all, kept, sizeof(rd_dim) * (size_t)nk);
    memcpy(all + nk, red, sizeof(rd_dim) * (size_t)nr);
    if (nk > TL_CUDA_REDUCE_MAX_DIMS || nr > TL_CUDA_REDUCE_MAX_DIMS)
        return tl_set_error(TL_ERR_RUNTIME, "%s on CUDA: more than %d kept or reduced dims after merging", name,
                            TL_CUDA_REDUCE_MAX_DIMS);
    const int64_t lim = tl_cuda_index_limit();
    const int red_fits = nred <= lim && extent(red, nr, 0, isz) <= lim &&
                         !(nr == 1 && (nred - 1) * red[0].out + osz > lim);
    const int kept_fits = nout <= lim && extent(kept, nk, 0, isz) <= lim && extent(kept, nk, 1, osz) <= lim;
    if (!red_fits || nout > lim || extent(all, nk + nr, 0, isz) > lim || extent(kept, nk, 1, osz) > lim) {
        /* the caller splits the kept dims (first, until they fit), then the reduced ones */
        if (may_split && (red_fits || (!kept_fits && nout > 1))) return 2;
        if (may_split && kept_fits) return 3;
        return tl_set_error(TL_ERR_RUNTIME, "%s on CUDA: %s exceed 32 bits are not supported", name,
                            red_fits ? "tensors whose elements or byte offsets"
                                     : "reductions whose reduced elements per output or their byte offsets");
    }
    memset(p, 0, sizeof *p);
    p->in = (uint64_t)(uintptr_t)tl__data(x);
    p->out = (uint64_t)(uintptr_t)tl__data(out);
    p->factor = 1.0 / (double)nred;   /* 0 elements: inf, and the mean 0 * inf = NaN as PyTorch's */
    p->nout = (uint32_t)nout;
    p->nred = (uint32_t)nred;
    p->out_ndim = (uint32_t)nk;
    p->red_ndim = (uint32_t)nr;
    for (int i = 0; i < nk; i++) {
        p->out_sizes[i] = (uint32_t)kept[i].size;
        tl_cuda_int_divider(p->out_sizes[i], &p->out_magic[i], &p->out_shift[i]);
        p->out_in_stride[i] = (int32_t)kept[i].in;
        p->out_out_stride[i] = (int32_t)kept[i].out;
    }
    for (int i = 0; i < nr; i++) {
        p->red_sizes[i] = (uint32_t)red[i].size;
        tl_cuda_int_divider(p->red_sizes[i], &p->red_magic[i], &p->red_shift[i]);
        p->red_stride[i] = (int32_t)red[i].in;
    }
    p->red_out_stride = nr == 1 ? (int32_t)red[0].out : 0;
    return 0;
}

static int make_params(const char *name, const tl_tensor *x, uint64_t mask, const tl_tensor *out,
                       tl_cuda_reduce_params *p) {
    return make_params_ex(name, x, mask, out, p, 0);
}

int tl_cuda_reduce_use_cols(const tl_cuda_reduce_params *p) {
    if (p->out_ndim == 0 || p->red_ndim == 0 || p->nout < TL_CUDA_REDUCE_COLS_MIN_OUT) return 0;
    const int64_t kept = p->out_in_stride[0], red = p->red_stride[0];
    return (kept < 0 ? -kept : kept) < (red < 0 ? -red : red);
}

enum { COLS_THREADS = 256 };

static int run_launch(int op, const tl_tensor *x, uint64_t mask, double scalar, tl_tensor *out, tl_tensor *out2);

/* PyTorch's with_32bit_indexing for a reduction: halves the kept dim of the
 * largest byte extent (in x or the outputs) and reduces each half with its
 * own pointers; the reduced dims are whole in every piece, so the halves
 * are independent (no accumulation across pieces) */
static int split_kept(int op, const tl_tensor *x, uint64_t mask, double scalar, tl_tensor *out, tl_tensor *out2) {
    const int64_t nd = tl_tensor_ndim(x), isz = tl__itemsize(tl_tensor_dtype(x));
    const int64_t osz = tl__itemsize(tl_tensor_dtype(out)), keepdim = tl_tensor_ndim(out) == nd;
    int64_t best = -1, best_ext = -1, best_od = 0;
    for (int64_t d = 0, od = 0; d < nd; d++) {
        if (mask >> d & 1) {
            od += keepdim;
            continue;
        }
        const int64_t ext = (x->sizes[d] - 1) * llabs(x->strides[d]) * isz,
                      oext = (x->sizes[d] - 1) * llabs(out->strides[od]) * osz;
        const int64_t e = ext > oext ? ext : oext;
        if (x->sizes[d] > 1 && e > best_ext) {
            best = d;
            best_ext = e;
            best_od = od;
        }
        od++;
    }
    if (best < 0)
        return tl_set_error(TL_ERR_RUNTIME, "%s on CUDA: no kept dim to split", OP_NAMES[op]);
    const int64_t n = x->sizes[best], half = n / 2;
    int rc = 0;
    for (int piece = 0; piece < 2 && rc == 0; piece++) {
        const int64_t start = piece ? half : 0, len = piece ? n - half : half;
        tl_tensor *xs = tl_ops_narrow((tl_tensor *)x, best, start, len);
        tl_tensor *os = xs ? tl_ops_narrow(out, best_od, start, len) : NULL;
        tl_tensor *o2 = os && out2 ? tl_ops_narrow(out2, best_od, start, len) : NULL;
        rc = !os || (out2 && !o2) ? -1 : run_launch(op, xs, mask, scalar, os, o2);
        tl_tensor_release(xs);
        tl_tensor_release(os);
        tl_tensor_release(o2);
    }
    return rc;
}

/* a piece of a reduction split along its reduced dims: its elements start
 * at index k_base of each output's row */
typedef struct rd_piece {
    tl_tensor *x;
    int64_t k_base;
} rd_piece;

typedef struct rd_pieces {
    rd_piece *v;
    int n, cap;
} rd_pieces;

/* x halved along its outermost reduced dim of size > 1 (the slowest in
 * argmax's row-major index), recursively, until each piece's reduced
 * elements fit 32-bit offsets */
static int collect_pieces(const char *name, tl_tensor *x, uint64_t mask, const tl_tensor *out, int64_t k_base,
                          rd_pieces *ps) {
    tl_cuda_reduce_params p;
    const int rc = make_params_ex(name, x, mask, out, &p, 1);
    if (rc == 0) {
        if (ps->n == ps->cap) {
            const int cap = ps->cap ? 2 * ps->cap : 16;
            rd_piece *v = realloc(ps->v, sizeof(rd_piece) * (size_t)cap);
            if (!v) return tl_set_error(TL_ERR_RUNTIME, "out of memory");
            ps->v = v;
            ps->cap = cap;
        }
        tl_tensor_retain(x);
        ps->v[ps->n++] = (rd_piece){x, k_base};
        return 0;
    }
    if (rc != 3)
        return rc < 0 ? -1 : tl_set_error(TL_ERR_RUNTIME, "%s on CUDA: tensors whose kept and reduced dims both take "
                                          "offsets past 32 bits are not supported", name);
    const int64_t nd = tl_tensor_ndim(x);
    int64_t d = 0, inner = 1;
    while (d < nd && !((mask >> d & 1) && x->sizes[d] > 1)) d++;
    for (int64_t e = d + 1; e < nd; e++)
        if (mask >> e & 1) inner *= x->sizes[e];
    const int64_t n = x->sizes[d], half = n / 2;
    int r = 0;
    for (int piece = 0; piece < 2 && r == 0; piece++) {
        const int64_t start = piece ? half : 0;
        tl_tensor *xs = tl_ops_narrow(x, d, start, piece ? n - half : half);
        r = xs ? collect_pieces(name, xs, mask, out, k_base + start * inner, ps) : -1;
        tl_tensor_release(xs);
    }
    return r;
}

/* PyTorch's with_32bit_indexing along reduced dims (its sub-iterators that
 * accumulate): each piece's pass 1 writes its partial accumulators into one
 * buffer, [output][the pieces' parts in order], and one pass 2 combines
 * every output's parts and stores */
static int split_reduced(const tl_cuda_reduce_kernels *k, int op, const tl_tensor *x, uint64_t mask, double scalar,
                         tl_tensor *out, tl_tensor *out2) {
    rd_pieces ps = {NULL, 0, 0};
    int rc = collect_pieces(OP_NAMES[op], (tl_tensor *)x, mask, out, 0, &ps);
    int64_t nred = 1, total = 0;
    for (int64_t d = 0; d < tl_tensor_ndim(x); d++)
        if (mask >> d & 1) nred *= x->sizes[d];
    tl_cuda_reduce_params p;   /* the pieces' outputs are x's (non-empty), so make_params_ex gives 0 or -1 */
    memset(&p, 0, sizeof p);
    tl_cuda_reduce_plan *plans = rc ? NULL : malloc(sizeof(tl_cuda_reduce_plan) * (size_t)ps.n);
    if (!rc && !plans) rc = tl_set_error(TL_ERR_RUNTIME, "out of memory");
    for (int i = 0; !rc && i < ps.n; i++) {
        if (make_params_ex(OP_NAMES[op], ps.v[i].x, mask, out, &p, 0)) rc = -1;
        tl_cuda_reduce_make_plan(p.nout, p.nred, &plans[i]);
        total += plans[i].splits;
    }
    if (!rc && (uint64_t)total * p.nout > INT32_MAX)
        rc = tl_set_error(TL_ERR_RUNTIME, "%s on CUDA: too many partial results", OP_NAMES[op]);
    const int64_t nbytes = rc ? 0 : (int64_t)p.nout * total * k->acc_bytes;
    tl_tensor *ws = rc ? NULL : tl_empty(1, &nbytes, TL_UINT8, tl_tensor_device(x));
    if (!rc && !ws) rc = -1;
    void *args[1] = {&p};
    for (int64_t i = 0, base = 0; !rc && i < ps.n; base += plans[i].splits, i++) {
        if (make_params_ex(OP_NAMES[op], ps.v[i].x, mask, out, &p, 0)) {
            rc = -1;
            break;
        }
        p.factor = 1.0 / (double)nred;
        p.scalar = scalar;
        p.out2 = out2 ? (uint64_t)(uintptr_t)tl__data(out2) : 0;
        p.splits = plans[i].splits;
        p.chunk = plans[i].chunk;
        p.partial = (uint64_t)(uintptr_t)tl__data(ws) + (uint64_t)(base * k->acc_bytes);
        p.partial_stride = (uint32_t)total;
        p.k_base = ps.v[i].k_base;
        const unsigned grid[3] = {plans[i].grid, 1, 1}, block[3] = {plans[i].threads, 1, 1};
        rc = tl_cuda_launch(k->rows, grid, block, 0, args);
    }
    if (!rc) {   /* p keeps the outputs' layout, the same in every piece */
        p.splits = (uint32_t)total;
        p.partial = (uint64_t)(uintptr_t)tl__data(ws);
        p.partial_stride = 0;
        p.k_base = 0;
        unsigned ct = 32;
        while (ct < TL_CUDA_REDUCE_MAX_THREADS && ct < total) ct *= 2;
        const unsigned grid[3] = {p.nout < MAX_GRID ? p.nout : MAX_GRID, 1, 1}, block[3] = {ct, 1, 1};
        rc = tl_cuda_launch(k->combine, grid, block, 0, args);
    }
    tl_tensor_release(ws);
    for (int i = 0; i < ps.n; i++) tl_tensor_release(ps.v[i].x);
    free(ps.v);
    free(plans);
    return rc < 0 ? -1 : 0;
}

/* one reduction's launch: out (and out2, with out's element strides) =
 * op over mask of x, with the operator's scalar */
static int run_launch(int op, const tl_tensor *x, uint64_t mask, double scalar, tl_tensor *out, tl_tensor *out2) {
    const tl_dtype dt = tl_tensor_dtype(x);
    const tl_cuda_reduce_kernels *k = &tl_cuda_reduce_table[op][dt];
    if (!k->rows)
        return tl_set_error(TL_ERR_RUNTIME, "\"%s_cuda\" not implemented for '%s'", OP_NAMES[op],
                            tl_dtype_scalar_name(dt));
    tl_cuda_reduce_params p;
    const int rc = make_params_ex(OP_NAMES[op], x, mask, out, &p, 1);
    if (rc == 2) return split_kept(op, x, mask, scalar, out, out2);
    if (rc == 3) return split_reduced(k, op, x, mask, scalar, out, out2);
    if (rc != 0) return rc < 0 ? -1 : 0;
    p.scalar = scalar;
    p.out2 = out2 ? (uint64_t)(uintptr_t)tl__data(out2) : 0;
    if (tl_cuda_reduce_use_cols(&p)) {
        const uint32_t blocks = (p.nout + COLS_THREADS - 1) / COLS_THREADS;
        const unsigned grid[3] = {blocks < MAX_GRID ? blocks : MAX_GRID, 1, 1}, block[3] = {COLS_THREADS, 1, 1};
        void *args[1] = {&p};
        return tl_cuda_launch(k->cols, grid, block, 0, args);
    }
    tl_cuda_reduce_plan plan;
    tl_cuda_reduce_make_plan(p.nout, p.nred, &plan);
    p.splits = plan.splits;
    p.chunk = plan.chunk;
    return launch(k, &p, &plan, x);
}

static int run_on_device(int op, const tl_tensor *x, uint64_t mask, tl_tensor *out) {
    return run_launch(op, x, mask, 0, out, NULL);
}

/* out2 must have out's element strides: otherwise both are computed into
 * contiguous temporaries and copied back */
static int run_pair(int op, const tl_tensor *x, uint64_t mask, double scalar, tl_tensor *out, tl_tensor *out2) {
    const int64_t nd = tl_tensor_ndim(out);
    if (!out2 || (tl_tensor_ndim(out2) == nd &&
                  memcmp(out->strides, out2->strides, sizeof(int64_t) * (size_t)nd) == 0))
        return run_launch(op, x, mask, scalar, out, out2);
    const tl_device_type dev = tl_tensor_device(x);
    tl_tensor *o = tl_empty(nd, tl_tensor_sizes(out), tl_tensor_dtype(out), dev);
    tl_tensor *o2 = o ? tl_empty(nd, tl_tensor_sizes(out), tl_tensor_dtype(out2), dev) : NULL;
    int rc = o2 ? run_launch(op, x, mask, scalar, o, o2) : -1;
    if (rc == 0) rc = tl_copy_(out, o);
    if (rc == 0) rc = tl_copy_(out2, o2);
    tl_tensor_release(o);
    tl_tensor_release(o2);
    return rc;
}

int tl_cuda_reduce_into(int op, const tl_tensor *self, int convert, uint64_t mask, double scalar, tl_tensor *out,
                        tl_tensor *out2) {
    tl_tensor *x = convert ? tl_to_dtype(self, tl_tensor_dtype(out), 0) : NULL;
    if (convert && !x) return -1;
    const tl_tensor *in = convert ? x : self;
    int prev, rc = tl_cuda_enter_device(in, &prev);
    if (rc == 0) rc = tl_cuda_leave_device(prev, run_pair(op, in, mask, scalar, out, out2));
    tl_tensor_release(x);
    return rc < 0 ? -1 : 0;
}

int tl_cuda_var_into(const tl_tensor *self, uint64_t mask, double correction, int take_sqrt, tl_tensor *var,
                     tl_tensor *mean) {
    const int op = take_sqrt ? TL_CUDA_REDUCE_STD : TL_CUDA_REDUCE_VAR;
    return tl_cuda_reduce_into(op, self, 1, mask, correction, var, mean);
}

int tl_cuda_prod_into(const tl_tensor *self, uint64_t mask, tl_tensor *out) {
    return tl_cuda_reduce_into(TL_CUDA_REDUCE_PROD, self, 1, mask, 0, out, NULL);
}

int tl_cuda_nansum_into(const tl_tensor *self, uint64_t mask, tl_tensor *out) {
    return tl_cuda_reduce_into(TL_CUDA_REDUCE_NANSUM, self, 1, mask, 0, out, NULL);
}

/* count_nonzero.dim_IntList (yaml: CUDA: count_nonzero_cuda, PyTorch's
 * kernel: (self != 0).sum(dim) as int64) */
tl_tensor *tl_native_count_nonzero_cuda(tl_keyset ks, tl_tensor *self, const int64_t *dim, int64_t dim_len) {
    (void)ks;
    tl_tensor *ne = tl_ops_ne_Scalar(self, tl_scalar_from_int(0));
    tl_tensor *r = ne ? tl_ops_sum_dim_IntList(ne, dim, dim_len, false, TL_INT64) : NULL;
    tl_tensor_release(ne);
    return r;
}

/* values alone: amax / amin; indices (with the values into out2): argmax /
 * argmin, whose (value, index) pairs are PyTorch's MaxOps / MinOps */
int tl_cuda_minmax_into(const tl_tensor *self, uint64_t mask, int is_max, tl_tensor *vals, tl_tensor *idx) {
    if (!idx)
        return tl_cuda_reduce_into(is_max ? TL_CUDA_REDUCE_AMAX : TL_CUDA_REDUCE_AMIN, self, 0, mask, 0, vals, NULL);
    return tl_cuda_reduce_into(is_max ? TL_CUDA_REDUCE_ARGMAX : TL_CUDA_REDUCE_ARGMIN, self, 0, mask, 0, idx, vals);
}

/* the row maxima (amax, stored as out's dtype as PyTorch's) into out, then
 * the logsumexp kernels read them back from there */
int tl_cuda_logsumexp_into(const tl_tensor *self, uint64_t mask, tl_tensor *out) {
    tl_tensor *x = tl_to_dtype(self, tl_tensor_dtype(out), 0);
    if (!x) return -1;
    int prev, rc = tl_cuda_enter_device(x, &prev);
    if (rc == 0) {
        rc = run_launch(TL_CUDA_REDUCE_AMAX, x, mask, 0, out, NULL);
        if (rc == 0) rc = run_launch(TL_CUDA_REDUCE_LOGSUMEXP, x, mask, 0, out, NULL);
        rc = tl_cuda_leave_device(prev, rc);
    }
    tl_tensor_release(x);
    return rc < 0 ? -1 : 0;
}

int tl_cuda_launch_rows(tl_cuda_function *f, tl_cuda_reduce_params *p) {
    tl_cuda_reduce_plan plan;
    tl_cuda_reduce_make_plan(p->nout, p->nred, &plan);
    p->splits = 1;
    p->chunk = p->nred;
    void *args[1] = {p};
    const unsigned grid[3] = {p->nout < 65536 ? p->nout : 65536, 1, 1}, block[3] = {plan.threads, 1, 1};
    return tl_cuda_launch(f, grid, block, 0, args);
}

/* softmax / log_softmax of x over dim d into out (x's shape): one block per row */
static int softmax_on_device(int log, const tl_tensor *x, int64_t d, tl_tensor *out) {
    tl_cuda_function *f = tl_cuda_softmax_table[log][tl_tensor_dtype(x)];
    if (!f)
        return tl_set_error(TL_ERR_RUNTIME, "\"host_softmax\" not implemented for '%s'",
                            tl_dtype_scalar_name(tl_tensor_dtype(x)));
    tl_cuda_reduce_params p;
    const int rc = make_params(log ? "log_softmax" : "softmax", x, tl_tensor_ndim(x) ? 1ull << d : 0, out, &p);
    if (rc != 0) return rc < 0 ? -1 : 0;
    return tl_cuda_launch_rows(f, &p);
}

/* softmax's / log_softmax's backward of y over dim d into out: grad and y
 * are read with one layout (made contiguous when their strides differ) */
static int softmax_bwd_on_device(int log, const tl_tensor *grad, const tl_tensor *y, int64_t d, tl_tensor *out) {
    const tl_dtype dt = tl_tensor_dtype(grad);
    tl_cuda_function *f = tl_cuda_softmax_bwd_table[log][dt];
    if (!f)
        return tl_set_error(TL_ERR_RUNTIME, "\"host_softmax_backward\" not implemented for '%s'",
                            tl_dtype_scalar_name(dt));
    const int64_t nd = tl_tensor_ndim(grad);
    const int same = memcmp(grad->strides, y->strides, sizeof(int64_t) * (size_t)nd) == 0;
    tl_tensor *g = same ? NULL : tl_contiguous(grad), *yc = same ? NULL : tl_contiguous(y);
    if (!same && (!g || !yc)) {
        tl_tensor_release(g);
        tl_tensor_release(yc);
        return -1;
    }
    tl_cuda_reduce_params p;
    int rc = make_params(log ? "log_softmax_backward" : "softmax_backward", same ? grad : g, nd ? 1ull << d : 0,
                         out, &p);
    if (rc == 0) {
        p.in2 = (uint64_t)(uintptr_t)tl__data(same ? y : yc);
        rc = tl_cuda_launch_rows(f, &p);
    }
    tl_tensor_release(g);
    tl_tensor_release(yc);
    return rc < 0 ? -1 : 0;
}

/* the device guard (tl_cuda_guard.h) in the expression form the kernels' call sites use */
int tl_cuda_enter_device(const tl_tensor *x, int *prev) {
    tl_cuda_guard g;
    const int rc = tl_cuda_guard_enter(&g, tl_cuda_device_of(x));
    *prev = g.prev;
    return rc;
}

int tl_cuda_leave_device(int prev, int rc) {
    tl_cuda_guard g = {prev};
    tl_cuda_guard_exit(&g);
    return rc;
}

/* runs fn on x's device */
static int on_device_of(const tl_tensor *x, int (*fn)(int, const tl_tensor *, uint64_t, tl_tensor *), int a,
                        uint64_t b, tl_tensor *out) {
    int prev;
    if (tl_cuda_enter_device(x, &prev)) return -1;
    return tl_cuda_leave_device(prev, fn(a, x, b, out));
}

static int softmax_fn(int log, const tl_tensor *x, uint64_t d, tl_tensor *out) {
    return softmax_on_device(log, x, (int64_t)d, out);
}

int tl_cuda_softmax_run(int log, const tl_tensor *x, int64_t dim, tl_tensor *out) {
    return on_device_of(x, softmax_fn, log, (uint64_t)dim, out);
}

int tl_cuda_softmax_backward_run(int log, const tl_tensor *grad, const tl_tensor *y, int64_t dim, tl_tensor *out) {
    int prev;
    if (tl_cuda_enter_device(grad, &prev)) return -1;
    return tl_cuda_leave_device(prev, softmax_bwd_on_device(log, grad, y, dim, out));
}

int tl_cuda_reduce_run(int op, const tl_tensor *x, uint64_t mask, tl_tensor *out) {
    return on_device_of(x, run_on_device, op, mask, out);
}

/* ---- the structured impls (yaml: CPU, CUDA: <kernel>) */

/* sum / mean: over the input converted to the result dtype */
static int sumlike(int op, tl_tensor *self, const int64_t *dim, int64_t dim_len, tl_tensor *out) {
    uint64_t mask;
    if (tl_rd_mask(self, dim, dim_len, &mask)) return -1;
    tl_tensor *x = tl_to_dtype(self, tl_tensor_dtype(out), 0);
    if (!x) return -1;
    const int rc = tl_cuda_reduce_run(op, x, mask, out);
    tl_tensor_release(x);
    return rc;
}

int tl_impl_sum_out_cuda(tl_structured *s, tl_tensor *self, const int64_t *dim, int64_t dim_len, bool keepdim,
                         tl_dtype dtype, tl_tensor *out) {
    (void)s; (void)keepdim; (void)dtype;
    return sumlike(TL_CUDA_REDUCE_SUM, self, dim, dim_len, out);
}

int tl_impl_mean_out_cuda(tl_structured *s, tl_tensor *self, const int64_t *dim, int64_t dim_len, bool keepdim,
                          tl_dtype dtype, tl_tensor *out) {
    (void)s; (void)keepdim; (void)dtype;
    return sumlike(TL_CUDA_REDUCE_MEAN, self, dim, dim_len, out);
}

/* cumsum / cumprod over dim of the input converted to out's dtype (as the
 * CPU kernels): one block per row, the scan's chunks carried along it */
static int scan(int op, tl_tensor *self, int64_t dim, tl_tensor *out) {
    const int64_t nd = tl_tensor_ndim(self), d = tl__wrap_dim(dim, nd, 1);
    if (d < 0) return -1;
    const tl_dtype rt = tl_tensor_dtype(out);
    tl_cuda_function *f = tl_cuda_scan_table[op][rt];
    if (!f)
        return tl_set_error(TL_ERR_RUNTIME, "\"%s_cuda\" not implemented for '%s'", op ? "cumprod" : "cumsum",
                            tl_dtype_scalar_name(rt));
    tl_tensor *x = tl_to_dtype(self, rt, 0);
    if (!x) return -1;
    int prev, rc = tl_cuda_enter_device(x, &prev);
    if (rc == 0) {
        tl_cuda_reduce_params p;
        rc = make_params(op ? "cumprod" : "cumsum", x, nd ? 1ull << d : 0, out, &p);
        rc = tl_cuda_leave_device(prev, rc != 0 ? (rc < 0 ? -1 : 0) : tl_cuda_launch_rows(f, &p));
    }
    tl_tensor_release(x);
    return rc < 0 ? -1 : 0;
}

int tl_impl_cumsum_out_cuda(tl_structured *s, tl_tensor *self, int64_t dim, tl_dtype dtype, tl_tensor *out) {
    (void)s; (void)dtype;
    return scan(TL_CUDA_SCAN_SUM, self, dim, out);
}

int tl_impl_cumprod_out_cuda(tl_structured *s, tl_tensor *self, int64_t dim, tl_dtype dtype, tl_tensor *out) {
    (void)s; (void)dtype;
    return scan(TL_CUDA_SCAN_PROD, self, dim, out);
}

/* prod over one dim (the whole-tensor `prod` is the CPU's only) */
int tl_impl_prod_out_cuda(tl_structured *s, tl_tensor *self, int64_t dim, bool keepdim, tl_dtype dtype,
                          tl_tensor *out) {
    (void)s; (void)keepdim; (void)dtype;
    return sumlike(TL_CUDA_REDUCE_PROD, self, &dim, 1, out);
}

static int extreme(int op, tl_tensor *self, const int64_t *dim, int64_t dim_len, tl_tensor *out) {
    uint64_t mask;
    if (tl_rd_mask(self, dim, dim_len, &mask)) return -1;
    return tl_cuda_reduce_run(op, self, mask, out);
}

int tl_impl_amax_out_cuda(tl_structured *s, tl_tensor *self, const int64_t *dim, int64_t dim_len, bool keepdim,
                          tl_tensor *out) {
    (void)s; (void)keepdim;
    return extreme(TL_CUDA_REDUCE_AMAX, self, dim, dim_len, out);
}

int tl_impl_amin_out_cuda(tl_structured *s, tl_tensor *self, const int64_t *dim, int64_t dim_len, bool keepdim,
                          tl_tensor *out) {
    (void)s; (void)keepdim;
    return extreme(TL_CUDA_REDUCE_AMIN, self, dim, dim_len, out);
}

/* argmax / argmin: one dim, or every dim (the flattened index) */
static int arg(int op, tl_tensor *self, int64_t dim, bool dim_has, tl_tensor *out) {
    uint64_t mask;
    if (tl_rd_arg_mask(self, dim, dim_has, &mask)) return -1;
    return tl_cuda_reduce_run(op, self, mask, out);
}

int tl_impl_argmax_out_cuda(tl_structured *s, tl_tensor *self, int64_t dim, bool dim_has, bool keepdim,
                            tl_tensor *out) {
    (void)s; (void)keepdim;
    return arg(TL_CUDA_REDUCE_ARGMAX, self, dim, dim_has, out);
}

int tl_impl_argmin_out_cuda(tl_structured *s, tl_tensor *self, int64_t dim, bool dim_has, bool keepdim,
                            tl_tensor *out) {
    (void)s; (void)keepdim;
    return arg(TL_CUDA_REDUCE_ARGMIN, self, dim, dim_has, out);
}

/* all / any (yaml: CPU, CUDA: all_all_out, all_out, all_dims_out and
 * any's; the CPU's meta functions: a bool result, uint8 for a uint8 input
 * or out=): 0 / 1 per output; `dim=[]` of the dims overloads reduces
 * nothing, None every dim */
static int logical(int op, tl_tensor *self, const int64_t *dim, int64_t dim_len, int none_is_all, tl_tensor *out) {
    uint64_t mask = 0;
    if ((none_is_all || !dim || dim_len) && tl_rd_mask(self, dim, dim_len, &mask)) return -1;
    return tl_cuda_reduce_run(op, self, mask, out);
}

int tl_impl_all_all_out_cuda(tl_structured *s, tl_tensor *self, tl_tensor *out) {
    (void)s;
    return logical(TL_CUDA_REDUCE_ALL, self, NULL, 0, 1, out);
}

int tl_impl_all_out_cuda(tl_structured *s, tl_tensor *self, int64_t dim, bool keepdim, tl_tensor *out) {
    (void)s; (void)keepdim;
    return logical(TL_CUDA_REDUCE_ALL, self, &dim, 1, 1, out);
}

int tl_impl_all_dims_out_cuda(tl_structured *s, tl_tensor *self, const int64_t *dim, int64_t dim_len, bool keepdim,
                              tl_tensor *out) {
    (void)s; (void)keepdim;
    return logical(TL_CUDA_REDUCE_ALL, self, dim, dim_len, 0, out);
}

int tl_impl_any_all_out_cuda(tl_structured *s, tl_tensor *self, tl_tensor *out) {
    (void)s;
    return logical(TL_CUDA_REDUCE_ANY, self, NULL, 0, 1, out);
}

int tl_impl_any_out_cuda(tl_structured *s, tl_tensor *self, int64_t dim, bool keepdim, tl_tensor *out) {
    (void)s; (void)keepdim;
    return logical(TL_CUDA_REDUCE_ANY, self, &dim, 1, 1, out);
}

int tl_impl_any_dims_out_cuda(tl_structured *s, tl_tensor *self, const int64_t *dim, int64_t dim_len, bool keepdim,
                              tl_tensor *out) {
    (void)s; (void)keepdim;
    return logical(TL_CUDA_REDUCE_ANY, self, dim, dim_len, 0, out);
}

/* linalg_vector_norm (yaml: CPU, CUDA: linalg_vector_norm_out; the CPU's
 * meta function): over self converted to the result dtype (as PyTorch and
 * the CPU kernel), accumulated in float for float16 / bfloat16 / float32 */
int tl_impl_linalg_vector_norm_out_cuda(tl_structured *s, tl_tensor *self, tl_scalar ord, const int64_t *dim,
                                        int64_t dim_len, bool keepdim, tl_dtype dtype, tl_tensor *out) {
    (void)s; (void)keepdim; (void)dtype;
    uint64_t mask;
    if (tl_rd_mask(self, dim, dim_len, &mask)) return -1;
    const double p = ord.kind == TL_SCALAR_DOUBLE ? ord.d : (double)ord.i;
    const int op = p == 2 ? TL_CUDA_REDUCE_NORM2 : p == 1 ? TL_CUDA_REDUCE_NORM1
                 : p == INFINITY ? TL_CUDA_REDUCE_NORM_INF : p == -INFINITY ? TL_CUDA_REDUCE_NORM_NEGINF
                 : p == 0 ? TL_CUDA_REDUCE_NORM0 : TL_CUDA_REDUCE_NORM_P;
    return tl_cuda_reduce_into(op, self, 1, mask, p, out, NULL);
}

/* softmax / log_softmax (yaml: CUDA: softmax_cuda_out / log_softmax_cuda_out;
 * meta: the CPU's, kernels/native/nn_ops.c, output of self's dtype) */
static int softmax_impl(int log, tl_tensor *self, int64_t dim, bool half_to_float, tl_tensor *out) {
    const int64_t nd = tl_tensor_ndim(self);
    const int64_t d = tl__wrap_dim(dim, nd, 1);
    if (d < 0) return -1;
    if (half_to_float)   /* the meta function gives self's dtype: the float output is not made */
        return tl_set_error(TL_ERR_RUNTIME, "softmax with half to float conversion is not supported on CUDA");
    return tl_cuda_softmax_run(log, self, nd ? d : 0, out);
}

int tl_impl_softmax_cuda_out(tl_structured *s, tl_tensor *self, int64_t dim, bool half_to_float, tl_tensor *out) {
    (void)s;
    return softmax_impl(0, self, dim, half_to_float, out);
}

int tl_impl_log_softmax_cuda_out(tl_structured *s, tl_tensor *self, int64_t dim, bool half_to_float,
                                 tl_tensor *out) {
    (void)s;
    return softmax_impl(1, self, dim, half_to_float, out);
}

/* softmax / log_softmax backward (yaml: CUDA: softmax_backward_cuda_out /
 * log_softmax_backward_cuda_out; meta: the CPU's). As the CPU kernel, the
 * gradient, the output and grad_input share one dtype. */
static int softmax_bwd_impl(int log, tl_tensor *grad, tl_tensor *output, int64_t dim, tl_tensor *gi) {
    const int64_t nd = tl_tensor_ndim(output);
    const int64_t d = tl__wrap_dim(dim, nd, 1);
    if (d < 0) return -1;
    if (softmax_bwd_check_dtypes(grad, output, gi)) return -1;
    return tl_cuda_softmax_backward_run(log, grad, output, nd ? d : 0, gi);
}

int tl_impl_softmax_backward_cuda_out(tl_structured *s, tl_tensor *grad_output, tl_tensor *output, int64_t dim,
                                      tl_dtype input_dtype, tl_tensor *grad_input) {
    (void)s; (void)input_dtype;
    return softmax_bwd_impl(0, grad_output, output, dim, grad_input);
}

int tl_impl_log_softmax_backward_cuda_out(tl_structured *s, tl_tensor *grad_output, tl_tensor *output, int64_t dim,
                                          tl_dtype input_dtype, tl_tensor *out) {
    (void)s; (void)input_dtype;
    return softmax_bwd_impl(1, grad_output, output, dim, out);
}
