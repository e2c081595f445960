/* Row selections (aten/src/ATen/native/Sorting.cpp, ReduceOps.cpp,
 * TensorCompare.cpp): kthvalue, median / nanmedian (all + dim), mode,
 * cummax / cummin (+ cummaxmin_backward), aminmax.
 *
 * Each selection along `dim` works on a contiguous copy with dim moved last,
 * in a work dtype that orders every input dtype exactly (float64 for the
 * floating dtypes, int64 for the others). A row yields the index of the
 * chosen element; the values are read from the input with gather, so they
 * keep its dtype and bits. Rows run on the thread pool.
 *
 * Tie-breaking is PyTorch's CPU one: kthvalue is its quick_select_template
 * (median-of-three quickselect, NaN largest) run step for step; median /
 * nanmedian order by (value, index), so the chosen index is the stable
 * order's (median: the first NaN of a row that has one); mode sorts the
 * row as PyTorch's std::sort does (libstdc++'s introsort replayed) and picks
 * the first longest run and the last index in it. cummax / cummin take the later index on ties, and a NaN (each later NaN
 * too), as PyTorch's cummax_cummin_helper. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "missing_ops.h"
#include "complex_ops.h"
#include "tl_error.h"
#include "tl_half.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/_cummax_helper.h"
#include "ops/_cummin_helper.h"
#include "ops/amax.h"
#include "ops/amin.h"
#include "ops/aminmax.h"
#include "ops/cummax.h"
#include "ops/cummaxmin_backward.h"
#include "ops/cummin.h"
#include "ops/gather.h"
#include "ops/kthvalue.h"
#include "ops/median.h"
#include "ops/mode.h"
#include "ops/nanmedian.h"
#include "ops/scatter_add.h"
#include "tl_structured.h"
#include "tl_tensor.h"

/* ------------------------------------------------------------ rows */

typedef enum { SEL_KTH, SEL_MEDIAN, SEL_NANMEDIAN, SEL_MODE, SEL_CUMMAX, SEL_CUMMIN } sel_kind;

typedef struct {
    const char *data;   /* rows of n work-dtype elements */
    bool fl;            /* float64 rows (else int64) */
    int64_t n, k;       /* row length; kthvalue's k - 1 */
    sel_kind kind;
    int64_t *out;       /* one index per row (cummax / cummin: n per row) */
    int err;
} sel_job;

typedef struct {
    double v;
    int64_t i;
} pair_f;

typedef struct {
    int64_t v;
    int64_t i;
} pair_i;

/* PyTorch's gt_or_nan: NaN above every number */
#define GT_NAN_F(a, b) ((isnan((a).v) && !isnan((b).v)) || (a).v > (b).v)
#define GT_NAN_I(a, b) ((a).v > (b).v)
/* the (value, index) order: NaNs last, ties by index */
#define GT_IDX_F(a, b) (GT_NAN_F(a, b) || (((a).v == (b).v || (isnan((a).v) && isnan((b).v))) && (a).i > (b).i))
#define GT_IDX_I(a, b) ((a).v > (b).v || ((a).v == (b).v && (a).i > (b).i))

/* quick_select_template (aten/src/ATen/native/SortingUtils.h): leaves the
 * element of rank k at arr[k] */
#define QUICKSELECT(NAME, P, GT)                                                     \
    static void NAME(P *arr, int64_t n, int64_t k) {                                 \
        int64_t L = 0, R = n - 1;                                                    \
        for (;;) {                                                                   \
            if (R <= L) return;                                                      \
            if (R == L + 1) {                                                        \
                if (GT(arr[L], arr[R])) SWAP(P, arr[L], arr[R]);                     \
                return;                                                              \
            }                                                                        \
            const int64_t mid = L + (R - L) / 2;                                     \
            SWAP(P, arr[mid], arr[L + 1]);                                           \
            if (GT(arr[L + 1], arr[R])) SWAP(P, arr[L + 1], arr[R]);                 \
            if (GT(arr[L], arr[R])) SWAP(P, arr[L], arr[R]);                         \
            if (GT(arr[L + 1], arr[L])) SWAP(P, arr[L + 1], arr[L]);                 \
            int64_t i = L + 1, j = R;                                                \
            const P piv = arr[L];                                                    \
            for (;;) {                                                               \
                do i++;                                                              \
                while (GT(piv, arr[i]));                                             \
                do j--;                                                              \
                while (GT(arr[j], piv));                                             \
                if (j < i) break;                                                    \
                SWAP(P, arr[i], arr[j]);                                             \
            }                                                                        \
            SWAP(P, arr[L], arr[j]);                                                 \
            if (j <= k) L = i;                                                       \
            if (j >= k) R = j - 1;                                                   \
        }                                                                            \
    }

