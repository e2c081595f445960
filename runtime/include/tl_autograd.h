/* torchlet runtime: autograd (public C API).
 *
 * What generated autograd code (generated/csrc/autograd_*.c, from
 * yaml/derivatives.yaml) and the Python package build on:
 *
 *   - tl_node: a backward node (AddBackward0, MulBackward0, AccumulateGrad...),
 *     refcounted, with a vtable, next edges and a sequence number;
 *   - per-tensor autograd metadata (requires_grad, grad, grad_fn + output_nr,
 *     a weak link to a leaf's AccumulateGrad), kept in the tensor's
 *     tl_tensor_set_autograd_meta room and created lazily;
 *   - saved variables with version snapshots;
 *   - grad mode and inference mode (thread-local, expressed through the
 *     dispatcher's thread-local excluded key set; see below);
 *   - the engine (tl_autograd_backward, tl_autograd_grad).
 *
 * Ownership follows tl_tensor.h: functions returning tl_tensor * / tl_node *
 * return NEW references (NULL + thread-local error on failure, unless the
 * comment says NULL is a normal answer); arguments are borrowed. Nothing
 * aborts. Implementation: runtime/src/autograd.c (metadata, nodes, saved
 * variables, modes) and runtime/src/autograd_engine.c (the engine).
 * Documentation: docs/AUTOGRAD.md.
 *
 * ---------------------------------------------------------------------------
 * How a generated autograd kernel uses this (out-of-place op, two inputs):
 *
 *   tl_tensor *ins[2] = {self, other};
 *   tl_node *node = NULL;
 *   if (tl_autograd_compute_requires_grad(ins, 2)) {
 *       node = tl_node_new(&MulBackward0_vtable, sizeof(MulBackward0), 1, 2);
 *       if (!node || tl_node_set_next_edges(node, ins, 2) < 0) goto fail;
 *       save inputs:  tl_saved_variable_save(&n->self_, self, 0) ...
 *   }
 *   out = tl_ops_mul_Tensor_redispatch(tl_keyset_below(ks, TL_KEY_AUTOGRAD_CPU ...), ...);
 *   if (node) {
 *       tl_autograd_set_history(out, node, 0);
 *       save outputs (after set_history): tl_saved_variable_save(&n->result_, out, 1);
 *       tl_node_release(node);      (the output's metadata holds it now)
 *   }
 *
 * In-place op (self mutated): before the op, tl_autograd_check_inplace(self)
 * (the leaf error); after it, tl_autograd_rebase_history(self, node, 0).
 * Views: an output of tl_autograd_set_history that shares storage with the
 * first input given to tl_node_set_next_edges is recorded as a view of that
 * input's base; an in-place op on such a view rebases the base's history onto
 * a CopySlices node (PyTorch's), and the view's grad_fn becomes an
 * AsStridedBackward0 of the base (regenerated whenever the shared version
 * counter moved since the view's history was set).
 * A saved `self` of an in-place op must be a clone taken before the op (or
 * the result, saved with is_output = 1 after rebase_history): saving the
 * mutated tensor itself as an input would be both wrong and a cycle.
 * out= variants are not differentiable (no node).
 * ---------------------------------------------------------------------------
 *
 * cdef-clean: build_ffi.py strips preprocessor lines; keep plain declarations.
 */
#ifndef TL_AUTOGRAD_H
#define TL_AUTOGRAD_H

#include <stddef.h>
#include <stdint.h>
#include "tl_dtype.h"
#include "tl_tensor.h"
#include "tl_dispatch.h"

typedef struct tl_node tl_node;
typedef struct tl_node_vtable tl_node_vtable;
typedef struct tl_input_meta tl_input_meta;   /* private (autograd.c) */

/* An edge points at input `input_nr` of `node` (the gradient slot a forward
 * output feeds). node == NULL: no edge (the input needs no gradient). */
typedef struct tl_edge {
    tl_node *node;
    int32_t input_nr;
} tl_edge;

