/* NN operators: softmax / log_softmax and their backward
 * ops, native_layer_norm (+ its backward as a C helper, see tl_nn.h),
 * nll_loss_forward / nll_loss_backward, mse_loss, native_dropout, and the
 * CompositeImplicitAutograd kernels PyTorch writes over them (softmax.int,
 * layer_norm, rms_norm, dropout, nll_loss, nll_loss_nd, cross_entropy_loss,
 * mse_loss_backward; scaled_dot_product_attention is in attention.c).
 *
 * Schemas, messages and result dtypes as PyTorch 2.13. The arithmetic inner
 * loops are per-ISA (kernels/cpu/nn_kernel.c); this file shapes the work:
 * inputs are made contiguous in the compute dtype (float32 for float16 /
 * bfloat16 / float32, float64), the reduced dim is split into
 * outer x n x inner, and the outer rows (or column blocks) go to threads. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "random_draws.h"
#include "tl_error.h"
#include "tl_internal.h"
#include "tl_kernel.h"
#include "tl_nn.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/_log_softmax.h"
#include "ops/_log_softmax_backward_data.h"
#include "ops/_softmax.h"
#include "ops/_softmax_backward_data.h"
#include "ops/add.h"
#include "ops/bernoulli.h"
#include "ops/cross_entropy_loss.h"
#include "ops/div.h"
#include "ops/dropout.h"
#include "ops/empty_like.h"
#include "ops/fill.h"
#include "ops/index_select.h"
#include "ops/layer_norm.h"
#include "ops/log_softmax.h"
#include "ops/mse_loss.h"
#include "ops/mse_loss_backward.h"
#include "ops/mul.h"
#include "ops/native_dropout.h"
#include "ops/native_dropout_backward.h"
#include "ops/native_layer_norm.h"
#include "ops/ne.h"
#include "ops/neg.h"
#include "ops/nll_loss.h"
#include "ops/nll_loss_backward.h"
#include "ops/nll_loss_forward.h"
#include "ops/nll_loss_nd.h"
#include "ops/permute.h"
#include "ops/reshape.h"
#include "ops/rms_norm.h"
#include "ops/rsqrt.h"
#include "ops/softmax.h"
#include "ops/sub.h"
#include "ops/sum.h"
#include "ops/to.h"
#include "ops/view.h"
#include "ops/where.h"
#include "tl_runtime.h"
#include "tl_structured.h"
#include "tl_tensor.h"
#include "../cpu/nn_kernel.h"
#include "nn_common.h"

TL_DEFINE_STUB(tl_nn_stub, tl_nn_table)
#define NN_K(ct) (&(*(const tl_nn_table_t *)tl_nn_stub.current)[(ct) == TL_FLOAT64 ? 1 : 0])

enum { MAXD = 64, COL_BLOCK = 256 };

/* PyTorch's Reduction enum */
enum { RED_NONE = 0, RED_MEAN = 1, RED_SUM = 2 };

static int check_reduction(int64_t r) {
    if (r < RED_NONE || r > RED_SUM)
        return tl_set_error(TL_ERR_VALUE, "%lld is not a valid value for reduction", (long long)r);
    return 0;
}

static void split_dims(const tl_tensor *t, int64_t d, int64_t *outer, int64_t *n, int64_t *inner) {
    const int64_t nd = tl_tensor_ndim(t);
    const int64_t *sz = tl_tensor_sizes(t);
    *outer = 1;
    *inner = 1;
    *n = nd == 0 ? 1 : sz[d];
    for (int64_t i = 0; i < d; i++) *outer *= sz[i];
    for (int64_t i = d + 1; i < nd; i++) *inner *= sz[i];
}

/* ------------------------------------------------------------ softmax */

typedef struct {
    const tl_nn_kernels *k;
    const char *a, *b; /* forward: x; backward: grad, output */
    char *y;
    int64_t n, inner, nblocks, isz;
    int mode, backward;
} sm_ctx;

static void sm_rows(int64_t b, int64_t e, void *ctx) {
    const sm_ctx *c = ctx;
    for (int64_t r = b; r < e; r++) {
        const int64_t off = r * c->n * c->isz;
        if (c->backward)
            c->k->bwd_row(c->a + off, c->b + off, c->y + off, c->n, c->mode);
        else
            c->k->fwd_row(c->a + off, c->y + off, c->n, c->mode);
    }
}

static void sm_cols(int64_t b, int64_t e, void *ctx) {
    const sm_ctx *c = ctx;
    double scratch[2 * COL_BLOCK];
    for (int64_t t = b; t < e; t++) {
        const int64_t o = t / c->nblocks, c0 = (t % c->nblocks) * COL_BLOCK;
        const int64_t len = c->inner - c0 < COL_BLOCK ? c->inner - c0 : COL_BLOCK;
        const int64_t off = (o * c->n * c->inner + c0) * c->isz;
        if (c->backward)
            c->k->bwd_col(c->a + off, c->b + off, c->y + off, c->n, c->inner, len, c->mode, scratch);
        else
            c->k->fwd_col(c->a + off, c->y + off, c->n, c->inner, len, c->mode, scratch);
    }
}

static void sm_launch(sm_ctx *c, int64_t outer) {
    if (c->inner == 1) {
        int64_t grain = 32768 / (c->n > 0 ? c->n : 1);
        tl_parallel_for(outer, grain > 0 ? grain : 1, sm_rows, c);
    } else {
        c->nblocks = (c->inner + COL_BLOCK - 1) / COL_BLOCK;
        int64_t per = c->n * (c->inner < COL_BLOCK ? c->inner : COL_BLOCK);
        int64_t grain = 32768 / (per > 0 ? per : 1);
        tl_parallel_for(outer * c->nblocks, grain > 0 ? grain : 1, sm_cols, c);
    }
}

static int softmax_meta(tl_structured *s, tl_tensor *self, int64_t dim) {
    const int64_t nd = tl_tensor_ndim(self);
    if (tl__wrap_dim(dim, nd, 1) < 0) return -1;
    return tl_structured_set_output(s, 0, nd, tl_tensor_sizes(self), NULL, tl_tensor_dtype(self));
}

int tl_meta__softmax(tl_structured *s, tl_tensor *self, int64_t dim, bool half_to_float) {
    (void)half_to_float;
    return softmax_meta(s, self, dim);
}

int tl_meta__log_softmax(tl_structured *s, tl_tensor *self, int64_t dim, bool half_to_float) {
    (void)half_to_float;
    return softmax_meta(s, self, dim);
}

static int softmax_impl(tl_tensor *self, int64_t dim, bool half_to_float, tl_tensor *out, int mode) {
    const int64_t nd = tl_tensor_ndim(self);
    const int64_t d = tl__wrap_dim(dim, nd, 1);
    if (d < 0) return -1;
    if (half_to_float)
        return tl_set_error(TL_ERR_RUNTIME, "softmax with half to float conversion is not supported on CPU");
    const tl_dtype dt = tl_tensor_dtype(self);
    if (!tl_dtype_is_floating(dt)) {
        const int last = nd == 0 || d == nd - 1;
        return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"%s%s_kernel_impl\" not implemented for '%s'",
                            mode ? "log_softmax" : "softmax", last ? "_lastdim" : "", tl_dtype_scalar_name(dt));
    }
    if (tl_tensor_numel(self) == 0) return 0;
    const tl_dtype ct = compute_dtype(dt);
    tl_tensor *x = contig_as(self, ct);
    if (!x) return -1;
    tl_tensor *y = begin_dst(out, ct, &self, 1);
    if (!y) {
        tl_tensor_release(x);
        return -1;
    }
    int64_t outer, n, inner;
    split_dims(self, d, &outer, &n, &inner);
    sm_ctx c = {NN_K(ct), tl_tensor_data_ptr(x), NULL, tl_tensor_data_ptr(y), n, inner, 0, tl__itemsize(ct), mode, 0};
    sm_launch(&c, outer);
    tl_tensor_release(x);
    return finish_dst(out, y, 0);
}

