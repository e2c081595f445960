/* PyTorch's autograd-not-implemented fallback (autograd_not_implemented_
 * fallback.cpp) for operators with no derivatives.yaml entry: the forward
 * runs, the outputs of a differentiable dtype get a `NotImplemented` grad_fn
 * (name "torch::autograd::NotImplemented"), and the error comes only when a
 * backward pass reaches it:
 *     RuntimeError: derivative for aten::floor_divide is not implemented
 * The node's edges are the inputs that require grad (PyTorch's
 * next_functions); an in-place op keeps self as edge 0 (CopySlices reads it). */
#include <stdlib.h>

#include "tl_autograd.h"
#include "tl_error.h"
#include "tl_tensor.h"

typedef struct {
    tl_node base;
    const char *op; /* "aten::<name>": a string literal of the generated kernel */
} not_implemented_node;

static int not_implemented_apply(tl_node *node, tl_tensor *const *grads_in, tl_tensor **grads_out) {
    (void)grads_in;
    (void)grads_out;
    return tl_set_error(TL_ERR_RUNTIME, "derivative for %s is not implemented", ((not_implemented_node *)node)->op);
}

static const tl_node_vtable not_implemented_vtable = {
    "torch::autograd::NotImplemented", not_implemented_apply, NULL, NULL,
};

int tl_autograd_not_implemented(const char *op, tl_tensor *const *ins, int64_t nin, tl_tensor *const *outs,
                                int64_t nout, int inplace) {
    tl_tensor *small[8];
    tl_tensor **edges = nin <= 8 ? small : malloc((size_t)nin * sizeof *edges);
    if (!edges) return tl_set_error(TL_ERR_MEMORY, "out of memory");
    int32_t ne = 0;
    for (int64_t i = 0; i < nin; i++)
        if ((inplace && i == 0) || tl_autograd_requires_grad(ins[i])) edges[ne++] = ins[i];
    int rc = -1;
    tl_node *n = tl_node_new(&not_implemented_vtable, sizeof(not_implemented_node), (int32_t)nout, ne);
    if (!n) goto done;
    ((not_implemented_node *)n)->op = op;
    if (tl_node_set_next_edges(n, edges, ne) < 0) goto done;
    for (int64_t i = 0; i < nout; i++) {
        /* outputs of an integer or bool dtype get no history (PyTorch's isDifferentiableType) */
        if (!outs[i] || !(tl_dtype_is_floating(tl_tensor_dtype(outs[i])) || tl_dtype_is_complex(tl_tensor_dtype(outs[i]))))
            continue;
        int r = inplace && i == 0 ? tl_autograd_rebase_history(outs[i], n, 0)
                                  : tl_autograd_set_history(outs[i], n, (int32_t)i);
        if (r < 0) goto done;
    }
    rc = 0;
done:
    tl_node_release(n);
    if (edges != small) free(edges);
    return rc;
}
