/* TensorIterator (tl_iter.h).
 *
 * Dimension order inside the iterator is innermost first (dim 0 is the
 * fastest-moving one), as in ATen: `shape[0]` is the length the inner loop
 * sees. Strides are kept in bytes per operand.
 */
#include <stdio.h>
#include <stdlib.h>

#include "tl_internal.h"
#include "tl_kernel.h"
#include "tl_thresholds.h"   /* tl_cpu_store_policy: when streaming stores pay off */

typedef struct tl_iter_op {
    tl_tensor *tensor;        /* what the loop reads / writes (own reference) */
    tl_tensor *original;      /* out= tensor to copy the result into, when tensor is a temporary */
    int is_output;
    int will_resize;          /* output NULL or of another shape */
    int borrowed;             /* input held by the caller for the iterator's life: no reference taken */
    int keep_dtype;           /* input read in its own dtype: not promoted, not in the common dtype */
    tl_dtype target_dtype;    /* outputs to allocate: their dtype */
    char *data;
    int64_t strides[TL_MAX_DIMS];  /* bytes, iterator order */
} tl_iter_op;

struct tl_iter {
    uint32_t flags;
    int nout, nin, nops;
    int nkeep;                           /* inputs with keep_dtype */
    tl_dtype forced_common;
    tl_dtype output_dtype;
    tl_dtype common_dtype;
    tl_device_type device;
    int built, is_meta, compute_only;
    int64_t result_ndim;
    int64_t ndim;                        /* loop dims after coalescing */
    int64_t perm_ndim;
    int64_t numel;
    /* arrays below are written before they are read: not reset between uses */
    int64_t result_shape[TL_MAX_DIMS];   /* broadcast shape, normal order */
    int64_t shape[TL_MAX_DIMS];          /* iterator order */
    int64_t perm[TL_MAX_DIMS];           /* iter dim -> result dim, before coalescing */
    tl_iter_op ops[TL_ITER_MAX_OPERANDS];  /* only the used entries are reset */
};

/* one freed iterator per thread is kept for the next op: no calloc of ~6 KB
 * per call (only a pointer lives in TLS) */
static _Thread_local tl_iter *g_spare __attribute__((tls_model("initial-exec"))) = NULL;

static void format_shape(char *buf, size_t cap, int64_t n, const int64_t *v) {
    size_t pos = (size_t)snprintf(buf, cap, "[");
    for (int64_t i = 0; i < n && pos < cap; i++)
        pos += (size_t)snprintf(buf + pos, cap - pos, i ? ", %lld" : "%lld", (long long)v[i]);
    if (pos < cap) snprintf(buf + pos, cap - pos, "]");
}

tl_iter *tl_iter_new(uint32_t flags) {
    tl_iter *it = g_spare;
    if (it) {
        g_spare = NULL;
        memset(it, 0, offsetof(tl_iter, result_shape));
    } else {
        it = calloc(1, sizeof *it);
        if (!it) { tl_set_error(TL_ERR_MEMORY, "out of memory allocating a TensorIterator"); return NULL; }
    }
    it->flags = flags;
    it->forced_common = TL_DTYPE_UNDEFINED;
    it->output_dtype = TL_DTYPE_UNDEFINED;
    it->common_dtype = TL_DTYPE_UNDEFINED;
    return it;
}

void tl_iter_free(tl_iter *it) {
    if (!it) return;
    for (int i = 0; i < it->nops; i++) {
        if (!it->ops[i].borrowed) tl_tensor_release(it->ops[i].tensor);
        if (it->ops[i].original) tl_tensor_release(it->ops[i].original);
    }
    if (!g_spare) g_spare = it;
    else free(it);
}

int tl_iter_add_output(tl_iter *it, tl_tensor *out) {
    if (it->nin > 0) return tl_set_error(TL_ERR_RUNTIME, "TensorIterator: add outputs before inputs");
    if (it->nops >= TL_ITER_MAX_OPERANDS) return tl_set_error(TL_ERR_RUNTIME, "TensorIterator: too many operands");
    tl_iter_op *op = &it->ops[it->nops++];
    memset(op, 0, offsetof(tl_iter_op, strides));
    op->is_output = 1;
    op->tensor = out;
    tl_tensor_retain(out);
    it->nout++;
    return 0;
}

static int add_input(tl_iter *it, const tl_tensor *in, int borrow) {
    if (!in) return tl_set_error(TL_ERR_RUNTIME, "TensorIterator: undefined input tensor");
    if (it->nops >= TL_ITER_MAX_OPERANDS) return tl_set_error(TL_ERR_RUNTIME, "TensorIterator: too many operands");
    tl_iter_op *op = &it->ops[it->nops++];
    memset(op, 0, offsetof(tl_iter_op, strides));
    op->tensor = (tl_tensor *)in;
    op->borrowed = borrow;
    if (!borrow) tl_tensor_retain(op->tensor);
    it->nin++;
    return 0;
}

int tl_iter_add_input(tl_iter *it, const tl_tensor *in) { return add_input(it, in, 0); }

/* ATen's borrowing TensorIterator: the caller keeps `in` alive until
 * tl_iter_free (structured kernels: their arguments), so no retain / release
 * pair of atomics per input */
int tl__iter_add_input_borrowed(tl_iter *it, const tl_tensor *in) { return add_input(it, in, 1); }

/* the last input added keeps its dtype (where's bool condition beside two
 * promoted inputs): the loop reads it as it is */
int tl__iter_keep_last_input_dtype(tl_iter *it) {
    if (it->nin == 0) return tl_set_error(TL_ERR_RUNTIME, "TensorIterator: no input to keep");
    it->ops[it->nops - 1].keep_dtype = 1;
    it->nkeep++;
    return 0;
}

int tl_iter_set_common_dtype(tl_iter *it, tl_dtype dt) {
    if (!tl__dtype_valid(dt)) return tl_set_error(TL_ERR_VALUE, "invalid dtype %d", (int)dt);
    it->forced_common = dt;
    return 0;
}

int tl_iter_set_output_dtype(tl_iter *it, tl_dtype dt) {
    if (!tl__dtype_valid(dt)) return tl_set_error(TL_ERR_VALUE, "invalid dtype %d", (int)dt);
    it->output_dtype = dt;
    return 0;
}

