/* torchlet runtime: structured-kernel glue and boxing helpers for generated code.
 *
 * Structured kernels (docs/OPERATOR_ABI.md, docs/CODEGEN_C.md). The author of
 * a structured group writes
 *
 *     int tl_meta_<functional op>(tl_structured *s, <arguments>);   shapes and dtypes
 *     int tl_impl_<out kernel>(tl_structured *s, <arguments>, tl_tensor *out);  the math
 *
 * and the generator writes, per backend key of the out= function plus Meta,
 * a functional, an inplace and an out= kernel that run
 *
 *     tl_structured_init(&s, kind, device, meta_only);
 *     tl_structured_propose(&s, 0, self_or_out);      (inplace / out= only)
 *     meta(&s, ...);                                  (calls build_* or set_output)
 *     if (!tl_structured_skip_impl(&s)) impl(&s, ..., s.outputs[0]);
 *     return tl_structured_finish(&s);                (new reference; bumps versions)
 *
 * The meta function decides outputs through ONE of
 *   - tl_structured_build_*: a TensorIterator over the inputs with PyTorch's
 *     configs; functional: the iterator allocates; inplace: the output's shape
 *     must equal the broadcast shape ("output with shape [2, 3] doesn't match
 *     the broadcast shape [4, 2, 3]"); out=: resized (with PyTorch's warning
 *     when it had elements) and dtype-checked (safe casting). The impl then
 *     runs s->iter.
 *   - tl_structured_set_output: the same three behaviours without an iterator
 *     (reductions, mm): functional allocates on s->device; inplace checks
 *     "Bad in-place call: input tensor size [..] and output tensor size [..]
 *     should match" and the dtype; out= checks the dtype ("Expected out tensor
 *     to have dtype float, but got long int instead") and resizes.
 *
 * Ownership: s->outputs[i] are owned references (proposed outputs are
 * retained by tl_structured_propose); tl_structured_finish hands outputs[0]
 * to the caller and frees everything else, tl_structured_cleanup frees all.
 *
 * Boxing helpers (tl_glue_*): push/pop conventions for schema types the
 * ivalue stack has no direct call for (optionals, enums, lists); used by the
 * generated boxing wrappers and boxed adapters. Generator? is boxed as an
 * INT holding the handle's address (there is no Generator ivalue yet).
 *
 * cdef-clean: build_ffi.py strips preprocessor lines; keep declarations plain.
 * (Not listed in cdef_headers.txt: Python never sees a tl_structured.)
 */
#ifndef TL_STRUCTURED_H
#define TL_STRUCTURED_H

#include <stdbool.h>
#include <stdint.h>

#include "tl_dtype.h"
#include "tl_tensor.h"
#include "tl_iter.h"
#include "tl_ivalue.h"
#include "tl_dispatch.h"
#include "tl_runtime.h"

/* Layout? / MemoryFormat? arguments are ints (-1: None); values as in
 * codegen/api_c.py ENUM_VALUES */
typedef enum tl_layout { TL_LAYOUT_STRIDED = 0 } tl_layout;
typedef enum tl_memory_format {
    TL_CONTIGUOUS_FORMAT = 0,
    TL_PRESERVE_FORMAT = 1,
    TL_CHANNELS_LAST = 2,
    TL_CHANNELS_LAST_3D = 3
} tl_memory_format;

typedef enum tl_structured_kind {
    TL_STRUCTURED_FUNCTIONAL = 0,
    TL_STRUCTURED_INPLACE = 1,
    TL_STRUCTURED_OUT = 2
} tl_structured_kind;

enum { TL_STRUCTURED_MAX_OUTPUTS = 4 };

typedef struct tl_structured {
    int kind;                 /* tl_structured_kind */
    int device;               /* tl_device_type of the kernel's backend (set_output allocates there) */
    int meta_only;            /* 1 in a generated Meta kernel: impl never runs */
    int noutputs;             /* outputs decided so far */
    tl_tensor *outputs[4];    /* owned; proposed (inplace/out) or allocated (functional) */
    tl_iter *iter;            /* built by tl_structured_build_*, else NULL */
} tl_structured;

void tl_structured_init(tl_structured *s, int kind, int device, int meta_only);
/* the inplace `self` / out= `out` tensor for output i (retained) */
int tl_structured_propose(tl_structured *s, int i, tl_tensor *t);

/* TensorIterator-based meta functions. flags: TL_ITER_* (the kind adjusts
 * them: inplace never resizes). out_dtype: dtype of allocated outputs
 * (TL_DTYPE_UNDEFINED: the common dtype). */
int tl_structured_build(tl_structured *s, uint32_t flags, int ninputs, const tl_tensor *const *inputs,
                        tl_dtype out_dtype);
int tl_structured_build_binary_op(tl_structured *s, const tl_tensor *a, const tl_tensor *b);
int tl_structured_build_borrowing_binary_op(tl_structured *s, const tl_tensor *a, const tl_tensor *b);
int tl_structured_build_binary_float_op(tl_structured *s, const tl_tensor *a, const tl_tensor *b);
int tl_structured_build_comparison_op(tl_structured *s, const tl_tensor *a, const tl_tensor *b);
int tl_structured_build_unary_op(tl_structured *s, const tl_tensor *a);
int tl_structured_build_unary_float_op(tl_structured *s, const tl_tensor *a);
/* every input converted to `common` (the dtype the loop computes in) */
int tl_structured_build_as(tl_structured *s, uint32_t flags, int ninputs, const tl_tensor *const *inputs,
                           tl_dtype common);