/* Per node type. Every function receives the node itself.
 *
 * apply: grads_in has node->num_inputs entries (borrowed; an entry may be
 *   NULL = undefined gradient for that forward output, but apply is only
 *   called when at least one is non-NULL); grads_out has node->num_next slots,
 *   zeroed by the engine, to fill with NEW references (leave NULL for "no
 *   gradient"; skip slots where tl_node_should_compute_output(node, i) is 0,
 *   PyTorch's grad_input_mask). Return 0, or -1 with the error set (the engine
 *   releases whatever was stored in grads_out).
 * release_saved_variables: drop every saved tensor (tl_saved_variable_release
 *   on each); must be idempotent. Called by the engine after apply unless
 *   retain_graph, and before destroy. May be NULL.
 * destroy: free what the node owns besides saved variables and edges (heap
 *   arrays of saved sizes...). Does NOT free the node memory. May be NULL. */
struct tl_node_vtable {
    const char *name;   /* PyTorch's node name: "MulBackward0", "AccumulateGrad" */
    int (*apply)(tl_node *node, tl_tensor *const *grads_in, tl_tensor **grads_out);
    void (*release_saved_variables)(tl_node *node);
    void (*destroy)(tl_node *node);
};

/* The common head of every node. A node type embeds it as its FIRST member:
 *   typedef struct { tl_node base; tl_saved_variable self_; ... } MulBackward0;
 * Fields are read-only outside autograd*.c except through the functions below. */
struct tl_node {
    int64_t refcount;                 /* atomic */
    const tl_node_vtable *vt;
    uint64_t sequence_nr;             /* creation order; AccumulateGrad: UINT64_MAX */
    int32_t num_inputs;               /* gradients it receives = forward outputs */
    int32_t num_next;                 /* next edges = forward inputs */
    tl_edge *next;                    /* num_next edges (strong refs on edge nodes) */
    tl_input_meta *input_meta;        /* num_inputs entries: shape/dtype of each forward output */
    tl_node *pending_free;            /* private: deferred destruction list */
    void *retained;                   /* private: retain_grad() targets */
    tl_tensor *view_hint;             /* private: inputs[0] while the kernel records (weak) */
    uint32_t flags;                   /* private */
};

/* ------------------------------------------------------------------ nodes */
/* New node, refcount 1: `size` bytes (>= sizeof(tl_node); the node type's
 * struct size) zero-filled, then the head initialised: vtable, a fresh
 * sequence number, num_inputs/num_next, empty edges and input metadata. */
tl_node *tl_node_new(const tl_node_vtable *vt, size_t size, int32_t num_inputs, int32_t num_next);
void tl_node_retain(tl_node *n);
/* NULL is ignored. The last release runs release_saved_variables, destroy,
 * releases the next edges and frees the node; long chains are freed
 * iteratively (no recursion depth limit). */
void tl_node_release(tl_node *n);
int64_t tl_node_refcount(const tl_node *n);
const char *tl_node_name(const tl_node *n);
int32_t tl_node_num_inputs(const tl_node *n);
int32_t tl_node_num_next(const tl_node *n);
tl_edge tl_node_next_edge(const tl_node *n, int32_t i);   /* borrowed node; {NULL,0} if out of range */
uint64_t tl_node_sequence_nr(const tl_node *n);
/* next[i] = tl_autograd_gradient_edge(inputs[i]) for i < n (n must equal
 * num_next; NULL inputs give no edge). Returns 0 / -1. */
int tl_node_set_next_edges(tl_node *node, tl_tensor *const *inputs, int32_t n);
/* Sets one edge (retains edge.node). Returns 0 / -1 (bad index). */
int tl_node_set_next_edge(tl_node *node, int32_t i, tl_edge edge);
/* Inside apply: does the engine want grads_out[i]? (the edge exists and, when
 * the engine runs for given inputs only, leads to one of them) */
int tl_node_should_compute_output(const tl_node *node, int32_t i);
/* Shape/dtype recorded for input i of the node (from the forward output set
 * with tl_autograd_set_history). Returns ndim, -1 if i is out of range or
 * nothing was recorded; sizes points into the node (valid while it lives). */
int64_t tl_node_input_shape(const tl_node *node, int32_t i, const int64_t **sizes, tl_dtype *dtype);

