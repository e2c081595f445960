/* Fractional max pooling: fractional_max_pool2d / fractional_max_pool3d and
 * their backward ops (docs/NN.md "Fractional max pooling").
 *
 * PyTorch 2.13's CPU kernels (FractionalMaxPool2d.cpp / 3d.cpp and
 * generate_intervals of FractionalMaxPooling.h): per plane and spatial dim,
 * window starts from the plane's random sample u and alpha = (in - pool) /
 * (out - 1): start[i] = (int)((i + u) * alpha) - (int)(u * alpha), the last
 * start in - pool. The arithmetic is in the input's dtype (float16 /
 * bfloat16 round after every operation, as c10::Half / c10::BFloat16 do), so
 * the same _random_samples give PyTorch's windows. A window's maximum: the
 * first of equal values, a NaN replaces the running maximum (the last NaN
 * wins); indices are flat offsets within the plane. 2-d runs as 3-d with a
 * unit time dim. Planes go to the thread pool; each backward plane adds
 * only into its own input plane, in PyTorch's output order. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tl_error.h"
#include "tl_half.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/fractional_max_pool2d.h"
#include "ops/fractional_max_pool2d_backward.h"
#include "ops/fractional_max_pool3d.h"
#include "ops/fractional_max_pool3d_backward.h"
#include "tl_tensor.h"
#include "nn_common.h"

typedef struct {
    int nd;              /* 2 or 3 */
    int64_t in[3], out[3], k[3]; /* (T, H, W); T = 1 for 2-d */
    int64_t N, C, planes; /* batch (1 unbatched), channels, N * C */
} fmp_geom;

/* v rounded to the input dtype, as each c10::Half / c10::BFloat16 operation's result */
static float round_as(tl_dtype dt, float v) {
    if (dt == TL_FLOAT16) return tl_f16_to_f32(tl_f32_to_f16(v));
    if (dt == TL_BFLOAT16) return tl_bf16_to_f32(tl_f32_to_bf16(v));
    return v;
}

/* generate_intervals<scalar_t>: the window starts of one dim (seq[out]) */
static void intervals(tl_dtype dt, double sample, int64_t in, int64_t out, int64_t pool, int64_t *seq) {
    if (out > 1) {
        if (dt == TL_FLOAT64) {
            const double alpha = (double)(in - pool) / (double)(out - 1);
            for (int64_t i = 0; i < out - 1; i++)
                seq[i] = (int64_t)(int)(((double)i + sample) * alpha) - (int64_t)(int)(sample * alpha);
        } else {
            const float u = (float)sample;
            const float alpha = round_as(dt, round_as(dt, (float)(in - pool)) / round_as(dt, (float)(out - 1)));
            for (int64_t i = 0; i < out - 1; i++) {
                const float a = round_as(dt, round_as(dt, (float)i) + u);
                seq[i] = (int64_t)(int)round_as(dt, a * alpha) - (int64_t)(int)round_as(dt, u * alpha);
            }
        }
    }
    if (out > 0) seq[out - 1] = in - pool;
}

typedef struct {
    const fmp_geom *g;
    tl_dtype dt, ct;  /* input dtype, compute dtype (float32 / float64) */
    const void *x;    /* input planes (ct) */
    const void *u;    /* samples [N', C, nd] (ct) */
    void *y;          /* output planes (ct) */
    int64_t *ind;     /* indices */
    const void *go;   /* backward: grad_output (ct) */
    void *gi;         /* backward: grad_input (ct) */
    int failed;       /* forward: a worker could not allocate its window starts */
} fmp_ctx;

static double load(tl_dtype ct, const void *p, int64_t i) {
    return ct == TL_FLOAT64 ? ((const double *)p)[i] : ((const float *)p)[i];
}

