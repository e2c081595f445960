/* torchlet runtime: glue for the schema conventions only PyTorch's wider
 * corpus uses (docs/OPERATOR_ABI.md): Scalar[] arguments, Storage arguments,
 * structured groups with several outputs or `precomputed:` values.
 *
 * Generated code includes this header only in the files that need it, so
 * torchlet's own operators do not depend on it.
 *
 * Boxing: the ivalue stack has no generic list, so a boxed Scalar[] is an
 * IntList when every element is a bool or an int and a DoubleList otherwise
 * (ints then travel as doubles); popping accepts either. Storage has no
 * ivalue: boxing a Storage argument fails with NotImplementedError (unboxed
 * kernels take the tl_storage * directly).
 *
 * cdef-clean: build_ffi.py strips preprocessor lines; keep declarations plain.
 */
#ifndef TL_GLUE_EXT_H
#define TL_GLUE_EXT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tl_structured.h"

/* DimVector fields of a precomputed struct hold at most this many sizes */
#define TL_PRECOMPUTE_MAX_DIMS 64

/* Scalar[] (NULL: None) */
int tl_glue_push_scalar_list(tl_stack *st, const tl_scalar *v, int64_t n);
/* pops into a malloc'ed array the caller frees (NULL when None and nullable) */
int tl_glue_pop_scalar_list(tl_stack *st, int nullable, tl_scalar **out, int64_t *n);

/* Storage: not boxable (NotImplementedError) */
int tl_glue_push_storage(tl_stack *st, tl_storage *v);
int tl_glue_pop_storage(tl_stack *st, tl_storage **out);

/* A structured kernel with n outputs: on success *rets[i] = outputs[i] (new
 * references; versions of mutated outputs bumped) and 0; else -1 and
 * nothing is handed out. */
int tl_glue_structured_finish_n(tl_structured *s, int n, tl_tensor **rets[]);

#endif