#define SWAP(P, a, b) do { P t_ = (a); (a) = (b); (b) = t_; } while (0)
QUICKSELECT(qsel_nan_f, pair_f, GT_NAN_F)
QUICKSELECT(qsel_nan_i, pair_i, GT_NAN_I)
QUICKSELECT(qsel_idx_f, pair_f, GT_IDX_F)
QUICKSELECT(qsel_idx_i, pair_i, GT_IDX_I)

/* libstdc++'s std::sort (introsort, then insertion sort) with PyTorch's mode
 * comparator `a.v < b.v` (NaN compares false): the order mode's runs and
 * index come from, equal elements included. The heap-sort fallback for an
 * exhausted depth limit is not replayed (median-of-three partitions on these
 * rows stay shallow). */
#define STD_SORT(NAME, P)                                                                \
    static void NAME##_insertion(P *a, int64_t lo, int64_t hi) {                         \
        for (int64_t i = lo + 1; i < hi; i++) {                                          \
            const P val = a[i];                                                          \
            if (val.v < a[lo].v) {                                                       \
                memmove(a + lo + 1, a + lo, (size_t)(i - lo) * sizeof *a);               \
                a[lo] = val;                                                             \
            } else {                                                                     \
                int64_t j = i;                                                           \
                for (; val.v < a[j - 1].v; j--) a[j] = a[j - 1];                         \
                a[j] = val;                                                              \
            }                                                                            \
        }                                                                                \
    }                                                                                    \
    static void NAME##_loop(P *a, int64_t lo, int64_t hi) {                              \
        while (hi - lo > 16) {                                                           \
            const int64_t mid = lo + (hi - lo) / 2, x = lo + 1, z = hi - 1;              \
            int64_t pick;                                                                \
            if (a[x].v < a[mid].v) pick = a[mid].v < a[z].v ? mid : a[x].v < a[z].v ? z : x; \
            else pick = a[x].v < a[z].v ? x : a[mid].v < a[z].v ? z : mid;               \
            SWAP(P, a[lo], a[pick]);                                                     \
            int64_t f = lo + 1, l = hi;                                                  \
            for (;;) {                                                                   \
                while (a[f].v < a[lo].v) f++;                                            \
                l--;                                                                     \
                while (a[lo].v < a[l].v) l--;                                            \
                if (!(f < l)) break;                                                     \
                SWAP(P, a[f], a[l]);                                                     \
                f++;                                                                     \
            }                                                                            \
            NAME##_loop(a, f, hi);                                                       \
            hi = f;                                                                      \
        }                                                                                \
    }                                                                                    \
    static void NAME(P *a, int64_t n) {                                                  \
        NAME##_loop(a, 0, n);                                                            \
        NAME##_insertion(a, 0, n < 16 ? n : 16);                                         \
        for (int64_t i = 16; i < n; i++) {                                               \
            const P val = a[i];                                                          \
            int64_t j = i;                                                               \
            for (; val.v < a[j - 1].v; j--) a[j] = a[j - 1];                             \
            a[j] = val;                                                                  \
        }                                                                                \
    }
STD_SORT(std_sort_f, pair_f)
STD_SORT(std_sort_i, pair_i)

/* mode of a row sorted by (value, index): the smallest most frequent value,
 * the last index of its run; each NaN is a run of its own */
#define MODE_SCAN(p, n, res)                                                   \
    do {                                                                       \
        int64_t best = 0, run = 0;                                             \
        for (int64_t i = 0; i < (n); i++) {                                    \
            run++;                                                             \
            if (i == (n) - 1 || !((p)[i].v == (p)[i + 1].v)) {                 \
                if (run > best) {                                              \
                    best = run;                                                \
                    (res) = (p)[i].i;                                          \
                }                                                              \
                run = 0;                                                       \
            }                                                                  \
        }                                                                      \
    } while (0)

/* an integer is never NaN (cummax / cummin's scans) */
#define NO_NAN(x) ((void)(x), 0)

/* the index libstdc++'s nth_element leaves first when every element is
 * equivalent (an all-NaN row of nanmedian): introselect's median-of-three
 * swap and unguarded partition, which only swap, until 3 elements remain */
static int64_t all_equivalent_first(int64_t *idx, int64_t n) {
    for (int64_t i = 0; i < n; i++) idx[i] = i;
    int64_t last = n;
    while (last > 3) {
        const int64_t mid = last / 2;
        int64_t t = idx[0]; idx[0] = idx[mid]; idx[mid] = t;
        int64_t lo = 1, hi = last;
        for (;;) {
            --hi;
            if (!(lo < hi)) break;
            t = idx[lo]; idx[lo] = idx[hi]; idx[hi] = t;
            ++lo;
        }
        last = lo;   /* the cut is past nth (0): keep the front */
    }
    return idx[0];
}

