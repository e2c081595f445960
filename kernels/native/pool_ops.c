/* Pooling operators: max_pool2d_with_indices (+ backward), avg_pool2d (+
 * backward), _adaptive_avg_pool2d (+ backward), adaptive_max_pool2d (+
 * backward), and the CompositeImplicitAutograd kernels PyTorch writes over
 * them (max_pool2d, max_pool1d(_with_indices), avg_pool1d,
 * adaptive_avg_pool2d, adaptive_avg_pool1d).
 *
 * Checks, messages and window rules as PyTorch 2.13's CPU kernels
 * (aten/src/ATen/native/Pool.h). Inputs are made contiguous (NCHW) in the
 * compute dtype (float32 for float16 / bfloat16 / float32, float64, int64
 * for the integer inputs max pooling and avg_pool2d accept); the N * C
 * planes go to threads, each plane to one per-ISA loop
 * (kernels/cpu/pool_kernel.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tl_error.h"
#include "tl_internal.h"
#include "tl_kernel.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/_adaptive_avg_pool2d.h"
#include "ops/_adaptive_avg_pool2d_backward.h"
#include "ops/adaptive_avg_pool1d.h"
#include "ops/adaptive_avg_pool2d.h"
#include "ops/adaptive_max_pool1d.h"
#include "ops/adaptive_max_pool2d.h"
#include "ops/adaptive_max_pool2d_backward.h"
#include "ops/avg_pool1d.h"
#include "ops/avg_pool2d.h"
#include "ops/avg_pool2d_backward.h"
#include "ops/max_pool1d.h"
#include "ops/max_pool1d_with_indices.h"
#include "ops/max_pool2d.h"
#include "ops/max_pool2d_with_indices.h"
#include "ops/max_pool2d_with_indices_backward.h"
#include "ops/mean.h"
#include "ops/squeeze.h"
#include "ops/unsqueeze.h"
#include "tl_runtime.h"
#include "tl_structured.h"
#include "tl_tensor.h"
#include "../cpu/pool_kernel.h"
#include "nn_common.h"

TL_DEFINE_STUB(tl_pool_stub, tl_pool_table)

enum { MAXD = 16 };

/* ------------------------------------------------------------ dtypes */

/* the compute dtype of a pooling op, or an error: floating inputs compute in
 * float32 / float64; integers (max pooling: every integer dtype; avg_pool2d:
 * int64) in int64; others are PyTorch's "not implemented for" */
static int pool_dtype(const tl_tensor *t, const char *name, int ints, tl_dtype *ct) {
    const tl_dtype dt = tl_tensor_dtype(t);
    if (tl_dtype_is_floating(dt)) {
        *ct = compute_dtype(dt);
        return 0;
    }
    if ((ints == 2 && dt != TL_BOOL) || (ints == 1 && dt == TL_INT64)) {
        *ct = TL_INT64;
        return 0;
    }
    return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", name, tl_dtype_scalar_name(dt));
}

static const tl_pool_kernels *pool_k(tl_dtype ct) {
    return &(*(const tl_pool_table_t *)tl_pool_stub.current)[ct == TL_FLOAT32 ? 0 : ct == TL_FLOAT64 ? 1 : 2];
}

static int same_dtype(const tl_tensor *input, const tl_tensor *grad, const char *arg) {
    if (tl_tensor_dtype(input) == tl_tensor_dtype(grad)) return 0;
    return tl_set_error(TL_ERR_RUNTIME, "expected dtype %s for `%s` but got dtype %s",
                        tl_dtype_caffe2_name(tl_tensor_dtype(input)), arg, tl_dtype_caffe2_name(tl_tensor_dtype(grad)));
}

/* ------------------------------------------------------------ shapes */

/* kernel_size / stride / padding / dilation of a 2-d pooling op into g (the
 * name prefixes PyTorch's messages); dilation may be NULL (avg_pool2d) */
static int parse_pool2d(const char *name, const int64_t *k, int64_t kl, const int64_t *s, int64_t sl,
                        const int64_t *p, int64_t pl, const int64_t *d, int64_t dl, tl_pool_geom *g) {
    if (kl != 1 && kl != 2)
        return tl_set_error(TL_ERR_RUNTIME, "%s: kernel_size must either be a single int, or a tuple of two ints", name);
    g->kh = k[0];
    g->kw = kl == 1 ? k[0] : k[1];
    if (sl != 0 && sl != 1 && sl != 2)
        return tl_set_error(TL_ERR_RUNTIME, "%s: stride must either be omitted, a single int, or a tuple of two ints",
                            name);
    g->sh = sl == 0 ? g->kh : s[0];
    g->sw = sl == 0 ? g->kw : sl == 1 ? g->sh : s[1];
    if (pl != 1 && pl != 2)
        return tl_set_error(TL_ERR_RUNTIME, "%s: padding must either be a single int, or a tuple of two ints", name);
    g->ph = p[0];
    g->pw = pl == 1 ? p[0] : p[1];
    g->dh = g->dw = 1;
    if (d) {
        if (dl != 1 && dl != 2)
            return tl_set_error(TL_ERR_RUNTIME, "%s: dilation must be either a single int, or a tuple of two ints",
                                name);
        g->dh = d[0];
        g->dw = dl == 1 ? d[0] : d[1];
    }
    g->count_include_pad = true;
    g->divisor = 0;
    return 0;
}

