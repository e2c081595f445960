/* Structured-kernel glue and boxing helpers for generated code (tl_structured.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tl_internal.h"
#include "tl_structured.h"

/* ------------------------------------------------------------------ helpers */

/* "[2, 3]" into buf (truncated with "...]" when long) */
static const char *shape_str(char *buf, size_t n, int64_t ndim, const int64_t *sizes) {
    size_t k = 0;
    k += (size_t)snprintf(buf + k, n - k, "[");
    for (int64_t i = 0; i < ndim && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, i ? ", %lld" : "%lld", (long long)sizes[i]);
    if (k < n) snprintf(buf + k, n - k, "]");
    if (k >= n - 1 && n > 5) memcpy(buf + n - 5, "...]", 5);
    return buf;
}

static int same_sizes(const tl_tensor *t, int64_t ndim, const int64_t *sizes) {
    if (tl_tensor_ndim(t) != ndim) return 0;
    const int64_t *ts = tl_tensor_sizes(t);
    for (int64_t i = 0; i < ndim; i++)
        if (ts[i] != sizes[i]) return 0;
    return 1;
}

/* ------------------------------------------------------------- structured */

void tl_structured_init(tl_structured *s, int kind, int device, int meta_only) {
    s->kind = kind;
    s->device = device;
    s->meta_only = meta_only;
    s->noutputs = 0;
    for (int i = 0; i < TL_STRUCTURED_MAX_OUTPUTS; i++) s->outputs[i] = NULL;
    s->iter = NULL;
}

int tl_structured_propose(tl_structured *s, int i, tl_tensor *t) {
    if (i < 0 || i >= TL_STRUCTURED_MAX_OUTPUTS || !t)
        return tl_set_error(TL_ERR_RUNTIME, "structured kernel: bad proposed output %d", i);
    tl_tensor_retain(t);
    tl_tensor_release(s->outputs[i]);
    s->outputs[i] = t;
    if (s->noutputs <= i) s->noutputs = i + 1;
    return 0;
}

/* common: the dtype the loop computes in, or UNDEFINED (the inputs' promoted dtype);
 * bit i of keep: input i is read in its own dtype (where's condition) */
static int build_iter(tl_structured *s, uint32_t flags, int ninputs, const tl_tensor *const *inputs,
                      tl_dtype out_dtype, tl_dtype common, uint32_t keep) {
    if (s->iter) return tl_set_error(TL_ERR_RUNTIME, "structured kernel: meta built two iterators");
    if (s->kind == TL_STRUCTURED_INPLACE) flags &= ~(uint32_t)TL_ITER_RESIZE_OUTPUTS;
    tl_iter *it = tl_iter_new(flags);
    if (!it) return -1;
    tl_tensor *out = s->kind == TL_STRUCTURED_FUNCTIONAL ? NULL : s->outputs[0];
    if (s->kind != TL_STRUCTURED_FUNCTIONAL && !out) {
        tl_iter_free(it);
        return tl_set_error(TL_ERR_RUNTIME, "structured kernel: inplace/out= call without an output");
    }
    if (tl_iter_add_output(it, out) != 0) goto fail;
    for (int i = 0; i < ninputs; i++) {
        if (tl__iter_add_input_borrowed(it, inputs[i]) != 0) goto fail;   /* the kernel's arguments */
        if ((keep >> i) & 1u && tl__iter_keep_last_input_dtype(it) != 0) goto fail;
    }
    if (out_dtype != TL_DTYPE_UNDEFINED && tl_iter_set_output_dtype(it, out_dtype) != 0) goto fail;
    if (common != TL_DTYPE_UNDEFINED && tl_iter_set_common_dtype(it, common) != 0) goto fail;
    if (tl_iter_build(it) != 0) goto fail;
    if (s->kind == TL_STRUCTURED_FUNCTIONAL) {
        tl_tensor *o = tl__iter_take_output(it, 0);   /* one reference, no atomics */
        if (!o) goto fail;
        tl_tensor_release(s->outputs[0]);
        s->outputs[0] = o;
    }
    if (s->noutputs < 1) s->noutputs = 1;
    s->iter = it;
    return 0;
fail:
    tl_iter_free(it);
    return -1;
}

