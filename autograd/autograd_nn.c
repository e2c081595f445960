/* Derivative helpers of the NN operators (declared in tl_autograd_formulas.h;
 * docs/NN.md): built from tl_ops_* calls, so they record under create_graph. */
#include "tl_autograd_formulas.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/_adaptive_avg_pool2d.h"
#include "ops/add.h"
#include "ops/constant_pad_nd.h"
#include "ops/convolution.h"
#include "ops/convolution_backward.h"
#include "ops/exp.h"
#include "ops/gather.h"
#include "ops/mul.h"
#include "ops/neg.h"
#include "ops/reshape.h"
#include "ops/sub.h"
#include "ops/sum.h"
#include "ops/zeros_like.h"
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

/* ---------------------------------------------------------- convolution */

/* a + b where either may be NULL (consumes both) */
static tl_tensor *add_maybe(tl_tensor *a, tl_tensor *b) {
    if (!a || !b) return a ? a : b;
    tl_tensor *r = tl_ops_add_Tensor(a, b, tl_scalar_from_int(1));
    tl_tensor_release(a);
    tl_tensor_release(b);
    return r;
}

/* PyTorch's _convolution_double_backward. The convolution is bilinear in
 * (input, weight), so with ggI / ggW / ggb the gradients flowing into
 * convolution_backward's grad_input / grad_weight / grad_bias:
 *   d grad_output = conv(ggI, w) + conv(input, ggW) + ggb (per channel)
 *   d input       = convolution_backward(gO, input, ggW)'s grad_input
 *   d weight      = convolution_backward(gO, ggI, w)'s grad_weight
 * all through operators, so they differentiate again. */
int tl_ag__convolution_double_backward(tl_tensor *ggI, tl_tensor *ggW, tl_tensor *ggb, tl_tensor *gO,
                                       tl_tensor *weight, tl_tensor *self, const int64_t *stride, int64_t nstride,
                                       const int64_t *padding, int64_t npadding, const int64_t *dilation,
                                       int64_t ndilation, bool transposed, const int64_t *output_padding,
                                       int64_t noutput_padding, int64_t groups, const bool *output_mask,
                                       int64_t nmask, tl_tensor **grad_grad_output, tl_tensor **grad_input,
                                       tl_tensor **grad_weight) {
    *grad_grad_output = *grad_input = *grad_weight = NULL;
    (void)nmask;
#define CONV(x, w) tl_ops_convolution(x, w, NULL, stride, nstride, padding, npadding, dilation, ndilation, transposed, \
                                      output_padding, noutput_padding, groups)
#define CONV_BACKWARD(x, w, mask, r0, r1, r2)                                                                        \
    tl_ops_convolution_backward(gO, x, w, NULL, 0, stride, nstride, padding, npadding, dilation, ndilation,          \
                                transposed, output_padding, noutput_padding, groups, mask, 3, r0, r1, r2)
    tl_tensor *gg = NULL;
    if (output_mask[0]) {
        if (ggI && !(gg = CONV(ggI, weight))) goto fail;
        if (ggW) {
            tl_tensor *t = CONV(self, ggW);
            if (!t) goto fail;
            if (!(gg = add_maybe(gg, t))) goto fail;
        }
        if (ggb) {
            int64_t shape[8];
            const int64_t nd = tl_tensor_ndim(gO);
            for (int64_t i = 0; i < nd && i < 8; i++) shape[i] = i == 1 ? tl_tensor_size(gO, 1) : 1;
            tl_tensor *b = tl_ops_reshape(ggb, shape, nd);
            if (!b) goto fail;
            if (!gg) {
                tl_tensor *z = tl_ops_zeros_like(gO, TL_DTYPE_UNDEFINED, -1, -1, false, false, -1);
                if (!z) {
                    tl_tensor_release(b);
                    goto fail;
                }
                gg = z;
            }
            if (!(gg = add_maybe(gg, b))) goto fail;
        }
    }
    if (output_mask[1] && ggW) {
        const bool m[3] = {true, false, false};
        tl_tensor *r1 = NULL, *r2 = NULL;
        if (CONV_BACKWARD(self, ggW, m, grad_input, &r1, &r2)) goto fail;
        tl_tensor_release(r1);
        tl_tensor_release(r2);
    }
    if (output_mask[2] && ggI) {
        const bool m[3] = {false, true, false};
        tl_tensor *r0 = NULL, *r2 = NULL;
        if (CONV_BACKWARD(ggI, weight, m, &r0, grad_weight, &r2)) goto fail;
        tl_tensor_release(r0);
        tl_tensor_release(r2);
    }
#undef CONV
#undef CONV_BACKWARD
    *grad_grad_output = gg;
    return 0;
fail:
    tl_tensor_release(gg);
    tl_tensor_release(*grad_input);
    tl_tensor_release(*grad_weight);
    *grad_input = *grad_weight = NULL;
    return -1;
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