int tl_impl_softmax_cpu_out(tl_structured *s, tl_tensor *self, int64_t dim, bool half_to_float, tl_tensor *out) {
    (void)s;
    return softmax_impl(self, dim, half_to_float, out, 0);
}

int tl_impl_log_softmax_cpu_out(tl_structured *s, tl_tensor *self, int64_t dim, bool half_to_float, tl_tensor *out) {
    (void)s;
    return softmax_impl(self, dim, half_to_float, out, 1);
}

/* grad_input has input_dtype when the gradient is float32 and the input was
 * float16 (PyTorch's half_to_float case), else the gradient's dtype */
static int softmax_bwd_meta(tl_structured *s, tl_tensor *grad_output, tl_tensor *output, int64_t dim,
                            tl_dtype input_dtype) {
    const int64_t nd = tl_tensor_ndim(output);
    if (tl__wrap_dim(dim, nd, 1) < 0) return -1;
    const int64_t gnd = tl_tensor_ndim(grad_output);
    if (gnd != nd || memcmp(tl_tensor_sizes(grad_output), tl_tensor_sizes(output), (size_t)nd * sizeof(int64_t)))
        return tl_set_error(TL_ERR_RUNTIME, "grad_output and output must have the same shape");
    const tl_dtype gdt = tl_tensor_dtype(grad_output);
    const tl_dtype rt = (gdt == TL_FLOAT32 && input_dtype == TL_FLOAT16) ? TL_FLOAT16 : gdt;
    return tl_structured_set_output(s, 0, nd, tl_tensor_sizes(output), NULL, rt);
}

int tl_meta__softmax_backward_data(tl_structured *s, tl_tensor *grad_output, tl_tensor *output, int64_t dim,
                                   tl_dtype input_dtype) {
    return softmax_bwd_meta(s, grad_output, output, dim, input_dtype);
}

int tl_meta__log_softmax_backward_data(tl_structured *s, tl_tensor *grad_output, tl_tensor *output, int64_t dim,
                                       tl_dtype input_dtype) {
    return softmax_bwd_meta(s, grad_output, output, dim, input_dtype);
}

static int softmax_bwd_impl(tl_tensor *grad, tl_tensor *output, int64_t dim, tl_tensor *gi, int mode) {
    const int64_t nd = tl_tensor_ndim(output);
    const int64_t d = tl__wrap_dim(dim, nd, 1);
    if (d < 0) return -1;
    if (softmax_bwd_check_dtypes(grad, output, gi)) return -1;
    const tl_dtype gdt = tl_tensor_dtype(grad);
    if (!tl_dtype_is_floating(gdt))
        return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"%s_backward_lastdim_kernel_impl\" not implemented for '%s'",
                            mode ? "log_softmax" : "softmax", tl_dtype_scalar_name(gdt));
    if (tl_tensor_numel(output) == 0) return 0;
    const tl_dtype ct = compute_dtype(gdt);
    tl_tensor *g = contig_as(grad, ct), *y = g ? contig_as(output, ct) : NULL;
    tl_tensor *ins[2] = {grad, output};
    tl_tensor *dst = y ? begin_dst(gi, ct, ins, 2) : NULL;
    if (!dst) {
        tl_tensor_release(g);
        tl_tensor_release(y);
        return -1;
    }
    int64_t outer, n, inner;
    split_dims(output, d, &outer, &n, &inner);
    sm_ctx c = {NN_K(ct), tl_tensor_data_ptr(g), tl_tensor_data_ptr(y), tl_tensor_data_ptr(dst), n, inner, 0,
                tl__itemsize(ct), mode, 1};
    sm_launch(&c, outer);
    tl_tensor_release(g);
    tl_tensor_release(y);
    return finish_dst(gi, dst, 0);
}

int tl_impl_softmax_backward_cpu_out(tl_structured *s, tl_tensor *grad_output, tl_tensor *output, int64_t dim,
                                     tl_dtype input_dtype, tl_tensor *grad_input) {
    (void)s; (void)input_dtype;
    return softmax_bwd_impl(grad_output, output, dim, grad_input, 0);
}

int tl_impl_log_softmax_backward_cpu_out(tl_structured *s, tl_tensor *grad_output, tl_tensor *output, int64_t dim,
                                         tl_dtype input_dtype, tl_tensor *out) {
    (void)s; (void)input_dtype;
    return softmax_bwd_impl(grad_output, output, dim, out, 1);
}

/* softmax.int / log_softmax.int (CompositeImplicitAutograd): dtype= converts
 * the input first (through the dispatcher, so autograd sees the cast) */
static tl_tensor *softmax_int(tl_tensor *self, int64_t dim, tl_dtype dtype, int mode) {
    tl_tensor *x = self;
    if (dtype != TL_DTYPE_UNDEFINED) {
        x = tl_ops_to_dtype(self, dtype, false, false, -1);
        if (!x) return NULL;
    }
    tl_tensor *r = mode ? tl_ops__log_softmax(x, dim, false) : tl_ops__softmax(x, dim, false);
    if (x != self) tl_tensor_release(x);
    return r;
}

tl_tensor *tl_native_softmax_int(tl_keyset ks, tl_tensor *self, int64_t dim, tl_dtype dtype) {
    (void)ks;
    return softmax_int(self, dim, dtype, 0);
}

tl_tensor *tl_native_log_softmax_int(tl_keyset ks, tl_tensor *self, int64_t dim, tl_dtype dtype) {
    (void)ks;
    return softmax_int(self, dim, dtype, 1);
}

/* ---------------------------------------------------------- layer_norm */

static int same_shape(const tl_tensor *t, const int64_t *s, int64_t nd) {
    return tl_tensor_ndim(t) == nd && !memcmp(tl_tensor_sizes(t), s, (size_t)nd * sizeof(int64_t));
}

/* PyTorch's _check_layer_norm_inputs; *M rows of *N elements */
static int check_layer_norm(tl_tensor *input, const int64_t *ns, int64_t ns_len, tl_tensor *weight,
                            tl_tensor *bias, int64_t *M, int64_t *N) {
    char a[256], b[256];
    if (ns_len < 1)
        return tl_set_error(TL_ERR_RUNTIME, "Expected normalized_shape to be at least 1-dimensional, i.e., containing "
                                            "at least one element, but got normalized_shape = []");
    fmt_shape(b, sizeof b, ns, ns_len);
    if (weight && !same_shape(weight, ns, ns_len)) {
        fmt_shape(a, sizeof a, tl_tensor_sizes(weight), tl_tensor_ndim(weight));
        return tl_set_error(TL_ERR_RUNTIME, "Expected weight to be of same shape as normalized_shape, but got weight "
                                            "of shape %s and normalized_shape = %s", a, b);
    }
    if (bias && !same_shape(bias, ns, ns_len)) {
        fmt_shape(a, sizeof a, tl_tensor_sizes(bias), tl_tensor_ndim(bias));
        return tl_set_error(TL_ERR_RUNTIME, "Expected bias to be of same shape as normalized_shape, but got bias "
                                            "of shape %s and normalized_shape = %s", a, b);
    }
    const int64_t nd = tl_tensor_ndim(input);
    const int64_t *sz = tl_tensor_sizes(input);
    const int64_t axis = nd - ns_len;
    if (axis < 0 || memcmp(sz + axis, ns, (size_t)ns_len * sizeof(int64_t))) {
        fmt_shape(a, sizeof a, sz, nd);
        char c[256];
        fmt_shape(c, sizeof c, ns, ns_len);
        return tl_set_error(TL_ERR_RUNTIME, "Given normalized_shape=%s, expected input with shape [*%s%s, but got "
                                            "input of size%s", c, ns_len ? ", " : "", c + 1, a);
    }
    *M = 1;
    *N = 1;
    for (int64_t i = 0; i < axis; i++) *M *= sz[i];
    for (int64_t i = axis; i < nd; i++) *N *= sz[i];
    const tl_dtype dt = tl_tensor_dtype(input);
    if (!tl_dtype_is_floating(dt))
        return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"LayerNormKernelImpl\" not implemented for '%s'",
                            tl_dtype_scalar_name(dt));
    tl_tensor *ps[2] = {weight, bias};
    for (int i = 0; i < 2; i++)
        if (ps[i] && tl_tensor_dtype(ps[i]) != dt)
            return tl_set_error(TL_ERR_RUNTIME, "mixed dtype (CPU): expect parameter to have scalar type of %s",
                                tl_dtype_scalar_name(dt));
    return 0;
}