static void fwd_planes(int64_t b, int64_t e, void *vc) {
    fmp_ctx *c = vc;
    const fmp_geom *g = c->g;
    const int64_t IL = g->in[0] * g->in[1] * g->in[2], OL = g->out[0] * g->out[1] * g->out[2];
    const int64_t nmax = g->out[0] + g->out[1] + g->out[2];
    int64_t *seq = malloc((size_t)(nmax > 0 ? nmax : 1) * sizeof(int64_t));
    if (!seq) {
        __atomic_store_n(&c->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    for (int64_t p = b; p < e; p++) {
        /* samples: [T, H, W] in 3-d, [W, H] in 2-d (PyTorch's order) */
        int64_t *st = seq, *sh = seq + g->out[0], *sw = sh + g->out[1];
        const int64_t ub = p * g->nd;
        if (g->nd == 3) {
            intervals(c->dt, load(c->ct, c->u, ub), g->in[0], g->out[0], g->k[0], st);
            intervals(c->dt, load(c->ct, c->u, ub + 1), g->in[1], g->out[1], g->k[1], sh);
            intervals(c->dt, load(c->ct, c->u, ub + 2), g->in[2], g->out[2], g->k[2], sw);
        } else {
            st[0] = 0;
            intervals(c->dt, load(c->ct, c->u, ub), g->in[2], g->out[2], g->k[2], sw);
            intervals(c->dt, load(c->ct, c->u, ub + 1), g->in[1], g->out[1], g->k[1], sh);
        }
        int64_t *ind = c->ind + p * OL;
        for (int64_t t = 0; t < g->out[0]; t++)
            for (int64_t h = 0; h < g->out[1]; h++)
                for (int64_t w = 0; w < g->out[2]; w++) {
                    const int64_t t0 = st[t], h0 = sh[h], w0 = sw[w];
                    int64_t best = (t0 * g->in[1] + h0) * g->in[2] + w0;
                    double m = -INFINITY;
                    for (int64_t t2 = t0; t2 < t0 + g->k[0]; t2++)
                        for (int64_t h2 = h0; h2 < h0 + g->k[1]; h2++)
                            for (int64_t w2 = w0; w2 < w0 + g->k[2]; w2++) {
                                const int64_t i = (t2 * g->in[1] + h2) * g->in[2] + w2;
                                const double v = load(c->ct, c->x, p * IL + i);
                                if (v > m || isnan(v)) {
                                    m = v;
                                    best = i;
                                }
                            }
                    const int64_t o = (t * g->out[1] + h) * g->out[2] + w;
                    ind[o] = best;
                    if (c->ct == TL_FLOAT64)
                        ((double *)c->y)[p * OL + o] = m;
                    else
                        ((float *)c->y)[p * OL + o] = (float)m;
                }
    }
    free(seq);
}

/* grad_input[p][ind] += grad_output[p], in the input dtype's arithmetic */
static void bwd_planes(int64_t b, int64_t e, void *vc) {
    const fmp_ctx *c = vc;
    const fmp_geom *g = c->g;
    const int64_t IL = g->in[0] * g->in[1] * g->in[2], OL = g->out[0] * g->out[1] * g->out[2];
    for (int64_t p = b; p < e; p++) {
        const int64_t *ind = c->ind + p * OL;
        if (c->ct == TL_FLOAT64) {
            double *gi = (double *)c->gi + p * IL;
            const double *go = (const double *)c->go + p * OL;
            for (int64_t o = 0; o < OL; o++) gi[ind[o]] += go[o];
        } else {
            float *gi = (float *)c->gi + p * IL;
            const float *go = (const float *)c->go + p * OL;
            for (int64_t o = 0; o < OL; o++) gi[ind[o]] = round_as(c->dt, gi[ind[o]] + go[o]);
        }
    }
}

/* ------------------------------------------------------------ checks */

/* PyTorch's meta checks: list sizes, input rank, non-empty non-batch dims,
 * pool against input per dim (the forward only); fills g */
static int fmp_geom_of(const tl_tensor *input, const int64_t *ks, int64_t ks_len, const int64_t *os, int64_t os_len,
                       int nd, bool check_pool, fmp_geom *g) {
    const char *fn = nd == 2 ? "fractional_max_pool2d()" : "fractional_max_pool3d_out()";
    const char *of = nd == 2 ? "Ints" : "three Ints";
    char a[256];
    if (ks_len != nd)
        return tl_set_error(TL_ERR_RUNTIME, "fractional_max_pool%dd: kernel_size must either be a single Int or tuple "
                                            "of %s", nd, of);
    if (os_len != nd)
        return tl_set_error(TL_ERR_RUNTIME, "fractional_max_pool%dd: output_size must either be a single Int or tuple "
                                            "of %s", nd, of);
    const int64_t ndim = tl_tensor_ndim(input);
    const int64_t *sz = tl_tensor_sizes(input);
    fmt_shape(a, sizeof a, sz, ndim);
    if (ndim != nd + 1 && ndim != nd + 2)
        return tl_set_error(TL_ERR_RUNTIME, "%s: Expected %dD or %dD tensor, but got: %s", fn, nd + 1, nd + 2, a);
    for (int64_t i = 1; i < ndim; i++)
        if (sz[i] <= 0)
            return tl_set_error(TL_ERR_RUNTIME, "%s: Expected input to have non-zero size for non-batch dimensions, "
                                                "but got%s with dimension %lld being empty.", fn, a, (long long)i);
    const int batched = ndim == nd + 2;
    g->nd = nd;
    g->N = batched ? sz[0] : 1;
    g->C = sz[batched];
    g->planes = g->N * g->C;
    const int lead = 3 - nd;
    for (int i = 0; i < 3; i++) {
        g->in[i] = i < lead ? 1 : sz[ndim - 3 + i];
        g->out[i] = i < lead ? 1 : os[i - lead];
        g->k[i] = i < lead ? 1 : ks[i - lead];
    }
    /* 2-d: H then W, the window may end at the last row; 3-d (PyTorch's
     * stricter check): T, W, H, the window must end before it */
    static const char *const what[3] = {"time", "height", "width"};
    static const int order2[2] = {1, 2}, order3[3] = {0, 2, 1};
    for (int j = 0; j < nd && check_pool; j++) {
        const int i = nd == 2 ? order2[j] : order3[j];
        const int64_t end = g->out[i] + g->k[i] - 1;
        if (nd == 2 ? end > g->in[i] : end >= g->in[i])
            return tl_set_error(TL_ERR_RUNTIME, "%s: pool %s %lld too large relative to input %s %lld", fn, what[i],
                                (long long)g->k[i], what[i], (long long)g->in[i]);
    }
    return 0;
}

static int check_samples(const tl_tensor *input, const tl_tensor *u, const fmp_geom *g) {
    if (tl_tensor_ndim(u) != 3)
        return tl_set_error(TL_ERR_RUNTIME, "Expect _random_samples to have 3 dimensions, got %lld",
                            (long long)tl_tensor_ndim(u));
    if (tl_tensor_dtype(u) != tl_tensor_dtype(input))
        return tl_set_error(TL_ERR_RUNTIME, "Expect _random_samples to have the same dtype as input");
    const int64_t *s = tl_tensor_sizes(u);
    if (s[0] < g->N) return tl_set_error(TL_ERR_RUNTIME, "Expect _random_samples.size(0) no less then input batch size.");
    if (s[1] != g->C) return tl_set_error(TL_ERR_RUNTIME, "Expect _random_samples.size(1) equals to input channel size.");
    if (s[2] != g->nd)
        return tl_set_error(TL_ERR_RUNTIME, "Expect _random_samples.size(2) equals to %d; got %lld.", g->nd,
                            (long long)s[2]);
    return 0;
}

static int check_floating(const tl_tensor *t, const char *name) {
    const tl_dtype dt = tl_tensor_dtype(t);
    if (!tl_dtype_is_floating(dt))
        return tl_set_error(TL_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", name, tl_dtype_scalar_name(dt));
    return 0;
}

/* the output shape: the input's leading dims, then out[] */
static void out_shape(const tl_tensor *input, const fmp_geom *g, int64_t *shape) {
    const int64_t ndim = tl_tensor_ndim(input);
    memcpy(shape, tl_tensor_sizes(input), (size_t)ndim * sizeof(int64_t));
    for (int i = 3 - g->nd; i < 3; i++) shape[ndim - 3 + i] = g->out[i];
}

/* ct-typed contiguous tensor r (consumed) in dtype dt */
static tl_tensor *as_dtype(tl_tensor *r, tl_dtype dt) {
    if (!r || tl_tensor_dtype(r) == dt) return r;
    tl_tensor *o = tl_to_dtype(r, dt, 0);
    tl_tensor_release(r);
    return o;
}

static int fmp_forward(tl_tensor *self, const int64_t *ks, int64_t ks_len, const int64_t *os, int64_t os_len,
                       tl_tensor *samples, int nd, tl_tensor **ret0, tl_tensor **ret1) {
    *ret0 = *ret1 = NULL;
    fmp_geom g;
    if (fmp_geom_of(self, ks, ks_len, os, os_len, nd, true, &g) || check_samples(self, samples, &g) ||
        check_floating(self, nd == 2 ? "fractional_max_pool2d_out_frame" : "fractional_max_pool3d_out_frame"))
        return -1;
    int64_t shape[5];
    out_shape(self, &g, shape);
    const int64_t ndim = tl_tensor_ndim(self);
    for (int64_t i = 0; i < ndim; i++)
        if (shape[i] < 0) {
            char a[256];
            fmt_shape(a, sizeof a, shape, ndim);
            return tl_set_error(TL_ERR_RUNTIME, "Trying to create tensor with negative dimension %lld: %s",
                                (long long)shape[i], a);
        }
    const tl_dtype dt = tl_tensor_dtype(self), ct = compute_dtype(dt);
    tl_tensor *x = contig_as(self, ct), *u = x ? contig_as(samples, ct) : NULL;
    tl_tensor *y = u ? tl_empty(ndim, shape, ct, TL_CPU) : NULL, *ind = y ? tl_empty(ndim, shape, TL_INT64, TL_CPU) : NULL;
    int rc = ind ? 0 : -1;
    if (!rc && tl_tensor_numel(y) > 0) {
        fmp_ctx c = {&g, dt, ct, tl_tensor_data_ptr(x), tl_tensor_data_ptr(u), tl_tensor_data_ptr(y),
                     tl_tensor_data_ptr(ind), NULL, NULL, 0};
        const int64_t per = g.out[0] * g.out[1] * g.out[2] * g.k[0] * g.k[1] * g.k[2];
        tl_parallel_for(g.planes, per > 0 && 65536 / per > 0 ? 65536 / per : 1, fwd_planes, &c);
        if (c.failed) rc = tl_set_error(TL_ERR_MEMORY, "fractional_max_pool: out of memory");
    }
    tl_tensor_release(x);
    tl_tensor_release(u);
    if (rc) {
        tl_tensor_release(y);
        tl_tensor_release(ind);
        return -1;
    }
    *ret0 = as_dtype(y, dt);
    *ret1 = ind;
    if (!*ret0) {
        tl_tensor_release(ind);
        *ret1 = NULL;
        return -1;
    }
    return 0;
}

static tl_tensor *fmp_backward(tl_tensor *grad_output, tl_tensor *self, const int64_t *ks, int64_t ks_len,
                               const int64_t *os, int64_t os_len, tl_tensor *indices, int nd) {
    fmp_geom g;
    if (fmp_geom_of(self, ks, ks_len, os, os_len, nd, false, &g)) return NULL;
    const int64_t ndim = tl_tensor_ndim(self);
    int64_t shape[5];
    out_shape(self, &g, shape);
    const int64_t gnd = tl_tensor_ndim(grad_output);
    const int64_t *gs = tl_tensor_sizes(grad_output);
    /* PyTorch's per-dim messages (3-d: time / height / width; 2-d: one) */
    static const char *const what[3] = {"time", "height", "width"};
    for (int i = 3 - nd; i < 3; i++) {
        const int64_t d = ndim - 3 + i;
        if (gnd != ndim || gs[d] != shape[d]) {
            if (nd == 2) return tl_set_error(TL_ERR_RUNTIME, "fractional_max_pool2d_backward(): gradOutput sizes unexpected"), NULL;
            return tl_set_error(TL_ERR_RUNTIME, "fractional_max_pool3d_backward_out(): gradOutput %s unexpected",
                                what[i]), NULL;
        }
    }
    /* leading dims and the indices' shape (PyTorch's 3-d kernel does not check them; reading past them is no option) */
    if (memcmp(gs, shape, (size_t)ndim * sizeof(int64_t)))
        return tl_set_error(TL_ERR_RUNTIME, "fractional_max_pool%dd_backward(): gradOutput sizes unexpected", nd), NULL;
    if (tl_tensor_ndim(indices) != ndim || memcmp(tl_tensor_sizes(indices), shape, (size_t)ndim * sizeof(int64_t)))
        return tl_set_error(TL_ERR_RUNTIME, "fractional_max_pool%dd_backward(): indices sizes unexpected", nd), NULL;
    const tl_dtype dt = tl_tensor_dtype(self);
    if (tl_tensor_dtype(grad_output) != dt)
        return tl_set_error(TL_ERR_RUNTIME, "expected scalar type %s but found %s", tl_dtype_scalar_name(dt),
                            tl_dtype_scalar_name(tl_tensor_dtype(grad_output))), NULL;
    if (check_floating(self, nd == 2 ? "fractional_max_pool2d_backward_out_frame"
                                     : "fractional_max_pool3d_backward_out_frame"))
        return NULL;
    const tl_dtype ct = compute_dtype(dt);
    tl_tensor *go = contig_as(grad_output, ct), *ind = go ? contig_as(indices, TL_INT64) : NULL;
    tl_tensor *gi = ind ? tl_zeros(ndim, tl_tensor_sizes(self), ct, TL_CPU) : NULL;
    if (!gi) goto done;
    const int64_t *v = tl_tensor_data_ptr(ind), IL = g.in[0] * g.in[1] * g.in[2];
    for (int64_t i = 0, n = tl_tensor_numel(ind); i < n; i++)
        if (v[i] < 0 || v[i] >= IL) {
            tl_set_error(TL_ERR_RUNTIME, "fractional_max_pool%dd_backward(): index %lld out of range for an input "
                                         "plane of %lld elements", nd, (long long)v[i], (long long)IL);
            tl_tensor_release(gi);
            gi = NULL;
            goto done;
        }
    fmp_ctx c = {&g, dt, ct, NULL, NULL, NULL, (int64_t *)v, tl_tensor_data_ptr(go), tl_tensor_data_ptr(gi), 0};
    const int64_t OL = g.out[0] * g.out[1] * g.out[2];
    if (OL > 0) tl_parallel_for(g.planes, OL > 0 && 65536 / OL > 0 ? 65536 / OL : 1, bwd_planes, &c);
done:
    tl_tensor_release(go);
    tl_tensor_release(ind);
    return as_dtype(gi, dt);
}

/* ------------------------------------------------------------ operators */

int tl_native_fractional_max_pool2d_cpu(tl_keyset ks, tl_tensor *self, const int64_t *kernel_size,
                                        int64_t kernel_size_len, const int64_t *output_size, int64_t output_size_len,
                                        tl_tensor *random_samples, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    return fmp_forward(self, kernel_size, kernel_size_len, output_size, output_size_len, random_samples, 2, ret0,
                       ret1);
}

int tl_native_fractional_max_pool3d_cpu(tl_keyset ks, tl_tensor *self, const int64_t *kernel_size,
                                        int64_t kernel_size_len, const int64_t *output_size, int64_t output_size_len,
                                        tl_tensor *random_samples, tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    return fmp_forward(self, kernel_size, kernel_size_len, output_size, output_size_len, random_samples, 3, ret0,
                       ret1);
}

tl_tensor *tl_native_fractional_max_pool2d_backward_cpu(tl_keyset ks, tl_tensor *grad_output, tl_tensor *self,
                                                        const int64_t *kernel_size, int64_t kernel_size_len,
                                                        const int64_t *output_size, int64_t output_size_len,
                                                        tl_tensor *indices) {
    (void)ks;
    return fmp_backward(grad_output, self, kernel_size, kernel_size_len, output_size, output_size_len, indices, 2);
}

tl_tensor *tl_native_fractional_max_pool3d_backward_cpu(tl_keyset ks, tl_tensor *grad_output, tl_tensor *self,
                                                        const int64_t *kernel_size, int64_t kernel_size_len,
                                                        const int64_t *output_size, int64_t output_size_len,
                                                        tl_tensor *indices) {
    (void)ks;
    return fmp_backward(grad_output, self, kernel_size, kernel_size_len, output_size, output_size_len, indices, 3);
}