/* output sizes and PyTorch's pool2d_shape_check */
static int pool2d_shape(const tl_tensor *input, bool ceil_mode, tl_pool_geom *g) {
    const int64_t nd = tl_tensor_ndim(input);
    const int64_t *sz = tl_tensor_sizes(input);
    char a[256];
    if (nd < 3) {   /* input.size(-3) of PyTorch's meta function: its IndexError */
        tl__wrap_dim(-3, nd, 1);
        return -1;
    }
    g->ih = sz[nd - 2];
    g->iw = sz[nd - 1];
    if (pooling_output_shape(g->ih, g->kh, g->ph, g->sh, g->dh, ceil_mode, &g->oh) ||
        pooling_output_shape(g->iw, g->kw, g->pw, g->sw, g->dw, ceil_mode, &g->ow))
        return -1;
    if (g->kw <= 0 || g->kh <= 0)
        return tl_set_error(TL_ERR_RUNTIME, "kernel size should be greater than zero, but got kH: %lld kW: %lld",
                            (long long)g->kh, (long long)g->kw);
    if (g->sw <= 0 || g->sh <= 0)
        return tl_set_error(TL_ERR_RUNTIME, "stride should be greater than zero, but got dH: %lld dW: %lld",
                            (long long)g->sh, (long long)g->sw);
    if (g->dh <= 0 || g->dw <= 0)
        return tl_set_error(TL_ERR_RUNTIME, "dilation should be greater than zero, but got dilationH: %lld dilationW: %lld",
                            (long long)g->dh, (long long)g->dw);
    const int valid = sz[1] != 0 && sz[2] != 0;
    if (!((nd == 3 && sz[0] != 0 && valid) || (nd == 4 && valid && sz[3] != 0))) {
        fmt_shape(a, sizeof a, sz, nd);
        return tl_set_error(TL_ERR_RUNTIME, "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for "
                                            "input, but got:%s", a);
    }
    if (!(g->kw / 2 >= g->pw && g->kh / 2 >= g->ph))
        return tl_set_error(TL_ERR_RUNTIME, "pad should be smaller than or equal to half of kernel size, but got "
                                            "padW = %lld, padH = %lld, kW = %lld, kH = %lld", (long long)g->pw,
                            (long long)g->ph, (long long)g->kw, (long long)g->kh);
    if (g->ow < 1 || g->oh < 1)
        return tl_set_error(TL_ERR_RUNTIME, "Given input size: (%lldx%lldx%lld). Calculated output size: "
                                            "(%lldx%lldx%lld). Output size is too small", (long long)sz[nd - 3],
                            (long long)g->ih, (long long)g->iw, (long long)sz[nd - 3], (long long)g->oh,
                            (long long)g->ow);
    return 0;
}

/* input's sizes with the last two replaced by (h, w) */
static void plane_shape(const tl_tensor *t, int64_t h, int64_t w, int64_t *shape) {
    const int64_t nd = tl_tensor_ndim(t);
    memcpy(shape, tl_tensor_sizes(t), (size_t)nd * sizeof(int64_t));
    shape[nd - 2] = h;
    shape[nd - 1] = w;
}

/* PyTorch's check_dim_size on the last three dims of a gradient */
static int check_grad_shape(const tl_tensor *grad, int64_t nd, int64_t c, int64_t h, int64_t w) {
    const int64_t want[3] = {c, h, w};
    for (int i = 0; i < 3; i++) {
        const int64_t dim = nd - 3 + i;
        if (tl_tensor_ndim(grad) != nd || tl_tensor_sizes(grad)[dim] != want[i])
            return tl_set_error(TL_ERR_RUNTIME, "Expected a tensor of dimension %lld and tensor.size[%lld] == %lld but "
                                                "got: dimension %lld and tensor.size[%lld] = %lld", (long long)nd,
                                (long long)dim, (long long)want[i], (long long)tl_tensor_ndim(grad), (long long)dim,
                                (long long)(dim < tl_tensor_ndim(grad) ? tl_tensor_sizes(grad)[dim] : 0));
    }
    return 0;
}

/* ------------------------------------------------------------ plane launches */

enum { MAX_FWD, MAX_BWD, AVG_FWD, AVG_BWD, AAVG_FWD, AAVG_BWD, AMAX_FWD };

typedef struct {
    const tl_pool_kernels *k;
    int op;
    const char *src;   /* forward: input planes; backward: gradient planes */
    char *dst;         /* forward: output planes; backward: grad_input planes */
    int64_t *ind;      /* max forward: index planes written */
    const int64_t *cind; /* max backward: index planes read */
    int64_t in_plane, out_plane, isz;
    tl_pool_geom g;
} plane_ctx;

static void run_planes(int64_t b, int64_t e, void *ctx) {
    const plane_ctx *c = ctx;
    const int bwd = c->op == MAX_BWD || c->op == AVG_BWD || c->op == AAVG_BWD;
    const int64_t sp = bwd ? c->out_plane : c->in_plane, dp = bwd ? c->in_plane : c->out_plane;
    for (int64_t p = b; p < e; p++) {
        const char *s = c->src + p * sp * c->isz;
        char *d = c->dst + p * dp * c->isz;
        switch (c->op) {
        case MAX_FWD: c->k->max_fwd(s, d, c->ind + p * c->out_plane, &c->g); break;
        case AMAX_FWD: c->k->amax_fwd(s, d, c->ind + p * c->out_plane, &c->g); break;
        case MAX_BWD: c->k->max_bwd(s, c->cind + p * c->out_plane, d, c->out_plane, c->in_plane); break;
        case AVG_FWD: c->k->avg_fwd(s, d, &c->g); break;
        case AVG_BWD: c->k->avg_bwd(s, d, &c->g); break;
        case AAVG_FWD: c->k->aavg_fwd(s, d, &c->g); break;
        default: c->k->aavg_bwd(s, d, &c->g); break;
        }
    }
}

