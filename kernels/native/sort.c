/* Sorting and selection (aten/src/ATen/native/Sorting.cpp, TensorCompare.cpp,
 * Unique.cpp): sort / sort.stable, argsort, msort, topk, _unique2.
 *
 * One engine: each row along `dim` (a contiguous copy with dim moved last) is
 * turned into order-preserving unsigned keys (floats: sign-flipped bits,
 * -0.0 folded into 0.0, every NaN the largest key; signed ints: the sign bit
 * flipped; descending: the keys complemented) and sorted with a stable LSD
 * radix sort on (key, index) pairs, 8 bits a pass, skipping passes whose digit
 * is the same for every element; rows of up to 32 elements use insertion
 * sort. Every sort is therefore stable (PyTorch's stable=True order: equal
 * elements keep their order; NaN last ascending, first descending), rows run
 * on the thread pool, and values are read back from the input through the
 * sorted indices. topk instead selects as PyTorch's does (libstdc++'s
 * partial_sort / nth_element / sort, reproduced), so that ties come out the
 * same. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "complex_ops.h"
#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/_unique2.h"
#include "ops/argsort.h"
#include "ops/msort.h"
#include "ops/sort.h"
#include "ops/topk.h"
#include "tl_tensor.h"

/* ------------------------------------------------------------ keys */

static inline uint64_t key_f32(float f) {
    if (f != f) return UINT32_MAX;
    if (f == 0.0f) f = 0.0f;   /* -0.0 sorts with 0.0 */
    uint32_t u;
    memcpy(&u, &f, 4);
    return u & 0x80000000u ? ~u : u | 0x80000000u;
}

static inline uint64_t key_f64(double f) {
    if (f != f) return UINT64_MAX;
    if (f == 0.0) f = 0.0;
    uint64_t u;
    memcpy(&u, &f, 8);
    return u & 0x8000000000000000ull ? ~u : u | 0x8000000000000000ull;
}

/* the keys of row `src` (dtype dt; float16 / bfloat16 arrive as float32) and
 * their width in bytes */
static int row_keys(const void *src, tl_dtype dt, int64_t n, bool desc, uint64_t *key) {
    int width = 4;
    switch (dt) {
    case TL_FLOAT32: for (int64_t i = 0; i < n; i++) key[i] = key_f32(((const float *)src)[i]); break;
    case TL_FLOAT64: width = 8; for (int64_t i = 0; i < n; i++) key[i] = key_f64(((const double *)src)[i]); break;
    case TL_INT64:
        width = 8;
        for (int64_t i = 0; i < n; i++) key[i] = (uint64_t)((const int64_t *)src)[i] ^ 0x8000000000000000ull;
        break;
    case TL_INT32: for (int64_t i = 0; i < n; i++) key[i] = (uint32_t)((const int32_t *)src)[i] ^ 0x80000000u; break;
    case TL_INT16: for (int64_t i = 0; i < n; i++) key[i] = (uint32_t)(int32_t)((const int16_t *)src)[i] ^ 0x80000000u; break;
    case TL_INT8: for (int64_t i = 0; i < n; i++) key[i] = (uint32_t)(int32_t)((const int8_t *)src)[i] ^ 0x80000000u; break;
    default: for (int64_t i = 0; i < n; i++) key[i] = ((const uint8_t *)src)[i]; break;   /* uint8, bool */
    }
    if (desc) {
        const uint64_t m = width == 8 ? UINT64_MAX : UINT32_MAX;
        for (int64_t i = 0; i < n; i++) key[i] = ~key[i] & m;
    }
    return width;
}