int tl_structured_build(tl_structured *s, uint32_t flags, int ninputs, const tl_tensor *const *inputs,
                        tl_dtype out_dtype) {
    return build_iter(s, flags, ninputs, inputs, out_dtype, TL_DTYPE_UNDEFINED, 0);
}

int tl_structured_build_binary_op(tl_structured *s, const tl_tensor *a, const tl_tensor *b) {
    const tl_tensor *in[2] = {a, b};
    return tl_structured_build(s, TL_ITER_BINARY_OP, 2, in, TL_DTYPE_UNDEFINED);
}

int tl_structured_build_borrowing_binary_op(tl_structured *s, const tl_tensor *a, const tl_tensor *b) {
    return tl_structured_build_binary_op(s, a, b);
}

int tl_structured_build_binary_float_op(tl_structured *s, const tl_tensor *a, const tl_tensor *b) {
    const tl_tensor *in[2] = {a, b};
    return tl_structured_build(s, TL_ITER_BINARY_OP | TL_ITER_INT_TO_FLOAT, 2, in, TL_DTYPE_UNDEFINED);
}

int tl_structured_build_comparison_op(tl_structured *s, const tl_tensor *a, const tl_tensor *b) {
    const tl_tensor *in[2] = {a, b};
    uint32_t flags = TL_ITER_PROMOTE_INPUTS | TL_ITER_CAST_TO_OUTPUTS | TL_ITER_RESIZE_OUTPUTS | TL_ITER_CHECK_OVERLAP;
    return tl_structured_build(s, flags, 2, in, TL_BOOL);
}

int tl_structured_build_unary_op(tl_structured *s, const tl_tensor *a) {
    const tl_tensor *in[1] = {a};
    /* PyTorch's unary_op config checks all operands have the same dtype
     * (check_all_same_dtype): abs(float32, out=float64) is refused */
    const tl_tensor *o = s->kind == TL_STRUCTURED_FUNCTIONAL ? NULL : s->outputs[0];
    if (o && a && o->dtype != a->dtype)
        return tl_set_error(TL_ERR_RUNTIME, "Found dtype %s but expected %s", tl_dtype_scalar_name(o->dtype),
                            tl_dtype_scalar_name(a->dtype));
    return tl_structured_build(s, TL_ITER_UNARY_OP, 1, in, TL_DTYPE_UNDEFINED);
}

int tl_structured_build_unary_float_op(tl_structured *s, const tl_tensor *a) {
    const tl_tensor *in[1] = {a};
    return tl_structured_build(s, TL_ITER_UNARY_OP | TL_ITER_INT_TO_FLOAT, 1, in, TL_DTYPE_UNDEFINED);
}

/* every input read in `common` (the iterator converts those of another dtype:
 * lerp's 0-dim weight, clamp's self.to(result_type)) */
int tl_structured_build_as(tl_structured *s, uint32_t flags, int ninputs, const tl_tensor *const *inputs,
                           tl_dtype common) {
    return build_iter(s, flags | TL_ITER_PROMOTE_INPUTS, ninputs, inputs, TL_DTYPE_UNDEFINED, common, 0);
}

/* PyTorch's build_ternary_op (addcmul, addcdiv): the three inputs promoted to
 * their common dtype; safe casting into an in-place / out= tensor, which gets
 * the result cast back when its dtype differs */
int tl_structured_build_ternary_op(tl_structured *s, const tl_tensor *a, const tl_tensor *b, const tl_tensor *c) {
    const tl_tensor *in[3] = {a, b, c};
    return tl_structured_build(s, TL_ITER_BINARY_OP, 3, in, TL_DTYPE_UNDEFINED);
}