/* --------------------------------------------------------- tensor metadata */
int tl_autograd_requires_grad(const tl_tensor *t);   /* NULL -> 0 */
int tl_autograd_is_leaf(const tl_tensor *t);         /* no grad_fn */
int tl_autograd_is_view(const tl_tensor *t);         /* a view of another tensor (Tensor._is_view()) */
/* any non-NULL of ts[0..n) requires grad */
int tl_autograd_any_requires_grad(tl_tensor *const *ts, int64_t n);
/* grad mode enabled && any requires grad: "should this call record a node?" */
int tl_autograd_compute_requires_grad(tl_tensor *const *ts, int64_t n);
/* out= variants are not differentiable: with grad mode on and any of ts (the
 * inputs and outs) requiring grad, PyTorch's RuntimeError "<opname>(): functions
 * with out=... arguments don't support automatic differentiation, but one of
 * the arguments requires grad." and -1; else 0 */
int tl_autograd_check_out(const char *opname, tl_tensor *const *ts, int64_t n);
/* Leaf flag. Errors (RuntimeError) as PyTorch: non-leaf ("you can only change
 * requires_grad flags of leaf variables."...), non-floating dtype ("only
 * Tensors of floating point and complex dtype can require gradients"). */
int tl_autograd_set_requires_grad(tl_tensor *t, int requires_grad);
tl_node *tl_autograd_grad_fn(const tl_tensor *t);    /* new ref or NULL (no error) */
int32_t tl_autograd_output_nr(const tl_tensor *t);
tl_tensor *tl_autograd_get_grad(const tl_tensor *t); /* new ref or NULL (no error) */
/* .grad = g (NULL clears); checks device, dtype and size like PyTorch. */
int tl_autograd_set_grad(tl_tensor *t, tl_tensor *g);
/* Edge the gradient of t flows into: (grad_fn, output_nr) for a non-leaf,
 * (AccumulateGrad, 0) for a leaf that requires grad (created on first use and
 * kept weakly by the tensor), {NULL, 0} otherwise (or on allocation failure,
 * with the error set). The node reference is NEW: release it. */
tl_edge tl_autograd_gradient_edge(tl_tensor *t);
/* Out-of-place outputs: out.grad_fn = node (retained), out.output_nr =
 * output_nr, and the node records out's shape/dtype as its input output_nr.
 * Outputs of a non-differentiable dtype (integers, bool) get no history.
 * NULL out is ignored. Returns 0 / -1. */
int tl_autograd_set_history(tl_tensor *out, tl_node *node, int32_t output_nr);
/* Records `view` (an output sharing storage with `input`) as a view of
 * input's base without recording history: for view operators called when no
 * input requires grad (PyTorch's ADInplaceOrView), so that a later in-place
 * op on the view with an operand that requires grad gives the base a
 * CopySlices history. (With a node, tl_autograd_set_history does this
 * itself.) Returns 0 / -1. */
int tl_autograd_track_view(tl_tensor *view, tl_tensor *input);
/* In-place ops, before running: with grad mode on, a leaf that requires grad
 * is an error: RuntimeError "a leaf Variable that requires grad is being used
 * in an in-place operation.". Returns 0 / -1. */
int tl_autograd_check_inplace(const tl_tensor *self);
/* In-place ops, after running: self's history becomes (node, output_nr)
 * (the old grad_fn is released; the node's edges, set before, keep it alive). */
int tl_autograd_rebase_history(tl_tensor *self, tl_node *node, int32_t output_nr);
/* PyTorch's autograd-not-implemented fallback, for operators with no
 * derivatives.yaml entry (generated kernels, after the forward ran): a
 * "torch::autograd::NotImplemented" node over the inputs that require grad
 * (self first for an in-place op), set as the history of each output of a
 * differentiable dtype (rebased for the in-place self, outs[0]); a backward
 * pass reaching it fails with "derivative for <op> is not implemented".
 * `op` ("aten::floor_divide") must outlive the node. Returns 0 / -1. */
int tl_autograd_not_implemented(const char *op, tl_tensor *const *ins, int64_t nin, tl_tensor *const *outs,
                                int64_t nout, int inplace);
/* New tensor sharing storage (and version counter) with t, no history. */
tl_tensor *tl_autograd_detach(const tl_tensor *t);
/* Drop t's history in place: no grad_fn, requires_grad off. */
int tl_autograd_detach_(tl_tensor *t);
/* Non-leaf keeps its .grad after backward (Tensor.retain_grad()); no-op on a
 * leaf; error on a tensor that does not require grad. */