int tl_nn_check_layer_norm(tl_tensor *input, const int64_t *ns, int64_t ns_len, tl_tensor *weight, tl_tensor *bias,
                           int64_t *M, int64_t *N) {
    return check_layer_norm(input, ns, ns_len, weight, bias, M, N);
}

/* mean / rstd shape: input's leading dims, then 1 per normalized dim */
static void stat_shape(const tl_tensor *input, int64_t ns_len, int64_t *shape) {
    const int64_t nd = tl_tensor_ndim(input);
    for (int64_t i = 0; i < nd; i++) shape[i] = i < nd - ns_len ? tl_tensor_sizes(input)[i] : 1;
}

typedef struct {
    const tl_nn_kernels *k;
    const char *x, *w, *b, *g;
    char *y;
    double *mean, *rstd;
    int64_t N, isz;
    double eps;
} ln_ctx;

static void ln_fwd_rows(int64_t b, int64_t e, void *ctx) {
    const ln_ctx *c = ctx;
    for (int64_t r = b; r < e; r++)
        c->k->ln_row(c->x + r * c->N * c->isz, c->w, c->b, c->y + r * c->N * c->isz, c->N, c->eps, c->mean + r,
                     c->rstd + r);
}

static void ln_bwd_rows(int64_t b, int64_t e, void *ctx) {
    const ln_ctx *c = ctx;
    for (int64_t r = b; r < e; r++)
        c->k->ln_bwd_row(c->g + r * c->N * c->isz, c->x + r * c->N * c->isz, c->w, c->y + r * c->N * c->isz, c->N,
                         c->mean[r], c->rstd[r]);
}

/* a double array of m values as a tensor of `shape` and dtype dt */
static tl_tensor *doubles_as(const double *v, int64_t m, int64_t nd, const int64_t *shape, tl_dtype dt) {
    tl_tensor *t = tl_empty(nd, shape, TL_FLOAT64, TL_CPU);
    if (!t) return NULL;
    if (m) memcpy(tl_tensor_data_ptr(t), v, (size_t)m * sizeof(double));
    tl_tensor *r = tl_to_dtype(t, dt, 0);
    tl_tensor_release(t);
    return r;
}

int tl_native_layer_norm_cpu(tl_keyset ks, tl_tensor *input, const int64_t *normalized_shape,
                             int64_t normalized_shape_len, tl_tensor *weight, tl_tensor *bias, double eps,
                             tl_tensor **ret0, tl_tensor **ret1, tl_tensor **ret2) {
    (void)ks;
    int64_t M, N;
    if (check_layer_norm(input, normalized_shape, normalized_shape_len, weight, bias, &M, &N)) return -1;
    const tl_dtype dt = tl_tensor_dtype(input), ct = compute_dtype(dt);
    const int64_t nd = tl_tensor_ndim(input);
    int64_t sshape[MAXD];
    stat_shape(input, normalized_shape_len, sshape);
    tl_tensor *x = NULL, *w = NULL, *b = NULL, *y = NULL, *out = NULL, *mean = NULL, *rstd = NULL;
    double *mv = malloc((size_t)(2 * M + 1) * sizeof(double));
    int rc = -1;
    if (!mv) {
        tl_set_error(TL_ERR_MEMORY, "out of memory");
        goto done;
    }
    if (!(x = contig_as(input, ct)) || (weight && !(w = contig_as(weight, ct))) || (bias && !(b = contig_as(bias, ct))) ||
        !(y = tl_empty(nd, tl_tensor_sizes(input), ct, TL_CPU)))
        goto done;
    if (M > 0 && N > 0) {
        ln_ctx c = {NN_K(ct), tl_tensor_data_ptr(x), w ? tl_tensor_data_ptr(w) : NULL, b ? tl_tensor_data_ptr(b) : NULL,
                    NULL, tl_tensor_data_ptr(y), mv, mv + M, N, tl__itemsize(ct), eps};
        int64_t grain = 16384 / N;
        tl_parallel_for(M, grain > 0 ? grain : 1, ln_fwd_rows, &c);
    } else {
        for (int64_t i = 0; i < 2 * M; i++) mv[i] = N ? 0.0 : NAN;
    }
    if (!(out = tl_to_dtype(y, dt, 0)) || !(mean = doubles_as(mv, M, nd, sshape, dt)) ||
        !(rstd = doubles_as(mv + M, M, nd, sshape, dt)))
        goto done;
    *ret0 = out;
    *ret1 = mean;
    *ret2 = rstd;
    out = mean = rstd = NULL;
    rc = 0;
done:
    free(mv);
    tl_tensor_release(x);
    tl_tensor_release(w);
    tl_tensor_release(b);
    tl_tensor_release(y);
    tl_tensor_release(out);
    tl_tensor_release(mean);
    tl_tensor_release(rstd);
    return rc;
}

/* native_layer_norm_backward's computation (tl_nn.h). grad_weight / grad_bias
 * are column sums over the rows (double accumulators, column blocks across
 * threads) */
typedef struct {
    const char *g, *x;
    const double *mean, *rstd;
    double *gw, *gb;
    int64_t M, N, isz;
    int f64;
} ln_wb_ctx;

static void ln_wb_cols(int64_t b, int64_t e, void *ctx) {
    const ln_wb_ctx *c = ctx;
    for (int64_t j = b; j < e; j++) {
        c->gw[j] = 0;
        c->gb[j] = 0;
    }
    for (int64_t r = 0; r < c->M; r++) {
        const double m = c->mean[r], s = c->rstd[r];
        if (c->f64) {
            const double *g = (const double *)c->g + r * c->N, *x = (const double *)c->x + r * c->N;
            for (int64_t j = b; j < e; j++) {
                c->gw[j] += g[j] * (x[j] - m) * s;
                c->gb[j] += g[j];
            }
        } else {
            const float *g = (const float *)c->g + r * c->N, *x = (const float *)c->x + r * c->N;
            for (int64_t j = b; j < e; j++) {
                c->gw[j] += (double)g[j] * ((double)x[j] - m) * s;
                c->gb[j] += (double)g[j];
            }
        }
    }
}

static double *stats_to_doubles(tl_tensor *t, int64_t M) {
    tl_tensor *d = contig_as(t, TL_FLOAT64);
    if (!d) return NULL;
    if (tl_tensor_numel(d) != M) {
        tl_tensor_release(d);
        tl_set_error(TL_ERR_RUNTIME, "mean and rstd must have one element per normalized row (%lld)", (long long)M);
        return NULL;
    }
    double *v = malloc((size_t)(M + 1) * sizeof(double));
    if (v && M) memcpy(v, tl_tensor_data_ptr(d), (size_t)M * sizeof(double));
    tl_tensor_release(d);
    if (!v) tl_set_error(TL_ERR_MEMORY, "out of memory");
    return v;
}

