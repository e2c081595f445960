/* Searching and counting (aten/src/ATen/native/Bucketization.cpp,
 * SummaryOps.cpp, Histogram.cpp, TensorCompare.cpp, Repeat.cpp):
 * searchsorted / bucketize, bincount, histc, isin, repeat_interleave.
 *
 * Values are compared in a work dtype that holds both sides exactly enough
 * (float64 when either is floating, else int64), as contiguous copies;
 * searchsorted's binary searches are PyTorch's cus_lower_bound /
 * cus_upper_bound (`!(mid >= v)` / `!(mid > v)`: a NaN value lands past the
 * end) and run on the thread pool. */
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "missing_ops.h"
#include "tl_error.h"
#include "tl_half.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/amax.h"
#include "ops/amin.h"
#include "ops/bincount.h"
#include "ops/bucketize.h"
#include "ops/div.h"
#include "ops/expand.h"
#include "ops/flatten.h"
#include "ops/histc.h"
#include "ops/histogram.h"
#include "ops/index_select.h"
#include "ops/isin.h"
#include "ops/narrow.h"
#include "ops/repeat_interleave.h"
#include "ops/reshape.h"
#include "ops/searchsorted.h"
#include "ops/sub.h"
#include "ops/sum.h"
#include "ops/unsqueeze.h"
#include "tl_structured.h"
#include "tl_tensor.h"

/* a contiguous copy of t in the work dtype (new reference) */
static tl_tensor *work_copy(tl_tensor *t, bool fl) {
    tl_tensor *w = tl_to_dtype(t, fl ? TL_FLOAT64 : TL_INT64, 0);
    tl_tensor *c = w ? tl_contiguous(w) : NULL;
    tl_tensor_release(w);
    return c;
}

/* a Python number as a 0-dim tensor of its own kind */
static tl_tensor *scalar_tensor(tl_scalar s) {
    const tl_dtype dt = s.kind == TL_SCALAR_DOUBLE ? TL_FLOAT64 : s.kind == TL_SCALAR_BOOL ? TL_BOOL : TL_INT64;
    return tl_full(0, NULL, s, dt, TL_CPU);
}

