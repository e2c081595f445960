/* torchlet runtime: callback nodes (tl_callback_node_new, tl_autograd.h).
 *
 * A backward node whose apply calls a function pointer with an opaque
 * context: torchlet.autograd.Function's node (the Python backward runs
 * through a cffi callback, inside the C engine), or any other backward
 * brought from outside the generated code. The node owns:
 *   - its name (PyTorch's "<Function class>Backward"), in its own vtable copy,
 *     as the test node does, so tl_node_name needs no special case;
 *   - num_saved saved variables (version-checked like a generated node's,
 *     released by the engine after apply unless retain_graph);
 *   - ctx, handed back to `release` exactly once when the node dies.
 * Everything lives in the one block tl_node_new allocates. See
 * docs/AUTOGRAD.md "Custom functions". */
#include <stdint.h>
#include <string.h>

#include "tl_autograd.h"
#include "tl_error.h"

typedef struct {
    tl_node base;
    tl_node_vtable vt;                /* per node: vt.name = name */
    tl_callback_apply_fn apply;
    tl_callback_release_fn release;   /* NULL once called */
    void *ctx;
    int32_t num_saved;
    tl_saved_variable *saved;         /* num_saved entries, in the node's block */
    char *name;                       /* in the node's block, after the saved variables */
} callback_node;

static int callback_apply(tl_node *node, tl_tensor *const *grads_in, tl_tensor **grads_out);

static callback_node *as_callback(const tl_node *n) {
    return n && n->vt && n->vt->apply == callback_apply ? (callback_node *)n : NULL;
}

static int callback_apply(tl_node *node, tl_tensor *const *grads_in, tl_tensor **grads_out) {
    callback_node *c = (callback_node *)node;
    if (c->apply(c->ctx, node, grads_in, grads_out) == 0) return 0;
    if (tl_error_kind_get() == TL_OK)
        tl_set_error(TL_ERR_RUNTIME, "autograd: the backward of %s failed without reporting an error", c->name);
    return -1;
}

static void callback_release_saved(tl_node *node) {
    callback_node *c = (callback_node *)node;
    for (int32_t i = 0; i < c->num_saved; i++) tl_saved_variable_release(&c->saved[i]);
}

static void callback_destroy(tl_node *node) {
    callback_node *c = (callback_node *)node;
    tl_callback_release_fn release = c->release;
    c->release = NULL;
    if (release) release(c->ctx);
}

static const tl_node_vtable callback_proto = {
    "CallbackBackward", callback_apply, callback_release_saved, callback_destroy,
};

static size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }

tl_node *tl_callback_node_new(const char *name, int32_t num_inputs, int32_t num_next,
                              tl_callback_apply_fn apply, tl_callback_release_fn release, void *ctx,
                              int32_t num_saved) {
    if (!name || !apply || num_saved < 0) {
        tl_set_error(TL_ERR_RUNTIME, "tl_callback_node_new: invalid arguments (%s)",
                     !name ? "no name" : !apply ? "no apply function" : "negative num_saved");
        return NULL;
    }
    size_t head = align8(sizeof(callback_node));
    size_t len = strlen(name);
    if ((size_t)num_saved > (SIZE_MAX / 2 - head - len) / sizeof(tl_saved_variable)) {
        tl_set_error(TL_ERR_MEMORY, "autograd: out of memory allocating a %s node", name);
        return NULL;
    }
    size_t saved_bytes = (size_t)num_saved * sizeof(tl_saved_variable);
    tl_node *n = tl_node_new(&callback_proto, head + saved_bytes + len + 1, num_inputs, num_next);
    if (!n) return NULL;
    callback_node *c = (callback_node *)n;
    c->saved = num_saved ? (tl_saved_variable *)((char *)n + head) : NULL;
    c->name = (char *)n + head + saved_bytes;
    memcpy(c->name, name, len + 1);
    c->vt = callback_proto;
    c->vt.name = c->name;
    n->vt = &c->vt;
    c->apply = apply;
    c->release = release;
    c->ctx = ctx;
    c->num_saved = num_saved;
    return n;
}

static callback_node *saved_slot(tl_node *node, int32_t i, const char *fn) {
    callback_node *c = as_callback(node);
    if (!c) {
        tl_set_error(TL_ERR_RUNTIME, "%s: %s is not a callback node", fn, node ? tl_node_name(node) : "NULL");
        return NULL;
    }
    if (i < 0 || i >= c->num_saved) {
        tl_set_error(TL_ERR_INDEX, "%s: saved variable %d out of range for %s (%d saved)", fn, (int)i, c->name,
                     (int)c->num_saved);
        return NULL;
    }
    return c;
}

int tl_callback_node_save(tl_node *node, int32_t i, tl_tensor *t, int is_output) {
    callback_node *c = saved_slot(node, i, "tl_callback_node_save");
    return c ? tl_saved_variable_save(&c->saved[i], t, is_output) : -1;
}

int tl_callback_node_unpack(tl_node *node, int32_t i, tl_tensor **out) {
    *out = NULL;
    callback_node *c = saved_slot(node, i, "tl_callback_node_unpack");
    return c ? tl_saved_variable_unpack(&c->saved[i], node, out) : -1;
}

int32_t tl_callback_node_num_saved(const tl_node *node) {
    const callback_node *c = as_callback(node);
    return c ? c->num_saved : 0;
}

void *tl_callback_node_ctx(const tl_node *node) {
    const callback_node *c = as_callback(node);
    return c ? c->ctx : NULL;
}
