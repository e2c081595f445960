/* Products and differences built from other operators, as PyTorch's
 * CompositeImplicitAutograd kernels (aten/src/ATen/native/Linear.cpp,
 * LinearAlgebra.cpp, ReduceOps.cpp, Correlation.cpp): tensordot (permute +
 * reshape to one mm), inner, kron, linalg_vecdot, linalg_diagonal,
 * linalg_multi_dot (the cheapest chain order), linalg_vander, diff, cov,
 * corrcoef. Autograd flows through the operators called; the messages are
 * PyTorch's. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "complex_ops.h"
#include "tl_autograd_formulas.h"
#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/add.h"
#include "ops/addbmm.h"
#include "ops/addmm.h"
#include "ops/addmv.h"
#include "ops/addr.h"
#include "ops/cat.h"
#include "ops/clip.h"
#include "ops/copy.h"
#include "ops/corrcoef.h"
#include "ops/cov.h"
#include "ops/cross.h"
#include "ops/cumprod.h"
#include "ops/diagonal.h"
#include "ops/diff.h"
#include "ops/dist.h"
#include "ops/div.h"
#include "ops/dot.h"
#include "ops/expand.h"
#include "ops/ge.h"
#include "ops/inner.h"
#include "ops/kron.h"
#include "ops/le.h"
#include "ops/linalg_cross.h"
#include "ops/linalg_diagonal.h"
#include "ops/linalg_multi_dot.h"
#include "ops/linalg_vander.h"
#include "ops/linalg_vecdot.h"
#include "ops/linalg_vector_norm.h"
#include "ops/logical_xor.h"
#include "ops/min.h"
#include "ops/mm.h"
#include "ops/mul.h"
#include "ops/mv.h"
#include "ops/narrow.h"
#include "ops/ne.h"
#include "ops/new_full.h"
#include "ops/new_ones.h"
#include "ops/outer.h"
#include "ops/permute.h"
#include "ops/reshape.h"
#include "ops/sqrt.h"
#include "ops/squeeze.h"
#include "ops/sub.h"
#include "ops/sum.h"
#include "ops/t.h"
#include "ops/tensordot.h"
#include "ops/to.h"
#include "ops/transpose.h"
#include "ops/unsqueeze.h"
#include "ops/view.h"
#include "ops/zero.h"
#include "ops/zeros_like.h"
#include "tl_runtime.h"
#include "tl_structured.h"
#include "tl_tensor.h"

/* replaces *t by r (NULL kept as the error) */
static int step(tl_tensor **t, tl_tensor *r) {
    tl_tensor_release(*t);
    *t = r;
    return r ? 0 : -1;
}