/* runs op over the planes of src (contiguous, dtype ct) into dst */
static void launch(int op, tl_dtype ct, const tl_pool_geom *g, int64_t planes, const tl_tensor *src, tl_tensor *dst,
                   int64_t *ind, const int64_t *cind) {
    plane_ctx c = {pool_k(ct), op, tl_tensor_data_ptr(src), tl_tensor_data_ptr(dst), ind, cind, g->ih * g->iw,
                   g->oh * g->ow, tl__itemsize(ct), *g};
    const int64_t work = (c.in_plane > c.out_plane ? c.in_plane : c.out_plane) + 1;
    const int64_t grain = 32768 / work;
    if (planes > 0 && c.in_plane > 0) tl_parallel_for(planes, grain > 0 ? grain : 1, run_planes, &c);
}

static int64_t num_planes(const tl_tensor *t) {
    int64_t n = 1;
    for (int64_t i = 0; i < tl_tensor_ndim(t) - 2; i++) n *= tl_tensor_sizes(t)[i];
    return n;
}

/* the result in the input's dtype (y itself when that is the compute dtype) */
static tl_tensor *as_result(tl_tensor *y, tl_dtype dt) {
    if (tl_tensor_dtype(y) == dt) {
        tl_tensor_retain(y);
        return y;
    }
    return tl_to_dtype(y, dt, 0);
}

/* every index of a max pooling backward inside its plane (user-given indices
 * must not address memory outside it) */
static int check_indices(const tl_tensor *ind, int64_t n_in) {
    const int64_t *v = tl_tensor_data_ptr(ind);
    for (int64_t i = 0, n = tl_tensor_numel(ind); i < n; i++)
        if (v[i] < 0 || v[i] >= n_in)
            return tl_set_error(TL_ERR_INDEX, "index %lld is out of bounds for a pooling plane of %lld elements",
                                (long long)v[i], (long long)n_in);
    return 0;
}

/* max pooling backward (max_pool2d_with_indices_backward,
 * adaptive_max_pool2d_backward) into grad_input */
static int max_backward(tl_tensor *grad_output, tl_tensor *self, tl_tensor *indices, const tl_pool_geom *g,
                        tl_tensor *grad_input) {
    tl_dtype ct;
    if (pool_dtype(self, "max_pool2d_with_indices_backward", 2, &ct)) return -1;
    tl_tensor *gr = NULL, *ind = NULL, *dst = NULL;
    tl_tensor *ins[3] = {grad_output, self, indices};
    int rc = -1;
    if (!(gr = contig_as(grad_output, ct)) || !(ind = contig_as(indices, TL_INT64)) ||
        !(dst = begin_dst(grad_input, ct, ins, 3)))
        goto done;
    if (check_indices(ind, g->ih * g->iw)) goto done;
    launch(MAX_BWD, ct, g, num_planes(self), gr, dst, NULL, tl_tensor_data_ptr(ind));
    rc = 0;
done:
    rc = dst ? finish_dst(grad_input, dst, rc) : -1;
    tl_tensor_release(gr);
    tl_tensor_release(ind);
    return rc;
}

/* a max pooling forward (max_pool2d_with_indices, adaptive_max_pool2d):
 * values in self's dtype and int64 indices */
static int max_forward(tl_tensor *self, int op, tl_dtype ct, const tl_pool_geom *g, tl_tensor **ret0,
                       tl_tensor **ret1) {
    int64_t shape[MAXD];
    plane_shape(self, g->oh, g->ow, shape);
    const int64_t nd = tl_tensor_ndim(self);
    tl_tensor *x = NULL, *y = NULL, *ind = NULL, *out = NULL;
    int rc = -1;
    if (!(x = contig_as(self, ct)) || !(y = tl_empty(nd, shape, ct, TL_CPU)) ||
        !(ind = tl_empty(nd, shape, TL_INT64, TL_CPU)))
        goto done;
    launch(op, ct, g, num_planes(self), x, y, tl_tensor_data_ptr(ind), NULL);
    if (!(out = as_result(y, tl_tensor_dtype(self)))) goto done;
    *ret0 = out;
    *ret1 = ind;
    ind = NULL;
    rc = 0;
done:
    tl_tensor_release(x);
    tl_tensor_release(y);
    tl_tensor_release(ind);
    return rc;
}

/* ------------------------------------------------------------ max_pool2d */

static int max_pool2d_geom(tl_tensor *self, const int64_t *k, int64_t kl, const int64_t *s, int64_t sl,
                           const int64_t *p, int64_t pl, const int64_t *d, int64_t dl, bool ceil_mode,
                           tl_pool_geom *g) {
    if (parse_pool2d("max_pool2d", k, kl, s, sl, p, pl, d, dl, g)) return -1;
    const int64_t nd = tl_tensor_ndim(self);
    if (nd != 3 && nd != 4)
        return tl_set_error(TL_ERR_RUNTIME, "non-empty 3D or 4D (batch mode) tensor expected for input");
    return pool2d_shape(self, ceil_mode, g);
}

int tl_native_max_pool2d_with_indices_cpu(tl_keyset ks, tl_tensor *self, const int64_t *kernel_size,
                                          int64_t kernel_size_len, const int64_t *stride, int64_t stride_len,
                                          const int64_t *padding, int64_t padding_len, const int64_t *dilation,
                                          int64_t dilation_len, bool ceil_mode, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    tl_pool_geom g;
    tl_dtype ct;
    if (max_pool2d_geom(self, kernel_size, kernel_size_len, stride, stride_len, padding, padding_len, dilation,
                        dilation_len, ceil_mode, &g) ||
        pool_dtype(self, "max_pool2d", 2, &ct))
        return -1;
    return max_forward(self, MAX_FWD, ct, &g, ret0, ret1);
}

