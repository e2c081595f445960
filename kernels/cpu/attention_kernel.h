/* Per-ISA kernels of the fused CPU attention (kernels/native/attention.c
 * calls them through tl_attn_stub): PyTorch's
 * _scaled_dot_product_flash_attention_for_cpu and its backward, in the
 * compute dtype (slot 0 float32, slot 1 float64; float16 / bfloat16 are
 * converted to float32 by the caller).
 *
 * Shapes: query (B, Hq, L, E), key / value (B, Hk, S, E) with Hq % Hk == 0
 * (grouped-query attention: q head h reads kv head h / (Hq / Hk)). Every
 * tensor is addressed by element strides (batch, head, row); the last dim
 * has stride 1. The mask (optional, additive, compute dtype) is addressed
 * by strides (batch, head, row, column), 0 along broadcast dims. */
#ifndef TL_ATTENTION_KERNEL_H
#define TL_ATTENTION_KERNEL_H

#include <stdint.h>

#include "tl_kernel.h"

/* query tile (rows) of one work item; the forward's items are
 * (batch, head, query tile), the backward's (batch, kv head) */
enum { TL_ATTN_BQ = 32, TL_ATTN_BK = 256, TL_ATTN_BWD_BQ = 32 };

typedef struct {
    int64_t B, Hq, Hk, L, S, E;
    int causal; /* key j is masked for query i when j > i (top-left aligned) */
    double scale;
    const void *q, *k, *v, *mask;
    int64_t qs[3], ks[3], vs[3], ms[4];
    /* forward: written; backward: read */
    void *out, *lse; /* lse is always float32 for float32 compute, float64 for float64 */
    int64_t os[3], ls[3];
    /* backward only */
    const void *gout;
    void *gq, *gk, *gv;
    int64_t gos[3], gqs[3], gks[3], gvs[3];
} tl_attn_params;

/* items [begin, end): forward (b, h, query tile), backward (b, kv head).
 * Return 0, or -1 when a scratch buffer cannot be allocated. */
typedef int (*tl_attn_fn)(const tl_attn_params *p, int64_t begin, int64_t end);

typedef struct {
    tl_attn_fn fwd;
    tl_attn_fn bwd;
} tl_attn_kernels;

typedef tl_attn_kernels tl_attn_table_t[2];
extern const tl_attn_table_t tl_attn_table_DEFAULT, tl_attn_table_AVX2, tl_attn_table_AVX512;
extern tl_kernel_stub tl_attn_stub;

#endif