/* ---------------------------------------------------------- type promotion */
typedef struct { tl_dtype dim, zero, wrapped; } result_state;

static int is_cpu_scalar(const tl_tensor *t) { return t->ndim == 0 && t->device == TL_CPU; }

static void update_state(result_state *st, const tl_tensor *t) {
    tl_dtype cur = t->dtype;
    if (tl_tensor_is_wrapped_number(t)) {
        if (tl__dtype_is_floating(cur)) cur = tl_get_default_dtype();
        else if (tl__dtype_is_complex(cur)) cur = tl_get_default_complex_dtype();
        st->wrapped = tl_promote_types(st->wrapped, cur);
    } else if (t->ndim == 0) {
        st->zero = tl_promote_types(st->zero, cur);
    } else {
        st->dim = tl_promote_types(st->dim, cur);
    }
}

static tl_dtype combine_categories(tl_dtype higher, tl_dtype lower) {
    if (tl__dtype_is_complex(higher)) return higher;
    if (tl__dtype_is_complex(lower))   /* a floating higher keeps its width */
        return tl__dtype_is_floating(higher) ? tl_dtype_to_complex(higher) : lower;
    if (tl__dtype_is_floating(higher)) return higher;
    if (higher == TL_BOOL || tl__dtype_is_floating(lower)) return tl_promote_types(higher, lower);
    if ((int)higher != TL_DTYPE_UNDEFINED) return higher;
    return lower;
}

static tl_dtype state_result(const result_state *st) {
    return combine_categories(st->dim, combine_categories(st->zero, st->wrapped));
}

tl_dtype tl_result_type(int64_t n, tl_tensor **tensors) {
    result_state st = {TL_DTYPE_UNDEFINED, TL_DTYPE_UNDEFINED, TL_DTYPE_UNDEFINED};
    for (int64_t i = 0; i < n; i++)
        if (tensors[i]) update_state(&st, tensors[i]);
    return state_result(&st);
}

/* ---------------------------------------------------------------- build */
static int compute_devices(tl_iter *it) {
    /* devices compare with their index (tl__device_of packs cuda's); CPU
     * 0-dim tensors may sit beside tensors of any device, as in PyTorch */
    int have = 0;
    tl_device_type dev = TL_CPU;
    const tl_tensor *first = NULL;
    for (int i = 0; i < it->nops; i++) {
        tl_tensor *t = it->ops[i].tensor;
        if (!t || is_cpu_scalar(t)) continue;
        if (!have) { dev = tl__device_of(t); first = t; have = 1; }
        else if (tl__device_of(t) != dev) {
            const char *a = tl__tensor_device_str(first), *b = tl__tensor_device_str(t);
            return tl_set_error(TL_ERR_RUNTIME,
                                "Expected all tensors to be on the same device, but found at least two devices, "
                                "%s and %s!", a, b);
        }
    }
    if (!have) {
        /* all scalars: a defined output decides, else cpu */
        for (int i = 0; i < it->nout; i++)
            if (it->ops[i].tensor) { dev = tl__device_of(it->ops[i].tensor); break; }
    }
    it->device = dev;   /* packed: outputs are allocated on the same cuda device */
    it->is_meta = dev == TL_META;
    return 0;
}

