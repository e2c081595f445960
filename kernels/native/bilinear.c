/* bilinear (CompositeImplicitAutograd): y[..., o] = sum_ij x1[..., i]
 * W[o, i, j] x2[..., j] + bias[o], with PyTorch's checks and messages
 * (aten/src/ATen/native/Linear.cpp). PyTorch contracts through _trilinear;
 * here the batch is flattened, x1 meets W (permuted to I x (O * J)) in one
 * matmul, and the J sum is a multiply by x2 and a sum: every step an
 * operator, so autograd differentiates it. */
#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/add.h"
#include "ops/bilinear.h"
#include "ops/matmul.h"
#include "ops/mul.h"
#include "ops/permute.h"
#include "ops/reshape.h"
#include "ops/sum.h"
#include "ops/to.h"
#include "tl_tensor.h"

tl_tensor *tl_native_bilinear(tl_keyset ks, tl_tensor *input1, tl_tensor *input2, tl_tensor *weight,
                              tl_tensor *bias) {
    const int64_t nd = tl_tensor_ndim(input1);
    if (nd != tl_tensor_ndim(input2))
        return tl_set_error(TL_ERR_RUNTIME, "bilinear(): input dimensions do not match: got %lld and %lld",
                            (long long)nd, (long long)tl_tensor_ndim(input2)), NULL;
    if (nd < 1 || tl_tensor_ndim(weight) != 3)
        return tl_set_error(TL_ERR_RUNTIME, "bilinear(): expected inputs of at least 1 dimension and a 3-D weight"),
               NULL;
    const int64_t *s1 = tl_tensor_sizes(input1), *s2 = tl_tensor_sizes(input2), *sw = tl_tensor_sizes(weight);
    int64_t batch = 1;
    for (int64_t i = 0; i < nd - 1; i++) {
        if (s1[i] != s2[i])
            return tl_set_error(TL_ERR_RUNTIME, "bilinear(): input batch dimensions do not match: got %lld and %lld",
                                (long long)s1[i], (long long)s2[i]), NULL;
        batch *= s1[i];
    }
    if (s1[nd - 1] != sw[1])
        return tl_set_error(TL_ERR_RUNTIME, "bilinear(): input1 size does not match weight size: got %lld but "
                            "expected %lld", (long long)s1[nd - 1], (long long)sw[1]), NULL;
    if (s2[nd - 1] != sw[2])
        return tl_set_error(TL_ERR_RUNTIME, "bilinear(): input2 size does not match weight size: got %lld but "
                            "expected %lld", (long long)s2[nd - 1], (long long)sw[2]), NULL;
    if (bias && tl_tensor_sizes(bias)[0] != sw[0])
        return tl_set_error(TL_ERR_RUNTIME, "bilinear(): bias size does not match weight size: got %lld but "
                            "expected %lld", (long long)tl_tensor_sizes(bias)[0], (long long)sw[0]), NULL;
    const tl_dtype dt = tl_tensor_dtype(input1);
    if (dt == TL_FLOAT16 || dt == TL_BFLOAT16) {
        /* float16 / bfloat16: computed in float32 and rounded once (PyTorch's
         * _trilinear accumulates in float32) */
        tl_tensor *c[4] = {NULL, NULL, NULL, NULL}, *in[4] = {input1, input2, weight, bias};
        int ok = 1;
        for (int i = 0; i < 4 && ok; i++)
            if (in[i]) ok = (c[i] = tl_ops_to_dtype(in[i], TL_FLOAT32, false, false, -1)) != NULL;
        tl_tensor *y = ok ? tl_native_bilinear(ks, c[0], c[1], c[2], c[3]) : NULL;
        tl_tensor *r = y ? tl_ops_to_dtype(y, dt, false, false, -1) : NULL;
        for (int i = 0; i < 4; i++) tl_tensor_release(c[i]);
        tl_tensor_release(y);
        return r;
    }
    const int64_t O = sw[0], I = sw[1], J = sw[2];
    const int64_t a_sz[2] = {batch, I}, b_sz[3] = {batch, 1, J}, w_perm[3] = {1, 0, 2}, w_sz[2] = {I, O * J};
    const int64_t t_sz[3] = {batch, O, J}, last[1] = {-1};
    tl_tensor *a = tl_ops_reshape(input1, a_sz, 2);
    tl_tensor *b = a ? tl_ops_reshape(input2, b_sz, 3) : NULL;
    tl_tensor *wp = b ? tl_ops_permute(weight, w_perm, 3) : NULL;
    tl_tensor *wr = wp ? tl_ops_reshape(wp, w_sz, 2) : NULL;
    tl_tensor *t = wr ? tl_ops_matmul(a, wr) : NULL;
    tl_tensor *t3 = t ? tl_ops_reshape(t, t_sz, 3) : NULL;
    tl_tensor *p = t3 ? tl_ops_mul_Tensor(t3, b) : NULL;
    /* integer inputs keep their dtype (sum would widen them to int64) */
    const tl_dtype sd = p && !tl_dtype_is_floating(tl_tensor_dtype(p)) ? tl_tensor_dtype(p) : TL_DTYPE_UNDEFINED;
    tl_tensor *y = p ? tl_ops_sum_dim_IntList(p, last, 1, false, sd) : NULL;
    tl_tensor *yb = y && bias ? tl_ops_add_Tensor(y, bias, tl_scalar_from_int(1)) : NULL;
    tl_tensor *r = NULL;
    tl_tensor *fin = bias ? yb : y;
    if (fin) {
        int64_t o_sz[TL_MAX_DIMS];
        for (int64_t i = 0; i < nd - 1; i++) o_sz[i] = s1[i];
        o_sz[nd - 1] = O;
        r = tl_ops_reshape(fin, o_sz, nd);
    }
    tl_tensor_release(a);
    tl_tensor_release(b);
    tl_tensor_release(wp);
    tl_tensor_release(wr);
    tl_tensor_release(t);
    tl_tensor_release(t3);
    tl_tensor_release(p);
    tl_tensor_release(y);
    tl_tensor_release(yb);
    return r;
}