/* stable sort of idx[0..n) by key (both permuted together); tmp: 2n scratch */
static void sort_pairs(uint64_t *key, int64_t *idx, int64_t n, int width, uint64_t *tk, int64_t *ti) {
    if (n <= 32) {
        for (int64_t i = 1; i < n; i++) {
            const uint64_t k = key[i];
            const int64_t x = idx[i];
            int64_t j = i;
            for (; j > 0 && key[j - 1] > k; j--) {
                key[j] = key[j - 1];
                idx[j] = idx[j - 1];
            }
            key[j] = k;
            idx[j] = x;
        }
        return;
    }
    int64_t hist[8][256];
    memset(hist, 0, sizeof hist);
    for (int64_t i = 0; i < n; i++)
        for (int p = 0; p < width; p++) hist[p][(key[i] >> (8 * p)) & 0xff]++;
    uint64_t *ka = key, *kb = tk;
    int64_t *ia = idx, *ib = ti;
    for (int p = 0; p < width; p++) {
        int64_t *h = hist[p], sum = 0;
        bool skip = false;
        for (int b = 0; b < 256; b++)
            if (h[b] == n) skip = true;
        if (skip) continue;
        for (int b = 0; b < 256; b++) {
            const int64_t c = h[b];
            h[b] = sum;
            sum += c;
        }
        for (int64_t i = 0; i < n; i++) {
            const int64_t o = h[(ka[i] >> (8 * p)) & 0xff]++;
            kb[o] = ka[i];
            ib[o] = ia[i];
        }
        uint64_t *kt = ka; ka = kb; kb = kt;
        int64_t *it = ia; ia = ib; ib = it;
    }
    if (ka != key) {
        memcpy(key, ka, (size_t)n * sizeof *key);
        memcpy(idx, ia, (size_t)n * sizeof *idx);
    }
}

/* ------------------------------------------------------------ topk selection */

/* PyTorch's CPU topk (TopKImpl.h) selects with std::partial_sort when
 * k * 64 <= n, else std::nth_element (then std::sort of the first k - 1 when
 * sorted). Which of several equal elements it returns, and in what order,
 * is that of libstdc++'s algorithms, reproduced here step for step on
 * (key, index) pairs; "before" is the comparator: a larger key first for
 * largest (NaN, the largest key, on top), a smaller one first otherwise. */
typedef struct {
    uint64_t k;
    int64_t i;
} kpair;

typedef struct {
    kpair *a;
    bool largest;
} selector;

static inline bool before(const selector *s, kpair x, kpair y) { return s->largest ? x.k > y.k : x.k < y.k; }

static inline void pswap(kpair *a, int64_t x, int64_t y) {
    const kpair t = a[x];
    a[x] = a[y];
    a[y] = t;
}

static void push_heap(const selector *s, int64_t first, int64_t hole, int64_t top, kpair v) {
    kpair *a = s->a;
    int64_t parent = (hole - 1) / 2;
    while (hole > top && before(s, a[first + parent], v)) {
        a[first + hole] = a[first + parent];
        hole = parent;
        parent = (hole - 1) / 2;
    }
    a[first + hole] = v;
}

static void adjust_heap(const selector *s, int64_t first, int64_t hole, int64_t len, kpair v) {
    kpair *a = s->a;
    const int64_t top = hole;
    int64_t child = hole;
    while (child < (len - 1) / 2) {
        child = 2 * (child + 1);
        if (before(s, a[first + child], a[first + child - 1])) child--;
        a[first + hole] = a[first + child];
        hole = child;
    }
    if ((len & 1) == 0 && child == (len - 2) / 2) {
        child = 2 * (child + 1);
        a[first + hole] = a[first + child - 1];
        hole = child - 1;
    }
    push_heap(s, first, hole, top, v);
}

static void pop_heap(const selector *s, int64_t first, int64_t last, int64_t result) {
    const kpair v = s->a[result];
    s->a[result] = s->a[first];
    adjust_heap(s, first, 0, last - first, v);
}

static void make_heap(const selector *s, int64_t first, int64_t middle) {
    const int64_t len = middle - first;
    if (len >= 2)
        for (int64_t parent = (len - 2) / 2;; parent--) {
            adjust_heap(s, first, parent, len, s->a[first + parent]);
            if (parent == 0) break;
        }
}

static void heap_select(const selector *s, int64_t first, int64_t middle, int64_t last) {
    make_heap(s, first, middle);
    for (int64_t i = middle; i < last; i++)
        if (before(s, s->a[i], s->a[first])) pop_heap(s, first, middle, i);
}