static void sizes_str(const tl_tensor *t, char *buf, size_t cap) {
    size_t o = (size_t)snprintf(buf, cap, "[");
    for (int64_t i = 0; i < t->ndim && o < cap; i++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%lld", i ? ", " : "", (long long)t->sizes[i]);
    if (o < cap) snprintf(buf + o, cap - o, "]");
}

/* ------------------------------------------------------------ searchsorted */

typedef struct {
    const char *bd, *val;   /* work-dtype boundaries rows, values */
    const int64_t *sorter;  /* NULL or rows of indices into the boundary row */
    bool fl, right, i32, one_row;
    int64_t len, per_row;   /* boundary row length; values per boundary row */
    void *out;
} ss_job;

#define SS_SEARCH(T)                                                                         \
    do {                                                                                     \
        const T *b = (const T *)j->bd + row * j->len;                                        \
        const T v = ((const T *)j->val)[e];                                                  \
        int64_t lo = 0, hi = j->len;                                                         \
        while (lo < hi) {                                                                    \
            const int64_t mid = lo + ((hi - lo) >> 1);                                       \
            const T m = s ? b[s[mid]] : b[mid];                                              \
            if (j->right ? !(m > v) : !(m >= v)) lo = mid + 1;                               \
            else hi = mid;                                                                   \
        }                                                                                    \
        pos = lo;                                                                            \
    } while (0)

static void ss_range(int64_t begin, int64_t end, void *ctx) {
    const ss_job *j = ctx;
    for (int64_t e = begin; e < end; e++) {
        const int64_t row = j->one_row ? 0 : e / j->per_row;
        const int64_t *s = j->sorter ? j->sorter + row * j->len : NULL;
        int64_t pos;
        if (j->fl) SS_SEARCH(double);
        else SS_SEARCH(int64_t);
        if (j->i32) ((int32_t *)j->out)[e] = (int32_t)pos;
        else ((int64_t *)j->out)[e] = pos;
    }
}

/* PyTorch's searchsorted_pre_check, in its order */
static int ss_check(tl_tensor *bd, tl_tensor *input, bool out_int32, bool right, const char *side, tl_tensor *sorter) {
    if (side) {
        if (strcmp(side, "left") && strcmp(side, "right"))
            return tl_set_error(TL_ERR_RUNTIME, "torch.searchsorted(): side can only be 'left' or 'right' but got %s",
                                side);
        if (right && strcmp(side, "right"))
            return tl_set_error(TL_ERR_RUNTIME,
                                "torch.searchsorted(): side and right can't be set to opposites, got side of %s while "
                                "right was True", side);
    }
    char a[256], b[256];
    if (sorter) {
        if (sorter->dtype != TL_INT64)
            return tl_set_error(TL_ERR_RUNTIME, "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype %s",
                                tl_dtype_scalar_name(sorter->dtype));
        if (sorter->ndim != bd->ndim || memcmp(sorter->sizes, bd->sizes, (size_t)bd->ndim * sizeof(int64_t))) {
            sizes_str(bd, a, sizeof a);
            sizes_str(sorter, b, sizeof b);
            return tl_set_error(TL_ERR_RUNTIME,
                                "torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
                                "tensor %sand got sorter tensor %s", a, b);
        }
    }
    if (input->ndim == 0 && bd->ndim > 1)
        return tl_set_error(TL_ERR_RUNTIME,
                            "torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension is "
                            "1, but we got boundaries tensor dim(%lld) and input value's dim(0) numel(1)",
                            (long long)bd->ndim);
    if (bd->ndim == 0)
        return tl_set_error(TL_ERR_RUNTIME,
                            "torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 dimension");
    bool match = bd->ndim == 1;
    if (!match && bd->ndim == input->ndim) {
        match = true;
        for (int64_t i = 0; i + 1 < bd->ndim; i++) match = match && bd->sizes[i] == input->sizes[i];
    }
    if (!match) {
        sizes_str(bd, a, sizeof a);
        sizes_str(input, b, sizeof b);
        return tl_set_error(TL_ERR_RUNTIME,
                            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions "
                            "of boundaries tensor and input value tensor must match, but we got boundaries tensor %s "
                            "and input value tensor %s", a, b);
    }
    if (out_int32 && bd->sizes[bd->ndim - 1] >= INT_MAX)
        return tl_set_error(TL_ERR_RUNTIME,
                            "torch.searchsorted(): the size of boundaries' last dimension should be less than %d, but "
                            "we got %lld", INT_MAX, (long long)bd->sizes[bd->ndim - 1]);
    return 0;
}

static tl_tensor *searchsorted_impl(tl_tensor *bd, tl_tensor *input, bool out_int32, bool right, const char *side,
                                    tl_tensor *sorter) {
    if (ss_check(bd, input, out_int32, right, side, sorter)) return NULL;
    if (side) right = !strcmp(side, "right");
    const int64_t len = bd->sizes[bd->ndim - 1];
    tl_tensor *srt = NULL;
    if (sorter) {
        srt = tl_contiguous(sorter);
        if (!srt) return NULL;
        const int64_t *p = tl_tensor_data_ptr(srt);
        for (int64_t i = 0; i < srt->numel; i++)
            if (p[i] < 0 || p[i] >= len) {
                tl_tensor_release(srt);
                return tl_set_error(TL_ERR_RUNTIME, "torch.searchsorted(): sorter index out of range"), NULL;
            }
    }
    const bool fl = tl_dtype_is_floating(bd->dtype) || tl_dtype_is_floating(input->dtype);
    tl_tensor *b = work_copy(bd, fl), *v = b ? work_copy(input, fl) : NULL;
    tl_tensor *out = v ? tl_empty(input->ndim, input->sizes, out_int32 ? TL_INT32 : TL_INT64, TL_CPU) : NULL;
    if (out && input->numel > 0 && len > 0) {
        const int64_t last = input->ndim ? input->sizes[input->ndim - 1] : 1;
        ss_job j = {tl_tensor_data_ptr(b), tl_tensor_data_ptr(v), srt ? tl_tensor_data_ptr(srt) : NULL, fl, right,
                    out_int32, bd->ndim == 1, len, last, tl_tensor_data_ptr(out)};
        tl_parallel_for(input->numel, 2048, ss_range, &j);
    } else if (out && input->numel > 0) {
        tl_fill_(out, tl_scalar_from_int(0));
    }
    tl_tensor_release(b);
    tl_tensor_release(v);
    tl_tensor_release(srt);
    return out;
}

/* out= must already have the index dtype out_int32 asks for */
static tl_tensor *ss_to_out(tl_tensor *r, tl_tensor *out, bool out_int32) {
    if (!r) return NULL;
    if (out->dtype != (out_int32 ? TL_INT32 : TL_INT64)) {
        tl_tensor_release(r);
        return tl_set_error(TL_ERR_RUNTIME,
                            "torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or "
                            "Long(int64) depending on whether out_int32 flag is True, but we got output tensor's dtype "
                            "%s and out_int32 flag is %s", tl_dtype_scalar_name(out->dtype),
                            out_int32 ? "True" : "False"), NULL;
    }
    return tl_missing_copy_to_out(r, out);
}

tl_tensor *tl_native_searchsorted_cpu(tl_keyset ks, tl_tensor *sorted_sequence, tl_tensor *self, bool out_int32,
                                      bool right, const char *side, tl_tensor *sorter) {
    (void)ks;
    return searchsorted_impl(sorted_sequence, self, out_int32, right, side, sorter);
}

tl_tensor *tl_native_searchsorted_out_cpu(tl_keyset ks, tl_tensor *sorted_sequence, tl_tensor *self, bool out_int32,
                                          bool right, const char *side, tl_tensor *sorter, tl_tensor *out) {
    (void)ks;
    return ss_to_out(searchsorted_impl(sorted_sequence, self, out_int32, right, side, sorter), out, out_int32);
}

tl_tensor *tl_native_searchsorted_cpu__searchsorted_Scalar(tl_keyset ks, tl_tensor *sorted_sequence, tl_scalar self,
                                                           bool out_int32, bool right, const char *side,
                                                           tl_tensor *sorter) {
    (void)ks;
    tl_tensor *v = scalar_tensor(self);
    tl_tensor *r = v ? searchsorted_impl(sorted_sequence, v, out_int32, right, side, sorter) : NULL;
    tl_tensor_release(v);
    return r;
}

tl_tensor *tl_native_searchsorted_out_cpu__searchsorted_Scalar_out(tl_keyset ks, tl_tensor *sorted_sequence,
                                                                   tl_scalar self, bool out_int32, bool right,
                                                                   const char *side, tl_tensor *sorter,
                                                                   tl_tensor *out) {
    return ss_to_out(tl_native_searchsorted_cpu__searchsorted_Scalar(ks, sorted_sequence, self, out_int32, right, side,
                                                                     sorter), out, out_int32);
}

/* ------------------------------------------------------------ bucketize */

static tl_tensor *bucketize_impl(tl_tensor *self, tl_tensor *boundaries, bool out_int32, bool right) {
    if (boundaries->ndim != 1)
        return tl_set_error(TL_ERR_RUNTIME, "boundaries tensor must be 1 dimension, but got dim(%lld)",
                            (long long)boundaries->ndim), NULL;
    return searchsorted_impl(boundaries, self, out_int32, right, NULL, NULL);
}

tl_tensor *tl_native_bucketize_cpu(tl_keyset ks, tl_tensor *self, tl_tensor *boundaries, bool out_int32, bool right) {
    (void)ks;
    return bucketize_impl(self, boundaries, out_int32, right);
}

tl_tensor *tl_native_bucketize_out_cpu(tl_keyset ks, tl_tensor *self, tl_tensor *boundaries, bool out_int32,
                                       bool right, tl_tensor *out) {
    (void)ks;
    return ss_to_out(bucketize_impl(self, boundaries, out_int32, right), out, out_int32);
}

tl_tensor *tl_native_bucketize_cpu__bucketize_Scalar(tl_keyset ks, tl_scalar self, tl_tensor *boundaries,
                                                     bool out_int32, bool right) {
    (void)ks;
    tl_tensor *v = scalar_tensor(self);
    tl_tensor *r = v ? bucketize_impl(v, boundaries, out_int32, right) : NULL;
    tl_tensor_release(v);
    return r;
}

/* ------------------------------------------------------------ bincount */

/* counts (or summed weights) of each non-negative integer; weights give
 * float32 for float32 weights, float64 otherwise; an empty input gives int64
 * zeros of minlength, as PyTorch */
tl_tensor *tl_native__bincount_cpu(tl_keyset ks, tl_tensor *self, tl_tensor *weights, int64_t minlength) {
    (void)ks;
    if (!tl_dtype_is_integral(self->dtype, 0) || self->dtype == TL_BOOL)
        return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"bincount_cpu\" not implemented for '%s'",
                            tl_dtype_scalar_name(self->dtype)), NULL;
    if (minlength < 0) return tl_set_error(TL_ERR_RUNTIME, "minlength should be >= 0"), NULL;
    if (self->ndim == 1 && self->numel == 0) return tl_zeros(1, &minlength, TL_INT64, TL_CPU);
    tl_tensor *x = self->ndim == 1 ? work_copy(self, false) : NULL;
    if (self->ndim != 1) return tl_set_error(TL_ERR_RUNTIME, "bincount only supports 1-d non-negative integral inputs."), NULL;
    if (!x) return NULL;
    const int64_t *p = tl_tensor_data_ptr(x), n = x->numel;
    int64_t mx = -1;
    for (int64_t i = 0; i < n; i++) {
        if (p[i] < 0) {
            tl_tensor_release(x);
            return tl_set_error(TL_ERR_RUNTIME, "bincount only supports 1-d non-negative integral inputs."), NULL;
        }
        if (p[i] > mx) mx = p[i];
    }
    if (weights && (weights->ndim != 1 || weights->numel != n)) {
        tl_tensor_release(x);
        return tl_set_error(TL_ERR_RUNTIME, "weights should be 1-d and have the same length as input"), NULL;
    }
    int64_t len = mx + 1 > minlength ? mx + 1 : minlength;
    tl_tensor *out = NULL;
    if (!weights) {
        out = tl_zeros(1, &len, TL_INT64, TL_CPU);
        if (out) {
            int64_t *o = tl_tensor_data_ptr(out);
            for (int64_t i = 0; i < n; i++) o[p[i]]++;
        }
    } else {
        const tl_dtype odt = weights->dtype == TL_FLOAT32 ? TL_FLOAT32 : TL_FLOAT64;
        tl_tensor *w = work_copy(weights, true);
        tl_tensor *acc = w ? tl_zeros(1, &len, TL_FLOAT64, TL_CPU) : NULL;
        if (acc) {
            double *o = tl_tensor_data_ptr(acc);
            const double *wp = tl_tensor_data_ptr(w);
            for (int64_t i = 0; i < n; i++) o[p[i]] += wp[i];
            out = tl_to_dtype(acc, odt, 0);
        }
        tl_tensor_release(w);
        tl_tensor_release(acc);
    }
    tl_tensor_release(x);
    return out;
}