int tl_nn_layer_norm_backward(tl_tensor *grad_out, tl_tensor *input, const int64_t *normalized_shape,
                              int64_t normalized_shape_len, tl_tensor *mean, tl_tensor *rstd, tl_tensor *weight,
                              tl_tensor *bias, const bool *output_mask, tl_tensor **grad_input,
                              tl_tensor **grad_weight, tl_tensor **grad_bias) {
    *grad_input = *grad_weight = *grad_bias = NULL;
    int64_t M, N;
    if (check_layer_norm(input, normalized_shape, normalized_shape_len, weight, bias, &M, &N)) return -1;
    if (!same_shape(grad_out, tl_tensor_sizes(input), tl_tensor_ndim(input)))
        return tl_set_error(TL_ERR_RUNTIME, "grad_out must have the shape of input");
    const tl_dtype dt = tl_tensor_dtype(input), ct = compute_dtype(dt);
    if (tl_tensor_device(input) == TL_META || tl_tensor_device(grad_out) == TL_META ||
        tl_tensor_device(mean) == TL_META || tl_tensor_device(rstd) == TL_META) {
        /* metadata only (a backward traced over fake / meta tensors): the shapes, no data to read */
        tl_tensor *outs[3] = {NULL, NULL, NULL};
        tl_tensor *like[3] = {input, weight, bias};
        for (int i = 0; i < 3; i++) {
            if (!output_mask[i] || !like[i]) continue;
            if (!(outs[i] = tl_empty(tl_tensor_ndim(like[i]), tl_tensor_sizes(like[i]), dt, TL_META))) {
                for (int j = 0; j < i; j++) tl_tensor_release(outs[j]);
                return -1;
            }
        }
        *grad_input = outs[0];
        *grad_weight = outs[1];
        *grad_bias = outs[2];
        return 0;
    }
    if (tl_tensor_device(input) == TL_CUDA)
        return tl_cuda_layer_norm_backward(grad_out, input, normalized_shape_len, M, N, mean, rstd, weight, bias,
                                           output_mask, grad_input, grad_weight, grad_bias);
    tl_tensor *g = NULL, *x = NULL, *w = NULL, *gx = NULL, *gwt = NULL, *gbt = NULL;
    double *mv = NULL, *rv = NULL, *acc = NULL;
    int rc = -1;
    if (!(g = contig_as(grad_out, ct)) || !(x = contig_as(input, ct)) || (weight && !(w = contig_as(weight, ct))) ||
        !(mv = stats_to_doubles(mean, M)) || !(rv = stats_to_doubles(rstd, M)))
        goto done;
    if (output_mask[0]) {
        if (!(gx = tl_empty(tl_tensor_ndim(input), tl_tensor_sizes(input), ct, TL_CPU))) goto done;
        if (M > 0 && N > 0) {
            ln_ctx c = {NN_K(ct), tl_tensor_data_ptr(x), w ? tl_tensor_data_ptr(w) : NULL, NULL, tl_tensor_data_ptr(g),
                        tl_tensor_data_ptr(gx), mv, rv, N, tl__itemsize(ct), 0};
            int64_t grain = 16384 / N;
            tl_parallel_for(M, grain > 0 ? grain : 1, ln_bwd_rows, &c);
        }
        tl_tensor *r = tl_to_dtype(gx, dt, 0);
        if (!r) goto done;
        *grad_input = r;
    }
    if ((output_mask[1] && weight) || (output_mask[2] && bias)) {
        if (!(acc = malloc((size_t)(2 * N + 1) * sizeof(double)))) {
            tl_set_error(TL_ERR_MEMORY, "out of memory");
            goto done;
        }
        ln_wb_ctx c = {N ? tl_tensor_data_ptr(g) : NULL, N ? tl_tensor_data_ptr(x) : NULL, mv, rv, acc, acc + N, M, N,
                       tl__itemsize(ct), ct == TL_FLOAT64};
        if (N > 0) {
            int64_t grain = M > 0 ? 65536 / M : N;
            tl_parallel_for(N, grain > 0 ? grain : 1, ln_wb_cols, &c);
        }
        if (output_mask[1] && weight) {
            if (!(gwt = doubles_as(acc, N, normalized_shape_len, normalized_shape, dt))) goto done;
            *grad_weight = gwt;
            gwt = NULL;
        }
        if (output_mask[2] && bias) {
            if (!(gbt = doubles_as(acc + N, N, normalized_shape_len, normalized_shape, dt))) goto done;
            *grad_bias = gbt;
            gbt = NULL;
        }
    }
    rc = 0;
done:
    if (rc) {
        tl_tensor_release(*grad_input);
        tl_tensor_release(*grad_weight);
        *grad_input = *grad_weight = NULL;
    }
    free(mv);
    free(rv);
    free(acc);
    tl_tensor_release(g);
    tl_tensor_release(x);
    tl_tensor_release(w);
    tl_tensor_release(gx);
    return rc;
}

/* layer_norm (CompositeImplicitAutograd): the first output of
 * native_layer_norm, whose derivative (NativeLayerNormBackward0) runs
 * tl_nn_layer_norm_backward */
tl_tensor *tl_native_layer_norm_symint(tl_keyset ks, tl_tensor *input, const int64_t *normalized_shape,
                                       int64_t normalized_shape_len, tl_tensor *weight, tl_tensor *bias, double eps,
                                       bool cudnn_enable) {
    (void)ks; (void)cudnn_enable;
    tl_tensor *out = NULL, *mean = NULL, *rstd = NULL;
    if (tl_ops_native_layer_norm(input, normalized_shape, normalized_shape_len, weight, bias, eps, &out, &mean, &rstd))
        return NULL;
    tl_tensor_release(mean);
    tl_tensor_release(rstd);
    return out;
}

/* rms_norm (CompositeImplicitAutograd, PyTorch's rms_norm_symint):
 * x * rsqrt(mean(x * x over the normalized dims) + eps) [* weight]; eps
 * defaults to the dtype's machine epsilon; float16 / bfloat16 are computed in
 * float32 and cast back */
tl_tensor *tl_native_rms_norm_symint(tl_keyset ks, tl_tensor *input, const int64_t *normalized_shape,
                                     int64_t normalized_shape_len, tl_tensor *weight, double eps, bool eps_has) {
    (void)ks;
    int64_t M, N;
    if (check_layer_norm(input, normalized_shape, normalized_shape_len, weight, NULL, &M, &N)) return NULL;
    const tl_dtype dt = tl_tensor_dtype(input);
    if (!eps_has) eps = dt == TL_FLOAT64 ? 2.220446049250313e-16 : dt == TL_FLOAT16 ? 0.0009765625
                        : dt == TL_BFLOAT16 ? 0.0078125 : 1.1920928955078125e-07;
    const int64_t nd = tl_tensor_ndim(input);
    int64_t dims[MAXD];
    for (int64_t i = 0; i < normalized_shape_len; i++) dims[i] = nd - normalized_shape_len + i;
    const tl_scalar one = tl_scalar_from_int(1);
    const tl_dtype ct = compute_dtype(dt);
    tl_tensor *x = NULL, *sq = NULL, *s = NULL, *m = NULL, *me = NULL, *r = NULL, *y = NULL, *yc = NULL, *res = NULL;
    if (!(x = ct == dt ? (tl_tensor_retain(input), input) : tl_ops_to_dtype(input, ct, false, false, -1)) ||
        !(sq = tl_ops_mul_Tensor(x, x)) ||
        !(s = tl_ops_sum_dim_IntList(sq, dims, normalized_shape_len, true, TL_DTYPE_UNDEFINED)) ||
        !(m = tl_ops_mul_Scalar(s, tl_scalar_from_double(1.0 / (double)(N ? N : 1)))) ||
        !(me = tl_ops_add_Scalar(m, tl_scalar_from_double(eps), one)) || !(r = tl_ops_rsqrt(me)) ||
        !(y = tl_ops_mul_Tensor(x, r)) ||
        !(yc = ct == dt ? (tl_tensor_retain(y), y) : tl_ops_to_dtype(y, dt, false, false, -1)))
        goto done;
    res = weight ? tl_ops_mul_Tensor(yc, weight) : (tl_tensor_retain(yc), yc);
done:
    tl_tensor_release(x);
    tl_tensor_release(sq);
    tl_tensor_release(s);
    tl_tensor_release(m);
    tl_tensor_release(me);
    tl_tensor_release(r);
    tl_tensor_release(y);
    tl_tensor_release(yc);
    return res;
}

/* ------------------------------------------------------------- dropout */