int tl_meta_max_pool2d_with_indices_backward(tl_structured *s, tl_tensor *grad_output, tl_tensor *self,
                                             const int64_t *kernel_size, int64_t kernel_size_len,
                                             const int64_t *stride, int64_t stride_len, const int64_t *padding,
                                             int64_t padding_len, const int64_t *dilation, int64_t dilation_len,
                                             bool ceil_mode, tl_tensor *indices) {
    tl_pool_geom g;
    if (max_pool2d_geom(self, kernel_size, kernel_size_len, stride, stride_len, padding, padding_len, dilation,
                        dilation_len, ceil_mode, &g) ||
        same_dtype(self, grad_output, "gradOutput"))
        return -1;
    const int64_t nd = tl_tensor_ndim(self);
    if (check_grad_shape(grad_output, nd, tl_tensor_sizes(self)[nd - 3], g.oh, g.ow) ||
        check_grad_shape(indices, nd, tl_tensor_sizes(self)[nd - 3], g.oh, g.ow))
        return -1;
    return tl_structured_set_output(s, 0, nd, tl_tensor_sizes(self), NULL, tl_tensor_dtype(self));
}

int tl_impl_max_pool2d_with_indices_backward_out_cpu(tl_structured *s, tl_tensor *grad_output, tl_tensor *self,
                                                     const int64_t *kernel_size, int64_t kernel_size_len,
                                                     const int64_t *stride, int64_t stride_len,
                                                     const int64_t *padding, int64_t padding_len,
                                                     const int64_t *dilation, int64_t dilation_len, bool ceil_mode,
                                                     tl_tensor *indices, tl_tensor *grad_input) {
    (void)s;
    tl_pool_geom g;
    if (max_pool2d_geom(self, kernel_size, kernel_size_len, stride, stride_len, padding, padding_len, dilation,
                        dilation_len, ceil_mode, &g))
        return -1;
    return max_backward(grad_output, self, indices, &g, grad_input);
}

/* max_pool2d (CompositeImplicitAutograd): PyTorch's CPU path returns
 * max_pool2d_with_indices' values */
tl_tensor *tl_native_max_pool2d(tl_keyset ks, tl_tensor *self, const int64_t *kernel_size, int64_t kernel_size_len,
                                const int64_t *stride, int64_t stride_len, const int64_t *padding,
                                int64_t padding_len, const int64_t *dilation, int64_t dilation_len, bool ceil_mode) {
    (void)ks;
    tl_tensor *out = NULL, *ind = NULL;
    if (tl_ops_max_pool2d_with_indices(self, kernel_size, kernel_size_len, stride, stride_len, padding, padding_len,
                                       dilation, dilation_len, ceil_mode, &out, &ind))
        return NULL;
    tl_tensor_release(ind);
    return out;
}

/* ------------------------------------------------------------ 1-d forms */

/* PyTorch's checkDimRange(name, self, 2, 4) */
static int check_dim_range_1d(const tl_tensor *self, const char *name) {
    const int64_t nd = tl_tensor_ndim(self);
    if (nd >= 2 && nd < 4) return 0;
    return tl_set_error(TL_ERR_RUNTIME, "Expected 2 to 3 dimensions, but got %lld-dimensional tensor for argument #1 "
                                        "'self' (while checking arguments for %s)", (long long)nd, name);
}

/* PyTorch's check1d */
static int check1d(const char *fn, const char *arg, int64_t len) {
    if (len == 1) return 0;
    return tl_set_error(TL_ERR_RUNTIME, "%s() argument '%s' should contain one int (got %lld)", fn, arg, (long long)len);
}

/* squeezes dim -2 of both results of a pooling op that returns two */
static int squeeze_pair(tl_tensor **a, tl_tensor **b) {
    tl_tensor *sa = tl_ops_squeeze_dim(*a, -2), *sb = sa ? tl_ops_squeeze_dim(*b, -2) : NULL;
    tl_tensor_release(*a);
    tl_tensor_release(*b);
    if (!sb) {
        tl_tensor_release(sa);
        return -1;
    }
    *a = sa;
    *b = sb;
    return 0;
}

/* max_pool1d_with_indices (CompositeImplicitAutograd): max_pool2d_with_indices
 * over a height-1 view, as PyTorch */
int tl_native_max_pool1d_with_indices(tl_keyset ks, tl_tensor *self, const int64_t *kernel_size,
                                      int64_t kernel_size_len, const int64_t *stride, int64_t stride_len,
                                      const int64_t *padding, int64_t padding_len, const int64_t *dilation,
                                      int64_t dilation_len, bool ceil_mode, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    if (stride_len == 0) {
        stride = kernel_size;
        stride_len = kernel_size_len;
    }
    if (check_dim_range_1d(self, "max_pool1d") || check1d("max_pool1d", "kernel_size", kernel_size_len) ||
        check1d("max_pool1d", "stride", stride_len) || check1d("max_pool1d", "padding", padding_len) ||
        check1d("max_pool1d", "dilation", dilation_len))
        return -1;
    const int64_t k[2] = {1, kernel_size[0]}, s[2] = {1, stride[0]}, p[2] = {0, padding[0]}, d[2] = {1, dilation[0]};
    tl_tensor *x = tl_ops_unsqueeze(self, -2), *out = NULL, *ind = NULL;
    if (!x) return -1;
    const int rc = tl_ops_max_pool2d_with_indices(x, k, 2, s, 2, p, 2, d, 2, ceil_mode, &out, &ind);
    tl_tensor_release(x);
    if (rc || squeeze_pair(&out, &ind)) return -1;
    *ret0 = out;
    *ret1 = ind;
    return 0;
}

