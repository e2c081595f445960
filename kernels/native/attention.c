/* Attention: scaled_dot_product_attention
 * (CompositeImplicitAutograd) and PyTorch's fused CPU path,
 * _scaled_dot_product_flash_attention_for_cpu and its backward.
 *
 * scaled_dot_product_attention picks the fused op under the conditions of
 * PyTorch's CPU sdp dispatch (use_flash_attention_cpp: no dropout, 4-D
 * inputs, equal batch sizes and heads (or enable_gqa), one head dim, a 2-D
 * or 4-D mask that needs no grad, non-empty sequences, last-dim stride 1,
 * a floating dtype); everything else takes the math path (matmul, softmax,
 * matmul, each recorded by autograd). The fused forward returns the output
 * in PyTorch's layout (B, L, H, E) seen as (B, H, L, E), so the usual
 * `transpose(1, 2).reshape(B, L, H * E)` after attention is a view, and a
 * float32 logsumexp (B, H, L) that the backward recomputes the
 * probabilities from. The per-ISA tile loops are in
 * kernels/cpu/attention_kernel.c. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "tl_autograd.h"
#include "tl_error.h"
#include "tl_internal.h"
#include "tl_kernel.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/_scaled_dot_product_flash_attention_for_cpu.h"
#include "ops/_scaled_dot_product_flash_attention_for_cpu_backward.h"
#include "ops/_softmax.h"
#include "ops/add.h"
#include "ops/amax.h"
#include "ops/dropout.h"
#include "ops/eq.h"
#include "ops/matmul.h"
#include "ops/mul.h"
#include "ops/scaled_dot_product_attention.h"
#include "ops/transpose.h"
#include "ops/where.h"
#include "tl_tensor.h"
#include "tl_blas.h"
#include "../cpu/attention_kernel.h"

TL_DEFINE_STUB(tl_attn_stub, tl_attn_table)
#define ATTN_K(ct) (&(*(const tl_attn_table_t *)tl_attn_stub.current)[(ct) == TL_FLOAT64 ? 1 : 0])

#define FA "scaled_dot_product_attention_flash_attention: "

static tl_dtype compute_dtype(tl_dtype dt) { return dt == TL_FLOAT64 ? TL_FLOAT64 : TL_FLOAT32; }

static bool is_attn_dtype(tl_dtype dt) {
    return dt == TL_FLOAT32 || dt == TL_FLOAT64 || dt == TL_FLOAT16 || dt == TL_BFLOAT16;
}

/* x (B, H, T, E) as the kernel reads it: in dtype ct, last-dim stride 1,
 * rows at least E apart and strides within the BLAS's 32-bit integers; a
 * view of x itself when it already is (the seed's transposed views are),
 * else a contiguous copy */
static tl_tensor *kernel_view(tl_tensor *x, tl_dtype ct) {
    const int64_t *sz = tl_tensor_sizes(x), *st = tl_tensor_strides(x);
    bool ok = tl_tensor_dtype(x) == ct && (sz[3] <= 1 || st[3] == 1) &&
              (sz[2] <= 1 || (st[2] >= sz[3] && st[2] <= TL_BLAS_INT_MAX));
    if (ok) {
        tl_tensor_retain(x);
        return x;
    }
    tl_tensor *a = tl_to_dtype(x, ct, 0);
    if (!a) return NULL;
    tl_tensor *c = tl_contiguous(a);
    tl_tensor_release(a);
    return c;
}

/* (b, h, row) element strides of a 4-D tensor (or (b, h, row) of a 3-D one
 * when nd == 3) */
static void strides3(const tl_tensor *t, int64_t out[3]) {
    const int64_t *st = tl_tensor_strides(t);
    for (int i = 0; i < 3; i++) out[i] = st[i];
}

/* PyTorch's layout of the fused op's results: (B, H, T, E) stored as (B, T, H, E) */
static tl_tensor *bthe_empty(int64_t B, int64_t H, int64_t T, int64_t E, tl_dtype dt) {
    const int64_t sz[4] = {B, H, T, E}, st[4] = {T * H * E, E, H * E, 1};
    return tl_empty_strided(4, sz, st, dt, TL_CPU);
}

