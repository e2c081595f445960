/* torchlet runtime: the autograd gate, a boxed kernel for the Autograd keys of
 * operators whose autograd kernel is costly to enter (a Python kernel: custom
 * operators). It runs that kernel only when it has work to do, grad mode on and
 * an argument requiring grad; otherwise it redispatches below the autograd
 * keys at once, in C (see tl_autograd.h, tl_autograd_gate_boxed). */
#include "tl_autograd.h"
#include "tl_dispatch.h"
#include "tl_error.h"

static int any_requires_grad(const tl_operator *op, const tl_stack *st) {
    int64_t n = tl_op_num_arguments(op);
    for (int64_t d = 0; d < n; d++) {
        const tl_ivalue *v = tl_stack_peek(st, d);
        if (!v) break;
        if (v->tag == TL_IV_TENSOR) {
            if (v->u.t && tl_autograd_requires_grad(v->u.t)) return 1;
        } else if (v->tag == TL_IV_TENSOR_LIST || v->tag == TL_IV_OPT_TENSOR_LIST) {
            for (int64_t i = 0; i < v->u.tensors.len; i++)
                if (v->u.tensors.data[i] && tl_autograd_requires_grad(v->u.tensors.data[i])) return 1;
        }
    }
    return 0;
}

int tl_autograd_gate_boxed(const tl_kernel *kernel, const tl_operator *op, tl_keyset ks, tl_stack *stack) {
    const tl_kernel *inner = (const tl_kernel *)kernel->ctx;
    if (!inner || !inner->boxed)
        return tl_set_error(TL_ERR_RUNTIME, "autograd gate of %s has no kernel to run", tl_op_name(op));
    if (tl_grad_mode_is_enabled() && any_requires_grad(op, stack))
        return inner->boxed(inner, op, ks, stack);
    return tl_op_redispatch_boxed(op, tl_keyset_below(ks, TL_KEY_AUTOGRAD_OTHER), stack);
}