/* ------------------------------------------------------------ histc */

/* PyTorch's histogramdd kernel with LINEAR_INTERPOLATION in the input's dtype:
 * pos = (x - left) * bins / (right - left), the right edge in the last bin */
#define HISTC(T)                                                                               \
    do {                                                                                       \
        const T *x = tl_tensor_data_ptr(c);                                                    \
        const T l = (T)left, r = (T)right;                                                     \
        for (int64_t i = 0; i < c->numel; i++) {                                               \
            const T e = x[i];                                                                  \
            if (!(e >= l && e <= r)) continue;                                                 \
            int64_t pos = (int64_t)((e - l) * (T)bins / (r - l));                              \
            if (pos == bins) pos -= 1;                                                         \
            h[pos] += 1;                                                                       \
        }                                                                                      \
    } while (0)

/* float16 / bfloat16: c10::Half arithmetic, each step rounded to the dtype */
static inline float round16(float x, bool bf) {
    return bf ? tl_bf16_to_f32(tl_f32_to_bf16(x)) : tl_f16_to_f32(tl_f32_to_f16(x));
}

static void histc16(const uint16_t *x, int64_t n, bool bf, double left, double right, int64_t bins, double *h) {
    const float l = round16((float)left, bf), r = round16((float)right, bf), nb = round16((float)bins, bf);
    const float width = round16(r - l, bf);
    for (int64_t i = 0; i < n; i++) {
        const float e = bf ? tl_bf16_to_f32(x[i]) : tl_f16_to_f32(x[i]);
        if (!(e >= l && e <= r)) continue;
        int64_t pos = (int64_t)round16(round16(round16(e - l, bf) * nb, bf) / width, bf);
        if (pos == bins) pos -= 1;
        h[pos] += 1;
    }
}