typedef struct {
    const tl_attn_params *p;
    tl_attn_fn fn;
    int failed;
} attn_ctx;

static void attn_range(int64_t b, int64_t e, void *c_) {
    attn_ctx *c = c_;
    if (c->fn(c->p, b, e) != 0) __atomic_store_n(&c->failed, 1, __ATOMIC_RELAXED);
}

static int run_items(const tl_attn_params *p, tl_attn_fn fn, int64_t items) {
    attn_ctx c = {p, fn, 0};
    tl_parallel_for(items, 1, attn_range, &c);
    if (c.failed) return tl_set_error(TL_ERR_MEMORY, "out of memory");
    return 0;
}

/* the checks PyTorch's CPU flash kernel makes (its messages) */
static int check_qkv(const tl_tensor *q, const tl_tensor *k, const tl_tensor *v) {
    if (tl_tensor_ndim(q) != 4 || tl_tensor_ndim(k) != 4 || tl_tensor_ndim(v) != 4)
        return tl_set_error(TL_ERR_RUNTIME, FA "Accept only 4 dims inputs shape of {B, H, T, K}");
    const tl_dtype dt = tl_tensor_dtype(q);
    if (!is_attn_dtype(dt))
        return tl_set_error(TL_ERR_RUNTIME, FA "Expected data type in FP32, FP64, BF16, FP16, but got %s instead.",
                            tl_dtype_scalar_name(dt));
    if (tl_tensor_dtype(k) != dt || tl_tensor_dtype(v) != dt) {
        const tl_dtype o = tl_tensor_dtype(k) != dt ? tl_tensor_dtype(k) : tl_tensor_dtype(v);
        return tl_set_error(TL_ERR_RUNTIME, "expected scalar type %s but found %s", tl_dtype_scalar_name(dt),
                            tl_dtype_scalar_name(o));
    }
    const int64_t *qs = tl_tensor_sizes(q), *ks = tl_tensor_sizes(k), *vs = tl_tensor_sizes(v);
    if (qs[3] != ks[3] || qs[3] != vs[3])
        return tl_set_error(TL_ERR_RUNTIME, FA "Q/K/V should have the same head size");
    /* PyTorch reads out of bounds here; torchlet refuses */
    if (ks[0] != qs[0] || vs[0] != qs[0] || ks[1] != vs[1] || ks[2] != vs[2])
        return tl_set_error(TL_ERR_RUNTIME, FA "key and value must have the batch size of query and one shape "
                            "(got query %lld x %lld x %lld, key %lld x %lld x %lld, value %lld x %lld x %lld as "
                            "batch x heads x length)", (long long)qs[0], (long long)qs[1], (long long)qs[2],
                            (long long)ks[0], (long long)ks[1], (long long)ks[2], (long long)vs[0],
                            (long long)vs[1], (long long)vs[2]);
    if (ks[1] == 0 ? qs[1] != 0 : qs[1] % ks[1] != 0)
        return tl_set_error(TL_ERR_RUNTIME, "Number of heads in key and value must divide the number of heads in "
                            "query");
    return 0;
}

/* the attention mask as the kernel reads it: compute dtype, expanded to
 * (B, H, L, S) (strides 0 along broadcast dims); NULL mask -> *out NULL */
static int kernel_mask(tl_tensor *mask, tl_dtype qdt, tl_dtype ct, const int64_t full[4], tl_tensor **out) {
    *out = NULL;
    if (!mask) return 0;
    const tl_dtype mt = tl_tensor_dtype(mask);
    if (mt != qdt && !(mt == TL_FLOAT32 && ct == TL_FLOAT32 && qdt != TL_FLOAT64))
        return tl_set_error(TL_ERR_RUNTIME, FA "Attention mask is the same data type as query");
    const int64_t nd = tl_tensor_ndim(mask);
    if (nd != 2 && nd != 4) return tl_set_error(TL_ERR_RUNTIME, FA "Attention mask dim in {2, 4}");
    tl_tensor *m4 = NULL;
    if (nd == 2) {
        const int64_t sh[4] = {1, 1, tl_tensor_size(mask, 0), tl_tensor_size(mask, 1)};
        m4 = tl_reshape(mask, 4, sh);
    } else {
        m4 = mask;
        tl_tensor_retain(m4);
    }
    if (!m4) return -1;
    tl_tensor *mc = tl_to_dtype(m4, ct, 0);
    tl_tensor_release(m4);
    if (!mc) return -1;
    *out = tl_expand(mc, 4, full);
    tl_tensor_release(mc);
    return *out ? 0 : -1;
}