static void sel_rows(int64_t begin, int64_t end, void *ctx) {
    sel_job *j = ctx;
    const int64_t n = j->n;
    void *buf = malloc((size_t)(n ? n : 1) * sizeof(pair_f));
    if (!buf) {
        j->err = 1;
        return;
    }
    for (int64_t r = begin; r < end; r++) {
        int64_t res = 0;
        if (j->fl) {
            const double *row = (const double *)j->data + r * n;
            pair_f *p = buf;
            int64_t nnan = 0, first_nan = -1;
            for (int64_t i = 0; i < n; i++) {
                p[i] = (pair_f){row[i], i};
                if (isnan(row[i]) && nnan++ == 0) first_nan = i;
            }
            switch (j->kind) {
            case SEL_KTH: qsel_nan_f(p, n, j->k); res = p[j->k].i; break;
            case SEL_MEDIAN:
                if (first_nan >= 0) {
                    res = first_nan;
                    break;
                }
                qsel_idx_f(p, n, (n - 1) / 2);
                res = p[(n - 1) / 2].i;
                break;
            case SEL_NANMEDIAN: {
                if (nnan == n) {
                    res = all_equivalent_first((int64_t *)p, n);
                    break;
                }
                const int64_t m = (n - nnan - 1) / 2;
                qsel_idx_f(p, n, m);
                res = p[m].i;
                break;
            }
            default: std_sort_f(p, n); MODE_SCAN(p, n, res); break;
            }
        } else {
            const int64_t *row = (const int64_t *)j->data + r * n;
            pair_i *p = buf;
            for (int64_t i = 0; i < n; i++) p[i] = (pair_i){row[i], i};
            switch (j->kind) {
            case SEL_KTH: qsel_nan_i(p, n, j->k); res = p[j->k].i; break;
            case SEL_MEDIAN:
            case SEL_NANMEDIAN: qsel_idx_i(p, n, (n - 1) / 2); res = p[(n - 1) / 2].i; break;
            default: std_sort_i(p, n); MODE_SCAN(p, n, res); break;
            }
        }
        j->out[r] = res;
    }
    free(buf);
}

/* the index chosen along dim d per row (wrapped; self has >= 1 dim and elements;
 * the keepdim shape) */
static tl_tensor *select_indices(tl_tensor *self, int64_t d, sel_kind kind, int64_t k) {
    const int64_t nd = self->ndim, n = self->sizes[d];
    int64_t perm[TL_MAX_DIMS], shape[TL_MAX_DIMS];
    for (int64_t i = 0, o = 0; i < nd; i++)
        if (i != d) perm[o++] = i;
    perm[nd - 1] = d;
    for (int64_t i = 0; i < nd; i++) shape[i] = self->sizes[perm[i]];
    const bool fl = tl_dtype_is_floating(self->dtype);
    tl_tensor *moved = tl_permute(self, nd, perm);
    tl_tensor *work = moved ? tl_to_dtype(moved, fl ? TL_FLOAT64 : TL_INT64, 0) : NULL;
    tl_tensor *cw = work ? tl_contiguous(work) : NULL;
    tl_tensor_release(moved);
    tl_tensor_release(work);
    if (!cw) return NULL;
    shape[nd - 1] = 1;
    tl_tensor *idx = tl_empty(nd, shape, TL_INT64, TL_CPU);
    if (!idx) {
        tl_tensor_release(cw);
        return NULL;
    }
    sel_job j = {tl_tensor_data_ptr(cw), fl, n, k, kind, tl_tensor_data_ptr(idx), 0};
    const int64_t rows = n ? cw->numel / n : 0;
    tl_parallel_for(rows, n >= 4096 ? 1 : 1 + 4096 / n, sel_rows, &j);
    tl_tensor_release(cw);
    if (j.err) {
        tl_tensor_release(idx);
        return tl_set_error(TL_ERR_MEMORY, "out of memory"), NULL;
    }
    /* back to self's dim order: dim d moves from last to d */
    int64_t inv[TL_MAX_DIMS];
    for (int64_t i = 0; i < nd; i++) inv[perm[i]] = i;
    tl_tensor *back = tl_permute(idx, nd, inv);
    tl_tensor_release(idx);
    if (!back) return NULL;
    tl_tensor *res = tl_contiguous(back);
    tl_tensor_release(back);
    return res;
}

/* values (gathered from self) and indices of a reduction along dim, checks
 * done; 0-dim and empty inputs handled here */