/* three inputs (PyTorch's build_ternary_op: addcmul, addcdiv) */
int tl_structured_build_ternary_op(tl_structured *s, const tl_tensor *a, const tl_tensor *b, const tl_tensor *c);
/* where: a bool condition read as it is, self/other promoted (out= must have their result type) */
int tl_structured_build_where_op(tl_structured *s, const tl_tensor *cond, const tl_tensor *a, const tl_tensor *b);

/* Iterator-free meta functions: output i gets these sizes (strides NULL:
 * contiguous) and dtype. */
int tl_structured_set_output(tl_structured *s, int i, int64_t ndim, const int64_t *sizes,
                             const int64_t *strides, tl_dtype dtype);

/* PyTorch's resize_output for a hand-written CPU out= kernel: out must have
 * `dtype` (TL_DTYPE_UNDEFINED: any) and be on the CPU, then takes `ndim,
 * sizes` (the deprecation warning when it had elements and another shape). */
int tl_structured_resize_out(tl_tensor *out, int64_t ndim, const int64_t *sizes, tl_dtype dtype);

/* 1 when impl must not run: a Meta kernel, or Meta outputs. */
int tl_structured_skip_impl(const tl_structured *s);
/* Success: bumps the version counter of a mutated output (inplace / out=),
 * returns outputs[0] (new reference for the caller) and frees the rest. */
tl_tensor *tl_structured_finish(tl_structured *s);
/* Failure: releases everything (the error stays set). */
void tl_structured_cleanup(tl_structured *s);

/* ------------------------------------------------------------------ boxing */
int tl_glue_push_opt_int(tl_stack *st, int64_t v, bool has);
int tl_glue_push_opt_double(tl_stack *st, double v, bool has);
int tl_glue_push_opt_bool(tl_stack *st, bool v, bool has);
int tl_glue_push_opt_scalar(tl_stack *st, const tl_scalar *v);          /* NULL: None */
int tl_glue_push_opt_int_list(tl_stack *st, const int64_t *v, int64_t n);/* NULL: None */
int tl_glue_push_opt_double_list(tl_stack *st, const double *v, int64_t n);
int tl_glue_push_dtype(tl_stack *st, tl_dtype v);                       /* UNDEFINED: None */
int tl_glue_push_device(tl_stack *st, int device);                      /* -1: None */
int tl_glue_push_enum(tl_stack *st, int v);                             /* -1: None */
int tl_glue_push_generator(tl_stack *st, tl_generator *g);              /* NULL: None */

int tl_glue_pop_bool(tl_stack *st, bool *out);
int tl_glue_pop_opt_int(tl_stack *st, int64_t *out, bool *has);
int tl_glue_pop_opt_double(tl_stack *st, double *out, bool *has);
int tl_glue_pop_opt_bool(tl_stack *st, bool *out, bool *has);
int tl_glue_pop_opt_scalar(tl_stack *st, tl_scalar *storage, const tl_scalar **out);
int tl_glue_pop_dtype(tl_stack *st, tl_dtype *out);
int tl_glue_pop_device(tl_stack *st, int *out);
int tl_glue_pop_enum(tl_stack *st, int *out);
int tl_glue_pop_generator(tl_stack *st, tl_generator **out);
/* pops a value of `tag` (INT_LIST, DOUBLE_LIST, TENSOR_LIST, OPT_TENSOR_LIST,
 * STRING) into *out (owned; tl_ivalue_destroy it). nullable: None gives a
 * NONE ivalue whose payload reads as NULL / 0. An INT where an INT_LIST is
 * expected becomes a one-element list (int[1] arguments). */
int tl_glue_pop_list(tl_stack *st, int tag, int nullable, tl_ivalue *out);

/* BackendSelect: ks below BackendSelect plus the keyset of a tensor on
 * `device` (-1: CPU), minus the thread-local excluded keys; 0 + error for a
 * bad device */
tl_keyset tl_glue_backend_select_keyset(tl_keyset ks, int device);

/* Registration of a kernel whose hand-written function is missing from the
 * build (weak symbol): recorded instead of registered. */
void tl_glue_note_missing(const char *op, const char *key, const char *names);
/* "aten::relu: CPU (tl_native_relu)\n" per missing kernel (string convention of
 * tl_dispatch.h: at most n bytes with the NUL, returns the full length) */
int64_t tl_ops_missing_kernels(char *buf, size_t n);

/* Tensor[] returns: pops a TENSOR_LIST and hands its array (malloc'ed, owned
 * references) to *ret / *ret_len */
int tl_glue_pop_tensor_list_ret(tl_stack *st, tl_tensor ***ret, int64_t *ret_len);
/* frees a Tensor[] return: releases every tensor and the array */
void tl_tensor_list_free(tl_tensor **list, int64_t n);

/* OR of the keysets of the non-NULL tensors of a list */
tl_keyset tl_glue_list_keyset(tl_tensor *const *v, int64_t n);

#endif