static int check_p(double p) {
    if (!(p >= 0 && p <= 1))
        return tl_set_error(TL_ERR_RUNTIME, "dropout probability has to be between 0 and 1, but got %g", p);
    return 0;
}

/* a bool tensor shaped like t: true with probability 1 - p, PyTorch's
 * bernoulli_(1 - p) on the CPU (one 53-bit uniform per element, in order,
 * from the default generator) */
static tl_tensor *keep_mask(tl_tensor *t, double p) {
    tl_tensor *mask = tl_empty(tl_tensor_ndim(t), tl_tensor_sizes(t), TL_BOOL, TL_CPU);
    if (!mask) return NULL;
    const int64_t n = tl_tensor_numel(t);
    tl_generator *gen = tl_default_generator();
    bool *m = tl_tensor_data_ptr(mask);
    tl_generator_lock(gen);
    for (int64_t i = 0; i < n; i++) m[i] = tl_draw_uniform_f64(gen, 0, 1) < 1 - p;
    tl_generator_unlock(gen);
    return mask;
}

int tl_native_native_dropout_cpu(tl_keyset ks, tl_tensor *input, double p, bool train, bool train_has,
                                 tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    if (check_p(p)) return -1;
    if (train_has && !train) {
        tl_tensor *o = tl_clone(input), *m = o ? tl_ones(tl_tensor_ndim(input), tl_tensor_sizes(input), TL_BOOL, TL_CPU) : NULL;
        if (!m) {
            tl_tensor_release(o);
            return -1;
        }
        *ret0 = o;
        *ret1 = m;
        return 0;
    }
    tl_tensor *mask = keep_mask(input, p);
    if (!mask) return -1;
    const double scale = p == 1 ? 0.0 : 1.0 / (1.0 - p);
    tl_tensor *a = tl_ops_mul_Tensor(input, mask);
    tl_tensor *o = a ? tl_ops_mul_Scalar(a, tl_scalar_from_double(scale)) : NULL;
    tl_tensor_release(a);
    if (!o) {
        tl_tensor_release(mask);
        return -1;
    }
    *ret0 = o;
    *ret1 = mask;
    return 0;
}

tl_tensor *tl_native_native_dropout_backward(tl_keyset ks, tl_tensor *grad_output, tl_tensor *mask, double scale) {
    (void)ks;
    /* any mask dtype, promoted with grad_output, as PyTorch's CPU kernel
     * (grad * mask * scale; the Bool check is CUDA's); a float mask can then
     * require grad, and its formula raises in backward */
    tl_tensor *a = tl_ops_mul_Tensor(grad_output, mask);
    if (!a) return NULL;
    tl_tensor *r = tl_ops_mul_Scalar(a, tl_scalar_from_double(scale));
    tl_tensor_release(a);
    return r;
}

/* dropout (CompositeImplicitAutograd): PyTorch's CPU path, input * noise
 * with noise = empty_like(input).bernoulli_(1 - p).div_(1 - p), every step a
 * dispatched operator, so a trace (torchlet.compile, FakeTensorMode) records
 * the draw instead of running it once; train=False is the input itself */
tl_tensor *tl_native_dropout(tl_keyset ks, tl_tensor *input, double p, bool train) {
    (void)ks;
    if (check_p(p)) return NULL;
    if (!train || p == 0) {
        tl_tensor_retain(input);
        return input;
    }
    const tl_dtype dt = tl_tensor_dtype(input);
    if (!tl_dtype_is_floating(dt)) {
        tl_set_error(TL_ERR_RUNTIME, "result type Float can't be cast to the desired output type %s",
                     tl_dtype_scalar_name(dt));
        return NULL;
    }
    tl_tensor *noise = tl_ops_empty_like(input, TL_DTYPE_UNDEFINED, -1, -1, false, false, -1);
    tl_tensor *same = noise ? tl_ops_bernoulli__float(noise, 1 - p, NULL) : NULL; /* in place: noise again */
    if (same && p != 1) {
        tl_tensor_release(same);
        same = tl_ops_div__Scalar(noise, tl_scalar_from_double(1.0 - p));
    }
    tl_tensor *r = same ? tl_ops_mul_Tensor(input, noise) : NULL;
    tl_tensor_release(same);
    tl_tensor_release(noise);
    return r;
}

/* ------------------------------------------------------------ nll_loss */

int tl_nn_nll_check(tl_tensor *self, tl_tensor *target, tl_tensor *weight, int64_t reduction, int64_t *B,
                    int64_t *C) {
    if (check_reduction(reduction)) return -1;
    const int64_t sd = tl_tensor_ndim(self), td = tl_tensor_ndim(target);
    if (sd < 1 || sd > 2) return tl_set_error(TL_ERR_RUNTIME, "input tensor should be 1D or 2D");
    if (td > 1) return tl_set_error(TL_ERR_RUNTIME, "0D or 1D target tensor expected, multi-target not supported");
    const int no_batch = sd == 1 && td == 0;
    if (!no_batch && tl_tensor_size(self, 0) != (td ? tl_tensor_size(target, 0) : 1)) {
        char a[256], b[256];
        fmt_shape(a, sizeof a, tl_tensor_sizes(self), sd);
        fmt_shape(b, sizeof b, tl_tensor_sizes(target), td);
        return tl_set_error(TL_ERR_RUNTIME, "size mismatch (got input: %s, target: %s)", a, b);
    }
    const tl_dtype tdt = tl_tensor_dtype(target);
    if (tdt != TL_INT64 && tdt != TL_UINT8)
        return tl_set_error(TL_ERR_RUNTIME, "expected target dtype to be Long or Byte, but got %s",
                            tl_dtype_scalar_name(tdt));
    *C = tl_tensor_size(self, -1);
    *B = sd == 2 ? tl_tensor_size(self, 0) : 1;
    if (weight && tl_tensor_numel(weight) != *C) {
        char a[256];
        fmt_shape(a, sizeof a, tl_tensor_sizes(weight), tl_tensor_ndim(weight));
        return tl_set_error(TL_ERR_RUNTIME, "weight tensor should be defined either for all %lld classes or no "
                                            "classes but got weight tensor of shape: %s", (long long)*C, a);
    }
    const tl_dtype dt = tl_tensor_dtype(self);
    if (!tl_dtype_is_floating(dt))
        return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"nll_loss_out_frame\" not implemented for '%s'",
                            tl_dtype_scalar_name(dt));
    if (weight && tl_tensor_dtype(weight) != dt)
        return tl_set_error(TL_ERR_RUNTIME, "expected scalar type %s but found %s", tl_dtype_scalar_name(dt),
                            tl_dtype_scalar_name(tl_tensor_dtype(weight)));
    return 0;
}

/* the targets as int64 (a new contiguous tensor), each checked against C */
static tl_tensor *nll_targets(tl_tensor *target, int64_t C, int64_t ignore_index) {
    tl_tensor *t = contig_as(target, TL_INT64);
    if (!t) return NULL;
    const int64_t *tv = tl_tensor_data_ptr(t);
    for (int64_t i = 0; i < tl_tensor_numel(t); i++)
        if (tv[i] != ignore_index && (tv[i] < 0 || tv[i] >= C)) {
            tl_set_error(TL_ERR_INDEX, "Target %lld is out of bounds.", (long long)tv[i]);
            tl_tensor_release(t);
            return NULL;
        }
    return t;
}

/* the address of element (i, c) of a 1-D [C] (i = 0) or 2-D [B, C] tensor */
static char *row_elem_ptr(tl_tensor *x, int64_t i, int64_t c) {
    const int64_t *st = tl_tensor_strides(x);
    const int64_t off = tl_tensor_ndim(x) == 2 ? i * st[0] + c * st[1] : c * st[0];
    return (char *)tl_tensor_data_ptr(x) + off * tl_dtype_itemsize(tl_tensor_dtype(x));
}