static int select_reduce(tl_tensor *self, int64_t d, bool keepdim, sel_kind kind, int64_t k, tl_tensor **vals,
                         tl_tensor **inds) {
    tl_tensor *idx = NULL, *v = NULL;
    if (self->ndim == 0) {
        *vals = tl_to_dtype(self, self->dtype, 1);
        *inds = tl_zeros(0, NULL, TL_INT64, TL_CPU);
        return *vals && *inds ? 0 : -1;
    }
    if (self->numel == 0) {
        int64_t shape[TL_MAX_DIMS];
        for (int64_t i = 0; i < self->ndim; i++) shape[i] = i == d ? 1 : self->sizes[i];
        idx = tl_empty(self->ndim, shape, TL_INT64, TL_CPU);
        v = tl_empty(self->ndim, shape, self->dtype, TL_CPU);
    } else {
        idx = select_indices(self, d, kind, k);
        v = idx ? tl_ops_gather(self, d, idx, false) : NULL;
    }
    if (v && idx && !keepdim) {
        tl_tensor *a = tl_squeeze_dim(v, d), *b = tl_squeeze_dim(idx, d);
        tl_tensor_release(v);
        tl_tensor_release(idx);
        v = a;
        idx = b;
    }
    if (!v || !idx) {
        tl_tensor_release(v);
        tl_tensor_release(idx);
        return -1;
    }
    *vals = v;
    *inds = idx;
    return 0;
}

/* PyTorch's zero_numel_check_dims */
static int check_nonempty_dim(tl_tensor *self, int64_t d, const char *fn) {
    if (self->numel == 0 && self->ndim > 0 && self->sizes[d] == 0)
        return tl_set_error(TL_ERR_INDEX, "%s: Expected reduction dim %lld to have non-zero size.", fn, (long long)d);
    return 0;
}

/* out= of a (values, indices) pair: dtype checks, resize, copy */
static int pair_to_out(tl_tensor *v, tl_tensor *i, tl_tensor *values, tl_tensor *indices, tl_tensor **ret0,
                       tl_tensor **ret1) {
    tl_tensor *a = tl_missing_copy_to_out(v, values);
    tl_tensor *b = a ? tl_missing_copy_to_out(i, indices) : (tl_tensor_release(i), NULL);
    if (!a || !b) {
        tl_tensor_release(a);
        return -1;
    }
    *ret0 = a;
    *ret1 = b;
    return 0;
}

/* ------------------------------------------------------------ kthvalue */

static int kthvalue_impl(tl_tensor *self, int64_t k, int64_t dim, bool keepdim, tl_tensor **v, tl_tensor **i) {
    if (tl__refuse_complex(self, 1, "kthvalue_cpu")) return -1;
    const int64_t d = tl__wrap_dim(dim, self->ndim, 1);
    if (d < 0 || check_nonempty_dim(self, d, "kthvalue()")) return -1;
    const int64_t n = self->ndim ? self->sizes[d] : 1;
    if (k < 1 || k > n)
        return tl_set_error(TL_ERR_RUNTIME, "kthvalue(): selected number k out of range for dimension %lld",
                            (long long)d);
    return select_reduce(self, d, keepdim, SEL_KTH, k - 1, v, i);
}

int tl_native_kthvalue(tl_keyset ks, tl_tensor *self, int64_t k, int64_t dim, bool keepdim, tl_tensor **ret0,
                       tl_tensor **ret1) {
    (void)ks;
    return kthvalue_impl(self, k, dim, keepdim, ret0, ret1);
}

int tl_native_kthvalue_out_cpu(tl_keyset ks, tl_tensor *self, int64_t k, int64_t dim, bool keepdim,
                               tl_tensor *values, tl_tensor *indices, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    tl_tensor *v, *i;
    if (kthvalue_impl(self, k, dim, keepdim, &v, &i)) return -1;
    return pair_to_out(v, i, values, indices, ret0, ret1);
}

/* ------------------------------------------------------------ median / nanmedian */

/* the whole-tensor median: NaN for an empty input (median: also when any
 * element is NaN); the lower of the two middle values */
static tl_tensor *median_all(tl_tensor *self, bool ignore_nan) {
    if (tl__refuse_complex(self, 1, ignore_nan ? "nanmedian_cpu" : "median_cpu")) return NULL;
    if (self->numel == 0) {
        tl_scalar nan = tl_scalar_from_double(NAN);
        return tl_full(0, NULL, nan, self->dtype, TL_CPU);
    }
    const int64_t n = self->numel;
    tl_tensor *flat = tl_reshape(self, 1, &n);
    tl_tensor *v = NULL, *i = NULL;
    const int rc = flat ? select_reduce(flat, 0, false, ignore_nan ? SEL_NANMEDIAN : SEL_MEDIAN, 0, &v, &i) : -1;
    tl_tensor_release(flat);
    tl_tensor_release(i);
    return rc ? NULL : v;
}