/* "[2, 3]", as PyTorch prints sizes */
static const char *shape_str(const tl_tensor *t, char *buf, size_t cap) {
    size_t k = (size_t)snprintf(buf, cap, "[");
    for (int64_t d = 0; d < tl_tensor_ndim(t) && k < cap; d++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%lld", d ? ", " : "", (long long)tl_tensor_size(t, d));
    if (k < cap) snprintf(buf + k, cap - k, "]");
    return buf;
}

/* a functional result written to out: PyTorch's resize_output + copy_ (dtype
 * TL_DTYPE_UNDEFINED: out's own dtype is kept, copy_ casts) */
static tl_tensor *to_out(tl_tensor *r, tl_tensor *out, tl_dtype dtype) {
    if (!r) return NULL;
    tl_tensor *res = NULL;
    if (tl_structured_resize_out(out, tl_tensor_ndim(r), tl_tensor_sizes(r), dtype) == 0)
        res = tl_ops_copy_(out, r, false);
    tl_tensor_release(r);
    return res;
}

/* a 0-dim bool result read as C truth (PyTorch's is_scalar_tensor_true); -1 on error */
static int scalar_true(tl_tensor *b) {
    tl_scalar s;
    const int rc = b && tl_tensor_item(b, &s) == 0 ? (s.kind == TL_SCALAR_DOUBLE ? s.d != 0 : s.i != 0) : -1;
    tl_tensor_release(b);
    return rc;
}

/* ------------------------------------------------------------ tensordot / inner */

tl_tensor *tl_native_tensordot(tl_keyset ks, tl_tensor *input1, tl_tensor *input2, const int64_t *dims1, int64_t n1,
                               const int64_t *dims2, int64_t n2) {
    (void)ks;
    if (n1 != n2) {
        tl_set_error(TL_ERR_RUNTIME, "both dimension lists should have same length");
        return NULL;
    }
    if (tl_tensor_dtype(input1) != tl_tensor_dtype(input2)) {
        tl_set_error(TL_ERR_RUNTIME, "both inputs should have same dtype");
        return NULL;
    }
    const int64_t d1 = tl_tensor_ndim(input1), d2 = tl_tensor_ndim(input2);
    bool c1[TL_MAX_DIMS] = {false}, c2[TL_MAX_DIMS] = {false};
    int64_t csize = 1;
    tl_tensor *t1 = input1, *t2 = input2, *r = NULL;
    tl_tensor_retain(t1);
    tl_tensor_retain(t2);
    for (int64_t i = 0; i < n1; i++) {
        const int64_t s1 = tl_tensor_size(input1, dims1[i]), s2 = tl_tensor_size(input2, dims2[i]);
        if (s1 < 0 || s2 < 0) goto done;
        if (s2 == 1) { /* broadcast dims are summed right away */
            if (step(&t1, tl_ops_sum_dim_IntList(t1, &dims1[i], 1, true, tl_tensor_dtype(t1)))) goto done;
        } else if (s1 == 1) {
            if (step(&t2, tl_ops_sum_dim_IntList(t2, &dims2[i], 1, true, tl_tensor_dtype(t2)))) goto done;
        } else if (s1 != s2) {
            tl_set_error(TL_ERR_RUNTIME,
                         "contracted dimensions need to match, but first has size %lld in dim %lld and second has "
                         "size %lld in dim %lld",
                         (long long)s1, (long long)dims1[i], (long long)s2, (long long)dims2[i]);
            goto done;
        } else {
            csize *= s1;
        }
    }
    for (int64_t i = 0; i < n1; i++) { /* PyTorch's dim_list_to_bitset */
        const int64_t a = tl__wrap_dim(dims1[i], d1, 1), b = tl__wrap_dim(dims2[i], d2, 1);
        if (a < 0 || b < 0) goto done;
        if (c1[a] || c2[b]) {
            tl_set_error(TL_ERR_RUNTIME, "dim %lld appears multiple times in the list of dims",
                         (long long)(c1[a] ? a : b));
            goto done;
        }
        c1[a] = c2[b] = true;
    }
    int64_t p1[TL_MAX_DIMS], p2[TL_MAX_DIMS], rsizes[2 * TL_MAX_DIMS], np1 = 0, np2 = 0, nr = 0, size1 = 1, size2 = 1;
    for (int64_t i = 0; i < d1; i++)
        if (!c1[i]) {
            p1[np1++] = i;
            size1 *= tl_tensor_size(t1, i);
            rsizes[nr++] = tl_tensor_size(t1, i);
        }
    for (int64_t i = 0; i < n1; i++) p1[np1++] = dims1[i], p2[np2++] = dims2[i];
    for (int64_t i = 0; i < d2; i++)
        if (!c2[i]) {
            p2[np2++] = i;
            size2 *= tl_tensor_size(t2, i);
            rsizes[nr++] = tl_tensor_size(t2, i);
        }
    const int64_t s1[2] = {size1, csize}, s2[2] = {csize, size2};
    if (step(&t1, tl_ops_permute(t1, p1, np1)) || step(&t1, tl_ops_reshape(t1, s1, 2)) ||
        step(&t2, tl_ops_permute(t2, p2, np2)) || step(&t2, tl_ops_reshape(t2, s2, 2)))
        goto done;
    if ((r = tl_ops_mm(t1, t2))) step(&r, tl_ops_reshape(r, rsizes, nr));
done:
    tl_tensor_release(t1);
    tl_tensor_release(t2);
    return r;
}

tl_tensor *tl_native_tensordot_out(tl_keyset ks, tl_tensor *self, tl_tensor *other, const int64_t *dims_self,
                                   int64_t n1, const int64_t *dims_other, int64_t n2, tl_tensor *out) {
    tl_tensor *r = tl_native_tensordot(ks, self, other, dims_self, n1, dims_other, n2);
    if (r && tl_tensor_dtype(r) != tl_tensor_dtype(out)) { /* tensordot does not promote */
        tl_set_error(TL_ERR_RUNTIME, "tensordot: Expected the output tensor to have dtype %s, but got an output "
                     "tensor with dtype %s", tl_dtype_scalar_name(tl_tensor_dtype(r)),
                     tl_dtype_scalar_name(tl_tensor_dtype(out)));
        tl_tensor_release(r);
        return NULL;
    }
    return to_out(r, out, TL_DTYPE_UNDEFINED);
}

tl_tensor *tl_native_inner(tl_keyset ks, tl_tensor *self, tl_tensor *other) {
    (void)ks;
    if (tl_tensor_ndim(self) == 0 || tl_tensor_ndim(other) == 0) return tl_ops_mul_Tensor(self, other);
    if (tl_tensor_size(self, -1) != tl_tensor_size(other, -1)) {
        char a[512], b[512];
        tl_set_error(TL_ERR_RUNTIME, "inner() the last dimension must match on both input tensors but got shapes %s and %s",
                     shape_str(self, a, sizeof a), shape_str(other, b, sizeof b));
        return NULL;
    }
    const int64_t m1 = -1;
    return tl_ops_tensordot(self, other, &m1, 1, &m1, 1);
}

tl_tensor *tl_native_inner_out(tl_keyset ks, tl_tensor *self, tl_tensor *other, tl_tensor *out) {
    /* PyTorch's inner_out: out.resize_ (no warning), then copy_ */
    tl_tensor *r = tl_native_inner(ks, self, other);
    if (!r) return NULL;
    tl_tensor *res = tl_resize_(out, tl_tensor_ndim(r), tl_tensor_sizes(r)) == 0 ? tl_ops_copy_(out, r, false) : NULL;
    tl_tensor_release(r);
    return res;
}

/* ------------------------------------------------------------ kron */

/* self viewed as [s0, 1, s1, 1, ...], other as [1, o0, 1, o1, ...] (both
 * left-padded to one rank): their product is the Kronecker product's blocks */
static int kron_views(tl_tensor *self, tl_tensor *other, tl_tensor **a, tl_tensor **b, int64_t *mul_shape,
                      int64_t *res_shape, int64_t *maxdim) {
    const int64_t ds = tl_tensor_ndim(self), dt = tl_tensor_ndim(other), m = ds > dt ? ds : dt;
    const int64_t ps = m - ds, po = m - dt;
    if (2 * m > TL_MAX_DIMS) return tl_set_error(TL_ERR_RUNTIME, "kron: too many dimensions (%lld)", (long long)m);
    int64_t as[TL_MAX_DIMS], bs[TL_MAX_DIMS];
    for (int64_t i = 0; i < m; i++) {
        as[2 * i] = i >= ps ? tl_tensor_size(self, i - ps) : 1;
        as[2 * i + 1] = 1;
        bs[2 * i] = 1;
        bs[2 * i + 1] = i >= po ? tl_tensor_size(other, i - po) : 1;
        mul_shape[2 * i] = as[2 * i];
        mul_shape[2 * i + 1] = bs[2 * i + 1];
        res_shape[i] = as[2 * i] * bs[2 * i + 1];
    }
    *maxdim = m;
    *a = tl_ops_reshape(self, as, 2 * m);
    *b = *a ? tl_ops_reshape(other, bs, 2 * m) : NULL;
    return *b ? 0 : -1;
}

tl_tensor *tl_native_kron(tl_keyset ks, tl_tensor *self, tl_tensor *other) {
    (void)ks;
    tl_tensor *a = NULL, *b = NULL, *r = NULL;
    int64_t mul_shape[TL_MAX_DIMS], res_shape[TL_MAX_DIMS], m = 0;
    if (kron_views(self, other, &a, &b, mul_shape, res_shape, &m) == 0 && (r = tl_ops_mul_Tensor(a, b)))
        step(&r, tl_ops_reshape(r, res_shape, m));
    tl_tensor_release(a);
    tl_tensor_release(b);
    return r;
}

tl_tensor *tl_native_kron_out(tl_keyset ks, tl_tensor *self, tl_tensor *other, tl_tensor *out) {
    (void)ks;
    tl_tensor *a = NULL, *b = NULL, *r = NULL, *ov = NULL;
    int64_t mul_shape[TL_MAX_DIMS], res_shape[TL_MAX_DIMS], m = 0;
    /* PyTorch: out resized to the result, then mul_out into its blocked view */
    if (kron_views(self, other, &a, &b, mul_shape, res_shape, &m) == 0 &&
        tl_structured_resize_out(out, m, res_shape, TL_DTYPE_UNDEFINED) == 0 &&
        (ov = tl_ops_view(out, mul_shape, 2 * m)) && (r = tl_ops_mul_out(a, b, ov))) {
        tl_tensor_release(r);
        tl_tensor_retain(r = out);
    }
    tl_tensor_release(ov);
    tl_tensor_release(a);
    tl_tensor_release(b);
    return r;
}

/* ------------------------------------------------------------ linalg.vecdot / diagonal */

tl_tensor *tl_native_linalg_vecdot(tl_keyset ks, tl_tensor *x, tl_tensor *y, int64_t dim) {
    (void)ks;
    const tl_dtype dx = tl_tensor_dtype(x), dy = tl_tensor_dtype(y);
    if (!tl_dtype_is_floating(dx)) {
        tl_set_error(TL_ERR_RUNTIME, "linalg.vecdot: Expected a floating point or complex tensor as input. Got %s",
                     tl_dtype_scalar_name(dx));
        return NULL;
    }
    if (dx != dy) {
        tl_set_error(TL_ERR_RUNTIME,
                     "linalg.vecdot: Expected x and y to have the same dtype, but found x of type %s and y of type "
                     "%s instead",
                     tl_dtype_scalar_name(dx), tl_dtype_scalar_name(dy));
        return NULL;
    }
    if (tl_tensor_ndim(x) == 1 && tl_tensor_ndim(y) == 1) return tl_ops_dot(x, y); /* vdot of reals */
    tl_tensor *p = tl_ops_mul_Tensor(x, y), *r = NULL;
    if (p) r = tl_ops_sum_dim_IntList(p, &dim, 1, false, TL_DTYPE_UNDEFINED);
    tl_tensor_release(p);
    return r;
}

tl_tensor *tl_native_linalg_vecdot_out(tl_keyset ks, tl_tensor *x, tl_tensor *y, int64_t dim, tl_tensor *out) {
    tl_tensor *r = tl_native_linalg_vecdot(ks, x, y, dim);
    if (r && tl_tensor_dtype(r) != tl_tensor_dtype(out)) {
        tl_set_error(TL_ERR_RUNTIME, "Expected out tensor to have dtype %s, but got %s instead",
                     tl_dtype_caffe2_name(tl_tensor_dtype(r)), tl_dtype_caffe2_name(tl_tensor_dtype(out)));
        tl_tensor_release(r);
        return NULL;
    }
    return to_out(r, out, TL_DTYPE_UNDEFINED);
}

tl_tensor *tl_native_linalg_diagonal(tl_keyset ks, tl_tensor *A, int64_t offset, int64_t dim1, int64_t dim2) {
    (void)ks;
    return tl_ops_diagonal(A, offset, dim1, dim2);
}

/* ------------------------------------------------------------ linalg.multi_dot */

/* the product of tensors[i..j] in the order split[][] gives (the classic
 * dynamic programme, PyTorch's matrix_chain_order) */
static tl_tensor *chain_mm(tl_tensor *const *t, const int64_t *split, int64_t n, int64_t i, int64_t j) {
    if (i == j) {
        tl_tensor_retain(t[i]);
        return t[i];
    }
    const int64_t k = split[i * n + j];
    tl_tensor *a = chain_mm(t, split, n, i, k), *b = a ? chain_mm(t, split, n, k + 1, j) : NULL, *r = NULL;
    if (b) r = tl_ops_mm(a, b);
    tl_tensor_release(a);
    tl_tensor_release(b);
    return r;
}

static tl_tensor *multi_dot_impl(tl_tensor *const *in, int64_t n, tl_tensor *out) {
    if (n < 2) {
        tl_set_error(TL_ERR_RUNTIME, "multi_dot(): expected at least 2 tensors but got %lld", (long long)n);
        return NULL;
    }
    const int64_t d0 = tl_tensor_ndim(in[0]), dl = tl_tensor_ndim(in[n - 1]);
    if (d0 != 1 && d0 != 2) {
        tl_set_error(TL_ERR_RUNTIME, "multi_dot(): the first tensor must be 1D or 2D but got %lldD", (long long)d0);
        return NULL;
    }
    if (dl != 1 && dl != 2) {
        tl_set_error(TL_ERR_RUNTIME, "multi_dot(): the last tensor must be 1D or 2D but got %lldD", (long long)dl);
        return NULL;
    }
    for (int64_t i = 1; i < n - 1; i++)
        if (tl_tensor_ndim(in[i]) != 2) {
            tl_set_error(TL_ERR_RUNTIME, "multi_dot(): tensor %lld must be 2D but got %lldD", (long long)i,
                         (long long)tl_tensor_ndim(in[i]));
            return NULL;
        }
    tl_tensor **t = calloc((size_t)n, sizeof *t);
    int64_t *cost = calloc((size_t)(n * n), sizeof *cost), *split = calloc((size_t)(n * n), sizeof *split);
    int64_t out_shape[2], no = 0;
    tl_tensor *r = NULL;
    if (!t || !cost || !split) {
        tl_set_error(TL_ERR_MEMORY, "multi_dot(): out of memory");
        goto done;
    }
    for (int64_t i = 0; i < n; i++) tl_tensor_retain(t[i] = in[i]);
    if (d0 == 1) { /* a vector first is a row, last a column */
        if (step(&t[0], tl_ops_unsqueeze(t[0], 0))) goto done;
    } else {
        out_shape[no++] = tl_tensor_size(t[0], 0);
    }
    if (dl == 1) {
        if (step(&t[n - 1], tl_ops_unsqueeze(t[n - 1], -1))) goto done;
    } else {
        out_shape[no++] = tl_tensor_size(t[n - 1], 1);
    }
    for (int64_t i = 1; i < n; i++) {
        const tl_dtype a = tl_tensor_dtype(t[0]), b = tl_tensor_dtype(t[i]);
        if (a != b) {
            tl_set_error(TL_ERR_RUNTIME,
                         "multi_dot(): all tensors must have be the same dtype but tensor 0 is %s and tensor %lld %s",
                         tl_dtype_caffe2_name(a), (long long)i, tl_dtype_caffe2_name(b));
            goto done;
        }
        if (tl_tensor_size(t[i - 1], -1) != tl_tensor_size(t[i], 0)) {
            char sa[512], sb[512];
            tl_set_error(TL_ERR_RUNTIME, "multi_dot(): tensors %lld and %lld with shapes %s and %s cannot be multiplied",
                         (long long)(i - 1), (long long)i, shape_str(in[i - 1], sa, sizeof sa),
                         shape_str(in[i], sb, sizeof sb));
            goto done;
        }
    }
    if (out) { /* PyTorch checks out's dtype before multiplying */
        if (tl_tensor_dtype(out) != tl_tensor_dtype(t[0])) {
            tl_set_error(TL_ERR_RUNTIME, "multi_dot(): expected out tensor to have dtype %s but got %s",
                         tl_dtype_caffe2_name(tl_tensor_dtype(t[0])), tl_dtype_caffe2_name(tl_tensor_dtype(out)));
            goto done;
        }
    }
    if (n == 3) { /* PyTorch's two-way comparison for three matrices */
        const int64_t a = tl_tensor_size(t[0], 0), b = tl_tensor_size(t[1], 0), c = tl_tensor_size(t[2], 0),
                      d = tl_tensor_size(t[2], 1);
        const int64_t cost1 = (a * c) * (b + d), cost2 = (b * d) * (a + c);
        split[0 * n + 2] = cost1 > cost2 ? 0 : 1;
        split[0 * n + 1] = 0;
        split[1 * n + 2] = 1;
    } else { /* p[i] x p[i+1] is matrix i; cost of the cheapest order of i..j */
        for (int64_t len = 1; len < n; len++)
            for (int64_t i = 0; i + len < n; i++) {
                const int64_t j = i + len;
                cost[i * n + j] = INT64_MAX;
                for (int64_t k = i; k < j; k++) {
                    const int64_t q = cost[i * n + k] + cost[(k + 1) * n + j] +
                                      tl_tensor_size(t[i], 0) * tl_tensor_size(t[k], 1) * tl_tensor_size(t[j], 1);
                    if (q < cost[i * n + j]) {
                        cost[i * n + j] = q;
                        split[i * n + j] = k;
                    }
                }
            }
    }
    if ((r = chain_mm(t, split, n, 0, n - 1))) step(&r, tl_ops_view(r, out_shape, no));
    if (r && out) r = to_out(r, out, TL_DTYPE_UNDEFINED);
done:
    if (t)
        for (int64_t i = 0; i < n; i++) tl_tensor_release(t[i]);
    free(t);
    free(cost);
    free(split);
    return r;
}

tl_tensor *tl_native_linalg_multi_dot(tl_keyset ks, tl_tensor *const *tensors, int64_t n) {
    (void)ks;
    return multi_dot_impl(tensors, n, NULL);
}

tl_tensor *tl_native_linalg_multi_dot_out(tl_keyset ks, tl_tensor *const *tensors, int64_t n, tl_tensor *out) {
    (void)ks;
    return multi_dot_impl(tensors, n, out);
}

/* ------------------------------------------------------------ linalg.vander */

tl_tensor *tl_native_linalg_vander_symint(tl_keyset ks, tl_tensor *x, int64_t N, bool N_has) {
    (void)ks;
    const tl_dtype dt = tl_tensor_dtype(x);
    if (!(dt == TL_FLOAT32 || dt == TL_FLOAT64 || tl_dtype_is_integral(dt, 0))) {
        tl_set_error(TL_ERR_RUNTIME, "linalg.vander supports floating point, complex, and integer tensors, but got %s",
                     tl_dtype_scalar_name(dt));
        return NULL;
    }
    tl_tensor *x_ = tl_tensor_ndim(x) == 0 ? tl_ops_unsqueeze(x, -1) : (tl_tensor_retain(x), x);
    if (!x_) return NULL;
    int64_t shape[TL_MAX_DIMS + 1];
    const int64_t nd = tl_tensor_ndim(x_);
    memcpy(shape, tl_tensor_sizes(x_), (size_t)nd * sizeof(int64_t));
    const int64_t n = N_has ? N : shape[nd - 1];
    tl_tensor *e = NULL, *r = NULL, *ones = NULL, *res = NULL;
    if (n <= 1) {
        tl_set_error(TL_ERR_RUNTIME, "N must be greater than 1.");
        goto done;
    }
    shape[nd] = n - 1; /* x^1 .. x^(n-1) as the cumulative product of copies of x */
    if (!(e = tl_ops_unsqueeze(x_, -1)) || step(&e, tl_ops_expand(e, shape, nd + 1, false)) ||
        !(r = tl_ops_cumprod(e, -1, TL_DTYPE_UNDEFINED)))
        goto done;
    shape[nd] = 1;
    if ((ones = tl_ops_new_ones(r, shape, nd + 1, TL_DTYPE_UNDEFINED, -1, -1, false, false))) {
        tl_tensor *parts[2] = {ones, r};
        res = tl_ops_cat(parts, 2, -1);
    }
done:
    tl_tensor_release(x_);
    tl_tensor_release(e);
    tl_tensor_release(r);
    tl_tensor_release(ones);
    return res;
}

/* ------------------------------------------------------------ diff */

static int diff_check_other(tl_tensor *self, tl_tensor *other, int64_t dim) {
    if (!other) return 0;
    const int64_t wd = tl__wrap_dim(dim, tl_tensor_ndim(self), 0);
    if (wd < 0) return -1;
    if (tl_tensor_ndim(other) != tl_tensor_ndim(self))
        return tl_set_error(TL_ERR_RUNTIME, "diff expects prepend or append to be the same dimension as input");
    for (int64_t i = 0; i < tl_tensor_ndim(other); i++)
        if (i != wd && tl_tensor_size(other, i) != tl_tensor_size(self, i))
            return tl_set_error(TL_ERR_RUNTIME,
                                "diff expects the shape of tensor to prepend or append to match that of input except "
                                "along the differencing dimension; input.size(%lld) = %lld, but got tensor.size(%lld) = %lld",
                                (long long)i, (long long)tl_tensor_size(self, i), (long long)i,
                                (long long)tl_tensor_size(other, i));
    return 0;
}

tl_tensor *tl_native_diff(tl_keyset ks, tl_tensor *self, int64_t n, int64_t dim, tl_tensor *prepend,
                          tl_tensor *append) {
    (void)ks;
    if (tl_tensor_ndim(self) < 1) {
        tl_set_error(TL_ERR_RUNTIME, "diff expects input to be at least one-dimensional");
        return NULL;
    }
    if (n < 0) {
        tl_set_error(TL_ERR_RUNTIME, "order must be non-negative but got %lld", (long long)n);
        return NULL;
    }
    if (diff_check_other(self, prepend, dim) || diff_check_other(self, append, dim)) return NULL;
    tl_tensor *a;
    if ((!prepend && !append) || n == 0) {
        tl_tensor_retain(a = self);
    } else {
        tl_tensor *parts[3];
        int64_t k = 0;
        if (prepend) parts[k++] = prepend;
        parts[k++] = self;
        if (append) parts[k++] = append;
        if (!(a = tl_ops_cat(parts, k, dim))) return NULL;
    }
    if (n == 0) { /* a copy (zeros_like + copy_, as PyTorch) */
        tl_tensor *z = tl_ops_zeros_like(a, TL_DTYPE_UNDEFINED, -1, -1, false, false, -1), *r = NULL;
        if (z) r = tl_ops_copy_(z, a, false);
        tl_tensor_release(z);
        tl_tensor_release(a);
        return r;
    }
    const int64_t size = tl_tensor_size(a, dim);
    if (size < 0) {
        tl_tensor_release(a);
        return NULL;
    }
    const bool is_bool = tl_tensor_dtype(a) == TL_BOOL;
    int64_t out_len = size - 1;
    if (n > size) n = size;
    for (int64_t i = 0; i < n; i++, out_len--) {
        tl_tensor *hi = tl_ops_narrow(a, dim, 1, out_len), *lo = hi ? tl_ops_narrow(a, dim, 0, out_len) : NULL, *d = NULL;
        if (lo) d = is_bool ? tl_ops_logical_xor(hi, lo) : tl_ops_sub_Tensor(hi, lo, tl_scalar_from_int(1));
        tl_tensor_release(hi);
        tl_tensor_release(lo);
        if (step(&a, d)) return NULL;
    }
    return a;
}

tl_tensor *tl_native_diff_out(tl_keyset ks, tl_tensor *self, int64_t n, int64_t dim, tl_tensor *prepend,
                              tl_tensor *append, tl_tensor *out) {
    tl_tensor *r = tl_native_diff(ks, self, n, dim, prepend, append);
    if (r && !tl_can_cast(tl_tensor_dtype(r), tl_tensor_dtype(out))) { /* sub_out's rule */
        tl_set_error(TL_ERR_RUNTIME, "result type %s can't be cast to the desired output type %s",
                     tl_dtype_scalar_name(tl_tensor_dtype(r)), tl_dtype_scalar_name(tl_tensor_dtype(out)));
        tl_tensor_release(r);
        return NULL;
    }
    return to_out(r, out, TL_DTYPE_UNDEFINED);
}

/* ------------------------------------------------------------ cov / corrcoef */

static int check_weights(tl_tensor *w, const char *name, bool integral, int64_t num_obs) {
    const tl_dtype dt = tl_tensor_dtype(w);
    if (tl_tensor_ndim(w) > 1)
        return tl_set_error(TL_ERR_RUNTIME, "cov(): expected %s to have one or fewer dimensions but got %s with %lld dimensions",
                            name, name, (long long)tl_tensor_ndim(w));
    if (integral ? !tl_dtype_is_integral(dt, 0) : !tl_dtype_is_floating(dt))
        return tl_set_error(TL_ERR_RUNTIME, "cov(): expected %s to have %s dtype but got %s with %s dtype", name,
                            integral ? "integral" : "floating point", name, tl_dtype_scalar_name(dt));
    if (tl_tensor_numel(w) != num_obs)
        return tl_set_error(TL_ERR_RUNTIME,
                            "cov(): expected %s to have the same numel as there are observations in the input but got "
                            "%lld != %lld",
                            name, (long long)tl_tensor_numel(w), (long long)num_obs);
    if (num_obs == 0) return 0;
    tl_tensor *m = tl_ops_min(w);
    const int ok = m ? scalar_true(tl_ops_ge_Scalar(m, tl_scalar_from_int(0))) : -1;
    tl_tensor_release(m);
    if (ok < 0) return -1;
    if (!ok) return tl_set_error(TL_ERR_RUNTIME, "cov(): %s cannot be negative", name);
    return 0;
}

tl_tensor *tl_native_cov(tl_keyset ks, tl_tensor *self, int64_t correction, tl_tensor *fweights, tl_tensor *aweights) {
    if (tl__refuse_complex(self, 1, "cov")) return NULL;   /* (PyTorch conjugates; not here yet) */
    (void)ks;
    if (tl_tensor_ndim(self) > 2) {
        tl_set_error(TL_ERR_RUNTIME,
                     "cov(): expected input to have two or fewer dimensions but got an input with %lld dimensions",
                     (long long)tl_tensor_ndim(self));
        return NULL;
    }
    if (tl_tensor_dtype(self) == TL_BOOL) {
        tl_set_error(TL_ERR_RUNTIME, "cov(): bool dtype is not supported for input");
        return NULL;
    }
    const int64_t row[2] = {1, -1};
    tl_tensor *in = tl_tensor_ndim(self) < 2 ? tl_ops_view(self, row, 2) : (tl_tensor_retain(self), self);
    tl_tensor *w = NULL, *w_sum = NULL, *wi = NULL, *avg = NULL, *nf = NULL, *c = NULL, *res = NULL, *tmp = NULL;
    if (!in) return NULL;
    const int64_t num_obs = tl_tensor_size(in, 1);
    if (fweights) {
        if (check_weights(fweights, "fweights", true, num_obs)) goto done;
        tl_tensor_retain(w = fweights);
    }
    if (aweights) {
        if (check_weights(aweights, "aweights", false, num_obs)) goto done;
        if (w) {
            if (step(&w, tl_ops_mul_Tensor(w, aweights))) goto done;
        } else {
            tl_tensor_retain(w = aweights);
        }
    }
    /* the weighted average of the observations */
    if (w) {
        if (!(w_sum = tl_ops_sum(w, TL_DTYPE_UNDEFINED))) goto done;
        const int nz = scalar_true(tl_ops_ne_Scalar(w_sum, tl_scalar_from_int(0)));
        if (nz < 0) goto done;
        if (!nz) {
            tl_set_error(TL_ERR_RUNTIME, "cov(): weights sum to zero, can't be normalized");
            goto done;
        }
        if (!(wi = tl_ops_mul_Tensor(in, w))) goto done;
    } else {
        if (!(w_sum = tl_ops_new_full(in, NULL, 0, tl_scalar_from_int(num_obs), TL_INT64, -1, -1, false, false)))
            goto done;
        tl_tensor_retain(wi = in);
    }
    const int64_t obs_dim = 1;
    if (!(avg = tl_ops_sum_dim_IntList(wi, &obs_dim, 1, false, TL_DTYPE_UNDEFINED)) ||
        step(&avg, tl_ops_div_Tensor(avg, w_sum)))
        goto done;
    /* the normalisation factor */
    if (w && aweights && correction != 0) {
        if (!(nf = tl_ops_mul_Tensor(w, aweights)) || step(&nf, tl_ops_sum(nf, TL_DTYPE_UNDEFINED)) ||
            step(&nf, tl_ops_mul_Scalar(nf, tl_scalar_from_int(correction))) ||
            step(&nf, tl_ops_div_Tensor(nf, w_sum)) || !(tmp = tl_ops_sub_Tensor(w_sum, nf, tl_scalar_from_int(1))) ||
            step(&nf, tmp))
            goto done;
        tmp = NULL;
    } else if (!(nf = tl_ops_sub_Scalar(w_sum, tl_scalar_from_int(correction), tl_scalar_from_int(1)))) {
        goto done;
    }
    const int le = scalar_true(tl_ops_le_Scalar(nf, tl_scalar_from_int(0)));
    if (le < 0) goto done;
    if (le) {
        tl__warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of observations.");
        tl_tensor *z = tl_ops_zero_(nf);
        if (!z) goto done;
        tl_tensor_release(z);
    }
    /* the covariance matrix */
    if (!(tmp = tl_ops_unsqueeze(avg, 1)) || step(&in, tl_ops_sub_Tensor(in, tmp, tl_scalar_from_int(1)))) goto done;
    if (step(&wi, w ? tl_ops_mul_Tensor(in, w) : (tl_tensor_retain(in), in)) || step(&wi, tl_ops_t(wi))) goto done;
    if (!(c = tl_ops_mm(in, wi)) || step(&c, tl_ops_div_Tensor(c, nf))) goto done;
    res = tl_ops_squeeze(c);
done:
    tl_tensor_release(in);
    tl_tensor_release(w);
    tl_tensor_release(w_sum);
    tl_tensor_release(wi);
    tl_tensor_release(avg);
    tl_tensor_release(nf);
    tl_tensor_release(c);
    tl_tensor_release(tmp);
    return res;
}

tl_tensor *tl_native_corrcoef(tl_keyset ks, tl_tensor *self) {
    (void)ks;
    if (tl_tensor_ndim(self) > 2) {
        tl_set_error(TL_ERR_RUNTIME,
                     "corrcoef(): expected input to have two or fewer dimensions but got an input with %lld dimensions",
                     (long long)tl_tensor_ndim(self));
        return NULL;
    }
    tl_tensor *c = tl_ops_cov(self, 1, NULL, NULL), *d = NULL, *sd = NULL, *v = NULL, *r = NULL;
    if (!c) return NULL;
    if (tl_tensor_ndim(c) == 0) { /* nan for a covariance of nan, inf or 0, else 1 */
        r = tl_ops_div_Tensor(c, c);
        tl_tensor_release(c);
        return r;
    }
    const int64_t col[2] = {-1, 1}, row[2] = {1, -1};
    if ((d = tl_ops_diagonal(c, 0, 0, 1)) && (sd = tl_ops_sqrt(d)) && (v = tl_ops_view(sd, col, 2)) &&
        !step(&c, tl_ops_div_Tensor(c, v)) && !step(&v, tl_ops_view(sd, row, 2)) && !step(&c, tl_ops_div_Tensor(c, v))) {
        const tl_scalar lo = tl_scalar_from_int(-1), hi = tl_scalar_from_int(1);
        r = tl_ops_clip(c, &lo, &hi);
    }
    tl_tensor_release(c);
    tl_tensor_release(d);
    tl_tensor_release(sd);
    tl_tensor_release(v);
    return r;
}

/* ------------------------------------------------------------ addmv / addr / addbmm */

static bool scalar_is(tl_scalar s, double v) {
    return s.kind == TL_SCALAR_DOUBLE ? s.d == v : (double)s.i == v;
}

/* alpha * prod + beta * self; beta == 0 ignores self (its NaN / inf do not
 * propagate), as PyTorch's kernels zero the output before the product */
static tl_tensor *scale_add(tl_tensor *prod, tl_tensor *self, tl_scalar beta, tl_scalar alpha) {
    if (!prod) return NULL;
    tl_tensor *r = prod;
    if (!scalar_is(alpha, 1.0) && step(&r, tl_ops_mul_Scalar(r, alpha))) return NULL;
    if (!scalar_is(beta, 0.0)) {
        tl_tensor *bs = scalar_is(beta, 1.0) ? (tl_tensor_retain(self), self) : tl_ops_mul_Scalar(self, beta);
        if (!bs || step(&r, tl_ops_add_Tensor(bs, r, tl_scalar_from_int(1)))) {
            tl_tensor_release(bs);
            return NULL;
        }
        tl_tensor_release(bs);
    }
    return r;
}

static int check_integral_scalars(tl_dtype dt, tl_scalar beta, tl_scalar alpha) {
    if (!tl_dtype_is_integral(dt, 1)) return 0;
    if (beta.kind == TL_SCALAR_DOUBLE)
        return tl_set_error(TL_ERR_RUNTIME, "For integral input tensors, argument beta must not be a floating point number.");
    if (alpha.kind == TL_SCALAR_DOUBLE)
        return tl_set_error(TL_ERR_RUNTIME, "For integral input tensors, argument alpha must not be a floating point number.");
    return 0;
}

tl_tensor *tl_native_addmv(tl_keyset ks, tl_tensor *self, tl_tensor *mat, tl_tensor *vec, tl_scalar beta,
                           tl_scalar alpha) {
    (void)ks;
    if (!(tl_tensor_ndim(mat) == 2 && tl_tensor_ndim(vec) == 1 && tl_tensor_ndim(self) <= 1)) {
        tl_set_error(TL_ERR_RUNTIME, "vector + matrix @ vector expected, got %lld, %lld, %lld",
                     (long long)tl_tensor_ndim(self), (long long)tl_tensor_ndim(mat), (long long)tl_tensor_ndim(vec));
        return NULL;
    }
    const int64_t m0 = tl_tensor_size(mat, 0), m1 = tl_tensor_size(mat, 1), v0 = tl_tensor_size(vec, 0);
    if (!(m1 == v0 && (m0 == tl_tensor_numel(self) || tl_tensor_numel(self) == 1))) {
        tl_set_error(TL_ERR_RUNTIME, "size mismatch, got input (%lld), mat (%lldx%lld), vec (%lld)",
                     (long long)(tl_tensor_ndim(self) ? tl_tensor_size(self, 0) : 1), (long long)m0, (long long)m1,
                     (long long)v0);
        return NULL;
    }
    if (tl_dtype_is_integral(tl_tensor_dtype(vec), 1)) { /* PyTorch's integer addmv truncates beta and alpha */
        if (beta.kind == TL_SCALAR_DOUBLE) beta = tl_scalar_from_int((int64_t)beta.d);
        if (alpha.kind == TL_SCALAR_DOUBLE) alpha = tl_scalar_from_int((int64_t)alpha.d);
    }
    return scale_add(tl_ops_mv(mat, vec), self, beta, alpha);
}

tl_tensor *tl_native_addr(tl_keyset ks, tl_tensor *self, tl_tensor *vec1, tl_tensor *vec2, tl_scalar beta,
                          tl_scalar alpha) {
    (void)ks;
    for (int k = 0; k < 2; k++) {
        tl_tensor *v = k ? vec2 : vec1;
        if (tl_tensor_ndim(v) != 1) {
            tl_set_error(TL_ERR_RUNTIME, "addr: Expected 1-D argument %s, but got %lld-D", k ? "vec2" : "vec1",
                         (long long)tl_tensor_ndim(v));
            return NULL;
        }
    }
    const tl_dtype dt = tl_promote_types(tl_promote_types(tl_tensor_dtype(self), tl_tensor_dtype(vec1)),
                                         tl_tensor_dtype(vec2));
    if (dt != TL_BOOL && (beta.kind == TL_SCALAR_BOOL || alpha.kind == TL_SCALAR_BOOL)) {
        tl_set_error(TL_ERR_RUNTIME, "Boolean %s only supported for Boolean results.",
                     beta.kind == TL_SCALAR_BOOL ? "beta" : "alpha");
        return NULL;
    }
    if (check_integral_scalars(dt, beta, alpha)) return NULL;
    /* self must expand to the outer product's shape (PyTorch's expand_size) */
    const int64_t shape[2] = {tl_tensor_size(vec1, 0), tl_tensor_size(vec2, 0)};
    tl_tensor *e = tl_ops_expand(self, shape, 2, false), *r = NULL;
    if (!e) return NULL;
    tl_tensor_release(e);
    if ((r = scale_add(tl_ops_outer(vec1, vec2), self, beta, alpha)) && tl_tensor_dtype(r) != dt)
        step(&r, tl_ops_to_dtype(r, dt, false, false, -1));
    return r;
}

tl_tensor *tl_native_addbmm(tl_keyset ks, tl_tensor *self, tl_tensor *batch1, tl_tensor *batch2, tl_scalar beta,
                            tl_scalar alpha) {
    (void)ks;
    if (tl_tensor_ndim(batch1) != 3) {
        tl_set_error(TL_ERR_RUNTIME, "batch1 must be a 3D tensor");
        return NULL;
    }
    if (tl_tensor_ndim(batch2) != 3) {
        tl_set_error(TL_ERR_RUNTIME, "batch2 must be a 3D tensor");
        return NULL;
    }
    const int64_t b = tl_tensor_size(batch1, 0), n = tl_tensor_size(batch1, 1), k = tl_tensor_size(batch1, 2);
    const int64_t b2 = tl_tensor_size(batch2, 0), k2 = tl_tensor_size(batch2, 1), p = tl_tensor_size(batch2, 2);
    if (b != b2) {
        tl_set_error(TL_ERR_RUNTIME, "batch1 and batch2 must have same number of batches, got %lld and %lld",
                     (long long)b, (long long)b2);
        return NULL;
    }
    if (k != k2) {
        tl_set_error(TL_ERR_RUNTIME, "Incompatible matrix sizes for bmm (%lldx%lld and %lldx%lld)", (long long)n,
                     (long long)k, (long long)k2, (long long)p);
        return NULL;
    }
    const int64_t shape[2] = {n, p};
    tl_tensor *bs = tl_ops_expand(self, shape, 2, false), *a = NULL, *c = NULL, *r = NULL;
    if (!bs) return NULL;
    /* the batches summed by one product: [n, b*k] @ [b*k, p] */
    const int64_t as[2] = {n, b * k}, cs[2] = {b * k, p};
    if ((a = tl_ops_transpose_int(batch1, 0, 1)) && !step(&a, tl_ops_reshape(a, as, 2)) &&
        (c = tl_ops_reshape(batch2, cs, 2)))
        r = tl_ops_addmm(bs, a, c, beta, alpha);
    tl_tensor_release(bs);
    tl_tensor_release(a);
    tl_tensor_release(c);
    return r;
}

tl_tensor *tl_ag_addbmm_grad_batches(tl_tensor *grad, tl_tensor *batch1, tl_tensor *batch2) {
    const int64_t shape[3] = {tl_tensor_size(batch1, 0), tl_tensor_size(batch1, 1), tl_tensor_size(batch2, 2)};
    tl_tensor *u = tl_ops_unsqueeze(grad, 0), *r = NULL;
    if (u) r = tl_ops_expand(u, shape, 3, false);
    tl_tensor_release(u);
    return r;
}

/* ------------------------------------------------------------ cross / linalg.cross / dist */

tl_tensor *tl_native_linalg_cross(tl_keyset ks, tl_tensor *self, tl_tensor *other, int64_t dim) {
    (void)ks;
    if (tl_tensor_ndim(self) != tl_tensor_ndim(other)) {
        tl_set_error(TL_ERR_RUNTIME, "linalg.cross: inputs must have the same number of dimensions.");
        return NULL;
    }
    const int64_t sa = tl_tensor_size(self, dim), sb = sa < 0 ? -1 : tl_tensor_size(other, dim);
    if (sa < 0 || sb < 0) return NULL;
    if (sa != 3 || sb != 3) {
        tl_set_error(TL_ERR_RUNTIME, "linalg.cross: inputs dimension %lld must have length 3. Got %lld and %lld",
                     (long long)dim, (long long)sa, (long long)sb);
        return NULL;
    }
    /* r_i = a_{i+1} b_{i+2} - a_{i+2} b_{i+1}, the batch dims broadcast by mul */
    tl_tensor *a[3] = {NULL}, *b[3] = {NULL}, *r[3] = {NULL}, *res = NULL;
    int ok = 1;
    for (int i = 0; i < 3 && ok; i++)
        ok = (a[i] = tl_ops_narrow(self, dim, i, 1)) && (b[i] = tl_ops_narrow(other, dim, i, 1));
    for (int i = 0; i < 3 && ok; i++) {
        tl_tensor *p = tl_ops_mul_Tensor(a[(i + 1) % 3], b[(i + 2) % 3]);
        tl_tensor *q = p ? tl_ops_mul_Tensor(a[(i + 2) % 3], b[(i + 1) % 3]) : NULL;
        if (q) r[i] = tl_ops_sub_Tensor(p, q, tl_scalar_from_int(1));
        tl_tensor_release(p);
        tl_tensor_release(q);
        ok = r[i] != NULL;
    }
    if (ok) res = tl_ops_cat(r, 3, dim);
    for (int i = 0; i < 3; i++) {
        tl_tensor_release(a[i]);
        tl_tensor_release(b[i]);
        tl_tensor_release(r[i]);
    }
    return res;
}

/* cross's dim: without one PyTorch's default, the first dim of size 3, with
 * its deprecation warning; -1 + error when there is none */
static int cross_dim(tl_tensor *self, int64_t *dim, bool dim_has) {
    if (dim_has) return 0;
    TL_WARN_ONCE("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                 "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree "
                 "with that of linalg.cross in a future release.");
    for (int64_t i = 0; i < tl_tensor_ndim(self); i++)
        if (tl_tensor_size(self, i) == 3) {
            *dim = i;
            return 0;
        }
    return tl_set_error(TL_ERR_RUNTIME, "no dimension of size 3 in input");
}

tl_tensor *tl_native_cross(tl_keyset ks, tl_tensor *self, tl_tensor *other, int64_t dim, bool dim_has) {
    (void)ks;
    return cross_dim(self, &dim, dim_has) ? NULL : tl_ops_linalg_cross(self, other, dim);
}

tl_tensor *tl_native_cross_out(tl_keyset ks, tl_tensor *self, tl_tensor *other, int64_t dim, bool dim_has,
                               tl_tensor *out) {
    (void)ks;
    return cross_dim(self, &dim, dim_has) ? NULL : tl_ops_linalg_cross_out(self, other, dim, out);
}

tl_tensor *tl_native_linalg_cross_out(tl_keyset ks, tl_tensor *self, tl_tensor *other, int64_t dim, tl_tensor *out) {
    tl_tensor *r = tl_native_linalg_cross(ks, self, other, dim);
    return to_out(r, out, r ? tl_tensor_dtype(r) : TL_DTYPE_UNDEFINED);
}

tl_tensor *tl_native_dist(tl_keyset ks, tl_tensor *self, tl_tensor *other, tl_scalar p) {
    (void)ks;
    tl_tensor *d = tl_ops_sub_Tensor(self, other, tl_scalar_from_int(1)), *r = NULL;
    if (!d) return NULL;
    if (!tl_dtype_is_floating(tl_tensor_dtype(d)))
        tl_set_error(TL_ERR_RUNTIME, "norm(): input dtype should be either floating point or complex. Got %s instead.",
                     tl_dtype_scalar_name(tl_tensor_dtype(d)));
    else
        r = tl_ops_linalg_vector_norm(d, p, NULL, 0, false, TL_DTYPE_UNDEFINED);
    tl_tensor_release(d);
    return r;
}

tl_tensor *tl_ag_norm_backward(tl_tensor *grad, tl_tensor *self, tl_scalar p, tl_tensor *result) {
    return tl_ag_linalg_vector_norm_backward(grad, self, p, result, NULL, 0, false);
}

/* ------------------------------------------------------------ in-place and out= forms */

/* the functional result written into self: PyTorch's structured in-place
 * checks (same dtype, same size), then a copy */
static tl_tensor *into_self(tl_tensor *r, tl_tensor *self) {
    if (!r) return NULL;
    tl_tensor *res = NULL;
    char a[512], b[512];
    if (tl_tensor_dtype(r) != tl_tensor_dtype(self))
        tl_set_error(TL_ERR_RUNTIME, "Bad in-place call: input tensor dtype %s and output tensor dtype %s should match",
                     tl_dtype_caffe2_name(tl_tensor_dtype(self)), tl_dtype_caffe2_name(tl_tensor_dtype(r)));
    else if (tl_tensor_ndim(r) != tl_tensor_ndim(self) ||
             memcmp(tl_tensor_sizes(r), tl_tensor_sizes(self), (size_t)tl_tensor_ndim(r) * sizeof(int64_t)))
        tl_set_error(TL_ERR_RUNTIME, "Bad in-place call: input tensor size %s and output tensor size %s should match",
                     shape_str(self, a, sizeof a), shape_str(r, b, sizeof b));
    else
        res = tl_ops_copy_(self, r, false);
    tl_tensor_release(r);
    return res;
}

tl_tensor *tl_native_addmv_(tl_keyset ks, tl_tensor *self, tl_tensor *mat, tl_tensor *vec, tl_scalar beta,
                            tl_scalar alpha) {
    return into_self(tl_native_addmv(ks, self, mat, vec, beta, alpha), self);
}

tl_tensor *tl_native_addmv_out(tl_keyset ks, tl_tensor *self, tl_tensor *mat, tl_tensor *vec, tl_scalar beta,
                               tl_scalar alpha, tl_tensor *out) {
    tl_tensor *r = tl_native_addmv(ks, self, mat, vec, beta, alpha);
    return to_out(r, out, r ? tl_tensor_dtype(r) : TL_DTYPE_UNDEFINED);
}

tl_tensor *tl_native_addr_(tl_keyset ks, tl_tensor *self, tl_tensor *vec1, tl_tensor *vec2, tl_scalar beta,
                           tl_scalar alpha) {
    return into_self(tl_native_addr(ks, self, vec1, vec2, beta, alpha), self);
}

tl_tensor *tl_native_addr_out(tl_keyset ks, tl_tensor *self, tl_tensor *vec1, tl_tensor *vec2, tl_scalar beta,
                              tl_scalar alpha, tl_tensor *out) {
    tl_tensor *r = tl_native_addr(ks, self, vec1, vec2, beta, alpha);
    return to_out(r, out, r ? tl_tensor_dtype(r) : TL_DTYPE_UNDEFINED);
}

tl_tensor *tl_native_addbmm_(tl_keyset ks, tl_tensor *self, tl_tensor *batch1, tl_tensor *batch2, tl_scalar beta,
                             tl_scalar alpha) {
    return into_self(tl_native_addbmm(ks, self, batch1, batch2, beta, alpha), self);
}

tl_tensor *tl_native_addbmm_out(tl_keyset ks, tl_tensor *self, tl_tensor *batch1, tl_tensor *batch2, tl_scalar beta,
                                tl_scalar alpha, tl_tensor *out) {
    tl_tensor *r = tl_native_addbmm(ks, self, batch1, batch2, beta, alpha);
    return to_out(r, out, r ? tl_tensor_dtype(r) : TL_DTYPE_UNDEFINED);
}
