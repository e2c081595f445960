/* torchlet runtime: TensorIterator (public C API, cdef-clean).
 *
 * Stages (tl_iter_build): operands in (outputs first) -> devices -> broadcast
 * shape -> type promotion / common dtype (PyTorch's result_type rules) ->
 * out= checks (resize of empty outputs, safe casting) or output allocation ->
 * overlap checks -> dimension reordering by strides and coalescing.
 * Then tl_iter_for_each runs a 1-D inner loop over the iteration space,
 * in parallel above the grain size, with a tiled traversal when operands
 * disagree on which dimension is contiguous.
 *
 * Inner loop convention (numpy / ATen style): data[i] points to operand i's
 * first element (outputs first), strides[i] is its byte stride, n the count.
 * A loop is contiguous when every strides[i] equals its operand's itemsize
 * (inputs may also have stride 0 for broadcast scalars).
 */
#ifndef TL_ITER_H
#define TL_ITER_H

#include <stdint.h>
#include "tl_dtype.h"
#include "tl_tensor.h"

typedef void (*tl_loop_fn)(char **data, const int64_t *strides, int64_t n, void *ctx);

typedef struct tl_iter tl_iter;

/* flags for tl_iter_new */
enum {
    TL_ITER_PROMOTE_INPUTS = 1,          /* cast inputs to the common dtype */
    TL_ITER_CAST_TO_OUTPUTS = 2,         /* compute in common dtype, cast into out= of another dtype */
    TL_ITER_SAFE_CASTING = 4,            /* common dtype must be castable to out= dtype (canCast) */
    TL_ITER_INT_TO_FLOAT = 8,            /* integral common dtype -> default float (true divide) */
    TL_ITER_RESIZE_OUTPUTS = 16,         /* resize out= of a different shape */
    TL_ITER_CHECK_OVERLAP = 32,          /* out= must not partially overlap inputs */
    TL_ITER_NO_BROADCAST_OUTPUT = 64,    /* out shape is fixed (copy_: inputs broadcast to it) */
    TL_ITER_ALL_SAME_DTYPE = 128,        /* every operand must have the common dtype */
    TL_ITER_BINARY_OP = 1 + 2 + 4 + 16 + 32,  /* PyTorch's binary_op config */
    TL_ITER_UNARY_OP = 1 + 2 + 4 + 16 + 32
};

enum { TL_ITER_MAX_OPERANDS = 8 };

tl_iter *tl_iter_new(uint32_t flags);
void tl_iter_free(tl_iter *it);
/* out may be NULL: the iterator allocates it */
int tl_iter_add_output(tl_iter *it, tl_tensor *out);
int tl_iter_add_input(tl_iter *it, const tl_tensor *in);
/* forces the common dtype (e.g. comparison ops compute in the promoted dtype but
 * write bool: use static output dtype instead) */
int tl_iter_set_common_dtype(tl_iter *it, tl_dtype dt);
/* dtype of outputs the iterator allocates (default: the common dtype) */
int tl_iter_set_output_dtype(tl_iter *it, tl_dtype dt);
int tl_iter_build(tl_iter *it);

/* results of build */
int64_t tl_iter_ndim(const tl_iter *it);            /* broadcast result ndim */
int tl_iter_shape(const tl_iter *it, int64_t *out); /* result shape (ndim entries) */
tl_dtype tl_iter_common_dtype(const tl_iter *it);
int64_t tl_iter_numel(const tl_iter *it);
int tl_iter_noutputs(const tl_iter *it);
int tl_iter_ninputs(const tl_iter *it);
/* the permutation chosen for the outputs' layout: perm[0] is the outermost
 * (largest-stride) result dim, perm[ndim-1] the innermost */
int tl_iter_perm(const tl_iter *it, int64_t *out);
/* after coalescing: number of loop dims, and their sizes (innermost first) */
int64_t tl_iter_loop_ndim(const tl_iter *it);
int tl_iter_loop_shape(const tl_iter *it, int64_t *out);
tl_tensor *tl_iter_output(const tl_iter *it, int i);  /* new reference */
tl_dtype tl_iter_operand_dtype(const tl_iter *it, int i);  /* dtype the loop sees */
int tl_iter_is_meta(const tl_iter *it);             /* nothing to compute */
/* 1 when every operand is contiguous in the loop space (fast path everywhere) */
int tl_iter_is_contiguous(const tl_iter *it);

/* runs loop over the whole space (threads above the grain size); afterwards
 * copies temporaries back into out= tensors of another dtype */
int tl_iter_for_each(tl_iter *it, tl_loop_fn loop, void *ctx);
/* same, but never splits across threads */
int tl_iter_serial_for_each(tl_iter *it, tl_loop_fn loop, void *ctx);

/* metadata only: what tl_iter_build would decide for these inputs under the
 * binary/unary op rules. out_shape needs room for 64 dims; out_perm too. */
int tl_iter_compute(int64_t ninputs, tl_tensor **inputs, uint32_t flags,
                    int64_t *out_ndim, int64_t *out_shape, tl_dtype *out_dtype,
                    int64_t *out_perm);

/* PyTorch's torch.result_type over tensors (wrapped numbers count as scalars) */
tl_dtype tl_result_type(int64_t n, tl_tensor **tensors);

/* TEST HOOK, not an operator: out = a + b through TensorIterator with a tiny
 * hand-written loop per dtype (runtime/src/testing.c). The real add comes from
 * the generator. out may be NULL (allocated) or an out= tensor. */
tl_tensor *tl_test_binary_add(tl_tensor *out, const tl_tensor *a, const tl_tensor *b);
/* TEST HOOK: iterate with a loop that records every inner-loop call count (n)
 * to check the traversal; returns the number of inner loop calls */
int64_t tl_test_count_loops(const tl_tensor *a, const tl_tensor *b);

#endif