tl_tensor *tl_native_median_cpu(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    return median_all(self, false);
}

tl_tensor *tl_native_nanmedian_cpu(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    return median_all(self, true);
}

static int median_dim(tl_tensor *self, int64_t dim, bool keepdim, bool ignore_nan, tl_tensor **v, tl_tensor **i) {
    const int64_t d = tl__wrap_dim(dim, self->ndim, 1);
    if (d < 0 || check_nonempty_dim(self, d, "median()")) return -1;
    return select_reduce(self, d, keepdim, ignore_nan ? SEL_NANMEDIAN : SEL_MEDIAN, 0, v, i);
}

int tl_native_median(tl_keyset ks, tl_tensor *self, int64_t dim, bool keepdim, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    return median_dim(self, dim, keepdim, false, ret0, ret1);
}

int tl_native_median_out_cpu(tl_keyset ks, tl_tensor *self, int64_t dim, bool keepdim, tl_tensor *values,
                             tl_tensor *indices, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    tl_tensor *v, *i;
    if (median_dim(self, dim, keepdim, false, &v, &i)) return -1;
    return pair_to_out(v, i, values, indices, ret0, ret1);
}

int tl_native_nanmedian(tl_keyset ks, tl_tensor *self, int64_t dim, bool keepdim, tl_tensor **ret0,
                        tl_tensor **ret1) {
    (void)ks;
    return median_dim(self, dim, keepdim, true, ret0, ret1);
}

int tl_native_nanmedian_out_cpu(tl_keyset ks, tl_tensor *self, int64_t dim, bool keepdim, tl_tensor *values,
                                tl_tensor *indices, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    tl_tensor *v, *i;
    if (median_dim(self, dim, keepdim, true, &v, &i)) return -1;
    return pair_to_out(v, i, values, indices, ret0, ret1);
}

/* ------------------------------------------------------------ mode */

static int mode_impl(tl_tensor *self, int64_t dim, bool keepdim, tl_tensor **v, tl_tensor **i) {
    const int64_t d = tl__wrap_dim(dim, self->ndim, 1);
    if (d < 0 || check_nonempty_dim(self, d, "mode()")) return -1;
    return select_reduce(self, d, keepdim, SEL_MODE, 0, v, i);
}

int tl_native_mode(tl_keyset ks, tl_tensor *self, int64_t dim, bool keepdim, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    return mode_impl(self, dim, keepdim, ret0, ret1);
}

int tl_native_mode_out(tl_keyset ks, tl_tensor *self, int64_t dim, bool keepdim, tl_tensor *values,
                       tl_tensor *indices, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    tl_tensor *v, *i;
    if (mode_impl(self, dim, keepdim, &v, &i)) return -1;
    return pair_to_out(v, i, values, indices, ret0, ret1);
}

/* ------------------------------------------------------------ cummax / cummin */

/* cummax / cummin read self in its own dtype and write values and indices in
 * place (any strides), one scan per row along dim, rows over the thread pool.
 * The rule is PyTorch's: x replaces the running best when it is NaN or, the
 * best not being NaN, x >= best (max) / x <= best (min): ties take the later
 * index, and the first NaN stays. float16 / bfloat16 compare as float. */
typedef struct {
    const tl_tensor *self, *values, *indices;
    int64_t d, n;
    bool max, cols;   /* cols: CUM_BLOCK columns per task (below) */
} cum_job;

#define CUM_LOAD_NATIVE(raw) (raw)
#define CUM_LOAD_F16(raw) tl_f16_to_f32(raw)
#define CUM_LOAD_BF16(raw) tl_bf16_to_f32(raw)
#define CUM_ROW(NAME, ST, CT, LOAD, ISNAN, CMP)                                                      \
    static void NAME(const char *s, int64_t ss, char *v, int64_t vs, char *ix, int64_t is, int64_t n) { \
        ST braw;                                                                                   \
        memcpy(&braw, s, sizeof braw);                                                             \
        CT best = LOAD(braw);                                                                      \
        int64_t bi = 0;                                                                            \
        for (int64_t i = 0; i < n; i++) {                                                          \
            ST raw;                                                                                \
            memcpy(&raw, s + i * ss, sizeof raw);                                                  \
            const CT x = LOAD(raw);                                                                \
            if (ISNAN(x) || (!ISNAN(best) && x CMP best)) {                                        \
                best = x;                                                                          \
                braw = raw;                                                                        \
                bi = i;                                                                            \
            }                                                                                      \
            memcpy(v + i * vs, &braw, sizeof braw);                                                \
            memcpy(ix + i * is, &bi, sizeof bi);                                                   \
        }                                                                                          \
    }