static int compute_shape(tl_iter *it) {
    int64_t nd = 0;
    int64_t shape[TL_MAX_DIMS];
    int fixed = (it->flags & TL_ITER_NO_BROADCAST_OUTPUT) && it->nout > 0 && it->ops[0].tensor;
    if (fixed) {
        tl_tensor *o = it->ops[0].tensor;
        nd = o->ndim;
        memcpy(shape, o->sizes, sizeof(int64_t) * (size_t)nd);
    }
    for (int i = it->nout; i < it->nops; i++) {
        tl_tensor *t = it->ops[i].tensor;
        if (t->ndim > nd) {
            if (fixed) goto mismatch;
            /* grow: shift right-aligned */
            int64_t add = t->ndim - nd;
            memmove(shape + add, shape, sizeof(int64_t) * (size_t)nd);
            for (int64_t k = 0; k < add; k++) shape[k] = 1;
            nd = t->ndim;
        }
        for (int64_t k = t->ndim - 1; k >= 0; k--) {
            int64_t d = nd - t->ndim + k;
            int64_t a = shape[d], b = t->sizes[k];
            if (a == b || b == 1) continue;
            if (a == 1 && !fixed) { shape[d] = b; continue; }
            if (fixed) goto mismatch;
            /* PyTorch's infer_size wording: a = earlier shape, b = this tensor */
            return tl_set_error(TL_ERR_RUNTIME,
                                "The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                                "non-singleton dimension %lld", (long long)a, (long long)b, (long long)d);
        }
        continue;
    mismatch: {
        char bo[512], bi[512];
        format_shape(bo, sizeof bo, it->ops[0].tensor->ndim, it->ops[0].tensor->sizes);
        /* broadcast shape of output with the input */
        int64_t bs[TL_MAX_DIMS], bn = t->ndim > nd ? t->ndim : nd;
        for (int64_t k = 0; k < bn; k++) {
            int64_t da = k - (bn - nd), db = k - (bn - t->ndim);
            int64_t a = da >= 0 ? shape[da] : 1, b = db >= 0 ? t->sizes[db] : 1;
            bs[k] = a == 1 ? b : a;
        }
        format_shape(bi, sizeof bi, bn, bs);
        return tl_set_error(TL_ERR_RUNTIME, "output with shape %s doesn't match the broadcast shape %s", bo, bi);
    }
    }
    it->result_ndim = nd;
    memcpy(it->result_shape, shape, sizeof(int64_t) * (size_t)nd);
    int64_t numel = 1;
    for (int64_t k = 0; k < nd; k++) numel *= shape[k];
    it->numel = numel;
    return 0;
}

static int compute_types(tl_iter *it) {
    uint32_t f = it->flags;
    tl_dtype common = TL_DTYPE_UNDEFINED;
    if ((int)it->forced_common != TL_DTYPE_UNDEFINED) {
        common = it->forced_common;
    } else if (f & (TL_ITER_PROMOTE_INPUTS | TL_ITER_INT_TO_FLOAT)) {
        result_state st = {TL_DTYPE_UNDEFINED, TL_DTYPE_UNDEFINED, TL_DTYPE_UNDEFINED};
        for (int i = it->nout; i < it->nops; i++)
            if (!it->ops[i].keep_dtype) update_state(&st, it->ops[i].tensor);
        common = state_result(&st);
    } else {
        for (int i = it->nout; i < it->nops; i++) {
            if (it->ops[i].keep_dtype) continue;
            tl_dtype d = it->ops[i].tensor->dtype;
            if ((int)common == TL_DTYPE_UNDEFINED) common = d;
            else if (common != d) {
                if (f & TL_ITER_ALL_SAME_DTYPE)
                    return tl_set_error(TL_ERR_RUNTIME, "Expected all tensors to have the same dtype, got %s and %s",
                                        tl_dtype_scalar_name(common), tl_dtype_scalar_name(d));
                common = TL_DTYPE_UNDEFINED;
                break;
            }
        }
    }
    if ((f & TL_ITER_INT_TO_FLOAT) && tl__dtype_valid(common) && tl_dtype_is_integral(common, 1))
        common = tl_get_default_dtype();
    it->common_dtype = common;

    for (int i = 0; i < it->nout; i++) {
        tl_iter_op *op = &it->ops[i];
        tl_dtype want = (int)it->output_dtype != TL_DTYPE_UNDEFINED ? it->output_dtype : common;
        if (!op->tensor) {
            if (!tl__dtype_valid(want))
                return tl_set_error(TL_ERR_RUNTIME, "TensorIterator: cannot infer the output dtype");
            op->target_dtype = want;
            op->will_resize = 1;
            continue;
        }
        op->target_dtype = op->tensor->dtype;
        if ((f & TL_ITER_SAFE_CASTING) && tl__dtype_valid(want) && !tl_can_cast(want, op->tensor->dtype))
            return tl_set_error(TL_ERR_RUNTIME, "result type %s can't be cast to the desired output type %s",
                                tl_dtype_scalar_name(want), tl_dtype_scalar_name(op->tensor->dtype));
        /* shape */
        tl_tensor *t = op->tensor;
        int same = t->ndim == it->result_ndim &&
                   memcmp(t->sizes, it->result_shape, sizeof(int64_t) * (size_t)t->ndim) == 0;
        if (!same) {
            if (!(f & TL_ITER_RESIZE_OUTPUTS)) {
                char bo[512], bs[512];
                format_shape(bo, sizeof bo, t->ndim, t->sizes);
                format_shape(bs, sizeof bs, it->result_ndim, it->result_shape);
                return tl_set_error(TL_ERR_RUNTIME, "output with shape %s doesn't match the broadcast shape %s",
                                    bo, bs);
            }
            if (t->numel != 0) {
                char bo[512], bs[512];
                format_shape(bo, sizeof bo, t->ndim, t->sizes);
                format_shape(bs, sizeof bs, it->result_ndim, it->result_shape);
                tl__warn("An output with one or more elements was resized since it had shape %s, which does not "
                         "match the required output shape %s. This behavior is deprecated, and in a future "
                         "PyTorch release outputs will not be resized unless they have zero elements. You can "
                         "explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
                         "t.resize_(0).", bo, bs);
            }
            op->will_resize = 1;
        }
    }
    return 0;
}

static int overlap_status(const tl_tensor *a, const tl_tensor *b) {
    /* 0 = none, 1 = full (same elements), 2 = partial, 3 = too hard */
    if (a == b) return 1;
    if (a->numel == 0 || b->numel == 0) return 0;
    if (a->storage != b->storage || !a->storage->data) return 0;
    if (!tl_tensor_is_non_overlapping_and_dense(a) || !tl_tensor_is_non_overlapping_and_dense(b)) return 3;
    int64_t ia = tl__itemsize(a->dtype), ib = tl__itemsize(b->dtype);
    char *sa = tl__data(a), *sb = tl__data(b);
    char *ea = sa + a->numel * ia, *eb = sb + b->numel * ib;
    if (sa < eb && sb < ea) {
        if (sa == sb && ia == ib && a->ndim == b->ndim &&
            memcmp(a->sizes, b->sizes, sizeof(int64_t) * (size_t)a->ndim) == 0 &&
            memcmp(a->strides, b->strides, sizeof(int64_t) * (size_t)a->ndim) == 0)
            return 1;
        return 2;
    }
    return 0;
}

static int has_internal_overlap(const tl_tensor *t) {
    if (tl_tensor_is_non_overlapping_and_dense(t)) return 0;
    for (int64_t k = 0; k < t->ndim; k++)
        if (t->strides[k] == 0 && t->sizes[k] > 1) return 1;
    return 0;
}

static int check_overlap(tl_iter *it) {
    if (!(it->flags & TL_ITER_CHECK_OVERLAP)) return 0;
    for (int i = 0; i < it->nout; i++) {
        tl_tensor *o = it->ops[i].tensor;
        if (!o || it->ops[i].will_resize) continue;
        if (has_internal_overlap(o))
            return tl_set_error(TL_ERR_RUNTIME,
                                "unsupported operation: more than one element of the written-to tensor refers to a "
                                "single memory location. Please clone() the tensor before performing the operation.");
        for (int j = it->nout; j < it->nops; j++) {
            if (overlap_status(o, it->ops[j].tensor) == 2)
                return tl_set_error(TL_ERR_RUNTIME,
                                    "unsupported operation: some elements of the input tensor and the written-to "
                                    "tensor refer to a single memory location. Please clone() the tensor before "
                                    "performing the operation.");
        }
    }
    return 0;
}

/* byte strides of each operand over the broadcast shape, iterator order */
static void compute_strides(tl_iter *it) {
    int64_t nd = it->result_ndim;
    for (int i = 0; i < it->nops; i++) {
        tl_iter_op *op = &it->ops[i];
        for (int64_t d = 0; d < nd; d++) op->strides[d] = 0;
        if (!op->tensor || op->will_resize) continue;
        tl_tensor *t = op->tensor;
        int64_t isz = tl__itemsize(t->dtype), off = nd - t->ndim;
        for (int64_t k = 0; k < t->ndim; k++) {
            int64_t d = nd - 1 - (k + off);   /* iterator dim */
            op->strides[d] = t->sizes[k] == 1 ? 0 : t->strides[k] * isz;
        }
    }
    for (int64_t d = 0; d < nd; d++) it->shape[d] = it->result_shape[nd - 1 - d];
    it->ndim = nd;
}

static int should_swap(tl_iter *it, int64_t dim0, int64_t dim1) {
    for (int i = 0; i < it->nops; i++) {
        tl_iter_op *op = &it->ops[i];
        if (!op->tensor || op->will_resize) continue;
        int64_t s0 = op->strides[dim0], s1 = op->strides[dim1];
        if (s0 == 0 || s1 == 0) continue;
        if (s0 < s1) return -1;
        if (s0 > s1) return 1;
        if (it->shape[dim0] > it->shape[dim1]) return 1;
    }
    return 0;
}

static void reorder_dimensions(tl_iter *it) {
    int64_t nd = it->ndim;
    int64_t perm[TL_MAX_DIMS];
    for (int64_t d = 0; d < nd; d++) perm[d] = d;   /* iterator dims */
    /* insertion sort with ambiguous comparisons (ATen's reorder_dimensions) */
    for (int64_t i = 1; i < nd; i++) {
        int64_t dim1 = i;
        for (int64_t dim0 = i - 1; dim0 >= 0; dim0--) {
            int c = should_swap(it, perm[dim0], perm[dim1]);
            if (c > 0) {
                int64_t tmp = perm[dim0]; perm[dim0] = perm[dim1]; perm[dim1] = tmp;
                dim1 = dim0;
            } else if (c < 0) {
                break;
            }
        }
    }
    /* apply */
    int64_t shape[TL_MAX_DIMS], st[TL_MAX_DIMS];
    for (int64_t d = 0; d < nd; d++) shape[d] = it->shape[perm[d]];
    memcpy(it->shape, shape, sizeof(int64_t) * (size_t)nd);
    for (int i = 0; i < it->nops; i++) {
        for (int64_t d = 0; d < nd; d++) st[d] = it->ops[i].strides[perm[d]];
        memcpy(it->ops[i].strides, st, sizeof(int64_t) * (size_t)nd);
    }
    /* perm in result-dim terms: iterator dim d was result dim nd-1-perm[d] */
    for (int64_t d = 0; d < nd; d++) it->perm[d] = nd - 1 - perm[d];
    it->perm_ndim = nd;
}

static int allocate_outputs(tl_iter *it) {
    int64_t nd = it->ndim;
    for (int i = 0; i < it->nout; i++) {
        tl_iter_op *op = &it->ops[i];
        if (!op->will_resize) continue;
        tl_dtype dt = op->target_dtype;
        int64_t isz = tl__itemsize(dt);
        /* strides compatible with the iteration order */
        int64_t st_iter[TL_MAX_DIMS], sizes[TL_MAX_DIMS], strides[TL_MAX_DIMS];
        int64_t s = 1;
        for (int64_t d = 0; d < nd; d++) { st_iter[d] = s; s *= it->shape[d] > 1 ? it->shape[d] : 1; }
        for (int64_t d = 0; d < nd; d++) {
            int64_t r = it->perm[d];
            sizes[r] = it->shape[d];
            strides[r] = st_iter[d];
        }
        int inverted = 1;
        for (int64_t d = 0; d < nd; d++)
            if (it->perm[d] != nd - 1 - d) { inverted = 0; break; }
        if (!op->tensor) {
            tl_device_type dev = it->device;
            op->tensor = inverted ? tl_empty(nd, sizes, dt, dev) : tl_empty_strided(nd, sizes, strides, dt, dev);
            if (!op->tensor) return -1;
        } else {
            /* resize the out= tensor in place (storage grows like resize_) */
            if (tl_resize_(op->tensor, nd, sizes) != 0) return -1;
            if (!inverted && tl__tensor_set_geometry(op->tensor, nd, sizes, strides) != 0) return -1;
        }
        for (int64_t d = 0; d < nd; d++) op->strides[d] = it->shape[d] == 1 ? 0 : st_iter[d] * isz;
        op->will_resize = 0;
    }
    return 0;
}

/* outputs of another dtype than the common one get a temporary (copied back
 * after the loop); inputs are cast to the common dtype */
static int cast_operands(tl_iter *it) {
    uint32_t f = it->flags;
    tl_dtype common = it->common_dtype;
    if (!tl__dtype_valid(common)) return 0;
    for (int i = 0; i < it->nops; i++) {
        tl_iter_op *op = &it->ops[i];
        tl_tensor *t = op->tensor;
        if (op->is_output) {
            /* a static output dtype (comparisons: bool) is what the loop stores:
             * an out= of another dtype gets a temporary of that dtype */
            const tl_dtype tdt = (int)it->output_dtype != TL_DTYPE_UNDEFINED ? it->output_dtype : common;
            if (t->dtype == tdt) continue;
            if (!(f & TL_ITER_CAST_TO_OUTPUTS)) continue;
            tl_tensor *tmp = tl_empty_strided(t->ndim, t->sizes, t->strides, tdt, tl__device_of(t));
            if (!tmp) return -1;
            if (!tl_tensor_is_non_overlapping_and_dense(t)) {
                tl_tensor_release(tmp);
                tmp = tl_empty(t->ndim, t->sizes, tdt, tl__device_of(t));
                if (!tmp) return -1;
            }
            op->original = t;
            op->tensor = tmp;
        } else {
            if (t->dtype == common || op->keep_dtype) continue;
            if (!(f & TL_ITER_PROMOTE_INPUTS)) continue;
            tl_tensor *c;
            if (t->ndim == 0 && t->device == TL_CPU && t->storage->data) {
                /* CPU scalars (a + 2.5): convert the one value directly, no
                 * nested iterator; same rounding rules as the copy kernel */
                tl_scalar v;
                if (tl_scalar_load(tl__data(t), t->dtype, &v) != 0) return -1;
                c = tl_scalar_tensor(v, common, TL_CPU);
            } else {
                c = tl_to_dtype(t, common, 0);
            }
            if (!c) return -1;
            if (tl_tensor_is_wrapped_number(t)) tl_tensor_set_wrapped_number(c, 1);
            if (!op->borrowed) tl_tensor_release(t);
            op->borrowed = 0;
            op->tensor = c;
        }
    }
    return 0;
}

static void coalesce_dimensions(tl_iter *it) {
    int64_t nd = it->ndim;
    if (nd <= 1) return;
    int64_t prev = 0;
    for (int64_t d = 1; d < nd; d++) {
        int can = 1;
        int64_t s0 = it->shape[prev], s1 = it->shape[d];
        if (s0 != 1 && s1 != 1) {
            for (int i = 0; i < it->nops; i++)
                if (it->ops[i].strides[prev] * s0 != it->ops[i].strides[d]) { can = 0; break; }
        }
        if (can) {
            if (s0 == 1)
                for (int i = 0; i < it->nops; i++) it->ops[i].strides[prev] = it->ops[i].strides[d];
            it->shape[prev] = s0 * s1;
        } else {
            prev++;
            if (prev != d) {
                it->shape[prev] = it->shape[d];
                for (int i = 0; i < it->nops; i++) it->ops[i].strides[prev] = it->ops[i].strides[d];
            }
        }
    }
    it->ndim = prev + 1;
}

/* ATen's fast_set_up: every defined operand is contiguous, of the result
 * shape and of the common dtype (the common case of `a + b`): allocate outputs
 * contiguous and iterate one flat dimension, skipping reorder and coalescing. */
static int fast_finish(tl_iter *it);

static int try_fast_setup(tl_iter *it) {
    tl_dtype common = it->common_dtype;
    if (!tl__dtype_valid(common) || it->compute_only) return 0;
    /* outputs: the static output dtype when set (comparisons store bool) */
    const tl_dtype out_dt = (int)it->output_dtype != TL_DTYPE_UNDEFINED ? it->output_dtype : common;
    int64_t nd = it->result_ndim;
    for (int i = 0; i < it->nops; i++) {
        tl_iter_op *op = &it->ops[i];
        tl_tensor *t = op->tensor;
        if (op->is_output && op->will_resize) {
            if (t) return 0;                    /* resize of an out=: general path */
            if (op->target_dtype != out_dt) return 0;
            continue;
        }
        if ((t->dtype != (op->is_output ? out_dt : common) && !op->keep_dtype) || !(t->flags & TL_TF_CONTIGUOUS) ||
            t->ndim != nd ||
            memcmp(t->sizes, it->result_shape, sizeof(int64_t) * (size_t)nd) != 0)
            return 0;
    }
    return fast_finish(it);
}

/* the flat layout of the fast setup: missing outputs allocated contiguous */
static int fast_finish(tl_iter *it) {
    int64_t nd = it->result_ndim;
    for (int i = 0; i < it->nout; i++) {
        tl_iter_op *op = &it->ops[i];
        if (!op->tensor) {
            op->tensor = tl_empty(nd, it->result_shape, op->target_dtype, it->device);
            if (!op->tensor) return -1;
            op->will_resize = 0;
        }
    }
    for (int i = 0; i < it->nops; i++) {
        it->ops[i].data = tl__data(it->ops[i].tensor);
        it->ops[i].strides[0] = tl__itemsize(it->ops[i].tensor->dtype);   /* bool outputs of comparisons */
    }
    for (int64_t d = 0; d < nd; d++) it->perm[d] = nd - 1 - d;
    it->perm_ndim = nd;
    it->ndim = nd == 0 ? 0 : 1;
    it->shape[0] = it->numel;
    it->built = 1;
    return 1;
}

/* Before the general stages: when every operand already agrees (one device,
 * one dtype, one shape, contiguous, no wrapped numbers; outputs missing or
 * alike), the stages would conclude exactly that: the device is theirs, the
 * broadcast shape theirs, one dtype promotes to itself, out= needs no resize
 * and no cast. So skip them (the 1-element `a + b`, `a.add_(b)`, `relu(a)`
 * spent about a third of their C time there) and go to the fast setup; only
 * the overlap check still runs. 1: built, 0: general path, -1: error. */
static int try_quick_build(tl_iter *it) {
    if (it->compute_only || it->nin == 0 || it->nkeep || (int)it->forced_common != TL_DTYPE_UNDEFINED) return 0;
    const tl_tensor *ref = it->ops[it->nout].tensor;
    tl_dtype dt = ref->dtype;
    tl_device_type dev = ref->device;
    int64_t nd = ref->ndim;
    if (dev == TL_CUDA) return 0;                                    /* the general path's error */
    if ((it->flags & TL_ITER_INT_TO_FLOAT) && !tl__dtype_is_floating(dt)) return 0;  /* casts */
    if ((int)it->output_dtype != TL_DTYPE_UNDEFINED && it->output_dtype != dt) return 0;
    for (int i = 0; i < it->nops; i++) {
        const tl_tensor *t = it->ops[i].tensor;
        if (!t) continue;                                            /* an output to allocate */
        if (t->dtype != dt || t->device != dev || t->ndim != nd ||
            (t->flags & (TL_TF_CONTIGUOUS | TL_TF_WRAPPED_NUMBER)) != TL_TF_CONTIGUOUS)
            return 0;
        if (t != ref)
            for (int64_t k = 0; k < nd; k++)
                if (t->sizes[k] != ref->sizes[k]) return 0;
    }
    it->device = dev;
    it->is_meta = dev == TL_META;
    it->result_ndim = nd;
    memcpy(it->result_shape, ref->sizes, sizeof(int64_t) * (size_t)nd);
    it->numel = ref->numel;
    it->common_dtype = dt;
    for (int i = 0; i < it->nout; i++) {
        it->ops[i].target_dtype = dt;
        it->ops[i].will_resize = it->ops[i].tensor == NULL;
    }
    if (check_overlap(it) != 0) return -1;
    return fast_finish(it) < 0 ? -1 : 1;
}

static int iter_build(tl_iter *it) {
    if (it->built) return tl_set_error(TL_ERR_RUNTIME, "TensorIterator: already built");
    if (it->nops == 0) return tl_set_error(TL_ERR_RUNTIME, "TensorIterator: no operands");
    int quick = try_quick_build(it);
    if (quick != 0) return quick < 0 ? -1 : 0;
    if (compute_devices(it) != 0) return -1;
    if (compute_shape(it) != 0) return -1;
    if (compute_types(it) != 0) return -1;
    if (check_overlap(it) != 0) return -1;
    int fast = try_fast_setup(it);
    if (fast != 0) return fast < 0 ? -1 : 0;
    compute_strides(it);
    reorder_dimensions(it);
    if (it->compute_only) return 0;
    if (allocate_outputs(it) != 0) return -1;
    if (cast_operands(it) != 0) return -1;
    /* recompute strides when operands were replaced by temporaries (same layout
     * for inputs cast by tl_to_dtype? not guaranteed: recompute all) */
    {
        int64_t nd = it->result_ndim;
        int64_t inv[TL_MAX_DIMS];
        for (int64_t d = 0; d < nd; d++) inv[d] = it->perm[d];
        for (int i = 0; i < it->nops; i++) {
            tl_tensor *t = it->ops[i].tensor;
            int64_t isz = tl__itemsize(t->dtype), off = nd - t->ndim;
            for (int64_t d = 0; d < nd; d++) {
                int64_t r = inv[d], k = r - off;
                it->ops[i].strides[d] = (k < 0 || t->sizes[k] == 1) ? 0 : t->strides[k] * isz;
            }
            it->ops[i].data = tl__data(t);
        }
        for (int64_t d = 0; d < nd; d++) it->shape[d] = it->result_shape[inv[d]];
        it->ndim = nd;
    }
    coalesce_dimensions(it);
    it->built = 1;
    return 0;
}

int tl_iter_build(tl_iter *it) { return iter_build(it); }

/* ------------------------------------------------------------- queries */
int64_t tl_iter_ndim(const tl_iter *it) { return it->result_ndim; }
int tl_iter_shape(const tl_iter *it, int64_t *out) {
    memcpy(out, it->result_shape, sizeof(int64_t) * (size_t)it->result_ndim);
    return 0;
}
tl_dtype tl_iter_common_dtype(const tl_iter *it) { return it->common_dtype; }
int64_t tl_iter_numel(const tl_iter *it) { return it->numel; }
int tl_iter_noutputs(const tl_iter *it) { return it->nout; }
int tl_iter_ninputs(const tl_iter *it) { return it->nin; }
int tl_iter_perm(const tl_iter *it, int64_t *out) {
    /* outermost first */
    for (int64_t d = 0; d < it->perm_ndim; d++) out[d] = it->perm[it->perm_ndim - 1 - d];
    return 0;
}
int64_t tl_iter_loop_ndim(const tl_iter *it) { return it->ndim; }
int tl_iter_loop_shape(const tl_iter *it, int64_t *out) {
    memcpy(out, it->shape, sizeof(int64_t) * (size_t)it->ndim);
    return 0;
}
tl_tensor *tl_iter_output(const tl_iter *it, int i) {
    if (i < 0 || i >= it->nout) { tl_set_error(TL_ERR_INDEX, "TensorIterator: no output %d", i); return NULL; }
    const tl_iter_op *op = &it->ops[i];
    tl_tensor *t = op->original ? op->original : op->tensor;
    tl_tensor_retain(t);
    return t;
}
/* hands the iterator's own reference to output i to the caller, who keeps it
 * alive until tl_iter_free (no retain now, no release then); a temporary
 * standing in for an out= tensor is not handed over (plain retain) */
tl_tensor *tl__iter_take_output(tl_iter *it, int i) {
    if (i < 0 || i >= it->nout || it->ops[i].original || it->ops[i].borrowed) return tl_iter_output(it, i);
    it->ops[i].borrowed = 1;
    return it->ops[i].tensor;
}
tl_dtype tl_iter_operand_dtype(const tl_iter *it, int i) {
    if (i < 0 || i >= it->nops || !it->ops[i].tensor) return TL_DTYPE_UNDEFINED;
    return it->ops[i].tensor->dtype;
}
int tl_iter_is_meta(const tl_iter *it) { return it->is_meta; }
/* operand i as a device launch sees it (kernels/cuda/tl_cuda_loops.h): data
 * pointer, byte strides of the loop dims (tl_iter_loop_ndim entries), stored
 * dtype, and whether it is a 0-dim CPU tensor (a wrapped number) */
int tl_iter_operand_loop(const tl_iter *it, int i, char **data, int64_t *strides, tl_dtype *dtype,
                         int *cpu_scalar) {
    if (i < 0 || i >= it->nops || !it->ops[i].tensor)
        return tl_set_error(TL_ERR_INDEX, "TensorIterator operand %d out of range", i);
    const tl_iter_op *op = &it->ops[i];
    *data = op->data;
    for (int64_t d = 0; d < it->ndim; d++) strides[d] = op->strides[d];
    *dtype = op->tensor->dtype;
    *cpu_scalar = !op->is_output && is_cpu_scalar(op->tensor);
    return 0;
}
int tl_iter_is_contiguous(const tl_iter *it) {
    if (it->ndim > 1) return 0;
    for (int i = 0; i < it->nops; i++)
        if (it->ndim == 1 && it->ops[i].strides[0] != tl__itemsize(it->ops[i].tensor->dtype)) return 0;
    return 1;
}

/* ------------------------------------------------------------ traversal */
typedef struct {
    tl_iter *it;
    tl_loop_fn loop;
    void *ctx;
} run_ctx;

static void serial_range(tl_iter *it, int64_t begin, int64_t end, tl_loop_fn loop, void *ctx) {
    int nops = it->nops;
    int64_t nd = it->ndim;
    char *ptrs[TL_ITER_MAX_OPERANDS];
    int64_t inner[TL_ITER_MAX_OPERANDS];
    if (nd == 0) {
        for (int i = 0; i < nops; i++) { ptrs[i] = it->ops[i].data; inner[i] = 0; }
        loop(ptrs, inner, 1, ctx);
        return;
    }
    int64_t idx[TL_MAX_DIMS];
    int64_t rem = begin;
    for (int64_t d = 0; d < nd; d++) { idx[d] = rem % it->shape[d]; rem /= it->shape[d]; }
    for (int i = 0; i < nops; i++) {
        char *p = it->ops[i].data;
        for (int64_t d = 0; d < nd; d++) p += idx[d] * it->ops[i].strides[d];
        ptrs[i] = p;
        inner[i] = it->ops[i].strides[0];
    }
    int64_t pos = begin;
    while (pos < end) {
        int64_t n = it->shape[0] - idx[0];
        if (n > end - pos) n = end - pos;
        loop(ptrs, inner, n, ctx);
        pos += n;
        if (pos >= end) break;
        for (int i = 0; i < nops; i++) ptrs[i] += n * inner[i];
        idx[0] += n;
        int64_t d = 0;
        while (d + 1 < nd && idx[d] == it->shape[d]) {
            for (int i = 0; i < nops; i++)
                ptrs[i] += it->ops[i].strides[d + 1] - it->shape[d] * it->ops[i].strides[d];
            idx[d] = 0;
            idx[d + 1]++;
            d++;
        }
    }
}

static void range_fn(int64_t begin, int64_t end, void *p) {
    run_ctx *rc = p;
    serial_range(rc->it, begin, end, rc->loop, rc->ctx);
}

/* ---- tiled walk (docs/RUNTIME.md, "Tiled walk").
 *
 * When an input is contiguous along loop dim k but strided along dim 0 (the
 * dimension the outputs are contiguous in: `a + b.T`, `b.T.contiguous()`),
 * the plain walk reads it one element per cache line. Instead the 2-D space
 * (dims 0 and k, for every index of the other dims) is cut into tiles of
 * t0 x t1 (t0 along dim 0). Per tile each such input is transposed by SIMD
 * register blocks (kernels/cpu/tile_kernel.c) into a scratch buffer of t1 rows
 * of t0 contiguous elements, reading whole cache lines of the input; then the
 * loop runs once per row of the tile, every operand contiguous (the ufunc
 * loops' SIMD paths). Outputs of large iterations are computed into a
 * one-row buffer and written with non-temporal stores of whole lines
 * (tl_thresholds.h's rule: they skip the read-for-ownership and keep the output
 * from evicting the inputs). Tiles are split across threads; every element is
 * computed the same way whatever the split. */

enum {
    TILE_T0 = 256,           /* elements along dim 0 (the rows the loop sees) */
    TILE_ROW_BYTES = 128,    /* bytes of the transposed input per tile row: two cache lines */
};

typedef struct {
    tl_iter *it;
    tl_loop_fn loop;
    void *ctx;
    int k;                   /* the second tiled dim */
    int64_t t0, t1;          /* tile sizes */
    int64_t n0, n1;          /* tile counts along dims 0 and k */
    uint32_t trans;          /* inputs read through the transpose (bit i: operand i) */
    uint32_t stream;         /* outputs written through a row buffer with streaming stores */
    size_t buf_off[TL_ITER_MAX_OPERANDS];  /* each buffered operand's place in the scratch */
    size_t scratch_bytes;
    const tl_tile_kernels_t *kern;
} tile_plan;

static int log2_itemsize(int64_t isz) {
    return isz == 1 ? 0 : isz == 2 ? 1 : isz == 4 ? 2 : isz == 8 ? 3 : -1;
}

/* tile index order: strips along dim k fastest, then tiles along dim 0, then
 * the other dims: the t0 lines of the transposed inputs a tile starts are
 * read on by the next strip */
static void tile_fn(int64_t begin, int64_t end, void *p) {
    const tile_plan *tp = p;
    tl_iter *it = tp->it;
    const int nops = it->nops, k = tp->k;
    const int64_t nd = it->ndim;
    uint32_t trans = tp->trans, stream = tp->stream;
    char *scratch = NULL;
    if ((trans | stream) && posix_memalign((void **)&scratch, 64, tp->scratch_bytes) != 0) {
        scratch = NULL;
        trans = stream = 0;   /* no memory for the buffers: the same walk on strided pointers */
    }
    int64_t isz[TL_ITER_MAX_OPERANDS], inner[TL_ITER_MAX_OPERANDS];
    char *buf[TL_ITER_MAX_OPERANDS];
    char *ptrs[TL_ITER_MAX_OPERANDS];
    char *base[TL_ITER_MAX_OPERANDS];
    for (int i = 0; i < nops; i++) {
        isz[i] = tl__itemsize(it->ops[i].tensor->dtype);
        inner[i] = it->ops[i].strides[0];
        buf[i] = NULL;
        if ((trans | stream) >> i & 1) {
            buf[i] = scratch + tp->buf_off[i];
            inner[i] = isz[i];     /* the loop sees the buffer, contiguous */
        }
    }
    for (int64_t tix = begin; tix < end; tix++) {
        int64_t j0 = tix % tp->n1, r = tix / tp->n1;
        int64_t i0 = r % tp->n0, outer = r / tp->n0;
        /* base pointers for the outer index (all dims except 0 and k) */
        for (int i = 0; i < nops; i++) base[i] = it->ops[i].data;
        for (int64_t d = 1; d < nd && outer; d++) {
            if (d == k) continue;
            int64_t id = outer % it->shape[d];
            outer /= it->shape[d];
            for (int i = 0; i < nops; i++) base[i] += id * it->ops[i].strides[d];
        }
        const int64_t a0 = i0 * tp->t0, n = a0 + tp->t0 < it->shape[0] ? tp->t0 : it->shape[0] - a0;
        const int64_t a1 = j0 * tp->t1, w = a1 + tp->t1 < it->shape[k] ? tp->t1 : it->shape[k] - a1;
        for (int i = 0; i < nops; i++) {
            base[i] += a0 * it->ops[i].strides[0] + a1 * it->ops[i].strides[k];
            if (trans >> i & 1)   /* n rows (dim 0) of w contiguous elements -> w rows of n */
                tp->kern->transpose[log2_itemsize(isz[i])](buf[i], n * isz[i], base[i], it->ops[i].strides[0], n, w);
        }
        for (int64_t j = 0; j < w; j++) {
            for (int i = 0; i < nops; i++)
                ptrs[i] = buf[i] ? ((trans >> i & 1) ? buf[i] + j * n * isz[i] : buf[i])
                                 : base[i] + j * it->ops[i].strides[k];
            tp->loop(ptrs, inner, n, tp->ctx);
            for (int i = 0; i < nops; i++)
                if (stream >> i & 1) tp->kern->stream(base[i] + j * it->ops[i].strides[k], buf[i], n * isz[i]);
        }
    }
    if (stream) tp->kern->fence();
    free(scratch);
}

/* An operand that moves by one element along dim k but not along dim 0
 * disagrees with the layout the loop follows: walk cache-sized tiles. */
static int pick_tile_dim(const tl_iter *it) {
    if (it->ndim < 2 || it->shape[0] < 16) return 0;
    for (int i = 0; i < it->nops; i++) {
        int64_t isz = tl__itemsize(it->ops[i].tensor->dtype);
        int64_t s0 = it->ops[i].strides[0];
        if (s0 == isz || s0 == 0) continue;
        for (int64_t d = 1; d < it->ndim; d++) {
            if (it->ops[i].strides[d] == isz && it->shape[d] >= 8) return (int)d;
        }
    }
    return 0;
}

/* which operands go through buffers, the tile sizes and the scratch size */
static void plan_tiles(tile_plan *tp, tl_iter *it, int k) {
    int64_t widest = 1, moved = 0;
    tp->trans = tp->stream = 0;
    for (int i = 0; i < it->nops; i++) {
        const tl_iter_op *op = &it->ops[i];
        int64_t isz = tl__itemsize(op->tensor->dtype), s0 = op->strides[0];
        moved += isz;
        if (!op->is_output && s0 != isz && s0 != 0 && op->strides[k] == isz && log2_itemsize(isz) >= 0) {
            tp->trans |= 1u << i;
            if (isz > widest) widest = isz;
        }
    }
    /* streaming stores pay off once the data outgrows L2 (tl_thresholds.h) */
    if (it->numel * moved >= tl_cpu_store_policy.stream_min_bytes)
        for (int i = 0; i < it->nout; i++)
            if (it->ops[i].strides[0] == tl__itemsize(it->ops[i].tensor->dtype)) tp->stream |= 1u << i;
    tp->k = k;
    tp->t0 = it->shape[0] < TILE_T0 ? it->shape[0] : TILE_T0;
    tp->t1 = TILE_ROW_BYTES / widest;
    tp->n0 = (it->shape[0] + tp->t0 - 1) / tp->t0;
    tp->n1 = (it->shape[k] + tp->t1 - 1) / tp->t1;
    tp->scratch_bytes = 0;
    for (int i = 0; i < it->nops; i++) {
        /* a transposed input: t1 rows of t0; a streamed output: one row */
        int64_t isz = tl__itemsize(it->ops[i].tensor->dtype);
        int64_t rows = (tp->trans >> i & 1) ? tp->t1 : (tp->stream >> i & 1) ? 1 : 0;
        tp->buf_off[i] = tp->scratch_bytes;
        tp->scratch_bytes += (size_t)((rows * tp->t0 * isz + 63) & ~(int64_t)63);
    }
    tp->kern = tl_tile_stub.current;
}

/* the tile kernels, one table per CPU capability (kernels/native/runtime_stubs.c fills it) */
TL_DEFINE_EMPTY_STUB(tl_tile_stub);

int tl_iter_copy_back(tl_iter *it);
static int run(tl_iter *it, tl_loop_fn loop, void *ctx, int parallel) {
    if (!it->built) return tl_set_error(TL_ERR_RUNTIME, "TensorIterator: not built");
    if (TL_UNLIKELY(tl__device_type_of((int)it->device) == TL_CUDA))   /* host loops never touch device memory */
        return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "TensorIterator: a CPU loop cannot run on cuda tensors");
    if (!it->is_meta && it->numel > 0) {
        int64_t grain = parallel ? tl_get_grain_size() : INT64_MAX;
        if (it->ndim <= 1 && it->numel < grain) {
            /* one flat run below the grain size (small tensors, the fast
             * setup): a single loop call, no thread split, no index walk */
            char *ptrs[TL_ITER_MAX_OPERANDS];
            int64_t inner[TL_ITER_MAX_OPERANDS];
            for (int i = 0; i < it->nops; i++) {
                ptrs[i] = it->ops[i].data;
                inner[i] = it->ndim ? it->ops[i].strides[0] : 0;
            }
            loop(ptrs, inner, it->numel, ctx);
            goto copy_back;
        }
        int k = pick_tile_dim(it);
        if (k) {
            tile_plan tp = {.it = it, .loop = loop, .ctx = ctx};
            plan_tiles(&tp, it, k);
            int64_t ntiles = tp.n0 * tp.n1 * (it->numel / (it->shape[0] * it->shape[k]));
            int64_t tgrain = grain == INT64_MAX ? INT64_MAX : (grain + tp.t0 * tp.t1 - 1) / (tp.t0 * tp.t1);
            tl_parallel_for(ntiles, tgrain, tile_fn, &tp);
        } else {
            run_ctx rc = {it, loop, ctx};
            tl_parallel_for(it->numel, grain, range_fn, &rc);
        }
    }
copy_back:
    return tl_iter_copy_back(it);
}