tl_tensor *tl_native_histogram_histc(tl_keyset ks, tl_tensor *self, int64_t bins, tl_scalar min, tl_scalar max) {
    (void)ks;
    if (!tl_dtype_is_floating(self->dtype))
        return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"histogram_cpu\" not implemented for '%s'",
                            tl_dtype_scalar_name(self->dtype)), NULL;
    if (bins <= 0)
        return tl_set_error(TL_ERR_RUNTIME, "torch.histogram(): bins must be > 0, but got %lld for dimension 0",
                            (long long)bins), NULL;
    double left = min.kind == TL_SCALAR_DOUBLE ? min.d : (double)min.i;
    double right = max.kind == TL_SCALAR_DOUBLE ? max.d : (double)max.i;
    if (left == right && self->numel > 0) {
        tl_tensor *mn = tl_ops_amin(self, NULL, 0, false), *mx = mn ? tl_ops_amax(self, NULL, 0, false) : NULL;
        tl_scalar a, b;
        const int rc = mx ? (tl_tensor_item(mn, &a) || tl_tensor_item(mx, &b)) : -1;
        tl_tensor_release(mn);
        tl_tensor_release(mx);
        if (rc) return NULL;
        left = a.d;
        right = b.d;
    }
    if (left == right) {
        left -= 1;
        right += 1;
    }
    if (isinf(left) || isinf(right) || isnan(left) || isnan(right))
        return tl_set_error(TL_ERR_RUNTIME, "torch.histc: range of [%g, %g] is not finite", left, right), NULL;
    if (!(left < right)) return tl_set_error(TL_ERR_RUNTIME, "torch.histc: max must be larger than min"), NULL;
    tl_tensor *c = tl_contiguous(self);
    tl_tensor *hist = c ? tl_zeros(1, &bins, TL_FLOAT64, TL_CPU) : NULL;
    if (!hist) {
        tl_tensor_release(c);
        return NULL;
    }
    double *h = tl_tensor_data_ptr(hist);
    if (self->dtype == TL_FLOAT32) HISTC(float);
    else if (self->dtype == TL_FLOAT64) HISTC(double);
    else histc16(tl_tensor_data_ptr(c), c->numel, self->dtype == TL_BFLOAT16, left, right, bins, h);
    tl_tensor *r = tl_to_dtype(hist, self->dtype, 0);
    tl_tensor_release(hist);
    tl_tensor_release(c);
    return r;
}

tl_tensor *tl_native_histogram_histc_out(tl_keyset ks, tl_tensor *self, int64_t bins, tl_scalar min, tl_scalar max,
                                         tl_tensor *out) {
    return tl_missing_copy_to_out(tl_native_histogram_histc(ks, self, bins, min, max), out);
}

/* ------------------------------------------------------------ isin */