/* the parameters every kernel call shares */
static void set_inputs(tl_attn_params *p, tl_tensor *q, tl_tensor *k, tl_tensor *v, tl_tensor *m, bool causal,
                       double scale, bool scale_has) {
    const int64_t *qs = tl_tensor_sizes(q), *ks = tl_tensor_sizes(k);
    p->B = qs[0];
    p->Hq = qs[1];
    p->L = qs[2];
    p->E = qs[3];
    p->Hk = ks[1];
    p->S = ks[2];
    p->causal = causal;
    p->scale = scale_has ? scale : 1.0 / sqrt((double)(p->E > 0 ? p->E : 1));
    p->q = tl_tensor_data_ptr(q);
    p->k = tl_tensor_data_ptr(k);
    p->v = tl_tensor_data_ptr(v);
    strides3(q, p->qs);
    strides3(k, p->ks);
    strides3(v, p->vs);
    p->mask = m ? tl_tensor_data_ptr(m) : NULL;
    if (m)
        for (int i = 0; i < 4; i++) p->ms[i] = tl_tensor_stride(m, i);
}

static void release_all(tl_tensor *const *ts, int n) {
    for (int i = 0; i < n; i++) tl_tensor_release(ts[i]);
}

static bool nothing_to_do(const tl_attn_params *p) { return p->B == 0 || p->Hq == 0 || p->L == 0 || p->Hk == 0; }

/* _scaled_dot_product_flash_attention_for_cpu (CPU): (output, logsumexp).
 * float16 / bfloat16 compute in float32 (logsumexp stays float32, as
 * PyTorch's). */
int tl_native__scaled_dot_product_flash_attention_cpu(tl_keyset ks, tl_tensor *query, tl_tensor *key,
                                                      tl_tensor *value, double dropout_p, bool is_causal,
                                                      tl_tensor *attn_mask, double scale, bool scale_has,
                                                      tl_tensor **ret0, tl_tensor **ret1) {
    (void)ks;
    if (check_qkv(query, key, value)) return -1;
    if (dropout_p > 0) return tl_set_error(TL_ERR_RUNTIME, FA "Currently do not support dropout > 0");
    const tl_dtype dt = tl_tensor_dtype(query), ct = compute_dtype(dt);
    const int64_t *qsz = tl_tensor_sizes(query);
    const int64_t B = qsz[0], H = qsz[1], L = qsz[2], E = qsz[3], S = tl_tensor_size(key, 2);
    const int64_t full[4] = {B, H, L, S};
    tl_tensor *q = NULL, *k = NULL, *v = NULL, *m = NULL, *out = NULL, *o = NULL, *lse = NULL;
    int rc = -1;
    if (kernel_mask(attn_mask, dt, ct, full, &m)) goto done;
    if (!(q = kernel_view(query, ct)) || !(k = kernel_view(key, ct)) || !(v = kernel_view(value, ct))) goto done;
    const int64_t lsz[3] = {B, H, L}, lst[3] = {L * H, 1, H};
    if (!(out = bthe_empty(B, H, L, E, dt)) || !(lse = tl_empty_strided(3, lsz, lst, ct, TL_CPU))) goto done;
    if (ct == dt) {
        o = out;
        tl_tensor_retain(o);
    } else if (!(o = bthe_empty(B, H, L, E, ct))) {
        goto done;
    }
    tl_attn_params p = {0};
    set_inputs(&p, q, k, v, m, is_causal, scale, scale_has);
    p.out = tl_tensor_data_ptr(o);
    p.lse = tl_tensor_data_ptr(lse);
    strides3(o, p.os);
    for (int i = 0; i < 3; i++) p.ls[i] = lst[i];
    if (!nothing_to_do(&p) &&
        run_items(&p, ATTN_K(ct)->fwd, B * H * ((L + TL_ATTN_BQ - 1) / TL_ATTN_BQ)))
        goto done;
    if (o != out && tl_copy_(out, o)) goto done;
    rc = 0;
done:
    release_all((tl_tensor *[]){q, k, v, m, o}, 5);
    if (rc == 0) {
        *ret0 = out;
        *ret1 = lse;
    } else {
        tl_tensor_release(out);
        tl_tensor_release(lse);
    }
    return rc;
}