/* max_pool1d (CompositeImplicitAutograd): PyTorch's check_max_pool1d, then
 * max_pool1d_with_indices' values (PyTorch's separate CPU kernel for inputs
 * that need no gradient gives the same values) */
tl_tensor *tl_native_max_pool1d(tl_keyset ks, tl_tensor *self, const int64_t *kernel_size, int64_t kernel_size_len,
                                const int64_t *stride, int64_t stride_len, const int64_t *padding,
                                int64_t padding_len, const int64_t *dilation, int64_t dilation_len, bool ceil_mode) {
    const int64_t nd = tl_tensor_ndim(self);
    const int64_t *sz = tl_tensor_sizes(self);
    char a[256];
    if (!((nd == 2 && sz[0] != 0 && sz[1] != 0) || (nd == 3 && sz[1] != 0 && sz[2] != 0))) {
        fmt_shape(a, sizeof a, sz, nd);
        tl_set_error(TL_ERR_RUNTIME, "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch "
                                     "size for input, but got:%s", a);
        return NULL;
    }
    if (kernel_size_len != 1) {
        tl_set_error(TL_ERR_RUNTIME, "max_pool1d() kernel_size must be an int, list of ints or tuple of ints of size 1 "
                                     "but got size %lld", (long long)kernel_size_len);
        return NULL;
    }
    if (stride_len > 1) {
        tl_set_error(TL_ERR_RUNTIME, "max_pool1d() stride must be None, an int, list of ints, or tuple of ints of "
                                     "size 1 but got size %lld", (long long)stride_len);
        return NULL;
    }
    if (padding_len != 1) {
        tl_set_error(TL_ERR_RUNTIME, "max_pool1d() padding must be an int, list of ints, or tuple of ints of size 1 "
                                     "but got size %lld", (long long)padding_len);
        return NULL;
    }
    if (dilation_len != 1) {
        tl_set_error(TL_ERR_RUNTIME, "max_pool1d() dilation must be an int, list of ints or tuple of ints of size 1 "
                                     "but got size %lld", (long long)dilation_len);
        return NULL;
    }
    const int64_t k = kernel_size[0], s = stride_len ? stride[0] : k, p = padding[0], d = dilation[0];
    int64_t ow = 0;
    if (k <= 0)
        tl_set_error(TL_ERR_RUNTIME, "max_pool1d() kernel_size must be greater than zero, but got %lld", (long long)k);
    else if (s <= 0)
        tl_set_error(TL_ERR_RUNTIME, "max_pool1d() stride must be greater than zero, but got %lld", (long long)s);
    else if (p < 0)
        tl_set_error(TL_ERR_RUNTIME, "max_pool1d() padding must be non-negative, but got %lld", (long long)p);
    else if (p > k / 2)
        tl_set_error(TL_ERR_RUNTIME, "max_pool1d() padding should be at most half of kernel size, but got "
                                     "padding=%lld and kernel_size=%lld", (long long)p, (long long)k);
    else if (d <= 0)
        tl_set_error(TL_ERR_RUNTIME, "max_pool1d() dilation must be greater than zero, but got %lld", (long long)d);
    else if (!pooling_output_shape(sz[nd - 1], k, p, s, d, ceil_mode, &ow) && ow <= 0)
        tl_set_error(TL_ERR_RUNTIME, "max_pool1d() Invalid computed output size: %lld", (long long)ow);
    else if (ow > 0) {
        tl_tensor *out = NULL, *ind = NULL;
        if (tl_native_max_pool1d_with_indices(ks, self, kernel_size, 1, stride, stride_len, padding, 1, dilation, 1,
                                              ceil_mode, &out, &ind))
            return NULL;
        tl_tensor_release(ind);
        return out;
    }
    return NULL;
}

/* ------------------------------------------------------------ avg_pool2d */

static int avg_pool2d_geom(tl_tensor *self, const int64_t *k, int64_t kl, const int64_t *s, int64_t sl,
                           const int64_t *p, int64_t pl, bool ceil_mode, bool count_include_pad, int64_t divisor,
                           bool divisor_has, tl_pool_geom *g) {
    if (parse_pool2d("avg_pool2d", k, kl, s, sl, p, pl, NULL, 0, g)) return -1;
    if (divisor_has && divisor == 0) return tl_set_error(TL_ERR_RUNTIME, "divisor must be not zero");
    g->count_include_pad = count_include_pad;
    g->divisor = divisor_has ? divisor : 0;
    return pool2d_shape(self, ceil_mode, g);
}

int tl_meta_avg_pool2d(tl_structured *s, tl_tensor *self, const int64_t *kernel_size, int64_t kernel_size_len,
                       const int64_t *stride, int64_t stride_len, const int64_t *padding, int64_t padding_len,
                       bool ceil_mode, bool count_include_pad, int64_t divisor_override, bool divisor_override_has) {
    tl_pool_geom g;
    if (avg_pool2d_geom(self, kernel_size, kernel_size_len, stride, stride_len, padding, padding_len, ceil_mode,
                        count_include_pad, divisor_override, divisor_override_has, &g))
        return -1;
    int64_t shape[MAXD];
    plane_shape(self, g.oh, g.ow, shape);
    return tl_structured_set_output(s, 0, tl_tensor_ndim(self), shape, NULL, tl_tensor_dtype(self));
}

