/* torchlet runtime: boxed values and the boxed-call stack (see tl_ivalue.h). */
#include <stdlib.h>
#include <string.h>

#include "tl_error.h"
#include "tl_ivalue.h"
#include "tl_tensor.h"

const char *tl_ivalue_tag_name(int tag) {
    switch (tag) {
    case TL_IV_NONE: return "None";
    case TL_IV_BOOL: return "Bool";
    case TL_IV_INT: return "Int";
    case TL_IV_DOUBLE: return "Double";
    case TL_IV_COMPLEX: return "ComplexDouble";
    case TL_IV_TENSOR: return "Tensor";
    case TL_IV_STRING: return "String";
    case TL_IV_INT_LIST: return "IntList";
    case TL_IV_DOUBLE_LIST: return "DoubleList";
    case TL_IV_BOOL_LIST: return "BoolList";
    case TL_IV_TENSOR_LIST: return "TensorList";
    case TL_IV_OPT_TENSOR_LIST: return "OptionalTensorList";
    case TL_IV_DTYPE: return "ScalarType";
    case TL_IV_DEVICE: return "Device";
    default: return "?";
    }
}

static void release_tensor_array(tl_tensor **data, int64_t len) {
    for (int64_t i = 0; i < len; i++)
        if (data[i]) tl_tensor_release(data[i]);
}

void tl_ivalue_destroy(tl_ivalue *v) {
    if (!v) return;
    switch (v->tag) {
    case TL_IV_TENSOR:
        if (v->u.t) tl_tensor_release(v->u.t);
        break;
    case TL_IV_STRING: free(v->u.s); break;
    case TL_IV_INT_LIST: free(v->u.ints.data); break;
    case TL_IV_DOUBLE_LIST: free(v->u.doubles.data); break;
    case TL_IV_BOOL_LIST: free(v->u.bools.data); break;
    case TL_IV_TENSOR_LIST:
    case TL_IV_OPT_TENSOR_LIST:
        release_tensor_array(v->u.tensors.data, v->u.tensors.len);
        free(v->u.tensors.data);
        break;
    default: break;
    }
    memset(v, 0, sizeof *v);
    v->tag = TL_IV_NONE;
}

/* copies n elements of size sz (n may be 0: returns a non-NULL 1-byte block so
 * that data == NULL never means "empty" by accident) */
static void *dup_array(const void *src, int64_t n, size_t sz) {
    if (n < 0 || (n > 0 && !src)) {
        tl_set_error(TL_ERR_VALUE, "invalid list argument (length %lld)", (long long)n);
        return NULL;
    }
    if ((uint64_t)n > SIZE_MAX / (sz ? sz : 1) / 2) {
        tl_set_error(TL_ERR_MEMORY, "list of %lld elements is too large", (long long)n);
        return NULL;
    }
    size_t bytes = (size_t)n * sz;
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        tl_set_error(TL_ERR_MEMORY, "out of memory boxing a list of %lld elements", (long long)n);
        return NULL;
    }
    if (bytes) memcpy(p, src, bytes);
    return p;
}

int tl_ivalue_copy(tl_ivalue *dst, const tl_ivalue *src) {
    if (!dst || !src) return tl_set_error(TL_ERR_VALUE, "tl_ivalue_copy: NULL argument");
    tl_ivalue v = *src;
    switch (src->tag) {
    case TL_IV_TENSOR:
        if (v.u.t) tl_tensor_retain(v.u.t);
        break;
    case TL_IV_STRING:
        if (!src->u.s) return tl_set_error(TL_ERR_VALUE, "tl_ivalue_copy: String without text");
        v.u.s = dup_array(src->u.s, (int64_t)strlen(src->u.s) + 1, 1);
        if (!v.u.s) return -1;
        break;
    case TL_IV_INT_LIST:
        v.u.ints.data = dup_array(src->u.ints.data, src->u.ints.len, sizeof(int64_t));
        if (!v.u.ints.data) return -1;
        break;
    case TL_IV_DOUBLE_LIST:
        v.u.doubles.data = dup_array(src->u.doubles.data, src->u.doubles.len, sizeof(double));
        if (!v.u.doubles.data) return -1;
        break;
    case TL_IV_BOOL_LIST:
        v.u.bools.data = dup_array(src->u.bools.data, src->u.bools.len, 1);
        if (!v.u.bools.data) return -1;
        break;
    case TL_IV_TENSOR_LIST:
    case TL_IV_OPT_TENSOR_LIST:
        v.u.tensors.data = dup_array(src->u.tensors.data, src->u.tensors.len, sizeof(tl_tensor *));
        if (!v.u.tensors.data) return -1;
        for (int64_t i = 0; i < v.u.tensors.len; i++)
            if (v.u.tensors.data[i]) tl_tensor_retain(v.u.tensors.data[i]);
        break;
    default: break;
    }
    *dst = v;
    return 0;
}