int tl_autograd_retain_grad(tl_tensor *t);
int tl_autograd_retains_grad(const tl_tensor *t);
/* leaf.grad += grad with PyTorch's AccumulateGrad semantics: first gradient
 * stored as is when nothing else holds it and it is dense (else a clone);
 * later ones added in place with grad mode off, out of place with it on
 * (create_graph). Returns 0 / -1. */
int tl_autograd_accumulate_grad(tl_tensor *leaf, tl_tensor *grad);
/* The leaf an AccumulateGrad node feeds: new ref, or NULL for other nodes. */
tl_tensor *tl_node_variable(const tl_node *n);

/* --------------------------------------------------------- saved variables */
/* A tensor a node keeps for its backward formula. Embed it in the node
 * struct (zero-filled by tl_node_new = "nothing saved"). */
typedef struct tl_saved_variable {
    tl_tensor *data;          /* input: the tensor itself; output: an alias without history */
    int64_t saved_version;    /* tl_tensor_version at save time */
    int32_t output_nr;        /* outputs: which output of the saving node */
    uint8_t is_output;        /* saved output of the node that saves it */
    uint8_t defined;          /* a tensor was saved (not an undefined / None) */
    uint8_t released;         /* release_saved_variables ran */
    uint8_t requires_grad;    /* outputs: the output required grad */
} tl_saved_variable;

/* Save t (NULL: an undefined tensor). is_output = 1 for an output of the
 * node that saves it, after tl_autograd_set_history (no reference cycle).
 * Returns 0 / -1. Saving again replaces the previous value. */
int tl_saved_variable_save(tl_saved_variable *sv, tl_tensor *t, int is_output);
/* *out = the saved tensor (new ref; NULL for an undefined one) with its
 * history (outputs: grad_fn = saved_for). Errors: saved after release ("Trying
 * to backward through the graph a second time ..."), and a version mismatch
 * ("one of the variables needed for gradient computation has been modified by
 * an inplace operation: ..."). Returns 0 / -1. */
int tl_saved_variable_unpack(tl_saved_variable *sv, tl_node *saved_for, tl_tensor **out);
/* Drop the saved tensor; later unpacks fail with the "backward through the
 * graph a second time" error. Idempotent. */
void tl_saved_variable_release(tl_saved_variable *sv);

/* ------------------------------------------------------------------ modes */
/* Grad mode is thread-local and IS the dispatcher's TLS exclusion of the
 * Autograd keys: disabled <=> every Autograd* key is in the excluded set, so
 * autograd kernels are skipped entirely (docs/DISPATCHER.md §6). Inference
 * mode additionally excludes ADInplaceOrView. A new thread starts with grad
 * mode on and inference mode off. */
int tl_grad_mode_is_enabled(void);
void tl_grad_mode_set_enabled(int enabled);
int tl_inference_mode_is_enabled(void);
/* Guards: enter returns the previous state (an opaque keyset); exit restores
 * it (LIFO). inference_mode(enabled=0) turns inference mode off and grad
 * mode on, like c10::InferenceMode(false). */
uint64_t tl_grad_mode_guard_enter(int enabled);
uint64_t tl_inference_mode_guard_enter(int enabled);
void tl_autograd_mode_guard_exit(uint64_t previous);

/* ----------------------------------------------------------------- engine */
/* Tensor.backward / torchlet.autograd.backward: gradients flow from
 * tensors[i] (seeded with grad_tensors[i]; grad_tensors NULL or an entry NULL:
 * implicit ones, scalar outputs only) and accumulate into the .grad of the
 * leaves (or, when n_inputs > 0, only into inputs[0..n_inputs), leaves or
 * not). retain_graph = 0 frees saved variables as nodes run; create_graph = 1
 * runs the formulas with grad mode on (higher-order gradients). 0 / -1. */
int tl_autograd_backward(tl_tensor *const *tensors, int64_t n, tl_tensor *const *grad_tensors,
                         int retain_graph, int create_graph,
                         tl_tensor *const *inputs, int64_t n_inputs);
/* Tensor.backward(gradient) for one tensor: tl_autograd_backward(&tensor, 1,
 * grad ? &grad : NULL, ...) without building arrays (the common call). */