static double row_elem(tl_tensor *x, int64_t i, int64_t c) {
    const char *p = row_elem_ptr(x, i, c);
    const tl_dtype dt = tl_tensor_dtype(x);
    if (dt == TL_FLOAT32) return *(const float *)p;
    if (dt == TL_FLOAT64) return *(const double *)p;
    tl_scalar v;
    tl_scalar_load(p, dt, &v);
    return v.kind == TL_SCALAR_DOUBLE ? v.d : (double)v.i;
}

static void row_elem_store(tl_tensor *x, int64_t i, int64_t c, double v) {
    tl_scalar_store(tl_scalar_from_double(v), tl_tensor_dtype(x), row_elem_ptr(x, i, c));
}

int tl_native_nll_loss_forward_cpu(tl_keyset ks, tl_tensor *self, tl_tensor *target, tl_tensor *weight,
                                   int64_t reduction, int64_t ignore_index, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    int64_t B, C;
    if (tl_nn_nll_check(self, target, weight, reduction, &B, &C)) return -1;
    const tl_dtype dt = tl_tensor_dtype(self);
    tl_tensor *w = NULL, *t = NULL, *o = NULL, *tw = NULL;
    int rc = -1;
    if ((weight && !(w = contig_as(weight, TL_FLOAT64))) || !(t = nll_targets(target, C, ignore_index))) goto done;
    const double *wv = w ? tl_tensor_data_ptr(w) : NULL;
    const int64_t *tv = tl_tensor_data_ptr(t);
    /* only the B target entries are read (through the strides): no copy of the input */
    if (reduction == RED_NONE && tl_tensor_ndim(self) == 2) {
        const int64_t sh[1] = {B};
        if (!(o = tl_empty(1, sh, TL_FLOAT64, TL_CPU))) goto done;
        double *ov = tl_tensor_data_ptr(o);
        for (int64_t i = 0; i < B; i++)
            ov[i] = tv[i] == ignore_index ? 0.0 : -(wv ? wv[tv[i]] : 1.0) * row_elem(self, i, tv[i]);
        tw = tl_zeros(0, NULL, dt, TL_CPU);
    } else {
        double total = 0, tot_w = 0;
        for (int64_t i = 0; i < B; i++) {
            if (tv[i] == ignore_index) continue;
            const double wi = wv ? wv[tv[i]] : 1.0;
            total -= wi * row_elem(self, i, tv[i]);
            tot_w += wi;
        }
        if (reduction == RED_MEAN) total = total / tot_w;
        if (reduction == RED_NONE) total = tv[0] == ignore_index ? 0.0 : total; /* 1-D input, 0-dim target */
        if (!(o = tl_scalar_tensor(tl_scalar_from_double(total), TL_FLOAT64, TL_CPU))) goto done;
        tw = tl_scalar_tensor(tl_scalar_from_double(reduction == RED_NONE ? 0.0 : tot_w), dt, TL_CPU);
    }
    if (!tw) goto done;
    tl_tensor *oc = tl_to_dtype(o, dt, 0);
    if (!oc) goto done;
    *ret0 = oc;
    *ret1 = tw;
    tw = NULL;
    rc = 0;
done:
    tl_tensor_release(w);
    tl_tensor_release(t);
    tl_tensor_release(o);
    tl_tensor_release(tw);
    return rc;
}

int tl_meta_nll_loss_backward(tl_structured *s, tl_tensor *grad_output, tl_tensor *self, tl_tensor *target,
                              tl_tensor *weight, int64_t reduction, int64_t ignore_index, tl_tensor *total_weight) {
    (void)ignore_index;
    int64_t B, C;
    if (tl_nn_nll_check(self, target, weight, reduction, &B, &C)) return -1;
    if (tl_tensor_numel(total_weight) != 1) {
        char a[256];
        fmt_shape(a, sizeof a, tl_tensor_sizes(total_weight), tl_tensor_ndim(total_weight));
        return tl_set_error(TL_ERR_RUNTIME, "expected total_weight to be a single element tensor, got: %s (%lld elements)",
                            a, (long long)tl_tensor_numel(total_weight));
    }
    if (reduction == RED_NONE && tl_tensor_ndim(self) == 2) {
        if (tl_tensor_ndim(grad_output) != 1 || tl_tensor_size(grad_output, 0) != B)
            return tl_set_error(TL_ERR_RUNTIME, "Expected a tensor of dimension 1 and tensor.size[0] == %lld but got: "
                                                "dimension %lld and tensor.size[0] == %lld", (long long)B,
                                (long long)tl_tensor_ndim(grad_output),
                                (long long)(tl_tensor_ndim(grad_output) ? tl_tensor_size(grad_output, 0) : 1));
    } else if (tl_tensor_numel(grad_output) != 1) {
        char a[256];
        fmt_shape(a, sizeof a, tl_tensor_sizes(grad_output), tl_tensor_ndim(grad_output));
        return tl_set_error(TL_ERR_RUNTIME, "Expected a single element grad_output tensor, but got: %s", a);
    }
    return tl_structured_set_output(s, 0, tl_tensor_ndim(self), tl_tensor_sizes(self), NULL, tl_tensor_dtype(self));
}

int tl_impl_nll_loss_backward_out_cpu(tl_structured *s, tl_tensor *grad_output, tl_tensor *self, tl_tensor *target,
                                      tl_tensor *weight, int64_t reduction, int64_t ignore_index,
                                      tl_tensor *total_weight, tl_tensor *grad_input) {
    (void)s; (void)self;
    int64_t B = tl_tensor_ndim(self) == 2 ? tl_tensor_size(self, 0) : 1, C = tl_tensor_size(self, -1);
    tl_tensor *g = NULL, *w = NULL, *t = NULL, *tw = NULL;
    int rc = -1;
    if (!(g = contig_as(grad_output, TL_FLOAT64)) || (weight && !(w = contig_as(weight, TL_FLOAT64))) ||
        !(t = nll_targets(target, C, ignore_index)) || !(tw = contig_as(total_weight, TL_FLOAT64)) ||
        tl_zero_(grad_input))
        goto done;
    {
        /* grad_input is zero but for the B target entries, written through its strides */
        const double *gv = tl_tensor_data_ptr(g), *wv = w ? tl_tensor_data_ptr(w) : NULL;
        const int64_t *tv = tl_tensor_data_ptr(t);
        const int per_row = reduction == RED_NONE && tl_tensor_ndim(self) == 2;
        double scale = per_row ? 1.0 : gv[0];
        if (reduction == RED_MEAN) scale /= *(const double *)tl_tensor_data_ptr(tw);
        for (int64_t i = 0; i < B; i++) {
            if (tv[i] == ignore_index) continue;
            row_elem_store(grad_input, i, tv[i], -(wv ? wv[tv[i]] : 1.0) * (per_row ? gv[i] : scale));
        }
    }
    rc = 0;
done:
    tl_tensor_release(g);
    tl_tensor_release(w);
    tl_tensor_release(t);
    tl_tensor_release(tw);
    return rc;
}

/* nll_loss (CompositeImplicitAutograd): output of nll_loss_forward */
tl_tensor *tl_native_nll_loss_symint(tl_keyset ks, tl_tensor *self, tl_tensor *target, tl_tensor *weight,
                                     int64_t reduction, int64_t ignore_index) {
    (void)ks;
    tl_tensor *o = NULL, *tw = NULL;
    if (tl_ops_nll_loss_forward(self, target, weight, reduction, ignore_index, &o, &tw)) return NULL;
    tl_tensor_release(tw);
    return o;
}

/* nll_loss_nd (CompositeImplicitAutograd): any input [N, C, d1, ...] with
 * target [N, d1, ...]: the class dim moved last and everything flattened to
 * 2-D (PyTorch calls nll_loss2d for 4-D; the result is the same) */