/* ------------------------------------------------------------------ stack */

static inline tl_ivalue *items(const tl_stack *s) {
    return s->heap ? s->heap : (tl_ivalue *)s->small;
}

void tl_stack_init(tl_stack *s) {
    if (!s) return;
    s->heap = NULL;
    s->size = 0;
    s->cap = (int64_t)(sizeof s->small / sizeof s->small[0]);
}

void tl_stack_clear(tl_stack *s) {
    if (!s) return;
    tl_ivalue *it = items(s);
    for (int64_t i = s->size; i-- > 0;) tl_ivalue_destroy(&it[i]);
    s->size = 0;
}

void tl_stack_free(tl_stack *s) {
    if (!s) return;
    tl_stack_clear(s);
    free(s->heap);
    tl_stack_init(s);
}

int64_t tl_stack_size(const tl_stack *s) { return s ? s->size : 0; }

tl_ivalue *tl_stack_peek(const tl_stack *s, int64_t depth) {
    if (!s || depth < 0 || depth >= s->size) return NULL;
    return &items(s)[s->size - 1 - depth];
}

tl_ivalue *tl_stack_at(const tl_stack *s, int64_t index) {
    if (!s || index < 0 || index >= s->size) return NULL;
    return &items(s)[index];
}

int tl_stack_top_is_none(const tl_stack *s) {
    return s && s->size > 0 && items(s)[s->size - 1].tag == TL_IV_NONE;
}

int tl_stack_drop(tl_stack *s, int64_t n) {
    if (!s) return tl_set_error(TL_ERR_VALUE, "tl_stack_drop: NULL stack");
    if (n < 0 || n > s->size)
        return tl_set_error(TL_ERR_RUNTIME, "cannot drop %lld values from a stack of %lld",
                            (long long)n, (long long)s->size);
    tl_ivalue *it = items(s);
    for (int64_t i = 0; i < n; i++) tl_ivalue_destroy(&it[--s->size]);
    return 0;
}

/* a free slot on top (not yet counted in size), or NULL with MemoryError */
static tl_ivalue *reserve(tl_stack *s) {
    if (!s) {
        tl_set_error(TL_ERR_VALUE, "NULL stack");
        return NULL;
    }
    if (s->size == s->cap) {
        int64_t ncap = s->cap * 2;
        tl_ivalue *n;
        if (s->heap) {
            n = realloc(s->heap, (size_t)ncap * sizeof *n);
        } else {
            n = malloc((size_t)ncap * sizeof *n);
            if (n) memcpy(n, s->small, (size_t)s->size * sizeof *n);
        }
        if (!n) {
            tl_set_error(TL_ERR_MEMORY, "out of memory growing a stack to %lld values",
                         (long long)ncap);
            return NULL;
        }
        s->heap = n;
        s->cap = ncap;
    }
    tl_ivalue *slot = &items(s)[s->size];
    memset(slot, 0, sizeof *slot);
    return slot;
}

#define PUSH_BEGIN(tagv)                   \
    tl_ivalue *v = reserve(s);             \
    if (!v) return -1;                     \
    v->tag = (tagv)
#define PUSH_END() \
    s->size++;     \
    return 0

int tl_stack_push_ivalue(tl_stack *s, tl_ivalue *src) {
    if (!src) return tl_set_error(TL_ERR_VALUE, "tl_stack_push_ivalue: NULL value");
    tl_ivalue *v = reserve(s);
    if (!v) return -1;
    *v = *src;
    memset(src, 0, sizeof *src);
    src->tag = TL_IV_NONE;
    PUSH_END();
}

int tl_stack_push_none(tl_stack *s) {
    PUSH_BEGIN(TL_IV_NONE);
    PUSH_END();
}

int tl_stack_push_bool(tl_stack *s, int b) {
    PUSH_BEGIN(TL_IV_BOOL);
    v->u.i = b ? 1 : 0;
    PUSH_END();
}

int tl_stack_push_int(tl_stack *s, int64_t i) {
    PUSH_BEGIN(TL_IV_INT);
    v->u.i = i;
    PUSH_END();
}