/* _scaled_dot_product_flash_attention_for_cpu_backward (CPU): the
 * gradients of query, key, value, in the fused output's layout */
int tl_native__scaled_dot_product_flash_attention_cpu_backward(
    tl_keyset ks, tl_tensor *grad_out, tl_tensor *query, tl_tensor *key, tl_tensor *value, tl_tensor *out,
    tl_tensor *logsumexp, double dropout_p, bool is_causal, tl_tensor *attn_mask, double scale, bool scale_has,
    tl_tensor **ret0, tl_tensor **ret1, tl_tensor **ret2) {
    (void)ks;
    if (check_qkv(query, key, value)) return -1;
    if (dropout_p > 0) return tl_set_error(TL_ERR_RUNTIME, FA "Currently do not support dropout > 0");
    const tl_dtype dt = tl_tensor_dtype(query), ct = compute_dtype(dt);
    const int64_t *qsz = tl_tensor_sizes(query);
    const int64_t B = qsz[0], H = qsz[1], L = qsz[2], E = qsz[3], Hk = tl_tensor_size(key, 1),
                  S = tl_tensor_size(key, 2);
    const int64_t full[4] = {B, H, L, S};
    if (tl_tensor_ndim(grad_out) != 4 || tl_tensor_ndim(out) != 4 || tl_tensor_ndim(logsumexp) != 3 ||
        tl_tensor_numel(grad_out) != B * H * L * E || tl_tensor_numel(out) != B * H * L * E ||
        tl_tensor_numel(logsumexp) != B * H * L)
        return tl_set_error(TL_ERR_RUNTIME, FA "grad_out and out must have the shape of query [%lld, %lld, %lld, "
                            "%lld] and logsumexp [%lld, %lld, %lld]", (long long)B, (long long)H, (long long)L,
                            (long long)E, (long long)B, (long long)H, (long long)L);
    tl_tensor *q = NULL, *k = NULL, *v = NULL, *m = NULL, *o = NULL, *go = NULL, *lse = NULL;
    tl_tensor *g[3] = {NULL, NULL, NULL}, *gc[3] = {NULL, NULL, NULL};
    int rc = -1;
    if (kernel_mask(attn_mask, dt, ct, full, &m)) goto done;
    if (!(q = kernel_view(query, ct)) || !(k = kernel_view(key, ct)) || !(v = kernel_view(value, ct)) ||
        !(o = kernel_view(out, ct)) || !(go = kernel_view(grad_out, ct)))
        goto done;
    if (!(lse = tl_to_dtype(logsumexp, ct, 0))) goto done; /* read through its strides */
    const int64_t heads[3] = {H, Hk, Hk}, len[3] = {L, S, S};
    for (int i = 0; i < 3; i++) {
        if (!(g[i] = bthe_empty(B, heads[i], len[i], E, dt))) goto done;
        if (ct == dt) {
            gc[i] = g[i];
            tl_tensor_retain(gc[i]);
        } else if (!(gc[i] = bthe_empty(B, heads[i], len[i], E, ct))) {
            goto done;
        }
    }
    tl_attn_params p = {0};
    set_inputs(&p, q, k, v, m, is_causal, scale, scale_has);
    p.out = tl_tensor_data_ptr(o);
    strides3(o, p.os);
    p.lse = tl_tensor_data_ptr(lse);
    strides3(lse, p.ls);
    p.gout = tl_tensor_data_ptr(go);
    strides3(go, p.gos);
    p.gq = tl_tensor_data_ptr(gc[0]);
    p.gk = tl_tensor_data_ptr(gc[1]);
    p.gv = tl_tensor_data_ptr(gc[2]);
    strides3(gc[0], p.gqs);
    strides3(gc[1], p.gks);
    strides3(gc[2], p.gvs);
    if (p.B > 0 && p.Hk > 0 && run_items(&p, ATTN_K(ct)->bwd, B * Hk)) goto done;
    for (int i = 0; i < 3; i++)
        if (gc[i] != g[i] && tl_copy_(g[i], gc[i])) goto done;
    rc = 0;
done:
    release_all((tl_tensor *[]){q, k, v, m, o, go, lse, gc[0], gc[1], gc[2]}, 10);
    if (rc == 0) {
        *ret0 = g[0];
        *ret1 = g[1];
        *ret2 = g[2];
    } else {
        release_all(g, 3);
    }
    return rc;
}

