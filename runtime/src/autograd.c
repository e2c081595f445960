/* torchlet runtime: autograd nodes, per-tensor metadata, saved variables,
 * grad mode / inference mode (see runtime/include/tl_autograd.h and
 * docs/AUTOGRAD.md). The engine is in autograd_engine.c. */
#define _GNU_SOURCE 1
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd_internal.h"
#include "tl_dispatch.h"
#include "tl_error.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/add.h"
#include "ops/mul.h"

static int64_t g_live_nodes = 0;
static uint64_t g_next_sequence_nr = 0;

int64_t tl_autograd_live_nodes(void) { return __atomic_load_n(&g_live_nodes, __ATOMIC_RELAXED); }

/* ====================================================================== modes
 * Grad mode off == every Autograd* key excluded thread-locally; inference
 * mode == additionally ADInplaceOrView excluded (c10::InferenceMode). */
static inline tl_keyset ag_keys(void) { return tl_keyset_autograd(); }
static inline tl_keyset inference_keys(void) {
    return tl_keyset_autograd() | ((tl_keyset)1 << TL_KEY_AD_INPLACE_OR_VIEW);
}

int tl_grad_mode_is_enabled(void) { return (tl_tls_get_excluded() & ag_keys()) == 0; }

void tl_grad_mode_set_enabled(int enabled) {
    tl_keyset ex = tl_tls_get_excluded();
    tl_tls_set_excluded(enabled ? (ex & ~ag_keys()) : (ex | ag_keys()));
}

int tl_inference_mode_is_enabled(void) {
    return (tl_tls_get_excluded() & ((tl_keyset)1 << TL_KEY_AD_INPLACE_OR_VIEW)) != 0;
}

uint64_t tl_grad_mode_guard_enter(int enabled) {
    tl_keyset prev = tl_tls_get_excluded();
    tl_tls_set_excluded(enabled ? (prev & ~ag_keys()) : (prev | ag_keys()));
    return prev;
}

uint64_t tl_inference_mode_guard_enter(int enabled) {
    tl_keyset prev = tl_tls_get_excluded();
    tl_tls_set_excluded(enabled ? (prev | inference_keys()) : (prev & ~inference_keys()));
    return prev;
}

void tl_autograd_mode_guard_exit(uint64_t previous) { tl_tls_set_excluded(previous); }

/* ====================================================================== nodes */
static size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }

tl_node *tl_node_new(const tl_node_vtable *vt, size_t size, int32_t num_inputs, int32_t num_next) {
    if (!vt || size < sizeof(tl_node) || num_inputs < 0 || num_next < 0) {
        tl_set_error(TL_ERR_RUNTIME, "tl_node_new: invalid arguments");
        return NULL;
    }
    size_t head = align8(size);
    size_t total = head + (size_t)num_next * sizeof(tl_edge) + (size_t)num_inputs * sizeof(tl_input_meta);
    char *mem = calloc(1, total);
    if (!mem) {
        tl_set_error(TL_ERR_MEMORY, "autograd: out of memory allocating a %s node", vt->name ? vt->name : "");
        return NULL;
    }
    tl_node *n = (tl_node *)mem;
    n->refcount = 1;
    n->vt = vt;
    n->sequence_nr = __atomic_fetch_add(&g_next_sequence_nr, 1, __ATOMIC_RELAXED);
    n->num_inputs = num_inputs;
    n->num_next = num_next;
    n->next = num_next ? (tl_edge *)(mem + head) : NULL;
    n->input_meta = num_inputs ? (tl_input_meta *)(mem + head + (size_t)num_next * sizeof(tl_edge)) : NULL;
    __atomic_add_fetch(&g_live_nodes, 1, __ATOMIC_RELAXED);
    return n;
}

void tl_node_retain(tl_node *n) {
    if (n) __atomic_add_fetch(&n->refcount, 1, __ATOMIC_RELAXED);
}

