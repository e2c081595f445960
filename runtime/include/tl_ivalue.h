/* torchlet runtime: boxed values (tl_ivalue) and the boxed-call stack (tl_stack).
 *
 * The boxed calling convention (PyTorch's IValue stack): a caller pushes an
 * operator's arguments in schema order (every argument, defaults filled in,
 * keyword-only ones included); the kernel pops exactly its arguments and
 * pushes its returns in order. After a successful call the stack holds the
 * returns where the arguments were.
 *
 * How schema types are boxed (one tag per value):
 *   Tensor -> TENSOR            Tensor? -> TENSOR or NONE
 *   Tensor[] -> TENSOR_LIST     Tensor?[] -> OPT_TENSOR_LIST (NULL entries = None)
 *   int, SymInt -> INT          float -> DOUBLE       bool -> BOOL
 *   complex -> COMPLEX          str -> STRING
 *   Scalar -> BOOL, INT or DOUBLE (the Python number's own kind)
 *   int[], SymInt[] -> INT_LIST float[] -> DOUBLE_LIST bool[] -> BOOL_LIST
 *   ScalarType -> DTYPE         Device -> DEVICE
 *   Layout, MemoryFormat -> INT
 *   T? -> the tag of T, or NONE
 *
 * Ownership: an ivalue owns its payload: a tensor is retained while held,
 * lists and strings are private copies. Pushing a borrowed value copies it
 * (tensors retained); tl_stack_push_ivalue moves. Popping transfers
 * ownership to the caller (release a popped tensor with tl_tensor_release,
 * destroy a popped ivalue with tl_ivalue_destroy). Every pop checks the tag
 * and reports a mismatch as TypeError ("Expected Tensor but got Int"),
 * leaving the stack unchanged; a pop from an empty stack is a RuntimeError.
 *
 * A tl_stack must not be copied by value; declare it (on the C stack or the
 * heap), tl_stack_init it, and tl_stack_free it. It holds up to 8 values
 * without allocating.
 *
 * cdef-clean: build_ffi.py strips preprocessor lines; keep declarations plain.
 */
#ifndef TL_IVALUE_H
#define TL_IVALUE_H

#include <stddef.h>
#include <stdint.h>
#include "tl_dtype.h"
#include "tl_tensor.h"

typedef enum tl_ivalue_tag {
    TL_IV_NONE = 0,
    TL_IV_BOOL = 1,
    TL_IV_INT = 2,
    TL_IV_DOUBLE = 3,
    TL_IV_COMPLEX = 4,
    TL_IV_TENSOR = 5,
    TL_IV_STRING = 6,
    TL_IV_INT_LIST = 7,
    TL_IV_DOUBLE_LIST = 8,
    TL_IV_BOOL_LIST = 9,
    TL_IV_TENSOR_LIST = 10,
    TL_IV_OPT_TENSOR_LIST = 11,
    TL_IV_DTYPE = 12,
    TL_IV_DEVICE = 13
} tl_ivalue_tag;

typedef struct tl_iv_int_list { int64_t *data; int64_t len; } tl_iv_int_list;
typedef struct tl_iv_double_list { double *data; int64_t len; } tl_iv_double_list;
typedef struct tl_iv_bool_list { uint8_t *data; int64_t len; } tl_iv_bool_list;
typedef struct tl_iv_tensor_list { tl_tensor **data; int64_t len; } tl_iv_tensor_list;
typedef struct tl_iv_complex { double re; double im; } tl_iv_complex;
typedef struct tl_iv_device { int32_t type; int32_t index; } tl_iv_device;

typedef union tl_ivalue_payload {
    int64_t i;                   /* BOOL (0/1), INT, DTYPE */
    double d;                    /* DOUBLE */
    tl_iv_complex c;             /* COMPLEX */
    tl_tensor *t;                /* TENSOR (owned reference) */
    char *s;                     /* STRING (owned, NUL-terminated) */
    tl_iv_int_list ints;         /* INT_LIST */
    tl_iv_double_list doubles;   /* DOUBLE_LIST */
    tl_iv_bool_list bools;       /* BOOL_LIST */
    tl_iv_tensor_list tensors;   /* TENSOR_LIST, OPT_TENSOR_LIST (owned references) */
    tl_iv_device device;         /* DEVICE: tl_device_type + index (-1 = none) */
} tl_ivalue_payload;