static void sort_heap(const selector *s, int64_t first, int64_t last) {
    while (last - first > 1) {
        last--;
        pop_heap(s, first, last, last);
    }
}

static void unguarded_linear_insert(const selector *s, int64_t last) {
    kpair *a = s->a;
    const kpair v = a[last];
    while (before(s, v, a[last - 1])) {
        a[last] = a[last - 1];
        last--;
    }
    a[last] = v;
}

static void insertion_sort(const selector *s, int64_t first, int64_t last) {
    kpair *a = s->a;
    if (first == last) return;
    for (int64_t i = first + 1; i < last; i++) {
        if (before(s, a[i], a[first])) {
            const kpair v = a[i];
            memmove(a + first + 1, a + first, (size_t)(i - first) * sizeof *a);
            a[first] = v;
        } else {
            unguarded_linear_insert(s, i);
        }
    }
}

static void move_median_to_first(const selector *s, int64_t result, int64_t x, int64_t y, int64_t z) {
    const kpair *a = s->a;
    if (before(s, a[x], a[y])) {
        if (before(s, a[y], a[z])) pswap(s->a, result, y);
        else if (before(s, a[x], a[z])) pswap(s->a, result, z);
        else pswap(s->a, result, x);
    } else if (before(s, a[x], a[z])) {
        pswap(s->a, result, x);
    } else if (before(s, a[y], a[z])) {
        pswap(s->a, result, z);
    } else {
        pswap(s->a, result, y);
    }
}

static int64_t partition_pivot(const selector *s, int64_t first, int64_t last) {
    kpair *a = s->a;
    move_median_to_first(s, first, first + 1, first + (last - first) / 2, last - 1);
    const int64_t pivot = first;
    first++;
    for (;;) {
        while (before(s, a[first], a[pivot])) first++;
        last--;
        while (before(s, a[pivot], a[last])) last--;
        if (!(first < last)) return first;
        pswap(a, first, last);
        first++;
    }
}

static int64_t lg2(int64_t n) { return 63 - __builtin_clzll((unsigned long long)n); }

static void introsort_loop(const selector *s, int64_t first, int64_t last, int64_t depth) {
    while (last - first > 16) {
        if (depth == 0) {
            heap_select(s, first, last, last);
            sort_heap(s, first, last);
            return;
        }
        depth--;
        const int64_t cut = partition_pivot(s, first, last);
        introsort_loop(s, cut, last, depth);
        last = cut;
    }
}

/* std::sort */
static void std_sort(const selector *s, int64_t first, int64_t last) {
    if (first == last) return;
    introsort_loop(s, first, last, lg2(last - first) * 2);
    if (last - first > 16) {
        insertion_sort(s, first, first + 16);
        for (int64_t i = first + 16; i < last; i++) unguarded_linear_insert(s, i);
    } else {
        insertion_sort(s, first, last);
    }
}

/* std::nth_element */
static void nth_element(const selector *s, int64_t first, int64_t nth, int64_t last) {
    if (first == last || nth == last) return;
    int64_t depth = lg2(last - first) * 2;
    while (last - first > 3) {
        if (depth == 0) {
            heap_select(s, first, nth + 1, last);
            pswap(s->a, first, nth);
            return;
        }
        depth--;
        const int64_t cut = partition_pivot(s, first, last);
        if (cut <= nth) first = cut;
        else last = cut;
    }
    insertion_sort(s, first, last);
}

/* the first k of a[0, n) as PyTorch's topk leaves them */
static void topk_select(kpair *a, int64_t n, int64_t k, bool largest, bool sorted) {
    const selector s = {a, largest};
    if (k * 64 <= n) {
        heap_select(&s, 0, k, n);
        sort_heap(&s, 0, k);
    } else {
        nth_element(&s, 0, k - 1, n);
        if (sorted) std_sort(&s, 0, k - 1);
    }
}

/* topk_select's partial_sort path (k * 64 <= n) without the n pairs: the
 * heap of the first k, then each later element, its key made a chunk at a
 * time, against the heap's top. heap_select over all n pairs does the same
 * steps (what it writes behind the heap is never read again), so ties come
 * out the same; a 2^20-element row no longer allocates and faults in 16 MB. */
