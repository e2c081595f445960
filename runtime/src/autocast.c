/* Autocast: thread-local state, the cast cache and the one generic kernel
 * that every operator of yaml/autocast.yaml runs at its autocast key
 * (runtime/include/tl_autocast.h, docs/DISPATCHER.md "Autocast"). */
#include "tl_autocast.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "tl_autograd.h"
#include "tl_error.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/_to_copy.h"

#define BIT(k) ((tl_keyset)1 << (k))

/* ============================================================ thread state */

/* per thread, like PyTorch's; zero means "default" so a fresh thread needs no
 * initialisation: dtype 0 stands for the device's default autocast dtype */
static _Thread_local int32_t t_dtype[2];
static _Thread_local int32_t t_cache_disabled;
static _Thread_local int32_t t_nesting;
static _Thread_local int64_t t_casts;

static int device_key(int device) {
    int k = tl_dispatch_key_autocast_of(device == TL_CPU ? TL_KEY_CPU : device == TL_CUDA ? TL_KEY_CUDA : -1);
    if (k < 0) tl_set_error(TL_ERR_RUNTIME, "autocast: unsupported device type %d", device);
    return k;
}

int tl_autocast_is_enabled(int device) {
    int k = device_key(device);
    if (k < 0) return -1;
    return (tl_tls_get_excluded() & BIT(k)) == 0;
}

int tl_autocast_set_enabled(int device, int enabled) {
    int k = device_key(device);
    if (k < 0) return -1;
    tl_keyset ex = tl_tls_get_excluded();
    return tl_tls_set_excluded(enabled ? ex & ~BIT(k) : ex | BIT(k));
}

int tl_autocast_get_dtype(int device) {
    if (device_key(device) < 0) return -1;
    if (t_dtype[device]) return t_dtype[device] - 1;
    return device == TL_CPU ? TL_BFLOAT16 : TL_FLOAT16;
}

int tl_autocast_set_dtype(int device, int dtype) {
    if (device_key(device) < 0) return -1;
    if (dtype < 0 || dtype >= TL_NUM_DTYPES)
        return tl_set_error(TL_ERR_VALUE, "autocast: invalid dtype %d", dtype);
    t_dtype[device] = dtype + 1;
    return 0;
}

int tl_autocast_is_cache_enabled(void) { return !t_cache_disabled; }
void tl_autocast_set_cache_enabled(int enabled) { t_cache_disabled = !enabled; }
int tl_autocast_increment_nesting(void) { return ++t_nesting; }
int tl_autocast_decrement_nesting(void) { return --t_nesting; }

/* ============================================================== cast cache */

/* Open addressing on the source tensor's address. An entry holds a reference
 * to its source, so the address cannot be reused by another tensor while the
 * entry lives, and the version counter the cast was made at: an in-place
 * update of the source (an optimizer step, .data edits, copy_) makes the entry
 * stale and the next lookup casts again. */
typedef struct cache_entry {
    tl_tensor *src; /* NULL: empty slot */
    tl_tensor *cast;
    int64_t version;
    int32_t dtype;
} cache_entry;

static pthread_mutex_t g_cache_lock = PTHREAD_MUTEX_INITIALIZER;
static cache_entry *g_cache;
static size_t g_cache_cap, g_cache_len;

static size_t slot_of(const tl_tensor *t, size_t cap) {
    uint64_t h = (uint64_t)(uintptr_t)t * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 17) & (cap - 1);
}

static cache_entry *cache_find_locked(const tl_tensor *t) {
    if (!g_cache_cap) return NULL;
    for (size_t i = slot_of(t, g_cache_cap);; i = (i + 1) & (g_cache_cap - 1)) {
        if (g_cache[i].src == t) return &g_cache[i];
        if (!g_cache[i].src) return NULL;
    }
}

static int cache_grow_locked(void) {
    size_t cap = g_cache_cap ? g_cache_cap * 2 : 64;
    cache_entry *tab = calloc(cap, sizeof *tab);
    if (!tab) return tl_set_error(TL_ERR_MEMORY, "autocast: out of memory");
    for (size_t i = 0; i < g_cache_cap; i++) {
        if (!g_cache[i].src) continue;
        size_t j = slot_of(g_cache[i].src, cap);
        while (tab[j].src) j = (j + 1) & (cap - 1);
        tab[j] = g_cache[i];
    }
    free(g_cache);
    g_cache = tab;
    g_cache_cap = cap;
    return 0;
}

/* stores (src -> cast); a stale entry for src is replaced. The references the
 * entry drops are returned in *drop_src / *drop_cast, released by the caller
 * outside the lock (a release can run arbitrary deleters). */