typedef struct tl_ivalue {
    int32_t tag;                 /* tl_ivalue_tag */
    int32_t reserved;
    tl_ivalue_payload u;
} tl_ivalue;

typedef struct tl_stack {
    tl_ivalue *heap;             /* NULL while the values fit in small[] */
    int64_t size;
    int64_t cap;
    tl_ivalue small[8];
} tl_stack;

/* ------------------------------------------------------------- ivalues */
const char *tl_ivalue_tag_name(int tag);      /* "Tensor", "Int", ...; "?" if unknown */
void tl_ivalue_destroy(tl_ivalue *v);         /* releases the payload, leaves NONE */
int tl_ivalue_copy(tl_ivalue *dst, const tl_ivalue *src); /* deep copy, tensors retained */

/* ------------------------------------------------------------- stacks */
void tl_stack_init(tl_stack *s);
void tl_stack_clear(tl_stack *s);             /* destroys every value, keeps capacity */
void tl_stack_free(tl_stack *s);              /* clear + release memory; reusable after init */
int64_t tl_stack_size(const tl_stack *s);
/* borrowed view of a value: depth 0 is the top; NULL if out of range */
tl_ivalue *tl_stack_peek(const tl_stack *s, int64_t depth);
/* borrowed view by position from the bottom (0 = first pushed); NULL if out of range */
tl_ivalue *tl_stack_at(const tl_stack *s, int64_t index);
int tl_stack_drop(tl_stack *s, int64_t n);    /* destroys the top n values */
/* 1 if the top value is None (for optional arguments: drop it, else pop the type) */
int tl_stack_top_is_none(const tl_stack *s);

/* push: 0, or -1 with MemoryError */
int tl_stack_push_ivalue(tl_stack *s, tl_ivalue *v);      /* moves: *v becomes NONE */
int tl_stack_push_none(tl_stack *s);
int tl_stack_push_bool(tl_stack *s, int v);
int tl_stack_push_int(tl_stack *s, int64_t v);
int tl_stack_push_double(tl_stack *s, double v);
int tl_stack_push_complex(tl_stack *s, double re, double im);
int tl_stack_push_scalar(tl_stack *s, tl_scalar v);       /* BOOL, INT or DOUBLE */
int tl_stack_push_tensor(tl_stack *s, tl_tensor *t);      /* retains; NULL pushes None */
int tl_stack_push_tensor_steal(tl_stack *s, tl_tensor *t);/* takes the caller's reference */
int tl_stack_push_string(tl_stack *s, const char *str);   /* copies; NULL pushes None */
int tl_stack_push_int_list(tl_stack *s, const int64_t *v, int64_t n);
int tl_stack_push_double_list(tl_stack *s, const double *v, int64_t n);
int tl_stack_push_bool_list(tl_stack *s, const uint8_t *v, int64_t n);
int tl_stack_push_tensor_list(tl_stack *s, tl_tensor *const *v, int64_t n);     /* no NULLs */
int tl_stack_push_opt_tensor_list(tl_stack *s, tl_tensor *const *v, int64_t n); /* NULL = None */
int tl_stack_push_dtype(tl_stack *s, int dtype);
int tl_stack_push_device(tl_stack *s, int device_type, int device_index);

/* pop: 0, or -1 with the error set and the stack unchanged */
int tl_stack_pop(tl_stack *s, tl_ivalue *out);            /* any tag; caller owns *out */
int tl_stack_pop_bool(tl_stack *s, int *out);
int tl_stack_pop_int(tl_stack *s, int64_t *out);
int tl_stack_pop_double(tl_stack *s, double *out);        /* accepts INT too */
int tl_stack_pop_scalar(tl_stack *s, tl_scalar *out);     /* BOOL, INT or DOUBLE */
int tl_stack_pop_tensor(tl_stack *s, tl_tensor **out);    /* new reference for the caller */
int tl_stack_pop_opt_tensor(tl_stack *s, tl_tensor **out);/* None gives *out = NULL */
int tl_stack_pop_dtype(tl_stack *s, int *out);            /* accepts INT too */
/* INT_LIST / TENSOR_LIST / ...: pop as an ivalue and read u.ints etc.;
 * tl_ivalue_destroy frees it. */

#endif