/* where: the condition is read as it is (bool, or uint8 with PyTorch's
 * deprecation warning: the loop tests != 0 either way); self and other are
 * promoted to result_type(self, other), which an out= tensor must have */
int tl_structured_build_where_op(tl_structured *s, const tl_tensor *cond, const tl_tensor *a, const tl_tensor *b) {
    const tl_dtype cd = tl_tensor_dtype(cond);
    if (cd == TL_UINT8) /* PyTorch's TORCH_WARN_ONCE */
        TL_WARN_ONCE("where received a uint8 condition tensor. This behavior is deprecated and will be removed in a "
                 "future version of PyTorch. Use a boolean condition instead.");
    else if (cd != TL_BOOL)
        return tl_set_error(TL_ERR_RUNTIME, "where expected condition to be a boolean tensor, but got a tensor with "
                                            "dtype %s", tl_dtype_scalar_name(cd));
    const tl_tensor *o = s->kind == TL_STRUCTURED_FUNCTIONAL ? NULL : s->outputs[0];
    if (o) {
        tl_tensor *pair[2] = {(tl_tensor *)a, (tl_tensor *)b};
        const tl_dtype rt = tl_result_type(2, pair);
        if (tl_tensor_dtype(o) != rt)
            return tl_set_error(TL_ERR_RUNTIME, "Expected out type to be %s but got %s", tl_dtype_scalar_name(rt),
                                tl_dtype_scalar_name(tl_tensor_dtype(o)));
    }
    const tl_tensor *in[3] = {cond, a, b};
    const uint32_t flags = TL_ITER_PROMOTE_INPUTS | TL_ITER_RESIZE_OUTPUTS | TL_ITER_CHECK_OVERLAP;
    return build_iter(s, flags, 3, in, TL_DTYPE_UNDEFINED, TL_DTYPE_UNDEFINED, 1u);
}

int tl_structured_set_output(tl_structured *s, int i, int64_t ndim, const int64_t *sizes,
                             const int64_t *strides, tl_dtype dtype) {
    char b1[256], b2[256];
    if (i < 0 || i >= TL_STRUCTURED_MAX_OUTPUTS)
        return tl_set_error(TL_ERR_RUNTIME, "structured kernel: output index %d out of range", i);
    if (ndim < 0 || ndim > TL_MAX_DIMS || (ndim && !sizes))
        return tl_set_error(TL_ERR_RUNTIME, "structured kernel: bad output rank %lld", (long long)ndim);
    if (!tl__dtype_valid(dtype)) return tl_set_error(TL_ERR_RUNTIME, "structured kernel: bad output dtype");
    if (s->noutputs <= i) s->noutputs = i + 1;
    if (s->kind == TL_STRUCTURED_FUNCTIONAL) {
        tl_tensor *t = tl_empty_strided(ndim, sizes, strides, dtype, (tl_device_type)s->device);
        if (!t) return -1;
        tl_tensor_release(s->outputs[i]);
        s->outputs[i] = t;
        return 0;
    }
    tl_tensor *t = s->outputs[i];
    if (!t) return tl_set_error(TL_ERR_RUNTIME, "structured kernel: inplace/out= call without output %d", i);
    if (s->kind == TL_STRUCTURED_INPLACE) {
        if (!same_sizes(t, ndim, sizes))
            return tl_set_error(TL_ERR_RUNTIME, "Bad in-place call: input tensor size %s and output tensor size %s should match",
                                shape_str(b1, sizeof b1, tl_tensor_ndim(t), tl_tensor_sizes(t)),
                                shape_str(b2, sizeof b2, ndim, sizes));
        if (tl_tensor_dtype(t) != dtype)
            return tl_set_error(TL_ERR_RUNTIME, "Bad in-place call: input tensor dtype %s and output tensor dtype %s should match",
                                tl_dtype_caffe2_name(tl_tensor_dtype(t)), tl_dtype_caffe2_name(dtype));
        return 0;
    }
    /* out=: PyTorch's resize_out: dtype and device must match, then resize_output */
    if (tl_tensor_dtype(t) != dtype)
        return tl_set_error(TL_ERR_RUNTIME, "Expected out tensor to have dtype %s, but got %s instead",
                            tl_dtype_caffe2_name(dtype), tl_dtype_caffe2_name(tl_tensor_dtype(t)));
    if ((int)tl_tensor_device(t) != s->device)
        return tl_set_error(TL_ERR_RUNTIME, "Expected out tensor to have device %s, but got %s instead",
                            tl__device_name((tl_device_type)s->device), tl__device_name(tl_tensor_device(t)));
    if (!same_sizes(t, ndim, sizes)) {
        if (tl_tensor_numel(t) != 0)
            tl__warn("An output with one or more elements was resized since it had shape %s, which does not match "
                     "the required output shape %s. This behavior is deprecated, and in a future PyTorch release "
                     "outputs will not be resized unless they have zero elements. You can explicitly reuse an out "
                     "tensor t by resizing it, inplace, to zero elements with t.resize_(0).",
                     shape_str(b1, sizeof b1, tl_tensor_ndim(t), tl_tensor_sizes(t)),
                     shape_str(b2, sizeof b2, ndim, sizes));
        if (tl_resize_(t, ndim, sizes) != 0) return -1;
    }
    return 0;
}