static int cmp_f64(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int cmp_i64(const void *a, const void *b) {
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* each element looked up in the sorted test elements (NaN matches nothing) */
static tl_tensor *isin_impl(tl_tensor *elements, tl_tensor *test, bool invert) {
    const bool fl = tl_dtype_is_floating(elements->dtype) || tl_dtype_is_floating(test->dtype);
    tl_tensor *e = work_copy(elements, fl), *t = e ? tl_to_dtype(test, fl ? TL_FLOAT64 : TL_INT64, 1) : NULL;
    tl_tensor *tc = t ? tl_contiguous(t) : NULL;
    tl_tensor *out = tc ? tl_empty(elements->ndim, elements->sizes, TL_BOOL, TL_CPU) : NULL;
    if (out) {
        const int64_t m = tc->numel, n = e->numel;
        bool *o = tl_tensor_data_ptr(out);
        if (fl) {
            double *tv = tl_tensor_data_ptr(tc);
            const double *ev = tl_tensor_data_ptr(e);
            qsort(tv, (size_t)m, sizeof *tv, cmp_f64);
            for (int64_t i = 0; i < n; i++)
                o[i] = (!isnan(ev[i]) && m && bsearch(&ev[i], tv, (size_t)m, sizeof *tv, cmp_f64)) != invert;
        } else {
            int64_t *tv = tl_tensor_data_ptr(tc);
            const int64_t *ev = tl_tensor_data_ptr(e);
            qsort(tv, (size_t)m, sizeof *tv, cmp_i64);
            for (int64_t i = 0; i < n; i++) o[i] = (m && bsearch(&ev[i], tv, (size_t)m, sizeof *tv, cmp_i64)) != invert;
        }
    }
    tl_tensor_release(e);
    tl_tensor_release(t);
    tl_tensor_release(tc);
    return out;
}

tl_tensor *tl_native_isin_Tensor_Tensor(tl_keyset ks, tl_tensor *elements, tl_tensor *test_elements,
                                        bool assume_unique, bool invert) {
    (void)ks; (void)assume_unique;   /* a hint only: the lookup does not need it */
    return isin_impl(elements, test_elements, invert);
}

tl_tensor *tl_native_isin_Tensor_Tensor_out(tl_keyset ks, tl_tensor *elements, tl_tensor *test_elements,
                                            bool assume_unique, bool invert, tl_tensor *out) {
    return tl_missing_copy_to_out(tl_native_isin_Tensor_Tensor(ks, elements, test_elements, assume_unique, invert),
                                  out);
}

tl_tensor *tl_native_isin_Tensor_Scalar(tl_keyset ks, tl_tensor *elements, tl_scalar test_element,
                                        bool assume_unique, bool invert) {
    (void)ks; (void)assume_unique;
    tl_tensor *t = scalar_tensor(test_element);
    tl_tensor *r = t ? isin_impl(elements, t, invert) : NULL;
    tl_tensor_release(t);
    return r;
}

tl_tensor *tl_native_isin_Tensor_Scalar_out(tl_keyset ks, tl_tensor *elements, tl_scalar test_element,
                                            bool assume_unique, bool invert, tl_tensor *out) {
    return tl_missing_copy_to_out(tl_native_isin_Tensor_Scalar(ks, elements, test_element, assume_unique, invert),
                                  out);
}

tl_tensor *tl_native_isin_Scalar_Tensor(tl_keyset ks, tl_scalar element, tl_tensor *test_elements,
                                        bool assume_unique, bool invert) {
    (void)ks; (void)assume_unique;
    tl_tensor *e = scalar_tensor(element);
    tl_tensor *r = e ? isin_impl(e, test_elements, invert) : NULL;
    tl_tensor_release(e);
    return r;
}

tl_tensor *tl_native_isin_Scalar_Tensor_out(tl_keyset ks, tl_scalar element, tl_tensor *test_elements,
                                            bool assume_unique, bool invert, tl_tensor *out) {
    return tl_missing_copy_to_out(tl_native_isin_Scalar_Tensor(ks, element, test_elements, assume_unique, invert),
                                  out);
}

/* ------------------------------------------------------------ repeat_interleave */

/* [0]*r0 + [1]*r1 + ... in repeats' dtype (int32 or int64) */
tl_tensor *tl_native_repeat_interleave_cpu(tl_keyset ks, tl_tensor *repeats, int64_t output_size,
                                           bool output_size_has) {
    (void)ks;
    if (repeats->ndim != 1) return tl_set_error(TL_ERR_RUNTIME, "repeat_interleave only accept 1D vector as repeat"), NULL;
    if (repeats->dtype != TL_INT32 && repeats->dtype != TL_INT64)
        return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"repeat_interleave_cpu\" not implemented for '%s'",
                            tl_dtype_scalar_name(repeats->dtype)), NULL;
    tl_tensor *r = work_copy(repeats, false);
    if (!r) return NULL;
    const int64_t *p = tl_tensor_data_ptr(r), n = r->numel;
    int64_t total = 0;
    for (int64_t i = 0; i < n; i++) {
        if (p[i] < 0) {
            tl_tensor_release(r);
            return tl_set_error(TL_ERR_RUNTIME, "repeats can not be negative"), NULL;
        }
        total += p[i];
    }
    if (output_size_has && output_size != total) {
        tl_tensor_release(r);
        return tl_set_error(TL_ERR_RUNTIME, "allocated size does not match required size"), NULL;
    }
    tl_tensor *out = tl_empty(1, &total, repeats->dtype, TL_CPU);
    if (out) {
        for (int64_t i = 0, o = 0; i < n; i++)
            for (int64_t k = 0; k < p[i]; k++, o++) {
                if (repeats->dtype == TL_INT32) ((int32_t *)tl_tensor_data_ptr(out))[o] = (int32_t)i;
                else ((int64_t *)tl_tensor_data_ptr(out))[o] = i;
            }
    }
    tl_tensor_release(r);
    return out;
}

/* self (flattened without dim) indexed by repeat_interleave(repeats) */
tl_tensor *tl_native_repeat_interleave_symint(tl_keyset ks, tl_tensor *self, tl_tensor *repeats, int64_t dim,
                                              bool dim_has, int64_t output_size, bool output_size_has) {
    (void)ks;
    tl_tensor *input = dim_has ? (tl_tensor_retain(self), self) : tl_ops_flatten_using_ints(self, 0, -1);
    if (!input) return NULL;
    const int64_t d = tl__wrap_dim(dim_has ? dim : 0, input->ndim, 1);
    tl_tensor *rep = NULL, *idx = NULL, *res = NULL;
    if (d < 0) goto done;
    const int64_t sz = input->ndim ? input->sizes[d] : 1;
    if (repeats->ndim == 0 || (repeats->ndim == 1 && repeats->sizes[0] == 1)) {
        const int64_t one = 1;
        tl_tensor *r1 = tl_reshape(repeats, 1, &one);
        rep = r1 ? tl_expand(r1, 1, &sz) : NULL;
        tl_tensor_release(r1);
    } else if (repeats->ndim == 1) {
        if (repeats->sizes[0] != sz) {
            tl_set_error(TL_ERR_RUNTIME,
                         "repeats must have the same size as input along dim, but got repeats.size(0) = %lld and "
                         "input.size(%lld) = %lld", (long long)repeats->sizes[0], (long long)d, (long long)sz);
            goto done;
        }
        rep = tl_alias(repeats);
    } else {
        tl_set_error(TL_ERR_RUNTIME, "repeats must be 0-dim or 1-dim tensor");
        goto done;
    }
    idx = rep ? tl_ops_repeat_interleave_Tensor(rep, output_size, output_size_has) : NULL;
    res = idx ? tl_ops_index_select(input, d, idx) : NULL;
done:
    tl_tensor_release(input);
    tl_tensor_release(rep);
    tl_tensor_release(idx);
    return res;
}

tl_tensor *tl_native_repeat_interleave_symint__repeat_interleave_self_int(tl_keyset ks, tl_tensor *self,
                                                                          int64_t repeats, int64_t dim, bool dim_has,
                                                                          int64_t output_size, bool output_size_has) {
    (void)ks; (void)output_size; (void)output_size_has;
    tl_tensor *input = dim_has ? (tl_tensor_retain(self), self) : tl_ops_flatten_using_ints(self, 0, -1);
    if (!input) return NULL;
    const int64_t d = tl__wrap_dim(dim_has ? dim : 0, self->ndim, 1);
    if (d < 0 || repeats < 0) {
        if (d >= 0) tl_set_error(TL_ERR_RUNTIME, "Repeats must be non-negative");
        tl_tensor_release(input);
        return NULL;
    }
    /* unsqueeze after dim, expand it to repeats, merge the two */
    int64_t shape[TL_MAX_DIMS + 1];
    const int64_t nd = input->ndim ? input->ndim : 1, dd = input->ndim ? d : 0;
    tl_tensor *base = input->ndim ? (tl_tensor_retain(input), input) : tl_ops_reshape(input, &nd, 1);
    tl_tensor *u = base ? tl_ops_unsqueeze(base, dd + 1) : NULL;
    tl_tensor *e = NULL, *r = NULL;
    if (u) {
        for (int64_t i = 0; i < nd + 1; i++) shape[i] = u->sizes[i];
        shape[dd + 1] = repeats;
        e = tl_ops_expand(u, shape, nd + 1, false);
    }
    if (e) r = tl_ops_flatten_using_ints(e, dd, dd + 1);
    tl_tensor_release(input);
    tl_tensor_release(base);
    tl_tensor_release(u);
    tl_tensor_release(e);
    return r;
}

/* ------------------------------------------------------------ histogram */

/* PyTorch's histogramdd kernel for one dimension: bin positions by linear
 * interpolation checked against the neighbouring edges (bins given as a
 * count) or by binary search over the edges (bins given as a tensor), in the
 * input dtype; the last bin holds its right edge */
#define HIST_FILL(T)                                                                             \
    do {                                                                                         \
        const T *x = tl_tensor_data_ptr(c), *ed = tl_tensor_data_ptr(e);                         \
        const T l = ed[0], r = ed[ne - 1];                                                       \
        for (int64_t i = 0; i < c->numel; i++) {                                                 \
            const T v = x[i];                                                                    \
            if (!(v >= l && v <= r)) continue;                                                   \
            int64_t lo = 0, hi = ne;                                                             \
            if (linear) {                                                                        \
                const int64_t p = (int64_t)((v - l) * (T)(ne - 1) / (r - l));                    \
                lo = p - 1 > 0 ? p - 1 : 0;                                                      \
                hi = p + 2 < ne ? p + 2 : ne;                                                    \
            }                                                                                    \
            while (lo < hi) { /* upper_bound */                                                  \
                const int64_t m = lo + (hi - lo) / 2;                                            \
                if (!(v < ed[m])) lo = m + 1;                                                    \
                else hi = m;                                                                     \
            }                                                                                    \
            int64_t pos = lo - 1;                                                                \
            if (pos == ne - 1) pos -= 1;                                                         \
            h[pos] += w ? w[i] : 1.0;                                                            \
        }                                                                                        \
    } while (0)

static int histogram_impl(tl_tensor *self, tl_tensor *edges, bool linear, tl_tensor *weight, bool density,
                          tl_tensor **ret0, tl_tensor **ret1) {
    if (weight) {
        if (weight->ndim != self->ndim || memcmp(weight->sizes, self->sizes, (size_t)self->ndim * sizeof(int64_t))) {
            char a[256], b[256];
            snprintf(a, sizeof a, "[%lld, 1]", (long long)self->numel);
            sizes_str(weight, b, sizeof b);
            return tl_set_error(TL_ERR_RUNTIME,
                                "torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                                "input tensor excluding its innermost dimension, but got input with shape %s and "
                                "weight with shape %s", a, b);
        }
        if (weight->dtype != self->dtype)
            return tl_set_error(TL_ERR_RUNTIME,
                                "torch.histogramdd: if weight tensor is provided, input tensor and weight tensor should "
                                "have the same dtype, but got input(%s), and weight(%s)",
                                tl_dtype_caffe2_name(self->dtype), tl_dtype_caffe2_name(weight->dtype));
    }
    const int64_t ne = edges->numel, nb = ne - 1;
    tl_tensor *c = tl_contiguous(self), *e = c ? tl_contiguous(edges) : NULL;
    tl_tensor *wc = e && weight ? work_copy(weight, true) : NULL;
    tl_tensor *acc = e && (!weight || wc) ? tl_zeros(1, &nb, TL_FLOAT64, TL_CPU) : NULL;
    tl_tensor *hist = NULL, *be = NULL;
    if (acc) {
        double *h = tl_tensor_data_ptr(acc);
        const double *w = wc ? tl_tensor_data_ptr(wc) : NULL;
        if (self->dtype == TL_FLOAT32) HIST_FILL(float);
        else HIST_FILL(double);
        hist = tl_to_dtype(acc, self->dtype, 0);
        be = hist ? tl_to_dtype(e, self->dtype, 1) : NULL;
    }
    if (be && density) {   /* hist / hist.sum() / bin widths */
        tl_tensor *total = tl_ops_sum(hist, TL_DTYPE_UNDEFINED);
        tl_tensor *hi = total ? tl_ops_narrow(be, 0, 1, nb) : NULL, *lo = hi ? tl_ops_narrow(be, 0, 0, nb) : NULL;
        tl_tensor *width = lo ? tl_ops_sub_Tensor(hi, lo, tl_scalar_from_int(1)) : NULL;
        tl_tensor *a = width ? tl_ops_div_Tensor(hist, total) : NULL;
        tl_tensor *d = a ? tl_ops_div_Tensor(a, width) : NULL;
        tl_tensor *list[] = {total, hi, lo, width, a, hist};
        for (size_t i = 0; i < sizeof list / sizeof *list; i++) tl_tensor_release(list[i]);
        hist = d;
    }
    tl_tensor_release(c);
    tl_tensor_release(e);
    tl_tensor_release(wc);
    tl_tensor_release(acc);
    if (!hist || !be) {
        tl_tensor_release(hist);
        tl_tensor_release(be);
        return -1;
    }
    *ret0 = hist;
    *ret1 = be;
    return 0;
}

static int hist_dtype_check(tl_tensor *self) {
    if (self->dtype != TL_FLOAT32 && self->dtype != TL_FLOAT64)
        return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"histogramdd\" not implemented for '%s'",
                            tl_dtype_scalar_name(self->dtype));
    return 0;
}

