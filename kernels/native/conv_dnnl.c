/* Convolutions through oneDNN (conv_dnnl.h): forward, backward data and
 * backward weights primitives on the plain NCHW-style tensors torchlet
 * holds. As PyTorch's (ideep) path does, the primitive picks its own layouts
 * (format_tag_any: blocked nChw16c-style on AVX-512) and the plain tensors
 * are reordered in and out around it.
 *
 * One geometry serves a convolution and a transposed one (conv_gemm.h): the
 * image side is oneDNN's src, the column side its dst, the weight
 * [G, Cc/G, Ci/G, k...] its weights, so cols_from_image is a forward
 * convolution, image_from_cols its backward data, weight_grad its backward
 * weights. Leading spatial dims of size 1 (conv_gemm.h pads to 3) are
 * dropped again, so conv2d runs a 2-d primitive.
 *
 * Primitive cache: primitives (with their reorders) are kept per geometry,
 * direction and thread count (oneDNN sizes its work split at creation), so a
 * training loop creates each once. Entries are immutable once made and never
 * freed; executing one from several threads at once is safe (each call
 * brings its own scratchpad). Past TL_DNNL_CACHE_MAX entries a primitive is
 * made for the call and dropped after it. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "conv_dnnl.h"
#include "dnnl_api.h"
#include "tl_dnnl.h"
#include "tl_internal.h"

#define TL_DNNL_CACHE_MAX 1024

enum { OP_FWD, OP_BWD_DATA, OP_BWD_WEIGHTS };
enum { IMG, WTS, COLS, NSLOT }; /* the three tensors of every product */

/* the key: direction, bias, threads, then the geometry */
#define KEYLEN (4 + 4 + 6 * TL_CONV_MAXD)

typedef struct {
    dnnl_memory_desc_t user;        /* the plain layout torchlet holds */
    const_dnnl_memory_desc_t want;  /* the primitive's (owned by its descriptor) */
    dnnl_primitive_desc_t rpd;      /* reorder user -> want (input) or want -> user (output); NULL: same layout */
    dnnl_primitive_t reorder;
    size_t bytes;                   /* of `want` */
    int arg;                        /* DNNL_ARG_* */
    bool output;
} slot;

typedef struct entry {
    int64_t key[KEYLEN];
    dnnl_primitive_desc_t fwd_pd, pd; /* fwd_pd: the hint of a backward descriptor (also pd for OP_FWD) */
    dnnl_primitive_t prim;
    dnnl_memory_desc_t bias_md;
    slot s[NSLOT];
    size_t scratch;
    struct entry *next;
} entry;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static entry *g_cache;
static atomic_int g_count;

int tl_dnnl_cache_size(void) { return atomic_load(&g_count); }

/* the spatial dims oneDNN sees: conv_gemm.h's padded leading ones dropped */
static int spatial_dims(const tl_conv_geom *g) {
    int lead = 0;
    while (lead < TL_CONV_MAXD - 1 && g->isz[lead] == 1 && g->osz[lead] == 1 && g->k[lead] == 1 && g->s[lead] == 1 &&
           g->p[lead] == 0 && g->d[lead] == 1)
        lead++;
    return TL_CONV_MAXD - lead;
}

static void make_key(const tl_conv_geom *g, int op, bool bias, int threads, int64_t *key) {
    int64_t *k = key;
    *k++ = op, *k++ = bias, *k++ = threads, *k++ = g->N;
    *k++ = g->G, *k++ = g->Ci, *k++ = g->Cc, *k++ = g->dt;
    for (int i = 0; i < TL_CONV_MAXD; i++) {
        *k++ = g->isz[i], *k++ = g->osz[i], *k++ = g->k[i];
        *k++ = g->s[i], *k++ = g->p[i], *k++ = g->d[i];
    }
}

static void entry_free(const tl_dnnl_api *a, entry *e) {
    if (!e) return;
    for (int i = 0; i < NSLOT; i++) {
        if (e->s[i].reorder) a->primitive_destroy(e->s[i].reorder);
        if (e->s[i].rpd) a->primitive_desc_destroy(e->s[i].rpd);
        if (e->s[i].user) a->memory_desc_destroy(e->s[i].user);
    }
    if (e->bias_md) a->memory_desc_destroy(e->bias_md);
    if (e->prim) a->primitive_destroy(e->prim);
    if (e->pd && e->pd != e->fwd_pd) a->primitive_desc_destroy(e->pd);
    if (e->fwd_pd) a->primitive_desc_destroy(e->fwd_pd);
    free(e);
}