int tl_autograd_backward1(tl_tensor *tensor, tl_tensor *grad, int retain_graph, int create_graph);
/* torchlet.autograd.grad: out[0..n_inputs) receive the gradients of
 * outputs w.r.t. inputs (new refs; NULL for an unused input when
 * allow_unused, else the "appears to not have been used" error). .grad is
 * not touched. 0 / -1 (out entries are all NULL on error). */
int tl_autograd_grad(tl_tensor *const *outputs, int64_t n, tl_tensor *const *grad_outputs,
                     tl_tensor *const *inputs, int64_t n_inputs,
                     int retain_graph, int create_graph, int allow_unused, tl_tensor **out);

/* -------------------------------------------------------- callback nodes */
/* A backward node whose apply calls a function with an opaque context: the
 * node type behind torchlet.autograd.Function (and anything else that brings
 * its own backward, e.g. from Python through cffi callbacks).
 * Implementation: runtime/src/autograd_callback.c.
 *
 * apply(ctx, node, grads_in, grads_out) has the vtable apply's contract
 * (num_inputs borrowed gradients, an entry NULL for an output that got none;
 * num_next slots to fill with NEW references, skipping those where
 * tl_node_should_compute_output is 0); it runs under the grad mode the
 * engine set (create_graph). Return 0, or -1 with the error set.
 * release(ctx) is called exactly once, when the node is destroyed (after its
 * saved variables are released): drop whatever keeps ctx alive. */
typedef int (*tl_callback_apply_fn)(void *ctx, tl_node *node, tl_tensor *const *grads_in, tl_tensor **grads_out);
typedef void (*tl_callback_release_fn)(void *ctx);
/* New node, refcount 1, with no edges yet (tl_node_set_next_edge(s)); `name`
 * is copied (tl_node_name returns it: "ScaleBackward"); apply must not be
 * NULL, release may be; num_saved saved-variable slots, all undefined. On
 * failure NULL with the error set, and release is NOT called (ctx stays the
 * caller's). */
tl_node *tl_callback_node_new(const char *name, int32_t num_inputs, int32_t num_next,
                              tl_callback_apply_fn apply, tl_callback_release_fn release, void *ctx,
                              int32_t num_saved);
/* Saved variable i = t (NULL: an undefined one), as tl_saved_variable_save:
 * version snapshot; is_output = 1 for an output whose history is this node
 * (after tl_autograd_set_history / rebase_history: no reference cycle).
 * The engine releases the saved variables after apply unless retain_graph.
 * Returns 0 / -1 (not a callback node, i out of range). */
int tl_callback_node_save(tl_node *node, int32_t i, tl_tensor *t, int is_output);
/* *out = saved variable i (new ref; NULL for an undefined one), as
 * tl_saved_variable_unpack: the version check and the "backward through the
 * graph a second time" error. Returns 0 / -1. */
int tl_callback_node_unpack(tl_node *node, int32_t i, tl_tensor **out);
/* Number of saved-variable slots; 0 for a node that is not a callback node. */
int32_t tl_callback_node_num_saved(const tl_node *node);
/* The ctx given to tl_callback_node_new; NULL for other nodes (no error). */
void *tl_callback_node_ctx(const tl_node *node);

/* ----------------------------------------------------------- autograd gate */
/* A boxed kernel for the Autograd keys (runtime/src/autograd_gate.c): its
 * ctx is another tl_kernel (the operator's real autograd kernel), which it runs
 * only with grad mode on and some Tensor argument requiring grad; otherwise it
 * redispatches below the autograd keys without leaving C. custom_op registers
 * its Python autograd kernel behind one, so calls that need no graph never
 * enter Python for it. */
int tl_autograd_gate_boxed(const tl_kernel *kernel, const tl_operator *op, tl_keyset ks, tl_stack *stack);

/* ------------------------------------------------------------ test hooks */
/* Live node count (all types; for leak tests). */
int64_t tl_autograd_live_nodes(void);
/* A hand-built node for engine tests: name given; apply sends
 * scale[j] * (sum of the defined grads_in) to each next edge j (through the
 * generated add/mul entry points). scale has num_next entries (copied). */
tl_node *tl_autograd_test_node_new(const char *name, int32_t num_inputs, int32_t num_next,
                                   const double *scale);

#endif