/* CUM_BLOCK columns side by side (dim not innermost, the innermost dim
 * contiguous in self, values and indices): each step along dim reads and
 * writes CUM_BLOCK neighbouring elements, instead of one scan per column at
 * a stride of a whole row */
enum { CUM_BLOCK = 64 };
#define CUM_COLS(NAME, ST, CT, LOAD, ISNAN, CMP)                                                     \
    static void NAME(const char *s, int64_t ss, char *v, int64_t vs, char *ix, int64_t is, int64_t n, \
                     int64_t m) {                                                                   \
        CT best[CUM_BLOCK];                                                                         \
        ST braw[CUM_BLOCK];                                                                         \
        int64_t bi[CUM_BLOCK];                                                                      \
        for (int64_t c = 0; c < m; c++) {                                                           \
            braw[c] = ((const ST *)s)[c];                                                           \
            best[c] = LOAD(braw[c]);                                                                \
            bi[c] = 0;                                                                              \
        }                                                                                           \
        for (int64_t i = 0; i < n; i++) {                                                           \
            const ST *si = (const ST *)(s + i * ss);                                                \
            ST *vi = (ST *)(v + i * vs);                                                            \
            int64_t *xi = (int64_t *)(ix + i * is);                                                 \
            for (int64_t c = 0; c < m; c++) {                                                       \
                const ST raw = si[c];                                                               \
                const CT x = LOAD(raw);                                                             \
                if (ISNAN(x) || (!ISNAN(best[c]) && x CMP best[c])) {                               \
                    best[c] = x;                                                                    \
                    braw[c] = raw;                                                                  \
                    bi[c] = i;                                                                      \
                }                                                                                   \
                vi[c] = braw[c];                                                                    \
                xi[c] = bi[c];                                                                      \
            }                                                                                       \
        }                                                                                           \
    }