/* one slot: the plain descriptor, the primitive's, and the reorder between */
static bool slot_init(const tl_dnnl_api *a, const entry *e, slot *s, int nd, const dnnl_dims_t dims, int query,
                      int arg, bool output) {
    const dnnl_engine_t eng = tl__dnnl_engine();
    s->arg = arg;
    s->output = output;
    if (a->memory_desc_create_with_tag(&s->user, nd, dims, TL_DNNL_F32, tl_dnnl_plain_tag(nd)) != TL_DNNL_SUCCESS)
        return false;
    if (!(s->want = a->primitive_desc_query_md(e->pd, query, 0))) return false;
    s->bytes = a->memory_desc_get_size(s->want);
    if (a->memory_desc_equal(s->user, s->want)) return true;
    const dnnl_status_t st = output ? a->reorder_primitive_desc_create(&s->rpd, s->want, eng, s->user, eng, NULL)
                                    : a->reorder_primitive_desc_create(&s->rpd, s->user, eng, s->want, eng, NULL);
    return st == TL_DNNL_SUCCESS && a->primitive_create(&s->reorder, s->rpd) == TL_DNNL_SUCCESS;
}

/* oneDNN's right padding of spatial dim j: the symmetric one when its floor
 * formula then gives osz (every convolution), else the exact extent (a
 * transposed one whose output_padding is not below the stride, possible
 * with dilation: may be negative, which oneDNN declines) */
static int64_t right_pad(const tl_conv_geom *g, int j) {
    const int64_t span = (g->k[j] - 1) * g->d[j] + 1;
    if ((g->isz[j] + 2 * g->p[j] - span) / g->s[j] + 1 == g->osz[j]) return g->p[j];
    return (g->osz[j] - 1) * g->s[j] + span - g->isz[j] - g->p[j];
}