static int cache_put_locked(tl_tensor *src, tl_tensor *cast, int64_t version, int dtype,
                            tl_tensor **drop_cast) {
    cache_entry *e = cache_find_locked(src);
    if (e) {
        *drop_cast = e->cast;
    } else {
        if ((g_cache_len + 1) * 2 > g_cache_cap && cache_grow_locked() < 0) return -1;
        size_t i = slot_of(src, g_cache_cap);
        while (g_cache[i].src) i = (i + 1) & (g_cache_cap - 1);
        e = &g_cache[i];
        tl_tensor_retain(src);
        e->src = src;
        g_cache_len++;
    }
    tl_tensor_retain(cast);
    e->cast = cast;
    e->version = version;
    e->dtype = dtype;
    return 0;
}

void tl_autocast_clear_cache(void) {
    pthread_mutex_lock(&g_cache_lock);
    cache_entry *tab = g_cache;
    size_t cap = g_cache_cap;
    g_cache = NULL;
    g_cache_cap = g_cache_len = 0;
    pthread_mutex_unlock(&g_cache_lock);
    for (size_t i = 0; i < cap; i++) {
        if (!tab[i].src) continue;
        tl_tensor_release(tab[i].cast);
        tl_tensor_release(tab[i].src);
    }
    free(tab);
}

int64_t tl_autocast_cache_size(void) {
    pthread_mutex_lock(&g_cache_lock);
    int64_t n = (int64_t)g_cache_len;
    pthread_mutex_unlock(&g_cache_lock);
    return n;
}

/* ================================================================= casting */

/* PyTorch's is_autocast_eligible: a defined floating tensor on the device,
 * never float64 */
static bool eligible(const tl_tensor *t, int device) {
    if (!t || (int)tl_tensor_device(t) != device) return false;
    tl_dtype dt = tl_tensor_dtype(t);
    return tl_dtype_is_floating(dt) && dt != TL_FLOAT64;
}

int64_t tl_autocast_cast_count(void) { return t_casts; }

static tl_tensor *to_copy(tl_tensor *t, int dtype) {
    t_casts++;
    return tl_ops__to_copy(t, (tl_dtype)dtype, -1, -1, false, false, false, -1);
}

/* PyTorch's cached_cast: a new reference to t cast to `to` (or to t itself
 * when it is not eligible or already of that dtype) */
static tl_tensor *cached_cast(tl_tensor *t, int to, int device) {
    if (!eligible(t, device) || (int)tl_tensor_dtype(t) == to) {
        tl_tensor_retain(t);
        return t;
    }
    bool can_cache = to == tl_autocast_get_dtype(device) && tl_tensor_dtype(t) == TL_FLOAT32 &&
                     !t_cache_disabled && tl_autograd_requires_grad(t) && tl_autograd_is_leaf(t) &&
                     !tl_autograd_is_view(t);
    if (!can_cache) return to_copy(t, to);
    int64_t version = tl_tensor_version(t);
    pthread_mutex_lock(&g_cache_lock);
    cache_entry *e = cache_find_locked(t);
    if (e && e->version == version && e->dtype == to) {
        tl_tensor *hit = e->cast;
        tl_tensor_retain(hit);
        pthread_mutex_unlock(&g_cache_lock);
        return hit;
    }
    pthread_mutex_unlock(&g_cache_lock);
    /* cast outside the lock: _to_copy dispatches, possibly into Python */
    tl_tensor *cast = to_copy(t, to);
    if (!cast) return NULL;
    tl_tensor *drop = NULL;
    pthread_mutex_lock(&g_cache_lock);
    int rc = cache_put_locked(t, cast, version, to, &drop);
    pthread_mutex_unlock(&g_cache_lock);
    tl_tensor_release(drop);
    if (rc < 0) {
        tl_tensor_release(cast);
        return NULL;
    }
    return cast;
}

/* PyTorch's prioritize: float32 beats lower precision, doubles are ignored */
static int prioritize(int current, const tl_tensor *t, int device, int lower) {
    if (!eligible(t, device)) return current;
    int next = (int)tl_tensor_dtype(t);
    if (current == TL_FLOAT32 || next == TL_FLOAT32) return TL_FLOAT32;
    if (current == lower && next == lower) return lower;
    tl_set_error(TL_ERR_RUNTIME, "Unexpected floating ScalarType in at::autocast::prioritize");
    return -1;
}

/* the dtype the tensor arguments are cast to, or -1 (error) */
static int promote_type(tl_stack *st, int nargs, int device) {
    int lower = tl_autocast_get_dtype(device);
    int to = lower;
    for (int i = 0; i < nargs && to >= 0; i++) {
        tl_ivalue *v = tl_stack_peek(st, nargs - 1 - i);
        if (v->tag == TL_IV_TENSOR) {
            to = prioritize(to, v->u.t, device, lower);
        } else if (v->tag == TL_IV_TENSOR_LIST || v->tag == TL_IV_OPT_TENSOR_LIST) {
            for (int64_t j = 0; j < v->u.tensors.len && to >= 0; j++)
                to = prioritize(to, v->u.tensors.data[j], device, lower);
        }
    }
    return to;
}