tl_tensor *tl_native_nll_loss_nd_symint(tl_keyset ks, tl_tensor *self, tl_tensor *target, tl_tensor *weight,
                                        int64_t reduction, int64_t ignore_index) {
    const int64_t nd = tl_tensor_ndim(self);
    if (nd < 1) {
        tl_set_error(TL_ERR_VALUE, "Expected 1 or more dimensions (got %lld)", (long long)nd);
        return NULL;
    }
    if (nd <= 2) return tl_native_nll_loss_symint(ks, self, target, weight, reduction, ignore_index);
    const int64_t *sz = tl_tensor_sizes(self);
    const int64_t td = tl_tensor_ndim(target);
    int ok = td == nd - 1 && tl_tensor_sizes(target)[0] == sz[0];
    for (int64_t i = 2; ok && i < nd; i++) ok = tl_tensor_sizes(target)[i - 1] == sz[i];
    if (!ok) {
        char a[256], b[256];
        fmt_shape(a, sizeof a, sz + 2, nd - 2);
        fmt_shape(b, sizeof b, tl_tensor_sizes(target) + (td ? 1 : 0), td ? td - 1 : 0);
        if (td != nd - 1 || tl_tensor_sizes(target)[0] != sz[0])
            tl_set_error(TL_ERR_VALUE, "Expected input batch_size (%lld) to match target batch_size (%lld).",
                         (long long)sz[0], (long long)(td ? tl_tensor_sizes(target)[0] : 0));
        else
            tl_set_error(TL_ERR_RUNTIME, "Expected target size %s, got %s", a, b);
        return NULL;
    }
    int64_t perm[MAXD];
    perm[0] = 0;
    for (int64_t i = 2; i < nd; i++) perm[i - 1] = i;
    perm[nd - 1] = 1;
    const int64_t C = sz[1];
    const int64_t flat[2] = {-1, C}, tflat[1] = {-1};
    tl_tensor *p = NULL, *x2 = NULL, *t1 = NULL, *l = NULL, *r = NULL;
    if (!(p = tl_ops_permute(self, perm, nd)) || !(x2 = tl_ops_reshape(p, flat, 2)) ||
        !(t1 = tl_ops_reshape(target, tflat, 1)) ||
        !(l = tl_native_nll_loss_symint(ks, x2, t1, weight, reduction, ignore_index)))
        goto done;
    if (reduction == RED_NONE) {
        r = tl_ops_reshape(l, tl_tensor_sizes(target), td);
    } else {
        r = l;
        l = NULL;
    }
done:
    tl_tensor_release(p);
    tl_tensor_release(x2);
    tl_tensor_release(t1);
    tl_tensor_release(l);
    return r;
}

/* weight (C) viewed to broadcast along the class dim of an nd-dim input */
static tl_tensor *class_weight_view(tl_tensor *weight, int64_t nd, int64_t cdim) {
    int64_t shape[MAXD];
    for (int64_t i = 0; i < nd; i++) shape[i] = 1;
    shape[cdim] = tl_tensor_size(weight, 0);
    return tl_ops_view(weight, shape, nd);
}

/* -(x).sum() under a reduction, x holding per-element, per-class terms:
 * Mean divides by the number of rows (numel / C), NaN when there are none */
static tl_tensor *neg_class_reduce(tl_tensor *x, int64_t reduction, int64_t cdim, int64_t C) {
    tl_tensor *s = NULL, *r = NULL;
    if (reduction == RED_NONE) {
        int64_t cd[1] = {cdim};
        if (!(s = tl_ops_sum_dim_IntList(x, cd, 1, false, TL_DTYPE_UNDEFINED))) return NULL;
        r = tl_ops_neg(s);
    } else {
        if (!(s = tl_ops_sum(x, TL_DTYPE_UNDEFINED))) return NULL;
        const int64_t n = tl_tensor_numel(x);
        if (reduction == RED_MEAN && n == 0) {
            r = tl_ops_fill__Scalar(s, tl_scalar_from_double(NAN));
        } else {
            tl_tensor *ng = tl_ops_neg(s);
            if (ng && reduction == RED_MEAN) {
                r = tl_ops_div_Scalar(ng, tl_scalar_from_int(n / C));
                tl_tensor_release(ng);
            } else {
                r = ng;
            }
        }
    }
    tl_tensor_release(s);
    return r;
}

/* PyTorch's cross_entropy_loss_prob_target: the target holds class
 * probabilities (the input's shape); label smoothing mixes them with the
 * uniform distribution. */
static tl_tensor *cross_entropy_prob_target(tl_tensor *self, tl_tensor *target, tl_tensor *weight, int64_t reduction,
                                            double label_smoothing) {
    const int64_t nd = tl_tensor_ndim(self), cdim = nd == 1 ? 0 : 1, C = tl_tensor_size(self, cdim);
    if (weight && (tl_tensor_ndim(weight) != 1 || tl_tensor_numel(weight) != C)) {
        char a[256];
        fmt_shape(a, sizeof a, tl_tensor_sizes(weight), tl_tensor_ndim(weight));
        tl_set_error(TL_ERR_RUNTIME,
                     "cross_entropy: weight tensor should be defined either for all %lld classes or no classes but "
                     "got weight tensor of shape: %s", (long long)C, a);
        return NULL;
    }
    tl_tensor *lp = NULL, *t1 = NULL, *tgt = NULL, *prod = NULL, *w = NULL, *pw = NULL, *r = NULL;
    if (!(lp = tl_ops__log_softmax(self, cdim, false))) goto done;
    if (label_smoothing > 0.0) {
        if (label_smoothing > 1.0) {
            tl_set_error(TL_ERR_RUNTIME, "label_smoothing must be between 0.0 and 1.0. Got: %g", label_smoothing);
            goto done;
        }
        if (!(t1 = tl_ops_mul_Scalar(target, tl_scalar_from_double(1.0 - label_smoothing))) ||
            !(tgt = tl_ops_add_Scalar(t1, tl_scalar_from_double(label_smoothing / (double)C), tl_scalar_from_int(1))))
            goto done;
    } else {
        tgt = target;
        tl_tensor_retain(tgt);
    }
    if (!(prod = tl_ops_mul_Tensor(lp, tgt))) goto done;
    if (weight) {
        if (!(w = class_weight_view(weight, nd, cdim)) || !(pw = tl_ops_mul_Tensor(prod, w))) goto done;
        r = neg_class_reduce(pw, reduction, cdim, C);
    } else {
        r = neg_class_reduce(prod, reduction, cdim, C);
    }
done:
    tl_tensor_release(lp);
    tl_tensor_release(t1);
    tl_tensor_release(tgt);
    tl_tensor_release(prod);
    tl_tensor_release(w);
    tl_tensor_release(pw);
    return r;
}

/* PyTorch's cross_entropy_loss_label_smoothing (class-index targets):
 * (1 - ls) * nll + ls / C * smooth, smooth = -sum_c w[c] log p[c] with
 * ignored targets zeroed; Mean divides by the summed weights of the
 * targets kept (the count without weights), as nll_loss does. */