/* the descriptors and primitives of one product; NULL when oneDNN declines */
static entry *entry_create(const tl_dnnl_api *a, const tl_conv_geom *g, int op, bool bias, const int64_t *key) {
    entry *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    memcpy(e->key, key, sizeof e->key);
    const int sd = spatial_dims(g), lead = TL_CONV_MAXD - sd;
    dnnl_dims_t img = {g->N, g->Ci}, cols = {g->N, g->Cc}, w = {0}, st = {0}, dil = {0}, pl = {0}, pr = {0};
    const bool grouped = g->G > 1;
    int wn = 0;
    if (grouped) w[wn++] = g->G;
    w[wn++] = g->Cc / g->G;
    w[wn++] = g->Ci / g->G;
    for (int i = 0; i < sd; i++) {
        const int j = lead + i;
        img[2 + i] = g->isz[j];
        cols[2 + i] = g->osz[j];
        w[wn++] = g->k[j];
        st[i] = g->s[j];
        dil[i] = g->d[j] - 1; /* oneDNN counts the gaps */
        pl[i] = g->p[j];
        pr[i] = right_pad(g, j);
    }
    const int nd = 2 + sd;
    const dnnl_engine_t eng = tl__dnnl_engine();
    dnnl_memory_desc_t any_img = NULL, any_cols = NULL, any_w = NULL;
    dnnl_primitive_attr_t attr = NULL;
    bool ok = a->memory_desc_create_with_tag(&any_img, nd, img, TL_DNNL_F32, TL_DNNL_TAG_ANY) == TL_DNNL_SUCCESS &&
              a->memory_desc_create_with_tag(&any_cols, nd, cols, TL_DNNL_F32, TL_DNNL_TAG_ANY) == TL_DNNL_SUCCESS &&
              a->memory_desc_create_with_tag(&any_w, wn, w, TL_DNNL_F32, TL_DNNL_TAG_ANY) == TL_DNNL_SUCCESS &&
              a->primitive_attr_create(&attr) == TL_DNNL_SUCCESS &&
              a->primitive_attr_set_scratchpad_mode(attr, TL_DNNL_SCRATCHPAD_USER) == TL_DNNL_SUCCESS;
    if (ok && bias) {
        const dnnl_dims_t bd = {g->Cc};
        ok = a->memory_desc_create_with_tag(&e->bias_md, 1, bd, TL_DNNL_F32, tl_dnnl_plain_tag(1)) == TL_DNNL_SUCCESS;
    }
    ok = ok && a->convolution_forward_primitive_desc_create(&e->fwd_pd, eng, TL_DNNL_FORWARD_TRAINING,
                                                           TL_DNNL_CONVOLUTION_DIRECT, any_img, any_w, e->bias_md,
                                                           any_cols, st, dil, pl, pr,
                                                           op == OP_FWD ? attr : NULL) == TL_DNNL_SUCCESS;
    if (ok && op == OP_FWD)
        e->pd = e->fwd_pd;
    else if (ok && op == OP_BWD_DATA)
        ok = a->convolution_backward_data_primitive_desc_create(&e->pd, eng, TL_DNNL_CONVOLUTION_DIRECT, any_img,
                                                                any_w, any_cols, st, dil, pl, pr, e->fwd_pd,
                                                                attr) == TL_DNNL_SUCCESS;
    else if (ok)
        ok = a->convolution_backward_weights_primitive_desc_create(&e->pd, eng, TL_DNNL_CONVOLUTION_DIRECT, any_img,
                                                                   any_w, NULL, any_cols, st, dil, pl, pr, e->fwd_pd,
                                                                   attr) == TL_DNNL_SUCCESS;
    if (any_img) a->memory_desc_destroy(any_img);
    if (any_cols) a->memory_desc_destroy(any_cols);
    if (any_w) a->memory_desc_destroy(any_w);
    if (attr) a->primitive_attr_destroy(attr);
    ok = ok && a->primitive_create(&e->prim, e->pd) == TL_DNNL_SUCCESS;
    if (ok) {
        const_dnnl_memory_desc_t sp = a->primitive_desc_query_md(e->pd, TL_DNNL_QUERY_SCRATCHPAD_MD, 0);
        e->scratch = sp ? a->memory_desc_get_size(sp) : 0;
    }
    if (ok && op == OP_FWD)
        ok = slot_init(a, e, &e->s[IMG], nd, img, TL_DNNL_QUERY_SRC_MD, TL_DNNL_ARG_SRC, false) &&
             slot_init(a, e, &e->s[WTS], wn, w, TL_DNNL_QUERY_WEIGHTS_MD, TL_DNNL_ARG_WEIGHTS, false) &&
             slot_init(a, e, &e->s[COLS], nd, cols, TL_DNNL_QUERY_DST_MD, TL_DNNL_ARG_DST, true);
    else if (ok && op == OP_BWD_DATA)
        ok = slot_init(a, e, &e->s[IMG], nd, img, TL_DNNL_QUERY_DIFF_SRC_MD, TL_DNNL_ARG_DIFF_SRC, true) &&
             slot_init(a, e, &e->s[WTS], wn, w, TL_DNNL_QUERY_WEIGHTS_MD, TL_DNNL_ARG_WEIGHTS, false) &&
             slot_init(a, e, &e->s[COLS], nd, cols, TL_DNNL_QUERY_DIFF_DST_MD, TL_DNNL_ARG_DIFF_DST, false);
    else if (ok)
        ok = slot_init(a, e, &e->s[IMG], nd, img, TL_DNNL_QUERY_SRC_MD, TL_DNNL_ARG_SRC, false) &&
             slot_init(a, e, &e->s[WTS], wn, w, TL_DNNL_QUERY_DIFF_WEIGHTS_MD, TL_DNNL_ARG_DIFF_WEIGHTS, true) &&
             slot_init(a, e, &e->s[COLS], nd, cols, TL_DNNL_QUERY_DIFF_DST_MD, TL_DNNL_ARG_DIFF_DST, false);
    if (ok) return e;
    entry_free(a, e);
    return NULL;
}

/* the cached entry for key, made on a miss; *owned: the caller frees it
 * after use (the cache is full) */