int tl_stack_push_double(tl_stack *s, double d) {
    PUSH_BEGIN(TL_IV_DOUBLE);
    v->u.d = d;
    PUSH_END();
}

int tl_stack_push_complex(tl_stack *s, double re, double im) {
    PUSH_BEGIN(TL_IV_COMPLEX);
    v->u.c.re = re;
    v->u.c.im = im;
    PUSH_END();
}

int tl_stack_push_scalar(tl_stack *s, tl_scalar sc) {
    switch (sc.kind) {
    case TL_SCALAR_BOOL: return tl_stack_push_bool(s, sc.i != 0);
    case TL_SCALAR_INT: return tl_stack_push_int(s, sc.i);
    case TL_SCALAR_DOUBLE: return tl_stack_push_double(s, sc.d);
    case TL_SCALAR_COMPLEX: return tl_stack_push_complex(s, sc.d, sc.im);
    default: return tl_set_error(TL_ERR_VALUE, "invalid scalar kind %d", (int)sc.kind);
    }
}

int tl_stack_push_tensor(tl_stack *s, tl_tensor *t) {
    if (!t) return tl_stack_push_none(s);
    PUSH_BEGIN(TL_IV_TENSOR);
    tl_tensor_retain(t);
    v->u.t = t;
    PUSH_END();
}

int tl_stack_push_tensor_steal(tl_stack *s, tl_tensor *t) {
    if (!t) return tl_stack_push_none(s);
    tl_ivalue *v = reserve(s);
    if (!v) {
        tl_tensor_release(t); /* we own it either way */
        return -1;
    }
    v->tag = TL_IV_TENSOR;
    v->u.t = t;
    PUSH_END();
}

int tl_stack_push_string(tl_stack *s, const char *str) {
    if (!str) return tl_stack_push_none(s);
    char *copy = dup_array(str, (int64_t)strlen(str) + 1, 1);
    if (!copy) return -1;
    tl_ivalue *v = reserve(s);
    if (!v) {
        free(copy);
        return -1;
    }
    v->tag = TL_IV_STRING;
    v->u.s = copy;
    PUSH_END();
}

#define PUSH_ARRAY(TAG, FIELD, SRC, N, SZ)            \
    void *copy = dup_array((SRC), (N), (SZ));         \
    if (!copy) return -1;                             \
    tl_ivalue *v = reserve(s);                        \
    if (!v) {                                         \
        free(copy);                                   \
        return -1;                                    \
    }                                                 \
    v->tag = (TAG);                                   \
    v->u.FIELD.data = copy;                           \
    v->u.FIELD.len = (N)

int tl_stack_push_int_list(tl_stack *s, const int64_t *a, int64_t n) {
    PUSH_ARRAY(TL_IV_INT_LIST, ints, a, n, sizeof(int64_t));
    PUSH_END();
}

int tl_stack_push_double_list(tl_stack *s, const double *a, int64_t n) {
    PUSH_ARRAY(TL_IV_DOUBLE_LIST, doubles, a, n, sizeof(double));
    PUSH_END();
}

int tl_stack_push_bool_list(tl_stack *s, const uint8_t *a, int64_t n) {
    PUSH_ARRAY(TL_IV_BOOL_LIST, bools, a, n, 1);
    for (int64_t i = 0; i < n; i++) v->u.bools.data[i] = v->u.bools.data[i] ? 1 : 0;
    PUSH_END();
}

static int push_tensors(tl_stack *s, tl_tensor *const *a, int64_t n, int optional) {
    if (!optional)
        for (int64_t i = 0; i < n; i++)
            if (a && !a[i])
                return tl_set_error(TL_ERR_VALUE,
                                    "expected a Tensor at index %lld of a Tensor[] but got None",
                                    (long long)i);
    PUSH_ARRAY(optional ? TL_IV_OPT_TENSOR_LIST : TL_IV_TENSOR_LIST, tensors, a, n,
               sizeof(tl_tensor *));
    for (int64_t i = 0; i < n; i++)
        if (v->u.tensors.data[i]) tl_tensor_retain(v->u.tensors.data[i]);
    PUSH_END();
}

int tl_stack_push_tensor_list(tl_stack *s, tl_tensor *const *a, int64_t n) {
    return push_tensors(s, a, n, 0);
}

int tl_stack_push_opt_tensor_list(tl_stack *s, tl_tensor *const *a, int64_t n) {
    return push_tensors(s, a, n, 1);
}