#define CUM_ROWS(T, ST, CT, LOAD, ISNAN)                     \
    CUM_ROW(cum_max_##T, ST, CT, LOAD, ISNAN, >=)            \
    CUM_ROW(cum_min_##T, ST, CT, LOAD, ISNAN, <=)            \
    CUM_COLS(cum_cmax_##T, ST, CT, LOAD, ISNAN, >=)          \
    CUM_COLS(cum_cmin_##T, ST, CT, LOAD, ISNAN, <=)
CUM_ROWS(f32, float, float, CUM_LOAD_NATIVE, isnan)
CUM_ROWS(f64, double, double, CUM_LOAD_NATIVE, isnan)
CUM_ROWS(f16, uint16_t, float, CUM_LOAD_F16, isnan)
CUM_ROWS(bf16, uint16_t, float, CUM_LOAD_BF16, isnan)
CUM_ROWS(u8, uint8_t, uint8_t, CUM_LOAD_NATIVE, NO_NAN)
CUM_ROWS(i8, int8_t, int8_t, CUM_LOAD_NATIVE, NO_NAN)
CUM_ROWS(i16, int16_t, int16_t, CUM_LOAD_NATIVE, NO_NAN)
CUM_ROWS(i32, int32_t, int32_t, CUM_LOAD_NATIVE, NO_NAN)
CUM_ROWS(i64, int64_t, int64_t, CUM_LOAD_NATIVE, NO_NAN)

typedef void (*cum_row_fn)(const char *s, int64_t ss, char *v, int64_t vs, char *ix, int64_t is, int64_t n);
typedef void (*cum_cols_fn)(const char *s, int64_t ss, char *v, int64_t vs, char *ix, int64_t is, int64_t n,
                            int64_t m);

/* the row and column scans of a dtype (uint8 serves bool: 0 / 1 bytes) */
static void cum_fns(tl_dtype dt, bool mx, cum_row_fn *row, cum_cols_fn *cols) {
#define CUM_PICK(T)                                  \
    do {                                             \
        *row = mx ? cum_max_##T : cum_min_##T;       \
        *cols = mx ? cum_cmax_##T : cum_cmin_##T;    \
    } while (0)
    switch (dt) {
    case TL_FLOAT32: CUM_PICK(f32); break;
    case TL_FLOAT64: CUM_PICK(f64); break;
    case TL_FLOAT16: CUM_PICK(f16); break;
    case TL_BFLOAT16: CUM_PICK(bf16); break;
    case TL_INT8: CUM_PICK(i8); break;
    case TL_INT16: CUM_PICK(i16); break;
    case TL_INT32: CUM_PICK(i32); break;
    case TL_INT64: CUM_PICK(i64); break;
    default: CUM_PICK(u8); break;
    }
#undef CUM_PICK
}

/* tasks [b, e): task r is the r-th position of the dims other than d (and,
 * in column mode, other than the innermost dim, whose CUM_BLOCK-wide blocks
 * are the fastest-varying part of r) */
static void cum_rows(int64_t b, int64_t e, void *ctx) {
    const cum_job *j = ctx;
    const tl_tensor *t[3] = {j->self, j->values, j->indices};
    const int64_t isz[3] = {tl__itemsize(j->self->dtype), tl__itemsize(j->values->dtype), 8};
    const int64_t nd = j->self->ndim, d = j->d, last = nd - 1;
    const int64_t inner = j->cols ? j->self->sizes[last] : 1, nblk = (inner + CUM_BLOCK - 1) / CUM_BLOCK;
    cum_row_fn row;
    cum_cols_fn cols;
    cum_fns(j->self->dtype, j->max, &row, &cols);
    for (int64_t r = b; r < e; r++) {
        char *p[3];
        for (int k = 0; k < 3; k++) p[k] = tl__data(t[k]);
        int64_t rem = j->cols ? r / nblk : r;
        const int64_t c0 = j->cols ? (r % nblk) * CUM_BLOCK : 0;
        for (int64_t dd = last; dd >= 0; dd--) {
            if (dd == d || (j->cols && dd == last)) continue;
            const int64_t sz = j->self->sizes[dd], at = rem % sz;
            rem /= sz;
            for (int k = 0; k < 3; k++) p[k] += at * t[k]->strides[dd] * isz[k];
        }
        const int64_t ss = t[0]->strides[d] * isz[0], vs = t[1]->strides[d] * isz[1], is = t[2]->strides[d] * 8;
        if (j->cols) {
            const int64_t m = inner - c0 < CUM_BLOCK ? inner - c0 : CUM_BLOCK;
            cols(p[0] + c0 * isz[0], ss, p[1] + c0 * isz[1], vs, p[2] + c0 * 8, is, j->n, m);
        } else {
            row(p[0], ss, p[1], vs, p[2], is, j->n);
        }
    }
}

static int cum_helper(tl_tensor *self, tl_tensor *values, tl_tensor *indices, int64_t dim, sel_kind kind) {
    const int64_t d = tl__wrap_dim(dim, self->ndim, 1);
    if (d < 0) return -1;
    if (self->numel == 0) return 0;
    if (values->dtype != self->dtype || indices->dtype != TL_INT64)
        return tl_set_error(TL_ERR_RUNTIME, "cummax/cummin: values must have self's dtype and indices int64");
    const int64_t n = self->sizes[d], rows = self->numel / n, last = self->ndim - 1;
    /* column mode: dim is not innermost and the innermost dim is contiguous
     * in all three tensors */
    const bool cols = d != last && self->sizes[last] > 1 && self->strides[last] == 1 && values->strides[last] == 1 &&
                      indices->strides[last] == 1;
    cum_job j = {self, values, indices, d, n, kind == SEL_CUMMAX, cols};
    const int64_t width = cols ? CUM_BLOCK : 1, tasks = cols ? rows / self->sizes[last] *
                          ((self->sizes[last] + CUM_BLOCK - 1) / CUM_BLOCK) : rows;
    const int64_t per = n * width;
    tl_parallel_for(tasks, per >= 4096 ? 1 : 1 + 4096 / per, cum_rows, &j);
    return 0;
}

int tl_native_cummax_helper_cpu(tl_keyset ks, tl_tensor *self, tl_tensor *values, tl_tensor *indices, int64_t dim) {
    (void)ks;
    return cum_helper(self, values, indices, dim, SEL_CUMMAX);
}

int tl_native_cummin_helper_cpu(tl_keyset ks, tl_tensor *self, tl_tensor *values, tl_tensor *indices, int64_t dim) {
    (void)ks;
    return cum_helper(self, values, indices, dim, SEL_CUMMIN);
}

/* PyTorch's cummax_out / cummin_out: dtype checks, resize, helper */
static int cum_out(tl_tensor *self, int64_t dim, tl_tensor *values, tl_tensor *indices, bool max, tl_tensor **ret0,
                   tl_tensor **ret1) {
    if (values->dtype != self->dtype)
        return tl_set_error(TL_ERR_RUNTIME, "Expected out tensor to have dtype %s, but got %s instead",
                            tl_dtype_caffe2_name(self->dtype), tl_dtype_caffe2_name(values->dtype));
    if (indices->dtype != TL_INT64)
        return tl_set_error(TL_ERR_RUNTIME, "Expected out tensor to have dtype long int, but got %s instead",
                            tl_dtype_caffe2_name(indices->dtype));
    if (tl_structured_resize_out(values, self->ndim, self->sizes, TL_DTYPE_UNDEFINED) ||
        tl_structured_resize_out(indices, self->ndim, self->sizes, TL_DTYPE_UNDEFINED))
        return -1;
    int rc = 0;
    if (self->ndim == 0) {
        rc = tl_copy_(values, self);
        if (!rc) rc = tl_fill_(indices, tl_scalar_from_int(0));
    } else if (self->numel != 0) {
        rc = max ? tl_ops__cummax_helper(self, values, indices, dim) : tl_ops__cummin_helper(self, values, indices, dim);
    }
    if (rc) return -1;
    tl_tensor_bump_version(values);
    tl_tensor_bump_version(indices);
    tl_tensor_retain(values);
    tl_tensor_retain(indices);
    *ret0 = values;
    *ret1 = indices;
    return 0;
}

static int cum_functional(tl_tensor *self, int64_t dim, bool max, tl_tensor **ret0, tl_tensor **ret1) {
    if (tl__wrap_dim(dim, self->ndim, 1) < 0) return -1;
    tl_tensor *v = tl_empty(self->ndim, self->sizes, self->dtype, TL_CPU);
    tl_tensor *i = tl_empty(self->ndim, self->sizes, TL_INT64, TL_CPU);
    int rc = v && i ? cum_out(self, dim, v, i, max, ret0, ret1) : -1;
    tl_tensor_release(v);
    tl_tensor_release(i);
    return rc;
}

int tl_native_cummax(tl_keyset ks, tl_tensor *self, int64_t dim, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    return cum_functional(self, dim, true, ret0, ret1);
}

int tl_native_cummax_out(tl_keyset ks, tl_tensor *self, int64_t dim, tl_tensor *values, tl_tensor *indices,
                         tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    return cum_out(self, dim, values, indices, true, ret0, ret1);
}

int tl_native_cummin(tl_keyset ks, tl_tensor *self, int64_t dim, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    return cum_functional(self, dim, false, ret0, ret1);
}

int tl_native_cummin_out(tl_keyset ks, tl_tensor *self, int64_t dim, tl_tensor *values, tl_tensor *indices,
                         tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    return cum_out(self, dim, values, indices, false, ret0, ret1);
}

/* zeros of input's shape with grad added at the chosen indices */
tl_tensor *tl_native_cummaxmin_backward(tl_keyset ks, tl_tensor *grad, tl_tensor *input, tl_tensor *indices,
                                        int64_t dim) {
    (void)ks;
    if (input->numel == 0) return tl_tensor_retain(input), input;
    tl_tensor *z = tl_zeros(input->ndim, input->sizes, input->dtype, TL_CPU);
    tl_tensor *r = z ? tl_ops_scatter_add(z, dim, indices, grad) : NULL;
    tl_tensor_release(z);
    return r;
}

/* ------------------------------------------------------------ aminmax */

static int aminmax_impl(tl_tensor *self, int64_t dim, bool dim_has, bool keepdim, tl_tensor **mn, tl_tensor **mx) {
    int64_t d = 0;
    if (dim_has) {
        d = tl__wrap_dim(dim, self->ndim, 1);
        if (d < 0 || check_nonempty_dim(self, d, "aminmax")) return -1;
    } else if (self->numel == 0) {
        return tl_set_error(TL_ERR_RUNTIME,
                            "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.");
    }
    /* amin / amax over [] reduce every dim (keepdim: all ones), as aminmax's dim=None */
    *mn = tl_ops_amin(self, dim_has ? &d : NULL, dim_has && self->ndim ? 1 : 0, keepdim);
    *mx = *mn ? tl_ops_amax(self, dim_has ? &d : NULL, dim_has && self->ndim ? 1 : 0, keepdim) : NULL;
    if (!*mx) {
        tl_tensor_release(*mn);
        return -1;
    }
    return 0;
}

int tl_native_aminmax(tl_keyset ks, tl_tensor *self, int64_t dim, bool dim_has, bool keepdim, tl_tensor **ret0,
                      tl_tensor **ret1) {
    (void)ks;
    return aminmax_impl(self, dim, dim_has, keepdim, ret0, ret1);
}

int tl_native_aminmax_out(tl_keyset ks, tl_tensor *self, int64_t dim, bool dim_has, bool keepdim, tl_tensor *min,
                          tl_tensor *max, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    tl_tensor *a, *b;
    if (aminmax_impl(self, dim, dim_has, keepdim, &a, &b)) return -1;
    return pair_to_out(a, b, min, max, ret0, ret1);
}