int tl_impl_avg_pool2d_out_cpu(tl_structured *s, tl_tensor *self, const int64_t *kernel_size, int64_t kernel_size_len,
                               const int64_t *stride, int64_t stride_len, const int64_t *padding, int64_t padding_len,
                               bool ceil_mode, bool count_include_pad, int64_t divisor_override,
                               bool divisor_override_has, tl_tensor *out) {
    (void)s;
    tl_pool_geom g;
    tl_dtype ct;
    if (avg_pool2d_geom(self, kernel_size, kernel_size_len, stride, stride_len, padding, padding_len, ceil_mode,
                        count_include_pad, divisor_override, divisor_override_has, &g) ||
        pool_dtype(self, "avg_pool2d", 1, &ct))
        return -1;
    tl_tensor *x = contig_as(self, ct), *dst = x ? begin_dst(out, ct, &self, 1) : NULL;
    if (dst) launch(AVG_FWD, ct, &g, num_planes(self), x, dst, NULL, NULL);
    tl_tensor_release(x);
    return dst ? finish_dst(out, dst, 0) : -1;
}

int tl_meta_avg_pool2d_backward(tl_structured *s, tl_tensor *grad_output, tl_tensor *self, const int64_t *kernel_size,
                                int64_t kernel_size_len, const int64_t *stride, int64_t stride_len,
                                const int64_t *padding, int64_t padding_len, bool ceil_mode, bool count_include_pad,
                                int64_t divisor_override, bool divisor_override_has) {
    tl_pool_geom g;
    if (avg_pool2d_geom(self, kernel_size, kernel_size_len, stride, stride_len, padding, padding_len, ceil_mode,
                        count_include_pad, divisor_override, divisor_override_has, &g))
        return -1;
    const int64_t nd = tl_tensor_ndim(self);
    if (check_grad_shape(grad_output, nd, tl_tensor_sizes(self)[nd - 3], g.oh, g.ow)) return -1;
    return tl_structured_set_output(s, 0, nd, tl_tensor_sizes(self), NULL, tl_tensor_dtype(self));
}

int tl_impl_avg_pool2d_backward_out_cpu(tl_structured *s, tl_tensor *grad_output, tl_tensor *self,
                                        const int64_t *kernel_size, int64_t kernel_size_len, const int64_t *stride,
                                        int64_t stride_len, const int64_t *padding, int64_t padding_len,
                                        bool ceil_mode, bool count_include_pad, int64_t divisor_override,
                                        bool divisor_override_has, tl_tensor *grad_input) {
    (void)s;
    tl_pool_geom g;
    tl_dtype ct;
    if (avg_pool2d_geom(self, kernel_size, kernel_size_len, stride, stride_len, padding, padding_len, ceil_mode,
                        count_include_pad, divisor_override, divisor_override_has, &g) ||
        pool_dtype(self, "avg_pool2d_backward_out_frame", 1, &ct))
        return -1;
    tl_tensor *ins[2] = {grad_output, self};
    tl_tensor *gr = contig_as(grad_output, ct), *dst = gr ? begin_dst(grad_input, ct, ins, 2) : NULL;
    if (dst) launch(AVG_BWD, ct, &g, num_planes(self), gr, dst, NULL, NULL);
    tl_tensor_release(gr);
    return dst ? finish_dst(grad_input, dst, 0) : -1;
}

/* avg_pool1d (CompositeImplicitAutograd): avg_pool2d over a height-1 view */
tl_tensor *tl_native_avg_pool1d(tl_keyset ks, tl_tensor *self, const int64_t *kernel_size, int64_t kernel_size_len,
                                const int64_t *stride, int64_t stride_len, const int64_t *padding,
                                int64_t padding_len, bool ceil_mode, bool count_include_pad) {
    (void)ks;
    if (stride_len == 0) {
        stride = kernel_size;
        stride_len = kernel_size_len;
    }
    if (check_dim_range_1d(self, "avg_pool1d") || check1d("avg_pool1d", "kernel_size", kernel_size_len) ||
        check1d("avg_pool1d", "stride", stride_len) || check1d("avg_pool1d", "padding", padding_len))
        return NULL;
    const int64_t k[2] = {1, kernel_size[0]}, s[2] = {1, stride[0]}, p[2] = {0, padding[0]};
    tl_tensor *x = tl_ops_unsqueeze(self, -2);
    tl_tensor *y = x ? tl_ops_avg_pool2d(x, k, 2, s, 2, p, 2, ceil_mode, count_include_pad, 0, false) : NULL;
    tl_tensor *r = y ? tl_ops_squeeze_dim(y, -2) : NULL;
    tl_tensor_release(x);
    tl_tensor_release(y);
    return r;
}

/* ------------------------------------------------------------ adaptive pools */

/* PyTorch's "non-zero size for non-batch dimensions" check from dim `from` */
static int check_nonempty(const tl_tensor *t, const char *fn, const char *arg, int64_t from) {
    const int64_t nd = tl_tensor_ndim(t);
    for (int64_t i = from; i < nd; i++)
        if (tl_tensor_sizes(t)[i] <= 0) {
            char a[256];
            fmt_shape(a, sizeof a, tl_tensor_sizes(t), nd);
            return tl_set_error(TL_ERR_RUNTIME, "%s(): Expected %s to have non-zero size for non-batch dimensions, but "
                                                "%s has sizes %s with dimension %lld being empty", fn, arg, arg, a,
                                (long long)i);
        }
    return 0;
}

static int adaptive_geom(const tl_tensor *self, const int64_t *os, tl_pool_geom *g) {
    const int64_t nd = tl_tensor_ndim(self);
    memset(g, 0, sizeof *g);
    g->ih = tl_tensor_sizes(self)[nd - 2];
    g->iw = tl_tensor_sizes(self)[nd - 1];
    g->oh = os[0];
    g->ow = os[1];
    if (os[0] < 0 || os[1] < 0) {
        int64_t shape[MAXD];
        char a[256];
        plane_shape(self, os[0], os[1], shape);
        fmt_shape(a, sizeof a, shape, nd);
        return tl_set_error(TL_ERR_RUNTIME, "Trying to create tensor with negative dimension %lld: %s",
                            (long long)(os[0] < 0 ? os[0] : os[1]), a);
    }
    return 0;
}