#define TOPK_BLOCK 16

/* some key of key[0, m) comes before the heap's top (`before` of each): one
 * branch-free pass over a block */
static inline bool keys_have_candidate(const uint64_t *key, int64_t m, uint64_t top, bool largest) {
    uint64_t any = 0;
    if (largest)
        for (int64_t i = 0; i < m; i++) any |= key[i] > top;
    else
        for (int64_t i = 0; i < m; i++) any |= key[i] < top;
    return any != 0;
}

/* the same test on float32 values, before their keys are made: the top's key
 * turned back into a float t, key(x) > top is x > t or x NaN (largest) and
 * key(x) < top is x < t (-0.0 and 0.0 share a key and compare equal); a NaN
 * top (the largest key) is left to the element-wise test */
static inline bool f32_have_candidate(const float *x, int64_t m, uint64_t top, bool largest) {
    if (top >= UINT32_MAX) return true;
    const uint32_t u = top & 0x80000000u ? (uint32_t)top & 0x7fffffffu : ~(uint32_t)top;
    float t;
    memcpy(&t, &u, 4);
    int any = 0;
    if (largest)
        for (int64_t i = 0; i < m; i++) any |= (x[i] > t) | (x[i] != x[i]);
    else
        for (int64_t i = 0; i < m; i++) any |= x[i] < t;
    return any != 0;
}

static void topk_stream(const char *src, tl_dtype dt, int64_t itemsize, int64_t n, int64_t k, bool largest,
                        kpair *heap) {
    const selector s = {heap, largest};
    uint64_t key[TOPK_BLOCK];
    /* after the first few blocks of a row most blocks hold no candidate: a
     * block is skipped on one vectorized test, float32 without making keys */
    for (int64_t off = 0; off < n; off += TOPK_BLOCK) {
        const int64_t m = n - off < TOPK_BLOCK ? n - off : TOPK_BLOCK;
        const char *b = src + off * itemsize;
        if (off >= k && dt == TL_FLOAT32 && !f32_have_candidate((const float *)b, m, heap[0].k, largest)) continue;
        row_keys(b, dt, m, false, key);
        if (off >= k && dt != TL_FLOAT32 && !keys_have_candidate(key, m, heap[0].k, largest)) continue;
        for (int64_t i = 0; i < m; i++) {
            const kpair v = {key[i], off + i};
            if (off + i < k) {
                heap[off + i] = v;
                if (off + i == k - 1) make_heap(&s, 0, k);
            } else if (before(&s, v, heap[0])) {
                adjust_heap(&s, 0, 0, k, v);   /* pop_heap(0, k, i) with a[i] = v */
            }
        }
    }
    sort_heap(&s, 0, k);
}

/* ------------------------------------------------------------ rows */

typedef struct {
    const char *keysrc;   /* rows of the key dtype */
    const char *valsrc;   /* rows of the input dtype */
    tl_dtype kdt;
    int64_t kitem, vitem, n, k;
    bool desc;
    int topk;             /* 0: a stable sort; 1 / 2: topk's selection, unsorted / sorted */
    char *vals;           /* rows of k values (NULL: none wanted) */
    int64_t *inds;        /* rows of k indices */
    int err;
} sort_job;