int tl_structured_resize_out(tl_tensor *out, int64_t ndim, const int64_t *sizes, tl_dtype dtype) {
    tl_structured s;
    tl_structured_init(&s, TL_STRUCTURED_OUT, TL_CPU, 0);
    int rc = tl_structured_propose(&s, 0, out);
    if (!rc) rc = tl_structured_set_output(&s, 0, ndim, sizes, NULL, dtype == TL_DTYPE_UNDEFINED ? tl_tensor_dtype(out) : dtype);
    tl_structured_cleanup(&s);
    return rc;
}

int tl_structured_skip_impl(const tl_structured *s) {
    if (s->meta_only) return 1;
    return s->outputs[0] && tl_tensor_device(s->outputs[0]) == TL_META;
}

tl_tensor *tl_structured_finish(tl_structured *s) {
    tl_tensor *r = s->outputs[0];
    s->outputs[0] = NULL;
    if (r && s->kind != TL_STRUCTURED_FUNCTIONAL) tl_tensor_bump_version(r);
    if (!r) tl_set_error(TL_ERR_RUNTIME, "structured kernel: meta function set no output");
    tl_structured_cleanup(s);
    return r;
}

void tl_structured_cleanup(tl_structured *s) {
    for (int i = 0; i < s->noutputs; i++) {
        if (s->outputs[i]) tl_tensor_release(s->outputs[i]);
        s->outputs[i] = NULL;
    }
    s->noutputs = 0;
    if (s->iter) tl_iter_free(s->iter);
    s->iter = NULL;
}

/* ------------------------------------------------------------------ boxing */

int tl_glue_push_opt_int(tl_stack *st, int64_t v, bool has) {
    return has ? tl_stack_push_int(st, v) : tl_stack_push_none(st);
}

int tl_glue_push_opt_double(tl_stack *st, double v, bool has) {
    return has ? tl_stack_push_double(st, v) : tl_stack_push_none(st);
}

int tl_glue_push_opt_bool(tl_stack *st, bool v, bool has) {
    return has ? tl_stack_push_bool(st, v) : tl_stack_push_none(st);
}

int tl_glue_push_opt_scalar(tl_stack *st, const tl_scalar *v) {
    return v ? tl_stack_push_scalar(st, *v) : tl_stack_push_none(st);
}

int tl_glue_push_opt_int_list(tl_stack *st, const int64_t *v, int64_t n) {
    return v ? tl_stack_push_int_list(st, v, n) : tl_stack_push_none(st);
}

int tl_glue_push_opt_double_list(tl_stack *st, const double *v, int64_t n) {
    return v ? tl_stack_push_double_list(st, v, n) : tl_stack_push_none(st);
}