/* ------------------------------------------------ scaled_dot_product_attention */

/* PyTorch turns bool masks into additive float masks: 0 where a position is
 * attended, -inf where it is masked (built here directly: they carry no
 * gradient) */
static tl_tensor *additive_from_bools(const bool *keep, int64_t nd, const int64_t *shape, tl_dtype dt) {
    tl_tensor *m = tl_empty(nd, shape, TL_FLOAT64, TL_CPU);
    if (!m) return NULL;
    double *v = tl_tensor_data_ptr(m);
    for (int64_t i = 0; i < tl_tensor_numel(m); i++) v[i] = keep[i] ? 0.0 : -INFINITY;
    tl_tensor *r = tl_to_dtype(m, dt, 0);
    tl_tensor_release(m);
    return r;
}

static tl_tensor *causal_additive_mask(int64_t L, int64_t S, tl_dtype dt) {
    const int64_t sh[2] = {L, S};
    bool *keep = malloc((size_t)(L * S + 1));
    if (!keep) return (tl_set_error(TL_ERR_MEMORY, "out of memory"), NULL);
    for (int64_t i = 0; i < L; i++)
        for (int64_t j = 0; j < S; j++) keep[i * S + j] = j <= i; /* top-left aligned lower triangle */
    tl_tensor *r = additive_from_bools(keep, 2, sh, dt);
    free(keep);
    return r;
}

static tl_tensor *bool_additive_mask(tl_tensor *mask, tl_dtype dt) {
    tl_tensor *h = tl_to_device(mask, TL_CPU, 0);   /* the bools are read on the host */
    tl_tensor *c = h ? tl_contiguous(h) : NULL;
    tl_tensor_release(h);
    if (!c) return NULL;
    tl_tensor *r = additive_from_bools(tl_tensor_data_ptr(c), tl_tensor_ndim(c), tl_tensor_sizes(c), dt);
    tl_tensor_release(c);
    return r;
}

/* an additive mask built on the host, moved to CUDA scores' device */
static tl_tensor *on_device_of(tl_tensor *m, const tl_tensor *like) {
    if (!m || tl_tensor_device(like) != TL_CUDA) return m;
    tl_tensor *r = tl_to_device(m, tl__device_of(like), 0);
    tl_tensor_release(m);
    return r;
}

/* PyTorch's validate_sdpa_input (its messages) */
static int validate_sdpa_input(tl_tensor *q, tl_tensor *k, tl_tensor *v, tl_tensor *mask) {
    const tl_dtype qt = tl_tensor_dtype(q), kt = tl_tensor_dtype(k), vt = tl_tensor_dtype(v);
    if (qt != kt || qt != vt)
        return tl_set_error(TL_ERR_RUNTIME, "Expected query, key, and value to have the same dtype, but got "
                            "query.dtype: %s key.dtype: %s and value.dtype: %s instead.", tl_dtype_caffe2_name(qt),
                            tl_dtype_caffe2_name(kt), tl_dtype_caffe2_name(vt));
    const int64_t qd = tl_tensor_ndim(q), kd = tl_tensor_ndim(k), vd = tl_tensor_ndim(v);
    if (qd < 2 || kd < 2 || vd < 2)
        return tl_set_error(TL_ERR_RUNTIME, "Expected query, key, and value to all be  at least 2 dimensional, but "
                            "got query.dim: %lld key.dim: %lld and value.dim: %lld instead.", (long long)qd,
                            (long long)kd, (long long)vd);
    if (mask) {
        const tl_dtype mt = tl_tensor_dtype(mask);
        if (mt != TL_BOOL && mt != TL_FLOAT32 && mt != qt)
            return tl_set_error(TL_ERR_RUNTIME, "Expected attn_mask dtype to be bool or float or to match query "
                                "dtype, but got attn_mask.dtype: %s and  query.dtype: %s instead.",
                                tl_dtype_caffe2_name(mt), tl_dtype_caffe2_name(qt));
    }
    return 0;
}