static entry *entry_get(const tl_dnnl_api *a, const tl_conv_geom *g, int op, bool bias, bool *owned) {
    int64_t key[KEYLEN];
    make_key(g, op, bias, tl__dnnl_set_threads(), key);
    *owned = false;
    pthread_mutex_lock(&g_lock);
    entry *e = g_cache;
    while (e && memcmp(e->key, key, sizeof key)) e = e->next;
    pthread_mutex_unlock(&g_lock);
    if (e) return e;
    /* made outside the lock (creation takes milliseconds); two threads missing at once both make one, the
     * second is dropped */
    if (!(e = entry_create(a, g, op, bias, key))) {
        TL_WARN_ONCE("oneDNN could not create a convolution primitive; such convolutions run on the im2col "
                     "path (TORCHLET_ONEDNN=0 turns oneDNN off)");
        return NULL;
    }
    pthread_mutex_lock(&g_lock);
    entry *hit = g_cache;
    while (hit && memcmp(hit->key, key, sizeof key)) hit = hit->next;
    if (!hit && atomic_load(&g_count) < TL_DNNL_CACHE_MAX) {
        e->next = g_cache;
        g_cache = e;
        atomic_fetch_add(&g_count, 1);
        hit = e;
        e = NULL;
    }
    pthread_mutex_unlock(&g_lock);
    if (hit) {
        entry_free(a, e);
        return hit;
    }
    *owned = true;
    return e;
}

static bool exec_reorder(const tl_dnnl_api *a, const slot *s, void *from, void *to) {
    dnnl_memory_t m[2] = {NULL, NULL};
    const dnnl_engine_t eng = tl__dnnl_engine();
    bool ok = a->memory_create(&m[0], s->output ? s->want : s->user, eng, from) == TL_DNNL_SUCCESS &&
              a->memory_create(&m[1], s->output ? s->user : s->want, eng, to) == TL_DNNL_SUCCESS;
    if (ok) {
        const dnnl_exec_arg_t args[2] = {{TL_DNNL_ARG_SRC, m[0]}, {TL_DNNL_ARG_DST, m[1]}};
        ok = a->primitive_execute(s->reorder, tl__dnnl_stream(), 2, args) == TL_DNNL_SUCCESS;
    }
    for (int i = 0; i < 2; i++)
        if (m[i]) a->memory_destroy(m[i]);
    return ok;
}

/* runs e on the plain buffers ptr[slot] (bias may be NULL): inputs
 * reordered into the primitive's layout, the output out of it */
static bool execute(const tl_dnnl_api *a, const entry *e, void *const ptr[NSLOT], const void *bias) {
    void *buf[NSLOT] = {NULL, NULL, NULL}, *scratch = NULL;
    dnnl_memory_t mem[NSLOT + 2] = {NULL};
    dnnl_exec_arg_t args[NSLOT + 2];
    int nargs = 0;
    const dnnl_engine_t eng = tl__dnnl_engine();
    /* temporaries from torchlet's caching allocator (64-byte aligned): a loop reuses the same pages */
    bool ok = !e->scratch || (scratch = tl_alloc((int64_t)e->scratch));
    for (int i = 0; ok && i < NSLOT; i++) {
        const slot *s = &e->s[i];
        void *p = ptr[i];
        if (s->reorder) {
            ok = (buf[i] = tl_alloc((int64_t)s->bytes)) && (s->output || exec_reorder(a, s, ptr[i], buf[i]));
            p = buf[i];
        }
        ok = ok && a->memory_create(&mem[nargs], s->want, eng, p) == TL_DNNL_SUCCESS;
        if (ok) args[nargs] = (dnnl_exec_arg_t){s->arg, mem[nargs]}, nargs++;
    }
    if (ok && bias) {
        ok = a->memory_create(&mem[nargs], e->bias_md, eng, (void *)bias) == TL_DNNL_SUCCESS;
        if (ok) args[nargs] = (dnnl_exec_arg_t){TL_DNNL_ARG_BIAS, mem[nargs]}, nargs++;
    }
    if (ok && scratch) {
        const_dnnl_memory_desc_t sp = a->primitive_desc_query_md(e->pd, TL_DNNL_QUERY_SCRATCHPAD_MD, 0);
        ok = a->memory_create(&mem[nargs], sp, eng, scratch) == TL_DNNL_SUCCESS;
        if (ok) args[nargs] = (dnnl_exec_arg_t){TL_DNNL_ARG_SCRATCHPAD, mem[nargs]}, nargs++;
    }
    ok = ok && a->primitive_execute(e->prim, tl__dnnl_stream(), nargs, args) == TL_DNNL_SUCCESS;
    for (int i = 0; ok && i < NSLOT; i++)
        if (e->s[i].output && e->s[i].reorder) ok = exec_reorder(a, &e->s[i], buf[i], ptr[i]);
    for (int i = 0; i < nargs; i++) a->memory_destroy(mem[i]);
    for (int i = 0; i < NSLOT; i++)
        if (buf[i]) tl_free(buf[i], (int64_t)e->s[i].bytes);
    if (scratch) tl_free(scratch, (int64_t)e->scratch);
    if (!ok)
        TL_WARN_ONCE("a oneDNN convolution primitive failed to run; the convolution ran on the im2col path "
                     "(TORCHLET_ONEDNN=0 turns oneDNN off)");
    return ok;
}