static void sort_rows(int64_t begin, int64_t end, void *ctx) {
    sort_job *j = ctx;
    const int64_t n = j->n;
    const bool stream = j->topk && j->k > 0 && j->k * 64 <= n;   /* topk_stream's case */
    /* sort: keys and indices with as much scratch; topk: n pairs (k streamed) */
    uint64_t *key = stream ? NULL : malloc((size_t)((j->topk ? 1 : 2) * n + 1) * sizeof *key);
    int64_t *idx = malloc((size_t)((stream ? j->k : 2 * n) + 1) * sizeof *idx);
    kpair *pairs = j->topk ? malloc((size_t)((stream ? j->k : n) + 1) * sizeof *pairs) : NULL;
    if ((!stream && !key) || !idx || (j->topk && !pairs)) {
        j->err = 1;
        free(key);
        free(idx);
        free(pairs);
        return;
    }
    for (int64_t r = begin; r < end; r++) {
        if (stream) {
            topk_stream(j->keysrc + r * n * j->kitem, j->kdt, j->kitem, n, j->k, j->desc, pairs);
            for (int64_t i = 0; i < j->k; i++) idx[i] = pairs[i].i;
        } else if (j->topk) {   /* ascending keys; largest picks the comparator */
            row_keys(j->keysrc + r * n * j->kitem, j->kdt, n, false, key);
            for (int64_t i = 0; i < n; i++) pairs[i] = (kpair){key[i], i};
            topk_select(pairs, n, j->k, j->desc, j->topk == 2);
            for (int64_t i = 0; i < j->k; i++) idx[i] = pairs[i].i;
        } else {
            const int width = row_keys(j->keysrc + r * n * j->kitem, j->kdt, n, j->desc, key);
            for (int64_t i = 0; i < n; i++) idx[i] = i;
            sort_pairs(key, idx, n, width, key + n, idx + n);
        }
        memcpy(j->inds + r * j->k, idx, (size_t)j->k * sizeof *idx);
        if (!j->vals) continue;
        const char *src = j->valsrc + r * n * j->vitem;
        char *dst = j->vals + r * j->k * j->vitem;
        switch (j->vitem) {
        case 1: for (int64_t i = 0; i < j->k; i++) dst[i] = src[idx[i]]; break;
        case 2: for (int64_t i = 0; i < j->k; i++) ((uint16_t *)dst)[i] = ((const uint16_t *)src)[idx[i]]; break;
        case 4: for (int64_t i = 0; i < j->k; i++) ((uint32_t *)dst)[i] = ((const uint32_t *)src)[idx[i]]; break;
        default: for (int64_t i = 0; i < j->k; i++) ((uint64_t *)dst)[i] = ((const uint64_t *)src)[idx[i]]; break;
        }
    }
    free(pairs);
    free(key);
    free(idx);
}

/* values / indices of the first k of each row along dim, sorted ascending or
 * descending (topk: as sort_job's field, desc meaning largest); either output
 * may be skipped (NULL). Outputs are contiguous. */