int tl_glue_push_dtype(tl_stack *st, tl_dtype v) {
    return v == TL_DTYPE_UNDEFINED ? tl_stack_push_none(st) : tl_stack_push_dtype(st, (int)v);
}

int tl_glue_push_device(tl_stack *st, int device) {
    return device < 0 ? tl_stack_push_none(st)
                      : tl_stack_push_device(st, (int)tl__device_type_of(device), tl__device_index_of(device));
}

int tl_glue_push_enum(tl_stack *st, int v) {
    return v < 0 ? tl_stack_push_none(st) : tl_stack_push_int(st, v);
}

int tl_glue_push_generator(tl_stack *st, tl_generator *g) {
    return g ? tl_stack_push_int(st, (int64_t)(intptr_t)g) : tl_stack_push_none(st);
}

static int pop_none(tl_stack *st) {
    if (tl_stack_top_is_none(st)) {
        tl_stack_drop(st, 1);
        return 1;
    }
    return 0;
}

int tl_glue_pop_bool(tl_stack *st, bool *out) {
    int v = 0;
    if (tl_stack_pop_bool(st, &v) != 0) return -1;
    *out = v != 0;
    return 0;
}

int tl_glue_pop_opt_int(tl_stack *st, int64_t *out, bool *has) {
    *has = false;
    *out = 0;
    if (pop_none(st)) return 0;
    if (tl_stack_pop_int(st, out) != 0) return -1;
    *has = true;
    return 0;
}

int tl_glue_pop_opt_double(tl_stack *st, double *out, bool *has) {
    *has = false;
    *out = 0;
    if (pop_none(st)) return 0;
    if (tl_stack_pop_double(st, out) != 0) return -1;
    *has = true;
    return 0;
}

int tl_glue_pop_opt_bool(tl_stack *st, bool *out, bool *has) {
    *has = false;
    *out = false;
    if (pop_none(st)) return 0;
    if (tl_glue_pop_bool(st, out) != 0) return -1;
    *has = true;
    return 0;
}

int tl_glue_pop_opt_scalar(tl_stack *st, tl_scalar *storage, const tl_scalar **out) {
    *out = NULL;
    if (pop_none(st)) return 0;
    if (tl_stack_pop_scalar(st, storage) != 0) return -1;
    *out = storage;
    return 0;
}

int tl_glue_pop_dtype(tl_stack *st, tl_dtype *out) {
    *out = TL_DTYPE_UNDEFINED;
    if (pop_none(st)) return 0;
    int v = 0;
    if (tl_stack_pop_dtype(st, &v) != 0) return -1;
    *out = (tl_dtype)v;
    return 0;
}

int tl_glue_pop_device(tl_stack *st, int *out) {
    *out = -1;
    if (pop_none(st)) return 0;
    tl_ivalue v;
    if (tl_stack_pop(st, &v) != 0) return -1;
    if (v.tag == TL_IV_DEVICE) {
        *out = v.u.device.index >= 0 ? tl__device_pack((tl_device_type)v.u.device.type, v.u.device.index)
                                     : v.u.device.type;
    } else if (v.tag == TL_IV_INT) {
        *out = (int)v.u.i;
    } else {
        const char *got = tl_ivalue_tag_name(v.tag);
        tl_ivalue_destroy(&v);
        return tl_set_error(TL_ERR_TYPE, "Expected Device but got %s", got);
    }
    return 0;
}

int tl_glue_pop_enum(tl_stack *st, int *out) {
    *out = -1;
    if (pop_none(st)) return 0;
    int64_t v = 0;
    if (tl_stack_pop_int(st, &v) != 0) return -1;
    *out = (int)v;
    return 0;
}

int tl_glue_pop_generator(tl_stack *st, tl_generator **out) {
    *out = NULL;
    if (pop_none(st)) return 0;
    int64_t v = 0;
    if (tl_stack_pop_int(st, &v) != 0) return -1;
    *out = (tl_generator *)(intptr_t)v;
    return 0;
}