static tl_tensor *cross_entropy_label_smoothing(tl_keyset ks, tl_tensor *lp, tl_tensor *target, tl_tensor *weight,
                                                int64_t reduction, int64_t ignore_index, double label_smoothing) {
    const int64_t nd = tl_tensor_ndim(lp), cdim = nd == 1 ? 0 : 1, C = tl_tensor_size(lp, cdim);
    const tl_scalar one = tl_scalar_from_int(1);
    int64_t cd[1] = {cdim};
    const int64_t flat[1] = {-1};
    tl_tensor *nll = NULL, *w = NULL, *lw = NULL, *s = NULL, *keep = NULL, *keepf = NULL, *sm = NULL, *red = NULL,
              *den = NULL, *ft = NULL, *ftf = NULL, *tw = NULL, *kf = NULL, *twk = NULL, *a = NULL, *b = NULL,
              *res = NULL;
    if (!(nll = tl_native_nll_loss_nd_symint(ks, lp, target, weight, reduction, ignore_index))) goto done;
    if (weight) {
        if (!(w = class_weight_view(weight, nd, cdim)) || !(lw = tl_ops_mul_Tensor(lp, w))) goto done;
    } else {
        lw = lp;
        tl_tensor_retain(lw);
    }
    /* smooth = -sum_c (w log p), zero where target == ignore_index (negated below) */
    if (!(s = tl_ops_sum_dim_IntList(lw, cd, 1, false, TL_DTYPE_UNDEFINED)) ||
        !(keep = tl_ops_ne_Scalar(target, tl_scalar_from_int(ignore_index))) ||
        !(keepf = tl_ops_to_dtype(keep, tl_tensor_dtype(s), false, false, -1)) || !(sm = tl_ops_mul_Tensor(s, keepf)))
        goto done;
    if (reduction == RED_NONE) {
        red = sm;
        tl_tensor_retain(red);
    } else {
        if (!(red = tl_ops_sum(sm, TL_DTYPE_UNDEFINED))) goto done;
        if (reduction == RED_MEAN) {
            if (weight) {   /* the weights of the kept targets (ignored ones read class 0, then zeroed) */
                if (!(ft = tl_ops_where_ScalarOther(keep, target, tl_scalar_from_int(0))) ||
                    !(ftf = tl_ops_reshape(ft, flat, 1)) || !(tw = tl_ops_index_select(weight, 0, ftf)) ||
                    !(kf = tl_ops_reshape(keepf, flat, 1)) || !(twk = tl_ops_mul_Tensor(tw, kf)) ||
                    !(den = tl_ops_sum(twk, TL_DTYPE_UNDEFINED)))
                    goto done;
            } else if (!(den = tl_ops_sum(keepf, TL_DTYPE_UNDEFINED))) {
                goto done;
            }
            tl_tensor *r2 = tl_ops_div_Tensor(red, den);
            if (!r2) goto done;
            tl_tensor_release(red);
            red = r2;
        }
    }
    /* (1 - ls) * nll - ls / C * red   (red holds sums of log p, hence the minus) */
    if (!(a = tl_ops_mul_Scalar(nll, tl_scalar_from_double(1.0 - label_smoothing))) ||
        !(b = tl_ops_mul_Scalar(red, tl_scalar_from_double(label_smoothing / (double)C))))
        goto done;
    res = tl_ops_sub_Tensor(a, b, one);
done:
    tl_tensor_release(nll);
    tl_tensor_release(w);
    tl_tensor_release(lw);
    tl_tensor_release(s);
    tl_tensor_release(keep);
    tl_tensor_release(keepf);
    tl_tensor_release(sm);
    tl_tensor_release(red);
    tl_tensor_release(den);
    tl_tensor_release(ft);
    tl_tensor_release(ftf);
    tl_tensor_release(tw);
    tl_tensor_release(kf);
    tl_tensor_release(twk);
    tl_tensor_release(a);
    tl_tensor_release(b);
    return res;
}

static bool same_sizes(tl_tensor *a, tl_tensor *b) {
    const int64_t n = tl_tensor_ndim(a);
    if (n != tl_tensor_ndim(b)) return false;
    for (int64_t i = 0; i < n; i++)
        if (tl_tensor_sizes(a)[i] != tl_tensor_sizes(b)[i]) return false;
    return true;
}

/* cross_entropy_loss (CompositeImplicitAutograd), PyTorch's dispatch: a
 * target of the input's shape holds class probabilities; otherwise class
 * indices, through log_softmax over the class dim (1, or 0 without a batch
 * dim) and nll_loss_nd, with label smoothing when asked. */
tl_tensor *tl_native_cross_entropy_loss_symint(tl_keyset ks, tl_tensor *self, tl_tensor *target, tl_tensor *weight,
                                               int64_t reduction, int64_t ignore_index, double label_smoothing) {
    if (check_reduction(reduction)) return NULL;
    const int64_t nd = tl_tensor_ndim(self);
    if (nd < 1) {
        tl_set_error(TL_ERR_INDEX, "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
        return NULL;
    }
    if (same_sizes(self, target)) {
        if (!tl_dtype_is_floating(tl_tensor_dtype(target))) {
            tl_set_error(TL_ERR_RUNTIME, "Expected floating point type for target with class probabilities, got %s",
                         tl_dtype_scalar_name(tl_tensor_dtype(target)));
            return NULL;
        }
        if (ignore_index >= 0) {
            tl_set_error(TL_ERR_RUNTIME, "ignore_index is not supported for floating point target");
            return NULL;
        }
        return cross_entropy_prob_target(self, target, weight, reduction, label_smoothing);
    }
    if (label_smoothing > 1.0) {
        tl_set_error(TL_ERR_RUNTIME, "label_smoothing must be between 0.0 and 1.0. Got: %g", label_smoothing);
        return NULL;
    }
    const int64_t cdim = nd == 1 ? 0 : 1;
    tl_tensor *lp = tl_ops__log_softmax(self, cdim, false);
    if (!lp) return NULL;
    tl_tensor *r = label_smoothing > 0.0
                       ? cross_entropy_label_smoothing(ks, lp, target, weight, reduction, ignore_index, label_smoothing)
                       : tl_native_nll_loss_nd_symint(ks, lp, target, weight, reduction, ignore_index);
    tl_tensor_release(lp);
    return r;
}

/* ------------------------------------------------------------ mse_loss */

static tl_tensor *mse_compute(tl_tensor *self, tl_tensor *target, int64_t reduction) {
    if (check_reduction(reduction)) return NULL;
    const tl_scalar one = tl_scalar_from_int(1);
    tl_tensor *d = tl_ops_sub_Tensor(self, target, one);
    if (!d) return NULL;
    if (!tl_dtype_is_floating(tl_tensor_dtype(d))) {
        tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"mse_cpu\" not implemented for '%s'",
                     tl_dtype_scalar_name(tl_tensor_dtype(d)));
        tl_tensor_release(d);
        return NULL;
    }
    tl_tensor *sq = tl_ops_mul_Tensor(d, d);
    tl_tensor_release(d);
    if (!sq || reduction == RED_NONE) return sq;
    tl_tensor *s = tl_ops_sum(sq, TL_DTYPE_UNDEFINED);
    const int64_t n = tl_tensor_numel(sq);
    tl_tensor_release(sq);
    if (!s || reduction == RED_SUM) return s;
    tl_tensor *m = tl_ops_div_Scalar(s, tl_scalar_from_double((double)n));
    tl_tensor_release(s);
    return m;
}

tl_tensor *tl_native_mse_loss_cpu(tl_keyset ks, tl_tensor *self, tl_tensor *target, int64_t reduction) {
    (void)ks;
    return mse_compute(self, target, reduction);
}

tl_tensor *tl_native_mse_loss_out_cpu(tl_keyset ks, tl_tensor *self, tl_tensor *target, int64_t reduction,
                                      tl_tensor *out) {
    (void)ks;
    tl_tensor *r = mse_compute(self, target, reduction);
    if (!r) return NULL;
    int rc = tl_resize_(out, tl_tensor_ndim(r), tl_tensor_sizes(r));
    if (rc == 0) rc = tl_copy_(out, r);
    tl_tensor_release(r);
    if (rc) return NULL;
    tl_tensor_bump_version(out);
    tl_tensor_retain(out);
    return out;
}

/* mse_loss_backward (CompositeImplicitAutograd here, CPU in PyTorch): built
 * from differentiable operators, so double backward records itself.
 * grad_input = 2 * (self - target) * grad_output [/ numel for Mean] */
tl_tensor *tl_native_mse_loss_backward(tl_keyset ks, tl_tensor *grad_output, tl_tensor *self, tl_tensor *target,
                                       int64_t reduction) {
    (void)ks;
    if (check_reduction(reduction)) return NULL;
    const tl_scalar one = tl_scalar_from_int(1);
    tl_tensor *d = tl_ops_sub_Tensor(self, target, one);
    if (!d) return NULL;
    double k = 2.0;
    if (reduction == RED_MEAN) k /= (double)tl_tensor_numel(d);
    tl_tensor *a = tl_ops_mul_Scalar(d, tl_scalar_from_double(k));
    tl_tensor_release(d);
    if (!a) return NULL;
    tl_tensor *r = tl_ops_mul_Tensor(a, grad_output);
    tl_tensor_release(a);
    return r;
}
