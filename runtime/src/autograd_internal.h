/* torchlet runtime: autograd internals shared by autograd.c and
 * autograd_engine.c (not part of the public API, not in the cdef). */
#ifndef TL_AUTOGRAD_INTERNAL_H
#define TL_AUTOGRAD_INTERNAL_H

#include "tl_autograd.h"
#include "tl_internal.h"

/* per-tensor autograd metadata (tensor->autograd_meta) */
typedef struct ag_meta {
    tl_node *grad_fn;            /* strong */
    tl_tensor *grad;             /* strong */
    tl_node *grad_accumulator;   /* weak: the leaf's AccumulateGrad (it owns the tensor) */
    tl_tensor *owner;            /* weak: the tensor this meta belongs to */
    tl_tensor *base;             /* strong: views only, the root base */
    int64_t attr_version;        /* views: version when grad_fn was set */
    int32_t output_nr;
    uint8_t requires_grad;       /* leaf flag */
    uint8_t retains_grad;
    uint8_t is_view;
} ag_meta;

/* tl_node.flags */
#define AG_NODE_OUTPUT0_WANTED 1u   /* an in-place node wrapped by CopySlices */
#define AG_NODE_LOCK 0x80000000u    /* held while the engine runs the node (apply + release) */

#define AG_INLINE_DIMS 5
struct tl_input_meta {
    int32_t set;
    tl_dtype dtype;
    int32_t device;
    int64_t ndim;
    int64_t *sizes;              /* -> inl or heap */
    int64_t inl[AG_INLINE_DIMS];
};

/* retain_grad() targets of one node: non-leaf tensors (weak) by output_nr */
typedef struct ag_retained {
    int32_t n, cap;
    struct { int32_t output_nr; tl_tensor *t; } e[];
} ag_retained;

static inline ag_meta *ag_meta_of(const tl_tensor *t) {
    return t ? (ag_meta *)t->autograd_meta : NULL;
}

ag_meta *ag_meta_get_or_create(tl_tensor *t);
/* gradient edge without creating an AccumulateGrad (new ref or {NULL,0}) */
tl_edge ag_gradient_edge_existing(tl_tensor *t);
/* engine hook: runs retain_grad() captures of a node with its input buffer */
int ag_run_retained(tl_node *node, tl_tensor *const *grads_in);
/* engine: is grads_out slot i wanted by the running graph task? */
int ag_engine_wants(const tl_node *node);
/* engine: reduce grad to the given shape (sum over broadcast dims); new ref */
tl_tensor *ag_sum_to(tl_tensor *grad, int64_t ndim, const int64_t *sizes);

#endif