int tl_glue_pop_list(tl_stack *st, int tag, int nullable, tl_ivalue *out) {
    memset(out, 0, sizeof *out);
    out->tag = TL_IV_NONE;
    tl_ivalue *top = tl_stack_peek(st, 0);
    if (!top) return tl_set_error(TL_ERR_RUNTIME, "pop from an empty stack");
    if (top->tag == TL_IV_NONE && nullable) {
        tl_stack_drop(st, 1);
        return 0;
    }
    if (top->tag == TL_IV_INT && tag == TL_IV_INT_LIST) { /* int[1] given as an int */
        int64_t v = top->u.i;
        int64_t *data = (int64_t *)malloc(sizeof(int64_t));
        if (!data) return tl_set_error(TL_ERR_MEMORY, "out of memory");
        data[0] = v;
        tl_stack_drop(st, 1);
        out->tag = TL_IV_INT_LIST;
        out->u.ints.data = data;
        out->u.ints.len = 1;
        return 0;
    }
    if (top->tag != tag)
        return tl_set_error(TL_ERR_TYPE, "Expected %s but got %s", tl_ivalue_tag_name(tag), tl_ivalue_tag_name(top->tag));
    return tl_stack_pop(st, out);
}

tl_keyset tl_glue_list_keyset(tl_tensor *const *v, int64_t n) {
    tl_keyset ks = 0;
    for (int64_t i = 0; i < n; i++)
        if (v[i]) ks |= tl_tensor_key_set(v[i]);
    return ks;
}

tl_keyset tl_glue_backend_select_keyset(tl_keyset ks, int device) {
    tl_keyset backend;
    switch (device < 0 ? device : (int)tl__device_type_of(device)) {   /* "cuda:1" selects CUDA */
    case -1:
    case TL_CPU: backend = TL_KEYSET_CPU_BITS; break;
    case TL_CUDA: backend = TL_KEYSET_CUDA_BITS; break;
    case TL_META: backend = TL_KEYSET_META_BITS; break;
    default:
        tl_set_error(TL_ERR_RUNTIME, "Expected a valid device, got device type %d", device);
        return 0;
    }
    /* the keys below BackendSelect, plus what a tensor of that backend carries */
    ks &= ((tl_keyset)1 << TL_KEY_BACKEND_SELECT) - 1;
    return (ks | backend) & ~tl_tls_get_excluded();
}

/* missing kernels: written once at registration (under the import lock) */
static char *missing_text = NULL;
static size_t missing_len = 0;

void tl_glue_note_missing(const char *op, const char *key, const char *names) {
    int need = snprintf(NULL, 0, "%s: %s (%s)\n", op, key, names);
    if (need <= 0) return;
    char *p = (char *)realloc(missing_text, missing_len + (size_t)need + 1);
    if (!p) return;
    missing_text = p;
    snprintf(missing_text + missing_len, (size_t)need + 1, "%s: %s (%s)\n", op, key, names);
    missing_len += (size_t)need;
}

int64_t tl_ops_missing_kernels(char *buf, size_t n) {
    if (buf && n) {
        size_t k = missing_len < n - 1 ? missing_len : n - 1;
        if (k) memcpy(buf, missing_text, k);
        buf[k] = 0;
    }
    return (int64_t)missing_len;
}

int tl_glue_pop_tensor_list_ret(tl_stack *st, tl_tensor ***ret, int64_t *ret_len) {
    tl_ivalue v;
    if (tl_glue_pop_list(st, TL_IV_TENSOR_LIST, 0, &v) != 0) return -1;
    *ret = v.u.tensors.data;
    *ret_len = v.u.tensors.len;
    return 0;
}

void tl_tensor_list_free(tl_tensor **list, int64_t n) {
    if (!list) return;
    for (int64_t i = 0; i < n; i++) tl_tensor_release(list[i]);
    free(list);
}