/* casts every tensor argument (Tensor, Tensor?, Tensor[], Tensor?[]) on the
 * stack in place */
static int cast_args(tl_stack *st, int nargs, int to, int device) {
    for (int i = 0; i < nargs; i++) {
        tl_ivalue *v = tl_stack_peek(st, nargs - 1 - i);
        if (v->tag == TL_IV_TENSOR) {
            tl_tensor *c = cached_cast(v->u.t, to, device);
            if (!c) return -1;
            tl_tensor_release(v->u.t);
            v->u.t = c;
        } else if (v->tag == TL_IV_TENSOR_LIST || v->tag == TL_IV_OPT_TENSOR_LIST) {
            for (int64_t j = 0; j < v->u.tensors.len; j++) {
                tl_tensor *t = v->u.tensors.data[j];
                if (!t) continue;
                tl_tensor *c = cached_cast(t, to, device);
                if (!c) return -1;
                tl_tensor_release(t);
                v->u.tensors.data[j] = c;
            }
        }
    }
    return 0;
}

static int apply_policy(const tl_autocast_rule *r, tl_stack *st, int nargs) {
    switch (r->policy) {
    case TL_AUTOCAST_LOWER_PRECISION_FP:
        return cast_args(st, nargs, tl_autocast_get_dtype(r->device), r->device);
    case TL_AUTOCAST_FP32:
        return cast_args(st, nargs, TL_FLOAT32, r->device);
    case TL_AUTOCAST_FP32_SET_OPT_DTYPE: {
        /* an explicit dtype= wins; an ineligible first argument keeps the
         * operator's own promotion (PyTorch's firstarg_is_eligible) */
        tl_ivalue *first = nargs > 0 ? tl_stack_peek(st, nargs - 1) : NULL;
        tl_ivalue *dt = r->dtype_arg >= 0 && r->dtype_arg < nargs ? tl_stack_peek(st, nargs - 1 - r->dtype_arg) : NULL;
        if (first && first->tag == TL_IV_TENSOR && eligible(first->u.t, r->device) && dt &&
            dt->tag == TL_IV_NONE) {
            dt->tag = TL_IV_DTYPE;
            dt->u.i = TL_FLOAT32;
        }
        return 0;
    }
    case TL_AUTOCAST_CAST_TO:
        return cast_args(st, nargs, r->dtype, r->device);
    case TL_AUTOCAST_PROMOTE: {
        int to = promote_type(st, nargs, r->device);
        return to < 0 ? -1 : cast_args(st, nargs, to, r->device);
    }
    case TL_AUTOCAST_BANNED:   /* PyTorch bans one operator, with this text (autocast_mode.cpp) */
        return tl_set_error(TL_ERR_RUNTIME,
                            "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
                            "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
                            "In this case, combine the two layers using "
                            "torch.nn.functional.binary_cross_entropy_with_logits\n"
                            "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
                            "safe to autocast.");
    default:
        return tl_set_error(TL_ERR_RUNTIME, "autocast: unknown policy %d for %s", r->policy, r->op);
    }
}

int tl_autocast_boxed(const tl_kernel *kernel, const tl_operator *op, tl_keyset ks, tl_stack *stack) {
    const tl_autocast_rule *r = kernel->ctx;
    int key = device_key(r->device);
    if (key < 0) return -1;
    int nargs = tl_op_num_arguments(op);
    if (nargs < 0 || tl_stack_size(stack) < nargs)
        return tl_set_error(TL_ERR_RUNTIME, "autocast: %s: the stack holds too few arguments", r->op);
    /* the casts and the nested call run with this autocast key excluded:
     * the _to_copy casts are not autocast themselves, and an operator that
     * decomposes into listed ones is not cast twice */
    tl_keyset prev = tl_exclude_guard_enter(BIT(key));
    int rc = apply_policy(r, stack, nargs);
    if (rc == 0) rc = tl_op_redispatch_boxed(op, tl_keyset_below(ks, key), stack);
    tl_exclude_guard_exit(prev);
    return rc;
}

/* ============================================================ registration */

int tl_autocast_register_all(void) {
    static int done = 0;
    if (done) return 0;
    for (int64_t i = 0; i < tl_autocast_num_rules; i++) {
        const tl_autocast_rule *r = &tl_autocast_rules[i];
        tl_operator *op = tl_op_find(r->op);
        if (!op)
            return tl_set_error(TL_ERR_RUNTIME, "autocast: %s (%s) is not a defined operator", r->op,
                                r->source);
        int key = device_key(r->device);
        if (key < 0) return -1;
        if (tl_op_register_kernel(op, key, NULL, tl_autocast_boxed, (void *)r, r->source) < 0) return -1;
    }
    done = 1;
    return 0;
}