/* which products go to oneDNN (docs/NN.md "Convolution" has the figures):
 * float32 with every extent nonzero, except
 * - a 1x1 window with stride 1 and no padding: there the GEMM path builds
 *   no column matrix (the image is the GEMM operand) and measures faster
 *   than oneDNN with its two reorders;
 * - small problems, by PyTorch's rule (use_mkldnn in Convolution.cpp:
 *   "for some case, native is faster"): one image, one group, a window of
 *   at most 3 in its last two dims and an input of at most 20480 elements
 *   in its first four dims (N, C and the first two spatial dims of the
 *   4-d or 5-d view) stay on the im2col path, as PyTorch keeps them on
 *   its native one. */
static bool wanted(const tl_conv_geom *g) {
    if (g->dt != TL_FLOAT32 || g->N <= 0 || g->Ci <= 0 || g->Cc <= 0) return false;
    bool direct = true;
    for (int i = 0; i < TL_CONV_MAXD; i++) {
        if (g->isz[i] <= 0 || g->osz[i] <= 0) return false;
        direct = direct && g->k[i] == 1 && g->s[i] == 1 && g->p[i] == 0 && g->isz[i] == g->osz[i];
    }
    if (direct) return false;
    for (int i = 0; i < TL_CONV_MAXD; i++)
        if (right_pad(g, i) < 0) return false; /* oneDNN declines a negative padding */
    const int64_t *in = g->transposed ? g->osz : g->isz, C = g->transposed ? g->Cc : g->Ci;
    const int64_t lead = spatial_dims(g) == 3 ? in[0] * in[1] : in[1] * in[2];
    return g->N > 1 || g->G > 1 || (g->k[2] > 3 && g->k[1] > 3) || g->N * C * lead > 20480;
}

static bool run(const tl_conv_geom *g, int op, void *img, void *w, void *cols, const void *bias) {
    const tl_dnnl_api *a;
    if (!wanted(g) || !(a = tl__dnnl())) return false;
    bool owned;
    entry *e = entry_get(a, g, op, bias != NULL, &owned);
    if (!e) return false;
    void *const ptr[NSLOT] = {img, w, cols};
    const bool ok = execute(a, e, ptr, bias);
    if (owned) entry_free(a, e);
    return ok;
}

bool tl_conv_dnnl_cols_from_image(const tl_conv_geom *g, const void *X, const void *W, const void *bias, void *Y) {
    return run(g, OP_FWD, (void *)X, (void *)W, Y, bias);
}

bool tl_conv_dnnl_image_from_cols(const tl_conv_geom *g, const void *Y, const void *W, const void *bias, void *X) {
    if (!run(g, OP_BWD_DATA, X, (void *)W, (void *)Y, NULL)) return false;
    if (bias) { /* a transposed convolution's bias, on the image side */
        float *x = X;
        const float *b = bias;
        int64_t L = 1;
        for (int i = 0; i < TL_CONV_MAXD; i++) L *= g->isz[i];
        for (int64_t n = 0; n < g->N; n++)
            for (int64_t c = 0; c < g->Ci; c++, x += L)
                for (int64_t i = 0; i < L; i++) x[i] += b[c];
    }
    return true;
}

bool tl_conv_dnnl_weight_grad(const tl_conv_geom *g, const void *X, const void *Y, void *dW) {
    return run(g, OP_BWD_WEIGHTS, (void *)X, dW, (void *)Y, NULL);
}