/* results computed in a temporary of the common dtype go to the out= tensors
 * (after the loops; a device launch calls it itself) */
int tl_iter_copy_back(tl_iter *it) {
    for (int i = 0; i < it->nout; i++) {
        tl_iter_op *op = &it->ops[i];
        if (op->original) {
            if (tl__copy_impl(op->original, op->tensor) != 0) return -1;
        }
    }
    return 0;
}

int tl_iter_for_each(tl_iter *it, tl_loop_fn loop, void *ctx) { return run(it, loop, ctx, 1); }
int tl_iter_serial_for_each(tl_iter *it, tl_loop_fn loop, void *ctx) { return run(it, loop, ctx, 0); }

int tl_iter_compute(int64_t ninputs, tl_tensor **inputs, uint32_t flags, int64_t *out_ndim, int64_t *out_shape,
                    tl_dtype *out_dtype, int64_t *out_perm) {
    tl_iter *it = tl_iter_new(flags);
    if (!it) return -1;
    it->compute_only = 1;
    int rc = tl_iter_add_output(it, NULL);
    for (int64_t i = 0; i < ninputs && rc == 0; i++) rc = tl_iter_add_input(it, inputs[i]);
    if (rc == 0) rc = iter_build(it);
    if (rc == 0) {
        if (out_ndim) *out_ndim = it->result_ndim;
        if (out_shape) tl_iter_shape(it, out_shape);
        if (out_dtype) *out_dtype = it->common_dtype;
        if (out_perm) tl_iter_perm(it, out_perm);
    }
    tl_iter_free(it);
    return rc;
}