/* PyTorch's use_flash_attention_cpp: may the fused CPU kernel run? */
static bool use_fused(tl_tensor *q, tl_tensor *k, tl_tensor *v, tl_tensor *mask, double dropout_p, bool gqa) {
    if (tl_tensor_device(q) == TL_CUDA) return false;   /* a CPU kernel (meta: its shapes); CUDA takes the math path */
    if (dropout_p > 0 || tl_tensor_ndim(q) != 4 || tl_tensor_ndim(k) != 4 || tl_tensor_ndim(v) != 4) return false;
    const int64_t *qs = tl_tensor_sizes(q), *ks = tl_tensor_sizes(k), *vs = tl_tensor_sizes(v);
    if (qs[0] != ks[0] || qs[0] != vs[0] || ks[1] != vs[1]) return false;
    if (qs[1] != ks[1] && !(gqa && ks[1] > 0 && qs[1] % ks[1] == 0)) return false;
    if (mask) {
        const int64_t md = tl_tensor_ndim(mask);
        if (tl_autograd_requires_grad(mask) || md < 2) return false;
        const int64_t *m = tl_tensor_sizes(mask);
        if ((m[md - 2] != qs[2] && m[md - 2] != 1) || (m[md - 1] != ks[2] && m[md - 1] != 1)) return false;
        if (md == 4 ? (m[0] != 1 && m[0] != qs[0]) || (m[1] != 1 && m[1] != qs[1]) : md != 2) return false;
    }
    if (qs[3] != ks[3] || qs[3] != vs[3] || qs[2] == 0 || ks[2] == 0) return false;
    if (tl_tensor_stride(q, 3) != 1 || tl_tensor_stride(k, 3) != 1 || tl_tensor_stride(v, 3) != 1) return false;
    return is_attn_dtype(tl_tensor_dtype(q));
}

static tl_tensor *sdpa_math(tl_tensor *query, tl_tensor *key, tl_tensor *value, tl_tensor *attn_mask,
                            double dropout_p, bool is_causal, double sc);

/* scaled_dot_product_attention (CompositeImplicitAutograd):
 * softmax(q @ k^T * scale + mask) @ v, scale = 1/sqrt(E) by default, through
 * the fused op when use_fused allows (bool masks become additive float
 * masks first, as PyTorch does), else the math path. */