static int sort_core(tl_tensor *self, int64_t dim, int64_t k, bool desc, int topk, tl_tensor **values,
                     tl_tensor **indices) {
    if (tl__refuse_complex(self, 0, topk ? " topk does not support complex dtypes on CPU"
                                         : " Sort does not support complex dtypes on CPU"))
        return -1;
    const int64_t nd = self->ndim;
    const int64_t d = tl__wrap_dim(dim, nd, 1);
    if (d < 0) return -1;
    int64_t shape[TL_MAX_DIMS];
    for (int64_t i = 0; i < nd; i++) shape[i] = i == d ? k : self->sizes[i];
    tl_tensor *vo = values ? tl_empty(nd, shape, self->dtype, tl__device_of(self)) : NULL;
    tl_tensor *io = tl_empty(nd, shape, TL_INT64, tl__device_of(self));
    if ((values && !vo) || !io) goto fail;
    if (self->device != TL_META && k > 0 && io->numel > 0) {
        const int64_t last = nd ? nd - 1 : 0, n = nd ? self->sizes[d] : 1;
        tl_tensor *moved = nd ? tl_transpose(self, d, last) : tl_alias(self);
        tl_tensor *vsrc = moved ? tl_contiguous(moved) : NULL;
        tl_tensor_release(moved);
        const bool half = self->dtype == TL_FLOAT16 || self->dtype == TL_BFLOAT16;
        tl_tensor *ksrc = vsrc && half ? tl_to_dtype(vsrc, TL_FLOAT32, 0) : vsrc;
        if (ksrc && ksrc == vsrc) tl_tensor_retain(ksrc);
        /* results in the moved layout, copied back through a transposed view */
        int64_t mshape[TL_MAX_DIMS];
        for (int64_t i = 0; i < nd; i++) mshape[i] = shape[i];
        if (nd) {
            mshape[d] = shape[last];
            mshape[last] = k;
        }
        const bool direct = d == last;
        tl_tensor *vt = !values ? NULL : direct ? (tl_tensor_retain(vo), vo) : tl_empty(nd, mshape, self->dtype, TL_CPU);
        tl_tensor *it = direct ? (tl_tensor_retain(io), io) : tl_empty(nd, mshape, TL_INT64, TL_CPU);
        int rc = -1;
        if (vsrc && ksrc && it && (!values || vt)) {
            sort_job j = {tl_tensor_data_ptr(ksrc), tl_tensor_data_ptr(vsrc), ksrc->dtype,
                          tl_dtype_itemsize(ksrc->dtype), tl_dtype_itemsize(self->dtype), n, k, desc, topk,
                          vt ? tl_tensor_data_ptr(vt) : NULL, tl_tensor_data_ptr(it), 0};
            const int64_t rows = io->numel / k;
            tl_parallel_for(rows, n >= 4096 ? 1 : 1 + 4096 / (n ? n : 1), sort_rows, &j);
            rc = j.err ? tl_set_error(TL_ERR_MEMORY, "out of memory") : 0;
            if (!rc && !direct) {
                tl_tensor *iv = tl_transpose(io, d, last);
                rc = iv ? tl_copy_(iv, it) : -1;
                tl_tensor_release(iv);
                if (!rc && values) {
                    tl_tensor *vv = tl_transpose(vo, d, last);
                    rc = vv ? tl_copy_(vv, vt) : -1;
                    tl_tensor_release(vv);
                }
            }
        }
        tl_tensor_release(vsrc);
        tl_tensor_release(ksrc);
        tl_tensor_release(vt);
        tl_tensor_release(it);
        if (rc) goto fail;
    }
    if (values) *values = vo;
    *indices = io;
    return 0;
fail:
    tl_tensor_release(vo);
    tl_tensor_release(io);
    return -1;
}

/* ------------------------------------------------------------ sort / argsort / msort */

int tl_native_sort_stable(tl_keyset ks, tl_tensor *self, bool stable, bool stable_has, int64_t dim, bool descending,
                          tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks; (void)stable; (void)stable_has;   /* every sort here is stable */
    const int64_t d = tl__wrap_dim(dim, self->ndim, 1);
    if (d < 0) return -1;
    return sort_core(self, dim, self->ndim ? self->sizes[d] : 1, descending, 0, ret0, ret1);
}

int tl_native_sort(tl_keyset ks, tl_tensor *self, int64_t dim, bool descending, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    return tl_ops_sort_stable(self, false, true, dim, descending, ret0, ret1);
}

tl_tensor *tl_native_argsort(tl_keyset ks, tl_tensor *self, int64_t dim, bool descending) {
    (void)ks;
    tl_tensor *v = NULL, *i = NULL;
    if (tl_ops_sort(self, dim, descending, &v, &i)) return NULL;
    tl_tensor_release(v);
    return i;
}

tl_tensor *tl_native_argsort_stable(tl_keyset ks, tl_tensor *self, bool stable, int64_t dim, bool descending) {
    (void)ks;
    tl_tensor *v = NULL, *i = NULL;
    if (tl_ops_sort_stable(self, stable, true, dim, descending, &v, &i)) return NULL;
    tl_tensor_release(v);
    return i;
}

tl_tensor *tl_native_msort(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    tl_tensor *v = NULL, *i = NULL;
    if (tl_ops_sort(self, 0, false, &v, &i)) return NULL;
    tl_tensor_release(i);
    return v;
}

/* ------------------------------------------------------------ topk */

int tl_native_topk(tl_keyset ks, tl_tensor *self, int64_t k, int64_t dim, bool largest, bool sorted,
                   tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    const int64_t d = tl__wrap_dim(dim, self->ndim, 1);
    if (d < 0) return -1;
    const int64_t n = self->ndim ? self->sizes[d] : 1;
    if (k < 0 || k > n) return tl_set_error(TL_ERR_RUNTIME, "selected index k out of range");
    return sort_core(self, dim, k, largest, sorted ? 2 : 1, ret0, ret1);
}