int tl_stack_push_dtype(tl_stack *s, int dtype) {
    PUSH_BEGIN(TL_IV_DTYPE);
    v->u.i = dtype;
    PUSH_END();
}

int tl_stack_push_device(tl_stack *s, int device_type, int device_index) {
    PUSH_BEGIN(TL_IV_DEVICE);
    v->u.device.type = device_type;
    v->u.device.index = device_index;
    PUSH_END();
}

/* ------------------------------------------------------------------- pop */

static tl_ivalue *top_or_error(tl_stack *s, const void *out) {
    if (!out) {
        tl_set_error(TL_ERR_VALUE, "NULL output pointer for a stack pop");
        return NULL;
    }
    if (!s) {
        tl_set_error(TL_ERR_VALUE, "NULL stack");
        return NULL;
    }
    if (s->size == 0) {
        tl_set_error(TL_ERR_RUNTIME, "pop from an empty stack");
        return NULL;
    }
    return &items(s)[s->size - 1];
}

static int mismatch(const char *expected, const tl_ivalue *v) {
    return tl_set_error(TL_ERR_TYPE, "Expected %s but got %s", expected,
                        tl_ivalue_tag_name(v->tag));
}

int tl_stack_pop(tl_stack *s, tl_ivalue *out) {
    tl_ivalue *v = top_or_error(s, out);
    if (!v) return -1;
    *out = *v;
    s->size--;
    return 0;
}

int tl_stack_pop_bool(tl_stack *s, int *out) {
    tl_ivalue *v = top_or_error(s, out);
    if (!v) return -1;
    if (v->tag != TL_IV_BOOL) return mismatch("Bool", v);
    *out = (int)v->u.i;
    s->size--;
    return 0;
}

int tl_stack_pop_int(tl_stack *s, int64_t *out) {
    tl_ivalue *v = top_or_error(s, out);
    if (!v) return -1;
    if (v->tag != TL_IV_INT) return mismatch("Int", v);
    *out = v->u.i;
    s->size--;
    return 0;
}

int tl_stack_pop_double(tl_stack *s, double *out) {
    tl_ivalue *v = top_or_error(s, out);
    if (!v) return -1;
    if (v->tag == TL_IV_DOUBLE) *out = v->u.d;
    else if (v->tag == TL_IV_INT) *out = (double)v->u.i;
    else return mismatch("Double", v);
    s->size--;
    return 0;
}

int tl_stack_pop_scalar(tl_stack *s, tl_scalar *out) {
    tl_ivalue *v = top_or_error(s, out);
    if (!v) return -1;
    tl_scalar r;
    memset(&r, 0, sizeof r);
    if (v->tag == TL_IV_BOOL) {
        r.kind = TL_SCALAR_BOOL;
        r.i = v->u.i;
    } else if (v->tag == TL_IV_INT) {
        r.kind = TL_SCALAR_INT;
        r.i = v->u.i;
    } else if (v->tag == TL_IV_DOUBLE) {
        r.kind = TL_SCALAR_DOUBLE;
        r.d = v->u.d;
    } else if (v->tag == TL_IV_COMPLEX) {
        r.kind = TL_SCALAR_COMPLEX;
        r.d = v->u.c.re;
        r.im = v->u.c.im;
    } else {
        return mismatch("Scalar", v);
    }
    *out = r;
    s->size--;
    return 0;
}

int tl_stack_pop_tensor(tl_stack *s, tl_tensor **out) {
    tl_ivalue *v = top_or_error(s, out);
    if (!v) return -1;
    if (v->tag != TL_IV_TENSOR) return mismatch("Tensor", v);
    *out = v->u.t; /* the stack's reference moves to the caller */
    s->size--;
    return 0;
}

int tl_stack_pop_opt_tensor(tl_stack *s, tl_tensor **out) {
    tl_ivalue *v = top_or_error(s, out);
    if (!v) return -1;
    if (v->tag == TL_IV_NONE) *out = NULL;
    else if (v->tag == TL_IV_TENSOR) *out = v->u.t;
    else return mismatch("Optional[Tensor]", v);
    s->size--;
    return 0;
}

int tl_stack_pop_dtype(tl_stack *s, int *out) {
    tl_ivalue *v = top_or_error(s, out);
    if (!v) return -1;
    if (v->tag != TL_IV_DTYPE && v->tag != TL_IV_INT) return mismatch("ScalarType", v);
    *out = (int)v->u.i;
    s->size--;
    return 0;
}