int tl_native_histogram(tl_keyset ks, tl_tensor *self, tl_tensor *bins, tl_tensor *weight, bool density,
                        tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    if (hist_dtype_check(self)) return -1;
    if (bins->ndim != 1)
        return tl_set_error(TL_ERR_RUNTIME,
                            "torch.histogramdd: bins tensor should have one dimension, but got %lld dimensions in the "
                            "bins tensor for dimension 0", (long long)bins->ndim);
    if (bins->dtype != self->dtype)
        return tl_set_error(TL_ERR_RUNTIME,
                            "torch.histogramdd: input tensor and bins tensors should have the same dtype, but got input "
                            "with dtype %s and bins for dimension 0 with dtype %s",
                            tl_dtype_caffe2_name(self->dtype), tl_dtype_caffe2_name(bins->dtype));
    if (bins->numel < 1)
        return tl_set_error(TL_ERR_RUNTIME,
                            "torch.histogramdd: bins tensor should have at least 1 element, but got 0 elements in the "
                            "bins tensor for dimension 0");
    return histogram_impl(self, bins, false, weight, density, ret0, ret1);
}

int tl_native_histogram__histogram_bin_ct(tl_keyset ks, tl_tensor *self, int64_t bins, const double *range,
                                          int64_t range_len, tl_tensor *weight, bool density, tl_tensor **ret0,
                                          tl_tensor **ret1) {
    (void)ks;
    if (hist_dtype_check(self)) return -1;
    if (bins <= 0)
        return tl_set_error(TL_ERR_RUNTIME, "torch.histogram(): bins must be > 0, but got %lld for dimension 0",
                            (long long)bins);
    if (range && range_len != 2)
        return tl_set_error(TL_ERR_RUNTIME,
                            "torch.histogramdd: for a 1-dimensional histogram, range should have 2 elements, but got "
                            "%lld", (long long)range_len);
    double left = 0.0, right = 1.0;   /* PyTorch's edges for an empty input without range */
    if (range) {
        left = range[0];
        right = range[1];
    } else if (self->numel > 0) {
        tl_tensor *mn = tl_ops_amin(self, NULL, 0, false), *mx = mn ? tl_ops_amax(self, NULL, 0, false) : NULL;
        tl_scalar a, b;
        const int rc = mx ? (tl_tensor_item(mn, &a) || tl_tensor_item(mx, &b)) : -1;
        tl_tensor_release(mn);
        tl_tensor_release(mx);
        if (rc) return -1;
        left = a.d;
        right = b.d;
    }
    if (left == right) {
        left -= 0.5;
        right += 0.5;
    }
    if (isinf(left) || isinf(right) || isnan(left) || isnan(right))
        return tl_set_error(TL_ERR_RUNTIME, "torch.histogramdd: dimension 0's range [%g, %g] is not finite", left,
                            right);
    if (!(left <= right))
        return tl_set_error(TL_ERR_RUNTIME,
                            "torch.histogramdd: min should not exceed max, but got min %g max %g for dimension 0", left,
                            right);
    /* PyTorch's CPU linspace in the input dtype: the first half counts up
     * from start, the second half down from end, each step one fused
     * multiply-add as PyTorch's vectorized (FMA) build computes it */
    const int64_t ne = bins + 1;
    tl_tensor *edges = tl_empty(1, &ne, self->dtype, TL_CPU);
    if (!edges) return -1;
    if (self->dtype == TL_FLOAT32) {
        float *ed = tl_tensor_data_ptr(edges);
        const float a = (float)left, b = (float)right, step = (b - a) / (float)(ne - 1);
        for (int64_t i = 0; i < ne; i++) ed[i] = i < ne / 2 ? fmaf(step, (float)i, a) : fmaf(-step, (float)(ne - i - 1), b);
    } else {
        double *ed = tl_tensor_data_ptr(edges);
        const double step = (right - left) / (double)(ne - 1);
        for (int64_t i = 0; i < ne; i++)
            ed[i] = i < ne / 2 ? fma(step, (double)i, left) : fma(-step, (double)(ne - i - 1), right);
    }
    const int rc = histogram_impl(self, edges, true, weight, density, ret0, ret1);
    tl_tensor_release(edges);
    return rc;
}