static int check_3d_4d(const tl_tensor *t, const char *fn, const char *sep) {
    const int64_t nd = tl_tensor_ndim(t);
    if (nd == 3 || nd == 4) return 0;
    char a[256];
    fmt_shape(a, sizeof a, tl_tensor_sizes(t), nd);
    return tl_set_error(TL_ERR_RUNTIME, "%s(): Expected 3D or 4D tensor, but got%s %s", fn, sep, a);
}

tl_tensor *tl_native_adaptive_avg_pool2d_cpu(tl_keyset ks, tl_tensor *self, const int64_t *output_size,
                                             int64_t output_size_len) {
    (void)ks;
    if (output_size_len != 2) {
        tl_set_error(TL_ERR_RUNTIME, "adaptive_avg_pool2d: output_size must be 2");
        return NULL;
    }
    const int64_t nd = tl_tensor_ndim(self);
    if (check_3d_4d(self, "adaptive_avg_pool2d", "")) return NULL;
    for (int64_t i = nd - 2; i < nd; i++)
        if (tl_tensor_sizes(self)[i] <= 0) {
            char a[256];
            fmt_shape(a, sizeof a, tl_tensor_sizes(self), nd);
            tl_set_error(TL_ERR_RUNTIME, "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch "
                                         "dimensions, but input has sizes %s with dimension %lld being empty", a,
                         (long long)i);
            return NULL;
        }
    tl_pool_geom g;
    tl_dtype ct;
    if (adaptive_geom(self, output_size, &g) || pool_dtype(self, "adaptive_avg_pool2d", 0, &ct)) return NULL;
    int64_t shape[MAXD];
    plane_shape(self, g.oh, g.ow, shape);
    tl_tensor *x = contig_as(self, ct), *y = x ? tl_empty(nd, shape, ct, TL_CPU) : NULL, *r = NULL;
    if (y) {
        launch(AAVG_FWD, ct, &g, num_planes(self), x, y, NULL, NULL);
        r = as_result(y, tl_tensor_dtype(self));
    }
    tl_tensor_release(x);
    tl_tensor_release(y);
    return r;
}

tl_tensor *tl_native_adaptive_avg_pool2d_backward_cpu(tl_keyset ks, tl_tensor *grad_output, tl_tensor *self) {
    (void)ks;
    const int64_t nd = tl_tensor_ndim(grad_output);
    for (int64_t i = 1; i < nd; i++)
        if (tl_tensor_sizes(grad_output)[i] <= 0) {
            char a[256];
            fmt_shape(a, sizeof a, tl_tensor_sizes(grad_output), nd);
            tl_set_error(TL_ERR_RUNTIME, "adaptive_avg_pool2d_backward(): Expected grad_output to have non-zero size "
                                         "for non-batch dimensions, but grad_output has sizes %s with dimension %lld "
                                         "being empty", a, (long long)i);
            return NULL;
        }
    if (nd != 3 && nd != 4) {
        char a[256];
        fmt_shape(a, sizeof a, tl_tensor_sizes(self), tl_tensor_ndim(self));
        tl_set_error(TL_ERR_RUNTIME, "adaptive_avg_pool2d_backward(): Expected 3D or 4D tensor, but got %s", a);
        return NULL;
    }
    if (same_dtype(self, grad_output, "grad_output")) return NULL;
    tl_dtype ct;
    if (pool_dtype(self, "adaptive_avg_pool2d_backward_cpu", 0, &ct)) return NULL;
    if (tl_tensor_ndim(self) != nd ||
        memcmp(tl_tensor_sizes(self), tl_tensor_sizes(grad_output), (size_t)(nd - 2) * sizeof(int64_t))) {
        tl_set_error(TL_ERR_RUNTIME, "adaptive_avg_pool2d_backward(): grad_output and input must have the same "
                                     "leading dimensions");
        return NULL;
    }
    tl_pool_geom g;
    const int64_t os[2] = {tl_tensor_sizes(grad_output)[nd - 2], tl_tensor_sizes(grad_output)[nd - 1]};
    adaptive_geom(self, os, &g);
    tl_tensor *gr = contig_as(grad_output, ct);
    tl_tensor *gi = gr ? tl_empty(nd, tl_tensor_sizes(self), ct, TL_CPU) : NULL, *r = NULL;
    if (gi) {
        launch(AAVG_BWD, ct, &g, num_planes(self), gr, gi, NULL, NULL);
        r = as_result(gi, tl_tensor_dtype(self));
    }
    tl_tensor_release(gr);
    tl_tensor_release(gi);
    return r;
}

/* adaptive_avg_pool2d (CompositeImplicitAutograd, PyTorch's): an output of
 * 1 x 1 is the mean over the last two dims, anything else
 * _adaptive_avg_pool2d */
tl_tensor *tl_native_adaptive_avg_pool2d_symint(tl_keyset ks, tl_tensor *self, const int64_t *output_size,
                                                int64_t output_size_len) {
    (void)ks;
    if (output_size_len != 2) {
        tl_set_error(TL_ERR_RUNTIME, "adaptive_avg_pool2d: output_size must be 2");
        return NULL;
    }
    if (output_size[0] < 0 || output_size[1] < 0) {
        tl_set_error(TL_ERR_RUNTIME, "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 "
                                     "but received {%lld, %lld}", (long long)output_size[0], (long long)output_size[1]);
        return NULL;
    }
    if (output_size[0] == 1 && output_size[1] == 1) {
        const int64_t dims[2] = {-1, -2};
        return tl_ops_mean_dim(self, dims, 2, true, TL_DTYPE_UNDEFINED);
    }
    return tl_ops__adaptive_avg_pool2d(self, output_size, 2);
}

