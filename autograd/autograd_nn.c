/* Derivative helpers of the NN operators (declared in tl_autograd_formulas.h;
 * docs/NN.md): built from tl_ops_* calls, so they record under create_graph. */
#include "tl_autograd_formulas.h"
#include "tl_ops.h"
#include "tl_tensor.h"

/* PyTorch's softmax_double_backward, the `output:` term of
 * _softmax_backward_data's derivative (y = output, g = grad_output, gg = grad):
 *   g * gg - sum(y * g, dim) * gg - g * sum(y * gg, dim)        (sums keepdim) */
tl_tensor *tl_ag_softmax_double_backward(tl_tensor *grad, tl_tensor *grad_output, int64_t dim, tl_tensor *output) {
    const int64_t d[1] = {dim};
    const tl_scalar one = tl_scalar_from_int(1);
    tl_tensor *a = NULL, *yg = NULL, *s1 = NULL, *b = NULL, *ygg = NULL, *s2 = NULL, *c = NULL, *ab = NULL,
              *r = NULL;
    if (!(a = tl_ops_mul_Tensor(grad_output, grad)) || !(yg = tl_ops_mul_Tensor(output, grad_output)) ||
        !(s1 = tl_ops_sum_dim_IntList(yg, d, 1, true, TL_DTYPE_UNDEFINED)) || !(b = tl_ops_mul_Tensor(s1, grad)) ||
        !(ygg = tl_ops_mul_Tensor(output, grad)) ||
        !(s2 = tl_ops_sum_dim_IntList(ygg, d, 1, true, TL_DTYPE_UNDEFINED)) ||
        !(c = tl_ops_mul_Tensor(grad_output, s2)) || !(ab = tl_ops_sub_Tensor(a, b, one)))
        goto done;
    r = tl_ops_sub_Tensor(ab, c, one);
done:
    tl_tensor_release(a);
    tl_tensor_release(yg);
    tl_tensor_release(s1);
    tl_tensor_release(b);
    tl_tensor_release(ygg);
    tl_tensor_release(s2);
    tl_tensor_release(c);
    tl_tensor_release(ab);
    return r;
}

/* _log_softmax_backward_data's derivative, PyTorch's inline formulas as
 * helpers (the compiler has no int -> int[] `.sum(dim, true)`):
 *   grad_output: grad - sum(grad * exp(output), dim)
 *   output:      -sum(grad_output, dim) * exp(output) * grad */
tl_tensor *tl_ag_log_softmax_double_backward_grad_output(tl_tensor *grad, tl_tensor *output, int64_t dim) {
    const int64_t d[1] = {dim};
    tl_tensor *e = NULL, *ge = NULL, *s = NULL, *r = NULL;
    if ((e = tl_ops_exp(output)) && (ge = tl_ops_mul_Tensor(grad, e)) &&
        (s = tl_ops_sum_dim_IntList(ge, d, 1, true, TL_DTYPE_UNDEFINED)))
        r = tl_ops_sub_Tensor(grad, s, tl_scalar_from_int(1));
    tl_tensor_release(e);
    tl_tensor_release(ge);
    tl_tensor_release(s);
    return r;
}

tl_tensor *tl_ag_log_softmax_double_backward_output(tl_tensor *grad, tl_tensor *grad_output, int64_t dim,
                                                    tl_tensor *output) {
    const int64_t d[1] = {dim};
    tl_tensor *s = NULL, *e = NULL, *se = NULL, *seg = NULL, *r = NULL;
    if ((s = tl_ops_sum_dim_IntList(grad_output, d, 1, true, TL_DTYPE_UNDEFINED)) && (e = tl_ops_exp(output)) &&
        (se = tl_ops_mul_Tensor(s, e)) && (seg = tl_ops_mul_Tensor(se, grad)))
        r = tl_ops_neg(seg);
    tl_tensor_release(s);
    tl_tensor_release(e);
    tl_tensor_release(se);
    tl_tensor_release(seg);
    return r;
}

/* PyTorch's max_pool_double_backward: the gradient of a max pooling backward
 * with respect to grad_output picks grad at the saved indices of each plane
 * (the last `dim` dims flattened) */
tl_tensor *tl_ag_max_pool_double_backward(tl_tensor *grad, tl_tensor *indices, int64_t dim) {
    const int64_t nd = tl_tensor_ndim(indices);
    if (tl_tensor_numel(indices) == 0)
        return tl_empty(nd, tl_tensor_sizes(indices), tl_tensor_dtype(grad), tl_tensor_device(grad));
    int64_t size[16];
    const int64_t lead = nd - dim < 15 ? nd - dim : 15;
    for (int64_t i = 0; i < lead; i++) size[i] = tl_tensor_sizes(indices)[i];
    size[lead] = -1;
    tl_tensor *iv = NULL, *gv = NULL, *g = NULL, *r = NULL;
    if ((iv = tl_ops_reshape(indices, size, lead + 1)) && (gv = tl_ops_reshape(grad, size, lead + 1)) &&
        (g = tl_ops_gather(gv, -1, iv, false)))
        r = tl_ops_reshape(g, tl_tensor_sizes(indices), nd);
    tl_tensor_release(iv);
    tl_tensor_release(gv);
    tl_tensor_release(g);
    return r;
}

/* _adaptive_avg_pool2d_backward's `grad_output:` term, PyTorch's
 * `_adaptive_avg_pool2d_symint(grad, {grad_output.sym_size(-2),
 * grad_output.sym_size(-1)})` (the compiler has no braced int lists) */
tl_tensor *tl_ag_adaptive_avg_pool2d_double_backward(tl_tensor *grad, tl_tensor *grad_output) {
    const int64_t nd = tl_tensor_ndim(grad_output);
    const int64_t os[2] = {tl_tensor_sizes(grad_output)[nd - 2], tl_tensor_sizes(grad_output)[nd - 1]};
    return tl_ops__adaptive_avg_pool2d(grad, os, 2);
}

/* PyTorch's constant_pad_nd_backward: constant_pad_nd of grad by the negated
 * pads (negative pads narrow it back to the input's shape) */
tl_tensor *tl_ag_constant_pad_nd_backward(tl_tensor *grad, const int64_t *pad, int64_t npad) {
    int64_t neg[64];
    if (npad > 64) npad = 64;
    for (int64_t i = 0; i < npad; i++) neg[i] = -pad[i];
    return tl_ops_constant_pad_nd(grad, neg, npad, tl_scalar_from_int(0));
}