tl_tensor *tl_native_scaled_dot_product_attention(tl_keyset ks, tl_tensor *query, tl_tensor *key, tl_tensor *value,
                                                  tl_tensor *attn_mask, double dropout_p, bool is_causal,
                                                  double scale, bool scale_has, bool enable_gqa) {
    (void)ks;
    if (validate_sdpa_input(query, key, value, attn_mask)) return NULL;
    if (use_fused(query, key, value, attn_mask, dropout_p, enable_gqa)) {
        tl_tensor *m = attn_mask, *out = NULL, *lse = NULL;
        if (m && tl_tensor_dtype(m) == TL_BOOL && !(m = bool_additive_mask(m, tl_tensor_dtype(query)))) return NULL;
        const int rc = tl_ops__scaled_dot_product_flash_attention_for_cpu(query, key, value, dropout_p, is_causal, m,
                                                                          scale, scale_has, &out, &lse);
        if (m != attn_mask) tl_tensor_release(m);
        if (rc) return NULL;
        tl_tensor_release(lse);
        return out;
    }
    if (is_causal && attn_mask) {
        tl_set_error(TL_ERR_RUNTIME, "_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                                     "is_causal=True");
        return NULL;
    }
    const int64_t qd = tl_tensor_ndim(query), kd = tl_tensor_ndim(key);
    if (enable_gqa && qd >= 3 && kd >= 3 && tl_tensor_size(query, -3) != tl_tensor_size(key, -3)) {
        if (tl_tensor_size(key, -3) == 0 || tl_tensor_size(query, -3) % tl_tensor_size(key, -3) != 0) {
            /* PyTorch's message, cut short as it is */
            tl_set_error(TL_ERR_RUNTIME, "Number of heads in key and value must divide the number of heads in ");
            return NULL;
        }
        tl_set_error(TL_ERR_NOT_IMPLEMENTED, "scaled_dot_product_attention: enable_gqa with fewer key/value heads "
                                             "than query heads is not supported yet on the math path (3-D inputs, "
                                             "dropout, masks that need grad)");
        return NULL;
    }
    const int64_t E = tl_tensor_size(query, -1);
    return sdpa_math(query, key, value, attn_mask, dropout_p, is_causal,
                     scale_has ? scale : 1.0 / sqrt((double)(E > 0 ? E : 1)));
}

/* PyTorch's _safe_softmax over the last dim (the math path's): rows whose
 * scores are all -inf give 0, not NaN. Written as where(dead, 0,
 * softmax(where(dead, 0, s))) so that the dead rows' gradient is 0 too (no
 * NaN through softmax's backward) without an operator of its own; a row is
 * dead when its maximum is -inf. */
static tl_tensor *safe_softmax(tl_tensor *s) {
    const tl_scalar zero = tl_scalar_from_double(0.0);
    const int64_t last = -1;
    tl_tensor *mx = tl_ops_amax(s, &last, 1, true), *dead = NULL, *s0 = NULL, *p = NULL, *r = NULL;
    if (mx && (dead = tl_ops_eq_Scalar(mx, tl_scalar_from_double(-INFINITY))) &&
        (s0 = tl_ops_where_ScalarSelf(dead, zero, s)) && (p = tl_ops__softmax(s0, -1, false)))
        r = tl_ops_where_ScalarSelf(dead, zero, p);
    release_all((tl_tensor *[]){mx, dead, s0, p}, 4);
    return r;
}

/* PyTorch's math path: every step is an operator call, so the backward is
 * recorded through matmul / mul / add / softmax (PyTorch's _safe_softmax:
 * fully masked rows give 0). is_causal masks key
 * positions after the query's (the top-left aligned lower triangle of the
 * L x S scores); a bool attn_mask keeps True positions, a floating one is
 * added; dropout_p > 0 drops attention weights (dropout, train=True). */
static tl_tensor *sdpa_math(tl_tensor *query, tl_tensor *key, tl_tensor *value, tl_tensor *attn_mask,
                            double dropout_p, bool is_causal, double sc) {
    const tl_dtype qt = tl_tensor_dtype(query);
    const int64_t L = tl_tensor_size(query, -2), S = tl_tensor_size(key, -2);
    tl_tensor *kt = NULL, *qk = NULL, *s = NULL, *nm = NULL, *s2 = NULL, *p = NULL, *pd = NULL, *res = NULL;
    if (!(kt = tl_ops_transpose_int(key, -2, -1)) || !(qk = tl_ops_matmul(query, kt)) ||
        !(s = tl_ops_mul_Scalar(qk, tl_scalar_from_double(sc))))
        goto done;
    if (is_causal) {
        nm = on_device_of(causal_additive_mask(L, S, qt), query);
    } else if (attn_mask && tl_tensor_dtype(attn_mask) == TL_BOOL) {
        nm = on_device_of(bool_additive_mask(attn_mask, qt), query);
    } else if (attn_mask) {
        nm = attn_mask;
        tl_tensor_retain(nm);
    }
    if (nm) {
        s2 = tl_ops_add_Tensor(s, nm, tl_scalar_from_int(1));
    } else if (!is_causal && !attn_mask) {
        s2 = s;
        tl_tensor_retain(s2);
    }
    if (!s2 || !(p = safe_softmax(s2))) goto done;
    if (dropout_p > 0) {
        if (!(pd = tl_ops_dropout(p, dropout_p, true))) goto done;
    } else {
        pd = p;
        tl_tensor_retain(pd);
    }
    res = tl_ops_matmul(pd, value);
done:
    tl_tensor_release(kt);
    tl_tensor_release(qk);
    tl_tensor_release(s);
    tl_tensor_release(nm);
    tl_tensor_release(s2);
    tl_tensor_release(p);
    tl_tensor_release(pd);
    return res;
}