/* ------------------------------------------------------------ unique */

/* PyTorch's _unique2 on the flattened input: the sorted distinct values
 * (equal by value: -0.0 with 0.0, every NaN its own), the index of each
 * element's value among them (self's shape) and the count of each. Always
 * sorted (sorted=False allows any order). */
int tl_native__unique2_cpu(tl_keyset ks, tl_tensor *self, bool sorted, bool return_inverse, bool return_counts,
                           tl_tensor **ret0, tl_tensor **ret1, tl_tensor **ret2) {
    (void)ks; (void)sorted;
    const int64_t n = self->numel, zero = 0;
    tl_tensor *flat = tl_reshape(self, 1, &n);
    tl_tensor *sv = NULL, *si = NULL, *out = NULL, *inv = NULL, *cnt = NULL;
    if (!flat || sort_core(flat, 0, n, false, 0, &sv, &si)) goto fail;
    const int64_t *perm = tl_tensor_data_ptr(si);
    const bool fl = tl_dtype_is_floating(self->dtype);
    tl_tensor *keyt = fl && self->dtype != TL_FLOAT64 ? tl_to_dtype(sv, TL_FLOAT32, 0) : sv;
    if (!keyt) goto fail;
    if (keyt == sv) tl_tensor_retain(keyt);
    /* group starts: element i of the sorted values differs from i - 1 */
    int64_t *start = malloc((size_t)(n + 1) * sizeof *start), u = 0;
    if (!start) {
        tl_tensor_release(keyt);
        tl_set_error(TL_ERR_MEMORY, "out of memory");
        goto fail;
    }
    const char *kv = tl_tensor_data_ptr(keyt);
    const int64_t item = tl_dtype_itemsize(keyt->dtype);
    for (int64_t i = 0; i < n; i++) {
        bool same = false;
        if (i > 0) {
            if (keyt->dtype == TL_FLOAT32) {
                const float a = ((const float *)kv)[i - 1], b = ((const float *)kv)[i];
                same = a == b;
            } else if (keyt->dtype == TL_FLOAT64) {
                const double a = ((const double *)kv)[i - 1], b = ((const double *)kv)[i];
                same = a == b;
            } else {
                same = memcmp(kv + (i - 1) * item, kv + i * item, (size_t)item) == 0;
            }
        }
        if (!same) start[u++] = i;
    }
    start[u] = n;
    tl_tensor_release(keyt);
    out = tl_empty(1, &u, self->dtype, TL_CPU);
    inv = return_inverse ? tl_empty(self->ndim, self->sizes, TL_INT64, TL_CPU) : tl_empty(1, &zero, TL_INT64, TL_CPU);
    cnt = return_counts ? tl_empty(1, &u, TL_INT64, TL_CPU) : tl_empty(1, &zero, TL_INT64, TL_CPU);
    if (!out || !inv || !cnt) {
        free(start);
        goto fail;
    }
    const int64_t vitem = tl_dtype_itemsize(self->dtype);
    const char *vals = tl_tensor_data_ptr(sv);
    char *o = tl_tensor_data_ptr(out);
    int64_t *ip = tl_tensor_data_ptr(inv), *cp = tl_tensor_data_ptr(cnt);
    for (int64_t g = 0; g < u; g++) {
        memcpy(o + g * vitem, vals + start[g] * vitem, (size_t)vitem);
        if (return_counts) cp[g] = start[g + 1] - start[g];
        if (return_inverse)
            for (int64_t i = start[g]; i < start[g + 1]; i++) ip[perm[i]] = g;
    }
    free(start);
    tl_tensor_release(flat);
    tl_tensor_release(sv);
    tl_tensor_release(si);
    *ret0 = out;
    *ret1 = inv;
    *ret2 = cnt;
    return 0;
fail:
    tl_tensor_release(flat);
    tl_tensor_release(sv);
    tl_tensor_release(si);
    tl_tensor_release(out);
    tl_tensor_release(inv);
    tl_tensor_release(cnt);
    return -1;
}