/* adaptive_avg_pool1d (CompositeImplicitAutograd): adaptive_avg_pool2d over a
 * height-1 view */
tl_tensor *tl_native_adaptive_avg_pool1d(tl_keyset ks, tl_tensor *self, const int64_t *output_size,
                                         int64_t output_size_len) {
    (void)ks;
    if (check_dim_range_1d(self, "adaptive_avg_pool1d") || check1d("adaptive_avg_pool1d", "output_size", output_size_len))
        return NULL;
    const int64_t os[2] = {1, output_size[0]};
    tl_tensor *x = tl_ops_unsqueeze(self, -2);
    tl_tensor *y = x ? tl_ops_adaptive_avg_pool2d(x, os, 2) : NULL;
    tl_tensor *r = y ? tl_ops_squeeze_dim(y, -2) : NULL;
    tl_tensor_release(x);
    tl_tensor_release(y);
    return r;
}

int tl_native_adaptive_max_pool2d_cpu(tl_keyset ks, tl_tensor *self, const int64_t *output_size,
                                      int64_t output_size_len, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    if (check_3d_4d(self, "adaptive_max_pool2d", ":") ||
        check_nonempty(self, "adaptive_max_pool2d", "input", 1))
        return -1;
    if (output_size_len != 2)
        return tl_set_error(TL_ERR_RUNTIME, "adaptive_max_pool2d(): internal error: output_size.size() must be 2");
    tl_pool_geom g;
    tl_dtype ct;
    if (adaptive_geom(self, output_size, &g) || pool_dtype(self, "adaptive_max_pool2d", 0, &ct)) return -1;
    return max_forward(self, AMAX_FWD, ct, &g, ret0, ret1);
}

int tl_meta_adaptive_max_pool2d_backward(tl_structured *s, tl_tensor *grad_output, tl_tensor *self,
                                         tl_tensor *indices) {
    const int64_t nd = tl_tensor_ndim(grad_output);
    if (nd != 3 && nd != 4) {
        char a[256];
        fmt_shape(a, sizeof a, tl_tensor_sizes(grad_output), nd);
        return tl_set_error(TL_ERR_RUNTIME, "adaptive_max_pooling2d_backward(): Expected 3D or 4D grad_output, but "
                                            "got: %s", a);
    }
    if (check_nonempty(grad_output, "adaptive_max_pool2d_backward", "grad_output", 1) ||
        same_dtype(self, grad_output, "grad_output"))
        return -1;
    if (tl_tensor_ndim(self) != nd || tl_tensor_ndim(indices) != nd ||
        memcmp(tl_tensor_sizes(indices), tl_tensor_sizes(grad_output), (size_t)nd * sizeof(int64_t)) ||
        memcmp(tl_tensor_sizes(self), tl_tensor_sizes(grad_output), (size_t)(nd - 2) * sizeof(int64_t)))
        return tl_set_error(TL_ERR_RUNTIME, "adaptive_max_pool2d_backward(): grad_output and indices must have the "
                                            "output's shape, with the input's leading dimensions");
    return tl_structured_set_output(s, 0, nd, tl_tensor_sizes(self), NULL, tl_tensor_dtype(self));
}

int tl_impl_adaptive_max_pool2d_backward_out_cpu(tl_structured *s, tl_tensor *grad_output, tl_tensor *self,
                                                 tl_tensor *indices, tl_tensor *grad_input) {
    (void)s;
    const int64_t nd = tl_tensor_ndim(self);
    tl_pool_geom g;
    const int64_t os[2] = {tl_tensor_sizes(grad_output)[nd - 2], tl_tensor_sizes(grad_output)[nd - 1]};
    if (adaptive_geom(self, os, &g)) return -1;
    return max_backward(grad_output, self, indices, &g, grad_input);
}

/* adaptive_max_pool1d (CompositeImplicitAutograd, PyTorch's):
 * adaptive_max_pool2d over a height-1 view */
int tl_native_adaptive_max_pool1d(tl_keyset ks, tl_tensor *self, const int64_t *output_size, int64_t output_size_len,
                                  tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    if (check_dim_range_1d(self, "adaptive_max_pool1d") ||
        check1d("adaptive_max_pool1d", "output_size", output_size_len))
        return -1;
    const int64_t nd = tl_tensor_ndim(self);
    for (int64_t i = 1; i < nd; i++)
        if (tl_tensor_sizes(self)[i] <= 0) {
            char a[256];
            fmt_shape(a, sizeof a, tl_tensor_sizes(self), nd);
            return tl_set_error(TL_ERR_RUNTIME, "adaptive_max_pool1d(): Expected input to have non-zero size for "
                                                "non-batch dimensions, but input has sizes %s with dimension %lld "
                                                "being empty", a, (long long)i);
        }
    const int64_t os[2] = {1, output_size[0]};
    tl_tensor *x = tl_ops_unsqueeze(self, -2), *out = NULL, *ind = NULL;
    if (!x) return -1;
    const int rc = tl_ops_adaptive_max_pool2d(x, os, 2, &out, &ind);
    tl_tensor_release(x);
    if (rc || squeeze_pair(&out, &ind)) return -1;
    *ret0 = out;
    *ret1 = ind;
    return 0;
}