/* retain unless the count already reached zero (a dying weak target) */
static int node_try_retain(tl_node *n) {
    int64_t rc = __atomic_load_n(&n->refcount, __ATOMIC_RELAXED);
    while (rc > 0) {
        if (__atomic_compare_exchange_n(&n->refcount, &rc, rc + 1, 1, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            return 1;
    }
    return 0;
}

/* Destruction is deferred onto a thread-local list while one is running, so
 * freeing a chain of a million nodes (node -> edge -> node, or node -> saved
 * tensor -> grad_fn) never recurses. */
static _Thread_local tl_node *g_free_list = NULL;
static _Thread_local int g_freeing = 0;

static void node_destroy(tl_node *n) {
    if (n->vt->release_saved_variables) n->vt->release_saved_variables(n);
    if (n->vt->destroy) n->vt->destroy(n);
    for (int32_t i = 0; i < n->num_next; i++) {
        tl_node_release(n->next[i].node);
        n->next[i].node = NULL;
    }
    for (int32_t i = 0; i < n->num_inputs; i++)
        if (n->input_meta[i].sizes && n->input_meta[i].sizes != n->input_meta[i].inl)
            free(n->input_meta[i].sizes);
    free(n->retained);
    __atomic_sub_fetch(&g_live_nodes, 1, __ATOMIC_RELAXED);
    free(n);
}

void tl_node_release(tl_node *n) {
    if (!n) return;
    if (__atomic_sub_fetch(&n->refcount, 1, __ATOMIC_ACQ_REL) != 0) return;
    n->pending_free = g_free_list;
    g_free_list = n;
    if (g_freeing) return;
    g_freeing = 1;
    while ((n = g_free_list) != NULL) {
        g_free_list = n->pending_free;
        node_destroy(n);
    }
    g_freeing = 0;
}

int64_t tl_node_refcount(const tl_node *n) { return n ? __atomic_load_n(&n->refcount, __ATOMIC_RELAXED) : 0; }
const char *tl_node_name(const tl_node *n) { return n && n->vt->name ? n->vt->name : ""; }
int32_t tl_node_num_inputs(const tl_node *n) { return n ? n->num_inputs : 0; }
int32_t tl_node_num_next(const tl_node *n) { return n ? n->num_next : 0; }
uint64_t tl_node_sequence_nr(const tl_node *n) { return n ? n->sequence_nr : 0; }

tl_edge tl_node_next_edge(const tl_node *n, int32_t i) {
    tl_edge e = {NULL, 0};
    if (n && i >= 0 && i < n->num_next) e = n->next[i];
    return e;
}

int tl_node_set_next_edge(tl_node *node, int32_t i, tl_edge edge) {
    if (!node || i < 0 || i >= node->num_next)
        return tl_set_error(TL_ERR_INDEX, "tl_node_set_next_edge: edge index %d out of range", (int)i);
    tl_node_retain(edge.node);
    tl_node *old = node->next[i].node;
    node->next[i] = edge;
    tl_node_release(old);
    return 0;
}

int tl_node_set_next_edges(tl_node *node, tl_tensor *const *inputs, int32_t n) {
    if (!node || n != node->num_next)
        return tl_set_error(TL_ERR_RUNTIME, "tl_node_set_next_edges: %d inputs for a node with %d edges",
                            (int)n, node ? (int)node->num_next : -1);
    for (int32_t i = 0; i < n; i++) {
        tl_edge e = {NULL, 0};
        if (inputs[i]) {
            e = tl_autograd_gradient_edge(inputs[i]);
            if (!e.node && tl_error_kind_get() != TL_OK) return -1;
        }
        tl_node *old = node->next[i].node;
        node->next[i] = e;                       /* takes the new reference */
        tl_node_release(old);
    }
    node->view_hint = n > 0 ? inputs[0] : NULL;  /* weak; read by set_history */
    return 0;
}

int tl_node_should_compute_output(const tl_node *node, int32_t i) {
    if (!node || i < 0 || i >= node->num_next) return 0;
    const tl_node *nx = node->next[i].node;
    if (i == 0 && (node->flags & AG_NODE_OUTPUT0_WANTED)) return nx != NULL;
    return nx != NULL && ag_engine_wants(nx);
}

static int record_input_meta(tl_node *node, int32_t nr, const tl_tensor *t) {
    if (nr < 0 || nr >= node->num_inputs)
        return tl_set_error(TL_ERR_RUNTIME, "autograd: output_nr %d out of range for %s (%d outputs)",
                            (int)nr, tl_node_name(node), (int)node->num_inputs);
    tl_input_meta *m = &node->input_meta[nr];
    int64_t nd = t->ndim;
    if (m->sizes && m->sizes != m->inl) free(m->sizes);
    m->sizes = m->inl;
    if (nd > AG_INLINE_DIMS) {
        m->sizes = malloc((size_t)nd * sizeof(int64_t));
        if (!m->sizes) {
            m->sizes = m->inl;
            m->set = 0;
            return tl_set_error(TL_ERR_MEMORY, "autograd: out of memory");
        }
    }
    if (nd) memcpy(m->sizes, t->sizes, (size_t)nd * sizeof(int64_t));
    m->ndim = nd;
    m->dtype = t->dtype;
    m->device = t->device;
    m->set = 1;
    return 0;
}

int64_t tl_node_input_shape(const tl_node *node, int32_t i, const int64_t **sizes, tl_dtype *dtype) {
    if (!node || i < 0 || i >= node->num_inputs || !node->input_meta[i].set) return -1;
    if (sizes) *sizes = node->input_meta[i].sizes;
    if (dtype) *dtype = node->input_meta[i].dtype;
    return node->input_meta[i].ndim;
}

/* ============================================================ retain_grad() */
static int retained_add(tl_node *node, int32_t nr, tl_tensor *t) {
    ag_retained *r = node->retained;
    if (!r || r->n == r->cap) {
        int32_t cap = r ? r->cap * 2 : 2;
        ag_retained *nr_ = realloc(r, sizeof(ag_retained) + (size_t)cap * sizeof(r->e[0]));
        if (!nr_) return tl_set_error(TL_ERR_MEMORY, "autograd: out of memory");
        if (!r) nr_->n = 0;
        nr_->cap = cap;
        node->retained = r = nr_;
    }
    r->e[r->n].output_nr = nr;
    r->e[r->n].t = t;
    r->n++;
    return 0;
}

static void retained_remove(tl_node *node, tl_tensor *t) {
    ag_retained *r = node ? node->retained : NULL;
    if (!r) return;
    for (int32_t i = 0; i < r->n; i++)
        if (r->e[i].t == t) {
            r->e[i] = r->e[--r->n];
            return;
        }
}

int ag_run_retained(tl_node *node, tl_tensor *const *grads_in) {
    ag_retained *r = node->retained;
    for (int32_t i = 0; r && i < r->n; i++) {
        tl_tensor *g = grads_in[r->e[i].output_nr];
        if (!g) continue;
        ag_meta *m = ag_meta_of(r->e[i].t);
        if (!m) continue;
        tl_tensor *res;
        if (!m->grad) res = tl_grad_mode_is_enabled() ? (tl_tensor_retain(g), g) : tl_clone(g);
        else res = tl_ops_add_Tensor(m->grad, g, tl_scalar_from_int(1));
        if (!res) return -1;
        tl_tensor_release(m->grad);
        m->grad = res;
    }
    return 0;
}

int tl_autograd_retain_grad(tl_tensor *t) {
    if (!t) return tl_set_error(TL_ERR_RUNTIME, "retain_grad: undefined tensor");
    if (!tl_autograd_requires_grad(t))
        return tl_set_error(TL_ERR_RUNTIME, "can't retain_grad on Tensor that has requires_grad=False");
    ag_meta *m = ag_meta_of(t);
    if (!m->grad_fn || m->retains_grad) return 0;     /* leaf: no-op */
    if (retained_add(m->grad_fn, m->output_nr, t) < 0) return -1;
    m->retains_grad = 1;
    return 0;
}

int tl_autograd_retains_grad(const tl_tensor *t) {
    ag_meta *m = ag_meta_of(t);
    return m && m->retains_grad;
}

/* ================================================================ metadata */
static void ag_meta_free(void *p) {
    ag_meta *m = p;
    /* the tensor is dying: no AccumulateGrad can exist (it would own it) */
    if (m->retains_grad) retained_remove(m->grad_fn, m->owner);
    tl_tensor_release(m->base);
    tl_tensor_release(m->grad);
    tl_node_release(m->grad_fn);
    free(m);
}

ag_meta *ag_meta_get_or_create(tl_tensor *t) {
    ag_meta *m = ag_meta_of(t);
    if (m) return m;
    m = calloc(1, sizeof(*m));
    if (!m) {
        tl_set_error(TL_ERR_MEMORY, "autograd: out of memory");
        return NULL;
    }
    m->owner = t;
    tl_tensor_set_autograd_meta(t, m, ag_meta_free);
    return m;
}

static int regenerate_view_grad_fn(tl_tensor *view, ag_meta *m);

/* a view whose shared version counter moved since its history was set gets a
 * fresh AsStridedBackward0 of its base (PyTorch's lazy view grad_fn) */
static inline int view_is_stale(const tl_tensor *t, const ag_meta *m) {
    return m->is_view && m->grad_fn && m->attr_version != tl_tensor_version(t);
}

int tl_autograd_is_view(const tl_tensor *t) {
    const ag_meta *m = t ? ag_meta_of(t) : NULL;
    return m && m->is_view;
}

int tl_autograd_requires_grad(const tl_tensor *t) {
    ag_meta *m = ag_meta_of(t);
    return m && (m->requires_grad || m->grad_fn);
}

int tl_autograd_is_leaf(const tl_tensor *t) {
    ag_meta *m = ag_meta_of(t);
    return !m || !m->grad_fn;
}

int tl_autograd_any_requires_grad(tl_tensor *const *ts, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        if (tl_autograd_requires_grad(ts[i])) return 1;
    return 0;
}

int tl_autograd_compute_requires_grad(tl_tensor *const *ts, int64_t n) {
    return tl_autograd_any_requires_grad(ts, n) && tl_grad_mode_is_enabled();
}

int tl_autograd_check_out(const char *opname, tl_tensor *const *ts, int64_t n) {
    if (!tl_autograd_compute_requires_grad(ts, n)) return 0;
    return tl_set_error(TL_ERR_RUNTIME, "%s(): functions with out=... arguments don't support automatic "
                        "differentiation, but one of the arguments requires grad.", opname);
}

int tl_autograd_set_requires_grad(tl_tensor *t, int requires_grad) {
    if (!t) return tl_set_error(TL_ERR_RUNTIME, "requires_grad: undefined tensor");
    ag_meta *m = ag_meta_of(t);
    if (m && m->grad_fn) {
        if (requires_grad)
            return tl_set_error(TL_ERR_RUNTIME, "you can only change requires_grad flags of leaf variables.");
        return tl_set_error(TL_ERR_RUNTIME,
                            "you can only change requires_grad flags of leaf variables. If you want to use a "
                            "computed variable in a subgraph that doesn't require differentiation use "
                            "var_no_grad = var.detach().");
    }
    if (requires_grad && !tl_dtype_is_floating(t->dtype) && !tl_dtype_is_complex(t->dtype))
        return tl_set_error(TL_ERR_RUNTIME, "only Tensors of floating point and complex dtype can require gradients");
    if (!m) {
        if (!requires_grad) return 0;
        if (!(m = ag_meta_get_or_create(t))) return -1;
    }
    m->requires_grad = requires_grad ? 1 : 0;
    return 0;
}

tl_node *tl_autograd_grad_fn(const tl_tensor *t) {
    ag_meta *m = ag_meta_of(t);
    if (m && view_is_stale(t, m) && regenerate_view_grad_fn((tl_tensor *)t, m) < 0) tl_clear_error();
    if (!m || !m->grad_fn) return NULL;
    tl_node_retain(m->grad_fn);
    return m->grad_fn;
}

int32_t tl_autograd_output_nr(const tl_tensor *t) {
    ag_meta *m = ag_meta_of(t);
    return m ? m->output_nr : 0;
}

tl_tensor *tl_autograd_get_grad(const tl_tensor *t) {
    ag_meta *m = ag_meta_of(t);
    if (!m || !m->grad) return NULL;
    tl_tensor_retain(m->grad);
    return m->grad;
}

static void format_sizes(char *buf, size_t n, int64_t ndim, const int64_t *sizes) {
    size_t k = 0;
    k += (size_t)snprintf(buf + k, n - k, "[");
    for (int64_t i = 0; i < ndim && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, i ? ", %lld" : "%lld", (long long)sizes[i]);
    if (k < n) snprintf(buf + k, n - k, "]");
}

static const char *device_type_name(tl_device_type d) {
    return d == TL_CPU ? "cpu" : d == TL_META ? "meta" : d == TL_CUDA ? "cuda" : "unknown";
}

int tl_autograd_set_grad(tl_tensor *t, tl_tensor *g) {
    if (!t) return tl_set_error(TL_ERR_RUNTIME, "grad: undefined tensor");
    ag_meta *m = ag_meta_of(t);
    if (!g) {
        if (m) {
            tl_tensor_release(m->grad);
            m->grad = NULL;
        }
        return 0;
    }
    if (g->device != t->device)
        return tl_set_error(TL_ERR_RUNTIME,
                            "attempting to assign a gradient with device type '%s' to a tensor with device type "
                            "'%s'. Please ensure that the gradient and the tensor are on the same device",
                            device_type_name(g->device), device_type_name(t->device));
    if (g->dtype != t->dtype)
        return tl_set_error(TL_ERR_RUNTIME,
                            "attempting to assign a gradient with dtype '%s' to a tensor with grad_dtype '%s'. The "
                            "gradient must match the tensor's grad_dtype (defaults to the tensor's dtype). You can "
                            "set the tensor's grad_dtype attribute with a specific dtype, or None to allow any "
                            "dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor and its gradient "
                            "may break downstream systems that assume they match.",
                            tl_dtype_caffe2_name(g->dtype), tl_dtype_scalar_name(t->dtype));
    if (g->ndim != t->ndim || (t->ndim && memcmp(g->sizes, t->sizes, (size_t)t->ndim * sizeof(int64_t)))) {
        char gs[512], ts[512];
        format_sizes(gs, sizeof gs, g->ndim, g->sizes);
        format_sizes(ts, sizeof ts, t->ndim, t->sizes);
        return tl_set_error(TL_ERR_RUNTIME,
                            "attempting to assign a gradient of size '%s' to a tensor of size '%s'. Please ensure "
                            "that the gradient and the tensor are the same size", gs, ts);
    }
    if (!m && !(m = ag_meta_get_or_create(t))) return -1;
    tl_tensor_retain(g);
    tl_tensor_release(m->grad);
    m->grad = g;
    return 0;
}

tl_tensor *tl_node_variable(const tl_node *n);

/* ------------------------------------------------------------ AccumulateGrad */
typedef struct {
    tl_node base;
    tl_tensor *variable;   /* strong */
} accumulate_grad_node;

static int accumulate_grad_apply(tl_node *node, tl_tensor *const *grads_in, tl_tensor **grads_out) {
    (void)grads_out;
    accumulate_grad_node *a = (accumulate_grad_node *)node;
    if (!grads_in[0]) return 0;
    return tl_autograd_accumulate_grad(a->variable, grads_in[0]);
}

/* A leaf's accumulator is held weakly (m->grad_accumulator) and made again
 * once every graph using it is gone. Reading the weak slot and retaining what
 * it points to, and clearing it when its node dies, happen under one lock:
 * otherwise a thread building a graph could retain a node another thread's
 * last release is freeing (concurrent backward into a shared leaf), and two
 * threads could each make an accumulator for the same leaf. */
static pthread_mutex_t g_accumulator_lock = PTHREAD_MUTEX_INITIALIZER;

static void accumulate_grad_destroy(tl_node *node) {
    accumulate_grad_node *a = (accumulate_grad_node *)node;
    ag_meta *m = ag_meta_of(a->variable);
    if (m) {
        tl_node *self = node;
        pthread_mutex_lock(&g_accumulator_lock);
        __atomic_compare_exchange_n(&m->grad_accumulator, &self, NULL, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&g_accumulator_lock);
    }
    tl_tensor_release(a->variable);
    a->variable = NULL;
}

static const tl_node_vtable accumulate_grad_vtable = {
    "torch::autograd::AccumulateGrad", accumulate_grad_apply, NULL, accumulate_grad_destroy,
};

tl_tensor *tl_node_variable(const tl_node *n) {
    if (!n || n->vt != &accumulate_grad_vtable) return NULL;
    tl_tensor *v = ((const accumulate_grad_node *)n)->variable;
    tl_tensor_retain(v);
    return v;
}

static tl_node *grad_accumulator(tl_tensor *t, ag_meta *m, int create) {
    pthread_mutex_lock(&g_accumulator_lock);
    tl_node *acc = __atomic_load_n(&m->grad_accumulator, __ATOMIC_ACQUIRE);
    if (acc && node_try_retain(acc)) goto done;   /* a dying node (refcount 0) is not retained */
    acc = NULL;
    if (!create) goto done;
    acc = tl_node_new(&accumulate_grad_vtable, sizeof(accumulate_grad_node), 1, 0);
    if (!acc) goto done;
    acc->sequence_nr = UINT64_MAX;
    if (record_input_meta(acc, 0, t) < 0) {
        pthread_mutex_unlock(&g_accumulator_lock);
        tl_node_release(acc);   /* its variable is not set: destroy does not take the lock */
        return NULL;
    }
    tl_tensor_retain(t);
    ((accumulate_grad_node *)acc)->variable = t;
    __atomic_store_n(&m->grad_accumulator, acc, __ATOMIC_RELEASE);   /* weak */
done:
    pthread_mutex_unlock(&g_accumulator_lock);
    return acc;
}

static tl_edge gradient_edge(tl_tensor *t, int create) {
    tl_edge e = {NULL, 0};
    ag_meta *m = ag_meta_of(t);
    if (!m) return e;
    if (view_is_stale(t, m) && regenerate_view_grad_fn(t, m) < 0) return e;
    if (m->grad_fn) {
        tl_node_retain(m->grad_fn);
        e.node = m->grad_fn;
        e.input_nr = m->output_nr;
    } else if (m->requires_grad) {
        e.node = grad_accumulator(t, m, create);
    }
    return e;
}

tl_edge tl_autograd_gradient_edge(tl_tensor *t) { return gradient_edge(t, 1); }
tl_edge ag_gradient_edge_existing(tl_tensor *t) { return gradient_edge(t, 0); }

/* ------------------------------------------------------------ history */
static int set_grad_fn(tl_tensor *t, ag_meta *m, tl_node *node, int32_t output_nr) {
    if (m->retains_grad && m->grad_fn != node) {
        retained_remove(m->grad_fn, t);
        m->retains_grad = 0;
        if (node) {
            if (retained_add(node, output_nr, t) < 0) return -1;
            m->retains_grad = 1;
        }
    }
    tl_node_retain(node);
    tl_node *old = m->grad_fn;
    m->grad_fn = node;
    m->output_nr = output_nr;
    if (m->is_view) m->attr_version = tl_tensor_version(t);
    tl_node_release(old);
    return 0;
}

int tl_autograd_set_history(tl_tensor *out, tl_node *node, int32_t output_nr) {
    if (!out || !node) return 0;
    tl_tensor *hint = node->view_hint;
    node->view_hint = NULL;
    if (!tl_dtype_is_floating(out->dtype) && !tl_dtype_is_complex(out->dtype)) return 0;
    if (out == hint) return 0;   /* an op that returned its input itself: no new history */
    if (record_input_meta(node, output_nr, out) < 0) return -1;
    ag_meta *m = ag_meta_get_or_create(out);
    if (!m) return -1;
    if (hint && hint != out && output_nr == 0 && hint->storage == out->storage && !m->is_view) {
        /* the output aliases the first input: a view of that input's base */
        ag_meta *hm = ag_meta_of(hint);
        tl_tensor *base = hm && hm->is_view && hm->base ? hm->base : hint;
        tl_tensor_retain(base);
        m->base = base;
        m->is_view = 1;
    }
    return set_grad_fn(out, m, node, output_nr);
}

int tl_autograd_track_view(tl_tensor *view, tl_tensor *input) {
    if (!view || !input || view == input || view->storage != input->storage) return 0;
    if (!tl_dtype_is_floating(view->dtype) && !tl_dtype_is_complex(view->dtype)) return 0;
    ag_meta *m = ag_meta_get_or_create(view);
    if (!m) return -1;
    if (m->is_view) return 0;
    ag_meta *hm = ag_meta_of(input);
    tl_tensor *base = hm && hm->is_view && hm->base ? hm->base : input;
    tl_tensor_retain(base);
    m->base = base;
    m->is_view = 1;
    m->attr_version = tl_tensor_version(view);
    return 0;
}

/* ------------------------------------------------------- views: CopySlices */
typedef struct {
    int64_t ndim, offset;
    int64_t *sizes, *strides;   /* one block: sizes then strides */
} geometry;

static int geometry_init(geometry *g, const tl_tensor *t) {
    g->ndim = t->ndim;
    g->offset = t->storage_offset;
    g->sizes = malloc((size_t)(2 * t->ndim + 1) * sizeof(int64_t));
    if (!g->sizes) return tl_set_error(TL_ERR_MEMORY, "autograd: out of memory");
    g->strides = g->sizes + t->ndim;
    if (t->ndim) {
        memcpy(g->sizes, t->sizes, (size_t)t->ndim * sizeof(int64_t));
        memcpy(g->strides, t->strides, (size_t)t->ndim * sizeof(int64_t));
    }
    return 0;
}

/* grad laid out over a zero (or given) tensor with the base's geometry: the
 * view's region of it, as a view (new ref) */
static tl_tensor *region_of(tl_tensor *full, const geometry *b, const geometry *v) {
    return tl_as_strided(full, v->ndim, v->sizes, v->strides, v->offset - b->offset);
}

typedef struct {
    tl_node base;
    tl_node *fn;                /* the in-place op's node (strong) */
    geometry base_g, view_g;
} copy_slices_node;

/* PyTorch's CopySlices: the gradient of the base after an in-place op on one
 * of its views = the incoming gradient, with the view's region replaced by
 * what the in-place op's backward makes of that region. */
static int copy_slices_apply(tl_node *node, tl_tensor *const *grads_in, tl_tensor **grads_out) {
    copy_slices_node *c = (copy_slices_node *)node;
    tl_tensor *grad = grads_in[0];
    tl_tensor *result = NULL, *slice = NULL, **fin = NULL, **fout = NULL;
    int rc = -1;
    int32_t nin = c->fn->num_inputs, nout = c->fn->num_next;
    result = tl_empty_strided(c->base_g.ndim, c->base_g.sizes, c->base_g.strides, grad->dtype, tl__device_of(grad));
    if (!result || tl_copy_(result, grad) < 0) goto done;
    if (!(slice = region_of(result, &c->base_g, &c->view_g))) goto done;
    fin = calloc((size_t)(nin ? nin : 1), sizeof(tl_tensor *));
    fout = calloc((size_t)(nout ? nout : 1), sizeof(tl_tensor *));
    if (!fin || !fout) {
        tl_set_error(TL_ERR_MEMORY, "autograd: out of memory");
        goto done;
    }
    if (!(fin[0] = tl_clone(slice))) goto done;
    if (c->fn->vt->apply(c->fn, fin, fout) < 0) goto done;
    for (int32_t i = 0; i < nout && i < node->num_next; i++) {
        if (!tl_node_should_compute_output(node, i)) continue;
        if (i == 0) {
            if (fout[0] ? tl_copy_(slice, fout[0]) < 0 : tl_zero_(slice) < 0) goto done;
            tl_tensor_retain(result);
            grads_out[0] = result;
        } else {
            grads_out[i] = fout[i];
            fout[i] = NULL;
        }
    }
    rc = 0;
done:
    for (int32_t i = 0; fout && i < nout; i++) tl_tensor_release(fout[i]);
    for (int32_t i = 0; fin && i < nin; i++) tl_tensor_release(fin[i]);
    free(fin);
    free(fout);
    tl_tensor_release(slice);
    tl_tensor_release(result);
    return rc;
}

static void copy_slices_release_saved(tl_node *node) {
    copy_slices_node *c = (copy_slices_node *)node;
    if (c->fn && c->fn->vt->release_saved_variables) c->fn->vt->release_saved_variables(c->fn);
}

static void copy_slices_destroy(tl_node *node) {
    copy_slices_node *c = (copy_slices_node *)node;
    free(c->base_g.sizes);
    free(c->view_g.sizes);
    tl_node_release(c->fn);
    c->fn = NULL;
}

static const tl_node_vtable copy_slices_vtable = {
    "torch::autograd::CopySlices", copy_slices_apply, copy_slices_release_saved, copy_slices_destroy,
};

typedef struct {
    tl_node base;
    geometry base_g, view_g;
} as_strided_node;

/* the regenerated history of a view: its gradient scattered into zeros of
 * the base's geometry */
static int as_strided_apply(tl_node *node, tl_tensor *const *grads_in, tl_tensor **grads_out) {
    as_strided_node *a = (as_strided_node *)node;
    if (!tl_node_should_compute_output(node, 0)) return 0;
    tl_tensor *grad = grads_in[0];
    tl_tensor *result = tl_empty_strided(a->base_g.ndim, a->base_g.sizes, a->base_g.strides, grad->dtype,
                                         grad->device);
    if (!result || tl_zero_(result) < 0) {
        tl_tensor_release(result);
        return -1;
    }
    tl_tensor *slice = region_of(result, &a->base_g, &a->view_g);
    if (!slice || tl_copy_(slice, grad) < 0) {
        tl_tensor_release(slice);
        tl_tensor_release(result);
        return -1;
    }
    tl_tensor_release(slice);
    grads_out[0] = result;
    return 0;
}

static void as_strided_destroy(tl_node *node) {
    as_strided_node *a = (as_strided_node *)node;
    free(a->base_g.sizes);
    free(a->view_g.sizes);
}

static const tl_node_vtable as_strided_vtable = {
    "AsStridedBackward0", as_strided_apply, NULL, as_strided_destroy,
};

static int regenerate_view_grad_fn(tl_tensor *view, ag_meta *m) {
    tl_edge e = tl_autograd_gradient_edge(m->base);
    if (!e.node) {
        if (tl_error_kind_get() != TL_OK) return -1;
        return set_grad_fn(view, m, NULL, 0);     /* the base left the graph */
    }
    tl_node *n = tl_node_new(&as_strided_vtable, sizeof(as_strided_node), 1, 1);
    if (!n) {
        tl_node_release(e.node);
        return -1;
    }
    n->next[0] = e;
    as_strided_node *a = (as_strided_node *)n;
    int rc = -1;
    if (geometry_init(&a->base_g, m->base) == 0 && geometry_init(&a->view_g, view) == 0 &&
        record_input_meta(n, 0, view) == 0)
        rc = set_grad_fn(view, m, n, 0);
    tl_node_release(n);
    return rc;
}

/* in-place op `fn` ran on `view`: the base's history becomes CopySlices(fn),
 * the view's an AsStridedBackward0 of the base */
static int rebase_view_history(tl_tensor *view, ag_meta *m, tl_node *fn, int32_t output_nr) {
    tl_tensor *base = m->base;
    ag_meta *bm = ag_meta_get_or_create(base);
    if (!bm) return -1;
    if (output_nr != 0 || fn->num_next < 1)
        return tl_set_error(TL_ERR_RUNTIME, "autograd: in-place op on a view with output_nr %d", (int)output_nr);
    tl_node *cs = tl_node_new(&copy_slices_vtable, sizeof(copy_slices_node), 1, fn->num_next);
    if (!cs) return -1;
    copy_slices_node *c = (copy_slices_node *)cs;
    int rc = -1;
    tl_edge be = tl_autograd_gradient_edge(base);   /* the base's history so far */
    if (!be.node && tl_error_kind_get() != TL_OK) goto done;
    cs->next[0] = be;
    for (int32_t i = 1; i < fn->num_next; i++) {
        cs->next[i] = fn->next[i];
        tl_node_retain(fn->next[i].node);
    }
    /* fn's edge 0 stays the view's old history (its shape is the region's);
     * fn runs only inside CopySlices, which always wants that gradient */
    __atomic_fetch_or(&fn->flags, AG_NODE_OUTPUT0_WANTED, __ATOMIC_RELAXED);
    tl_node_retain(fn);
    c->fn = fn;
    if (geometry_init(&c->base_g, base) < 0 || geometry_init(&c->view_g, view) < 0) goto done;
    if (record_input_meta(fn, 0, view) < 0 || record_input_meta(cs, 0, base) < 0) goto done;
    if (set_grad_fn(base, bm, cs, 0) < 0) goto done;
    if (bm->is_view) bm->attr_version = tl_tensor_version(base);
    rc = regenerate_view_grad_fn(view, m);
done:
    tl_node_release(cs);
    return rc;
}

int tl_autograd_check_inplace(const tl_tensor *self) {
    ag_meta *m = ag_meta_of(self);
    if (!m || !tl_grad_mode_is_enabled()) return 0;
    if (m->requires_grad && !m->grad_fn)
        return tl_set_error(TL_ERR_RUNTIME, "a leaf Variable that requires grad is being used in an in-place operation.");
    if (m->is_view && m->base) {
        ag_meta *bm = ag_meta_of(m->base);
        if (bm && bm->requires_grad && !bm->grad_fn)
            return tl_set_error(TL_ERR_RUNTIME,
                                "a view of a leaf Variable that requires grad is being used in an in-place operation.");
    }
    return 0;
}

int tl_autograd_rebase_history(tl_tensor *self, tl_node *node, int32_t output_nr) {
    if (!self || !node) return 0;
    node->view_hint = NULL;
    ag_meta *m = ag_meta_of(self);
    if (m && m->requires_grad && !m->grad_fn)
        return tl_set_error(TL_ERR_RUNTIME, "a leaf Variable that requires grad is being used in an in-place operation.");
    if (m && m->is_view && m->base && (tl_dtype_is_floating(self->dtype) || tl_dtype_is_complex(self->dtype)))
        return rebase_view_history(self, m, node, output_nr);
    if (record_input_meta(node, output_nr, self) < 0) return -1;
    if (!m && !(m = ag_meta_get_or_create(self))) return -1;
    return set_grad_fn(self, m, node, output_nr);
}

tl_tensor *tl_autograd_detach(const tl_tensor *t) {
    if (!t) {
        tl_set_error(TL_ERR_RUNTIME, "detach: undefined tensor");
        return NULL;
    }
    tl_tensor *d = tl_alias(t);
    if (d && tl_tensor_is_wrapped_number(t)) tl_tensor_set_wrapped_number(d, 1);
    return d;
}

int tl_autograd_detach_(tl_tensor *t) {
    ag_meta *m = ag_meta_of(t);
    if (!m) return 0;
    if (m->is_view)
        return tl_set_error(TL_ERR_RUNTIME, "Can't detach views in-place. Use detach() instead. If you are using "
                            "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as "
                            "True, gradients are views of DDP buckets, and hence detach_() cannot be called on "
                            "these gradients. To fix this error, please refer to the Optimizer.zero_grad() "
                            "function in torch/optim/optimizer.py as the solution.");
    if (set_grad_fn(t, m, NULL, 0) < 0) return -1;
    m->requires_grad = 0;
    return 0;
}

/* ------------------------------------------------------------ accumulate */
/* a first gradient may be stored as is when it is laid out like the variable
 * (PyTorch's "gradient layout contract") */
static int obeys_layout(const tl_tensor *g, const tl_tensor *v) {
    if (!tl_tensor_is_non_overlapping_and_dense(g)) return 0;
    if (g->ndim != v->ndim) return 0;
    if (tl_tensor_is_non_overlapping_and_dense(v)) {
        for (int64_t i = 0; i < g->ndim; i++)
            if (g->sizes[i] != 1 && g->strides[i] != v->strides[i]) return 0;
        return 1;
    }
    return tl_tensor_is_contiguous(g);
}

static tl_tensor *clone_like(tl_tensor *g, const tl_tensor *v) {
    if (tl_tensor_is_non_overlapping_and_dense(v) && g->ndim == v->ndim) {
        tl_tensor *out = tl_empty_strided(v->ndim, v->sizes, v->strides, g->dtype, tl__device_of(g));
        if (!out) return NULL;
        if (tl_copy_(out, g) < 0) {
            tl_tensor_release(out);
            return NULL;
        }
        return out;
    }
    return tl_clone(g);
}

/* one lock for every leaf's .grad: two threads running backward over graphs
 * that share a leaf accumulate one after the other (PyTorch locks per
 * AccumulateGrad); recursive in case a kernel re-enters autograd */
static pthread_mutex_t g_accumulate_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

static int accumulate_grad_locked(tl_tensor *leaf, tl_tensor *grad);

int tl_autograd_accumulate_grad(tl_tensor *leaf, tl_tensor *grad) {
    if (!leaf || !grad) return 0;
    pthread_mutex_lock(&g_accumulate_lock);
    int rc = accumulate_grad_locked(leaf, grad);
    pthread_mutex_unlock(&g_accumulate_lock);
    return rc;
}

static int accumulate_grad_locked(tl_tensor *leaf, tl_tensor *grad) {
    ag_meta *m = ag_meta_get_or_create(leaf);
    if (!m) return -1;
    int grad_mode = tl_grad_mode_is_enabled();
    tl_tensor *res;
    if (!m->grad) {
        if (grad_mode) {
            tl_tensor_retain(grad);           /* keeps its graph (create_graph) */
            res = grad;
        } else if (tl_tensor_refcount(grad) <= 1 && obeys_layout(grad, leaf)) {
            if (tl_autograd_requires_grad(grad)) res = tl_autograd_detach(grad);
            else {
                tl_tensor_retain(grad);
                res = grad;
            }
        } else {
            res = clone_like(grad, leaf);
        }
        if (!res) return -1;
        m->grad = res;
        return 0;
    }
    if (!grad_mode) {
        /* PyTorch: variable.grad += new_grad when not building a graph */
        tl_tensor *r = tl_ops_add__Tensor(m->grad, grad, tl_scalar_from_int(1));
        if (r) {
            tl_tensor_release(r);
            return 0;
        }
        tl_clear_error();                 /* e.g. an overlapping user-set .grad */
    }
    res = tl_ops_add_Tensor(m->grad, grad, tl_scalar_from_int(1));
    if (!res) return -1;
    tl_tensor_release(m->grad);
    m->grad = res;
    return 0;
}

/* ========================================================== saved variables */
static const char *legacy_type_name(tl_dtype dt) {
    switch (dt) {
    case TL_BOOL: return "BoolTensor";
    case TL_UINT8: return "ByteTensor";
    case TL_INT8: return "CharTensor";
    case TL_INT16: return "ShortTensor";
    case TL_INT32: return "IntTensor";
    case TL_INT64: return "LongTensor";
    case TL_FLOAT16: return "HalfTensor";
    case TL_BFLOAT16: return "BFloat16Tensor";
    case TL_FLOAT32: return "FloatTensor";
    case TL_FLOAT64: return "DoubleTensor";
    case TL_COMPLEX64: return "ComplexFloatTensor";
    case TL_COMPLEX128: return "ComplexDoubleTensor";
    default: return "Tensor";
    }
}

static const char k_backward_twice[] =
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward.";

int tl_saved_variable_save(tl_saved_variable *sv, tl_tensor *t, int is_output) {
    tl_tensor_release(sv->data);
    memset(sv, 0, sizeof(*sv));
    if (!t) return 0;
    sv->defined = 1;
    sv->is_output = is_output ? 1 : 0;
    sv->saved_version = tl_tensor_version(t);
    if (is_output) {
        ag_meta *m = ag_meta_of(t);
        sv->output_nr = m ? m->output_nr : 0;
        sv->requires_grad = (m && m->grad_fn) ? 1 : 0;
        sv->data = tl_alias(t);          /* no history: no cycle with our own node */
        if (!sv->data) {
            sv->defined = 0;
            return -1;
        }
    } else {
        tl_tensor_retain(t);
        sv->data = t;
    }
    return 0;
}

int tl_saved_variable_unpack(tl_saved_variable *sv, tl_node *saved_for, tl_tensor **out) {
    *out = NULL;
    if (sv->released) return tl_set_error(TL_ERR_RUNTIME, "%s", k_backward_twice);
    if (!sv->defined || !sv->data) return 0;
    int64_t cur = tl_tensor_version(sv->data);
    if (cur != sv->saved_version) {
        char sizes[512], which[256] = "";
        format_sizes(sizes, sizeof sizes, sv->data->ndim, sv->data->sizes);
        const tl_node *fn = NULL;
        int32_t nr = 0;
        if (sv->is_output) {
            fn = sv->requires_grad ? saved_for : NULL;
            nr = sv->output_nr;
        } else {
            ag_meta *m = ag_meta_of(sv->data);
            if (m && m->grad_fn) {
                fn = m->grad_fn;
                nr = m->output_nr;
            }
        }
        if (fn) {
            /* PyTorch 2.13 names the operation: "MulBackward0" -> "Mul" */
            const char *name = tl_node_name(fn);
            size_t len = strlen(name), k = len;
            while (k > 0 && name[k - 1] >= '0' && name[k - 1] <= '9') k--;
            if (k >= 8 && memcmp(name + k - 8, "Backward", 8) == 0 && k > 8) len = k - 8;
            snprintf(which, sizeof which, ", which is output %d of %.*s,", (int)nr, (int)len, name);
        }
        return tl_set_error(TL_ERR_RUNTIME,
                            "one of the variables needed for gradient computation has been modified by an "
                            "inplace operation: [torch.%s%s %s]%s is at version %lld; expected version %lld "
                            "instead. Hint: enable anomaly detection to find the operation that failed to "
                            "compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).",
                            sv->data->device == TL_META ? "meta." : "", legacy_type_name(sv->data->dtype),
                            sizes, which, (long long)cur, (long long)sv->saved_version);
    }
    if (!sv->is_output || !sv->requires_grad || !saved_for) {
        if (sv->is_output) {
            *out = tl_alias(sv->data);
            return *out ? 0 : -1;
        }
        tl_tensor_retain(sv->data);
        *out = sv->data;
        return 0;
    }
    tl_tensor *t = tl_alias(sv->data);
    if (!t) return -1;
    ag_meta *m = ag_meta_get_or_create(t);
    if (!m) {
        tl_tensor_release(t);
        return -1;
    }
    tl_node_retain(saved_for);
    m->grad_fn = saved_for;
    m->output_nr = sv->output_nr;
    *out = t;
    return 0;
}

void tl_saved_variable_release(tl_saved_variable *sv) {
    if (!sv) return;
    tl_tensor *d = sv->data;
    sv->data = NULL;
    if (sv->defined) sv->released = 1;
    tl_tensor_release(d);
}

/* ================================================================ test node */
typedef struct {
    tl_node base;
    tl_node_vtable vt;
    char name[64];
    double *scale;
} test_node;

static int test_node_apply(tl_node *node, tl_tensor *const *grads_in, tl_tensor **grads_out) {
    test_node *t = (test_node *)node;
    tl_tensor *sum = NULL;
    for (int32_t i = 0; i < node->num_inputs; i++) {
        if (!grads_in[i]) continue;
        if (!sum) {
            tl_tensor_retain(grads_in[i]);
            sum = grads_in[i];
        } else {
            tl_tensor *s = tl_ops_add_Tensor(sum, grads_in[i], tl_scalar_from_int(1));
            tl_tensor_release(sum);
            if (!(sum = s)) return -1;
        }
    }
    if (!sum) return 0;
    for (int32_t j = 0; j < node->num_next; j++) {
        if (!tl_node_should_compute_output(node, j)) continue;
        grads_out[j] = tl_ops_mul_Scalar(sum, tl_scalar_from_double(t->scale[j]));
        if (!grads_out[j]) {
            tl_tensor_release(sum);
            return -1;
        }
    }
    tl_tensor_release(sum);
    return 0;
}

static void test_node_destroy(tl_node *node) { free(((test_node *)node)->scale); }

tl_node *tl_autograd_test_node_new(const char *name, int32_t num_inputs, int32_t num_next, const double *scale) {
    /* the vtable lives in the node itself (per-node names) */
    static const tl_node_vtable proto = {"TestBackward", test_node_apply, NULL, test_node_destroy};
    tl_node *n = tl_node_new(&proto, sizeof(test_node), num_inputs, num_next);
    if (!n) return NULL;
    test_node *t = (test_node *)n;
    t->vt = proto;
    snprintf(t->name, sizeof t->name, "%s", name ? name : "TestBackward");
    t->vt.name = t->name;
    n->vt = &t->vt;
    t->scale = calloc((size_t)(num_next ? num_next : 1), sizeof(double));
    if (!t->scale) {
        tl_node_release(n);
        tl_set_error(TL_ERR_MEMORY, "autograd: out of memory");
        return NULL;
    }
    for (int32_t j = 0; j < num_next; j++) t->scale[j] = scale ? scale[j] : 1.0;
    return n;
}