static int hist_to_out(int rc, tl_tensor *h, tl_tensor *e, tl_tensor *hist, tl_tensor *bin_edges, tl_tensor **ret0,
                       tl_tensor **ret1) {
    if (rc) return -1;
    tl_tensor *a = tl_missing_copy_to_out(h, hist);
    tl_tensor *b = a ? tl_missing_copy_to_out(e, bin_edges) : (tl_tensor_release(e), NULL);
    if (!a || !b) {
        tl_tensor_release(a);
        return -1;
    }
    *ret0 = a;
    *ret1 = b;
    return 0;
}

int tl_native_histogram_out(tl_keyset ks, tl_tensor *self, tl_tensor *bins, tl_tensor *weight, bool density,
                            tl_tensor *hist, tl_tensor *bin_edges, tl_tensor **ret0, tl_tensor **ret1) {
    tl_tensor *h = NULL, *e = NULL;
    const int rc = tl_native_histogram(ks, self, bins, weight, density, &h, &e);
    return hist_to_out(rc, h, e, hist, bin_edges, ret0, ret1);
}

int tl_native_histogram_out__histogram_bin_ct_out(tl_keyset ks, tl_tensor *self, int64_t bins, const double *range,
                                                  int64_t range_len, tl_tensor *weight, bool density, tl_tensor *hist,
                                                  tl_tensor *bin_edges, tl_tensor **ret0, tl_tensor **ret1) {
    tl_tensor *h = NULL, *e = NULL;
    const int rc = tl_native_histogram__histogram_bin_ct(ks, self, bins, range, range_len, weight, density, &h, &e);
    return hist_to_out(rc, h, e, hist, bin_edges, ret0, ret1);
}
