/* torchlet runtime: the autograd engine (see docs/AUTOGRAD.md).
 *
 * One call = one graph task, run on the calling thread:
 *   1. roots: gradient edges of the outputs and their seed gradients;
 *   2. discovery: every node reachable from the roots, with its dependency
 *      count (number of edges pointing at it), in a per-task hash table;
 *   3. when the caller names inputs (autograd.grad, backward(inputs=)): which
 *      nodes must run to reach them (PyTorch's exec_info), computed in reverse
 *      topological order;
 *   4. a ready queue ordered by sequence number (highest first, AccumulateGrad
 *      before all), so a node runs after every node that feeds it; each node's
 *      input buffer sums the gradients arriving per input (through the
 *      generated add entry point, so the sum is differentiable under
 *      create_graph); outputs are checked against the shape/dtype recorded for
 *      the next node's input (broadcast gradients summed back, dtype cast).
 * Saved variables are released as nodes run unless retain_graph. Formulas run
 * with grad mode = create_graph.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd_internal.h"
#include "tl_cuda_guard.h"
#include "tl_error.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/add.h"
#include "ops/ones_like.h"
#include "ops/sum.h"
#include "ops/to.h"

typedef struct {
    tl_node *node;      /* strong while the task runs */
    int32_t deps;
    uint8_t exec;       /* apply runs */
    uint8_t wanted;     /* exec, or an input whose gradient is captured */
    uint8_t exec_self;  /* backward(inputs=) leaf: its AccumulateGrad must run */
    uint8_t target;     /* some input of this node is captured */
    tl_tensor *inl[2];
    tl_tensor **buf;    /* num_inputs slots: inl, or heap when more than 2 */
} entry;

typedef struct {
    int64_t entry;
    int32_t input_nr;
    int64_t out;        /* index in the captured array */
} capture;

typedef struct graph_task {
    entry *e;
    int64_t n, cap;
    int32_t *slots;     /* open addressing: entry index + 1, 0 = empty */
    int64_t nslots;
    int64_t *heap;
    int64_t heap_n, heap_cap;
    int filtered;
    capture *caps;
    int64_t ncaps;
    tl_tensor **captured;
    entry e_inline[16];
    int32_t slots_inline[64];
    int64_t heap_inline[16];
} graph_task;

static _Thread_local graph_task *g_current_task = NULL;

static inline tl_tensor **entry_buf(entry *en) { return en->buf ? en->buf : en->inl; }

static inline uint64_t hash_ptr(const void *p) {
    return ((uint64_t)(uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ull;
}

static int64_t task_find(const graph_task *t, const tl_node *node) {
    uint64_t mask = (uint64_t)t->nslots - 1;
    for (uint64_t h = hash_ptr(node) >> 20 & mask;; h = (h + 1) & mask) {
        int32_t s = t->slots[h];
        if (!s) return -1;
        if (t->e[s - 1].node == node) return s - 1;
    }
}

static int task_rehash(graph_task *t, int64_t nslots) {
    int32_t *slots = calloc((size_t)nslots, sizeof(int32_t));
    if (!slots) return tl_set_error(TL_ERR_MEMORY, "autograd engine: out of memory");
    if (t->slots != t->slots_inline) free(t->slots);
    t->slots = slots;
    t->nslots = nslots;
    uint64_t mask = (uint64_t)nslots - 1;
    for (int64_t i = 0; i < t->n; i++) {
        uint64_t h = hash_ptr(t->e[i].node) >> 20 & mask;
        while (slots[h]) h = (h + 1) & mask;
        slots[h] = (int32_t)(i + 1);
    }
    return 0;
}

/* index of node's entry, inserting it (retained) if new; -1 on error */
static int64_t task_insert(graph_task *t, tl_node *node, int *is_new) {
    int64_t idx = task_find(t, node);
    *is_new = 0;
    if (idx >= 0) return idx;
    if (t->n == t->cap) {
        int64_t cap = t->cap * 2;
        entry *e = t->e == t->e_inline ? malloc((size_t)cap * sizeof(entry))
                                       : realloc(t->e, (size_t)cap * sizeof(entry));
        if (!e) return tl_set_error(TL_ERR_MEMORY, "autograd engine: out of memory");
        if (t->e == t->e_inline) memcpy(e, t->e_inline, sizeof t->e_inline);
        t->e = e;
        t->cap = cap;
    }
    if ((t->n + 1) * 2 > t->nslots && task_rehash(t, t->nslots * 2) < 0) return -1;
    entry *en = &t->e[t->n];
    memset(en, 0, sizeof *en);
    en->node = node;
    if (node->num_inputs > 2) {
        en->buf = calloc((size_t)node->num_inputs, sizeof(tl_tensor *));
        if (!en->buf) return tl_set_error(TL_ERR_MEMORY, "autograd engine: out of memory");
    }
    tl_node_retain(node);
    uint64_t mask = (uint64_t)t->nslots - 1;
    uint64_t h = hash_ptr(node) >> 20 & mask;
    while (t->slots[h]) h = (h + 1) & mask;
    t->slots[h] = (int32_t)(t->n + 1);
    *is_new = 1;
    return t->n++;
}

static void task_init(graph_task *t) {
    memset(t, 0, offsetof(graph_task, e_inline));
    t->e = t->e_inline;
    t->cap = 16;
    t->slots = t->slots_inline;
    memset(t->slots_inline, 0, sizeof t->slots_inline);
    t->nslots = 64;
    t->heap = t->heap_inline;
    t->heap_cap = 16;
}

static void task_free(graph_task *t) {
    for (int64_t i = 0; i < t->n; i++) {
        entry *en = &t->e[i];
        tl_tensor **b = entry_buf(en);
        for (int32_t k = 0; k < en->node->num_inputs; k++) tl_tensor_release(b[k]);
        free(en->buf);
    }
    /* nodes last: releasing buffers first keeps their graphs intact meanwhile */
    for (int64_t i = 0; i < t->n; i++) tl_node_release(t->e[i].node);
    if (t->e != t->e_inline) free(t->e);
    if (t->slots != t->slots_inline) free(t->slots);
    if (t->heap != t->heap_inline) free(t->heap);
    free(t->caps);
}

/* ---------------------------------------------------------- ready queue */
static inline uint64_t seq_of(const graph_task *t, int64_t i) { return t->e[i].node->sequence_nr; }

static int heap_push(graph_task *t, int64_t idx) {
    if (t->heap_n == t->heap_cap) {
        int64_t cap = t->heap_cap * 2;
        int64_t *h = t->heap == t->heap_inline ? malloc((size_t)cap * sizeof(int64_t))
                                               : realloc(t->heap, (size_t)cap * sizeof(int64_t));
        if (!h) return tl_set_error(TL_ERR_MEMORY, "autograd engine: out of memory");
        if (t->heap == t->heap_inline) memcpy(h, t->heap_inline, sizeof t->heap_inline);
        t->heap = h;
        t->heap_cap = cap;
    }
    int64_t i = t->heap_n++;
    uint64_t s = seq_of(t, idx);
    while (i > 0) {
        int64_t p = (i - 1) / 2;
        if (seq_of(t, t->heap[p]) >= s) break;
        t->heap[i] = t->heap[p];
        i = p;
    }
    t->heap[i] = idx;
    return 0;
}

static int64_t heap_pop(graph_task *t) {
    int64_t top = t->heap[0];
    int64_t last = t->heap[--t->heap_n];
    int64_t n = t->heap_n, i = 0;
    uint64_t s = seq_of(t, last);
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && seq_of(t, t->heap[c + 1]) > seq_of(t, t->heap[c])) c++;
        if (seq_of(t, t->heap[c]) <= s) break;
        t->heap[i] = t->heap[c];
        i = c;
    }
    if (n) t->heap[i] = last;
    return top;
}

/* Two threads running backward over one graph: a node's apply and the
 * release of its saved variables happen under its lock (PyTorch's per-node
 * mutex), so one of them sees the released state, never freed memory. */
static void node_lock(tl_node *n) {
    while (__atomic_fetch_or(&n->flags, AG_NODE_LOCK, __ATOMIC_ACQUIRE) & AG_NODE_LOCK) sched_yield();
}

static void node_unlock(tl_node *n) { __atomic_fetch_and(&n->flags, ~AG_NODE_LOCK, __ATOMIC_RELEASE); }

int ag_engine_wants(const tl_node *node) {
    graph_task *t = g_current_task;
    if (!t || !t->filtered) return 1;
    int64_t idx = task_find(t, node);
    return idx >= 0 && t->e[idx].wanted;
}

/* -------------------------------------------------------- shape helpers */
static void fmt_sizes(char *buf, size_t n, int64_t ndim, const int64_t *sizes) {
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int64_t i = 0; i < ndim && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, i ? ", %lld" : "%lld", (long long)sizes[i]);
    if (k < n) snprintf(buf + k, n - k, "]");
}

static int same_shape(int64_t nd, const int64_t *s, const tl_tensor *t) {
    if (tl_tensor_ndim(t) != nd) return 0;
    return nd == 0 || memcmp(s, tl_tensor_sizes(t), (size_t)nd * sizeof(int64_t)) == 0;
}

/* `shape` broadcasts to `to` */
static int expandable_to(int64_t nd, const int64_t *shape, int64_t tnd, const int64_t *to) {
    if (nd > tnd) return 0;
    for (int64_t i = 0; i < nd; i++) {
        int64_t a = shape[nd - 1 - i], b = to[tnd - 1 - i];
        if (a != 1 && a != b) return 0;
    }
    return 1;
}

tl_tensor *ag_sum_to(tl_tensor *grad, int64_t ndim, const int64_t *sizes) {
    int64_t gnd = tl_tensor_ndim(grad);
    const int64_t *gs = tl_tensor_sizes(grad);
    int64_t lead = gnd - ndim;
    int64_t dims[64];
    tl_tensor *cur = grad;
    tl_tensor_retain(cur);
    if (lead > 0) {
        for (int64_t i = 0; i < lead; i++) dims[i] = i;
        tl_tensor *r = tl_ops_sum_dim_IntList(cur, dims, lead, false, TL_DTYPE_UNDEFINED);
        tl_tensor_release(cur);
        if (!(cur = r)) return NULL;
    }
    int64_t nd = 0;
    for (int64_t i = 0; i < ndim; i++)
        if (sizes[i] == 1 && gs[lead + i] != 1) dims[nd++] = i;
    if (nd) {
        tl_tensor *r = tl_ops_sum_dim_IntList(cur, dims, nd, true, TL_DTYPE_UNDEFINED);
        tl_tensor_release(cur);
        cur = r;
    }
    return cur;
}

/* PyTorch's validate_outputs: the gradient for edge e must have the shape and
 * dtype recorded for that input; broadcast gradients are summed back. Takes
 * the reference g, returns a new one (NULL + error). */
static tl_tensor *validate_grad(const char *fn_name, int32_t index, tl_tensor *g, tl_edge e) {
    const int64_t *sizes;
    tl_dtype dt;
    int64_t nd = tl_node_input_shape(e.node, e.input_nr, &sizes, &dt);
    if (nd < 0) return g;
    if (!same_shape(nd, sizes, g)) {
        if (!expandable_to(nd, sizes, tl_tensor_ndim(g), tl_tensor_sizes(g))) {
            char got[512], want[512];
            fmt_sizes(got, sizeof got, tl_tensor_ndim(g), tl_tensor_sizes(g));
            fmt_sizes(want, sizeof want, nd, sizes);
            tl_set_error(TL_ERR_RUNTIME,
                         "Function %s returned an invalid gradient at index %d - got %s but expected shape "
                         "compatible with %s", fn_name, (int)index, got, want);
            tl_tensor_release(g);
            return NULL;
        }
        tl_tensor *r = ag_sum_to(g, nd, sizes);
        tl_tensor_release(g);
        if (!(g = r)) return NULL;
    }
    if (tl_tensor_dtype(g) != dt) {
        tl_tensor *r = tl_ops_to_dtype(g, dt, false, false, -1);
        tl_tensor_release(g);
        g = r;
    }
    return g;
}

/* buffer slot += g (takes g) */
static int buffer_add(tl_tensor **slot, tl_tensor *g) {
    if (!*slot) {
        *slot = g;
        return 0;
    }
    tl_tensor *s = tl_ops_add_Tensor(*slot, g, tl_scalar_from_int(1));
    tl_tensor_release(g);
    if (!s) return -1;
    tl_tensor_release(*slot);
    *slot = s;
    return 0;
}

/* ------------------------------------------------------------- discovery */
/* pushes v on a stack that starts in stack_inline and moves to the heap
 * (doubling) when full; -1 when out of memory */
static int push_index(int64_t **stack, int64_t *stack_inline, int64_t *sp, int64_t *cap, int64_t v) {
    if (*sp == *cap) {
        int64_t *ns = malloc((size_t)*cap * 2 * sizeof(int64_t));
        if (!ns) return -1;
        memcpy(ns, *stack, (size_t)*sp * sizeof(int64_t));
        if (*stack != stack_inline) free(*stack);
        *stack = ns;
        *cap *= 2;
    }
    (*stack)[(*sp)++] = v;
    return 0;
}

static int discover(graph_task *t, int64_t first_new) {
    /* entries [first_new, n) are unexplored: explore depth-first */
    int64_t stack_inline[64], *stack = stack_inline, sp = 0, scap = 64;
    for (int64_t i = first_new; i < t->n; i++) {
        if (push_index(&stack, stack_inline, &sp, &scap, i)) goto oom;
    }
    while (sp) {
        tl_node *node = t->e[stack[--sp]].node;
        for (int32_t j = 0; j < node->num_next; j++) {
            tl_node *nx = node->next[j].node;
            if (!nx) continue;
            int is_new;
            int64_t idx = task_insert(t, nx, &is_new);
            if (idx < 0) goto fail;
            t->e[idx].deps++;
            if (is_new) {
                if (push_index(&stack, stack_inline, &sp, &scap, idx)) goto oom;
            }
        }
    }
    if (stack != stack_inline) free(stack);
    return 0;
oom:
    tl_set_error(TL_ERR_MEMORY, "autograd engine: out of memory");
fail:
    if (stack != stack_inline) free(stack);
    return -1;
}

/* exec/wanted flags when only some inputs are wanted: reverse topological
 * order (Kahn's algorithm over a copy of the dependency counts) */
static int compute_exec(graph_task *t) {
    int64_t n = t->n;
    int32_t *deps = malloc((size_t)n * sizeof(int32_t));
    int64_t *order = malloc((size_t)n * sizeof(int64_t));
    if (!deps || !order) {
        free(deps);
        free(order);
        return tl_set_error(TL_ERR_MEMORY, "autograd engine: out of memory");
    }
    int64_t head = 0, tail = 0;
    for (int64_t i = 0; i < n; i++) {
        deps[i] = t->e[i].deps;
        if (!deps[i]) order[tail++] = i;
    }
    while (head < tail) {
        tl_node *node = t->e[order[head++]].node;
        for (int32_t j = 0; j < node->num_next; j++) {
            if (!node->next[j].node) continue;
            int64_t k = task_find(t, node->next[j].node);
            if (--deps[k] == 0) order[tail++] = k;
        }
    }
    for (int64_t i = tail - 1; i >= 0; i--) {
        entry *en = &t->e[order[i]];
        int exec = en->exec_self;
        for (int32_t j = 0; !exec && j < en->node->num_next; j++) {
            if (!en->node->next[j].node) continue;
            exec = t->e[task_find(t, en->node->next[j].node)].wanted;
        }
        en->exec = (uint8_t)exec;
        en->wanted = (uint8_t)(exec || en->target);
    }
    free(deps);
    free(order);
    return 0;
}

/* ---------------------------------------------------------------- run */
typedef struct {
    tl_tensor *const *outputs;
    int64_t n;
    tl_tensor *const *grad_outputs;
    tl_tensor *const *inputs;
    int64_t n_inputs;
    int retain_graph, create_graph;
    int accumulate;     /* backward (1) or grad (0) */
    tl_tensor **captured; /* n_inputs slots (grad and backward(inputs=)) */
} run_args;

static int seed_root(graph_task *t, int64_t i, const run_args *a) {
    tl_tensor *out = a->outputs[i];
    if (!out) return tl_set_error(TL_ERR_RUNTIME, "element %lld of tensors is undefined", (long long)i);
    tl_edge e = tl_autograd_gradient_edge(out);
    if (!e.node) {
        if (tl_error_kind_get() != TL_OK) return -1;
        return tl_set_error(TL_ERR_RUNTIME, "element %lld of tensors does not require grad and does not have a grad_fn",
                            (long long)i);
    }
    tl_tensor *g = a->grad_outputs ? a->grad_outputs[i] : NULL;
    if (!g) {
        if (tl_tensor_numel(out) != 1) {
            tl_node_release(e.node);
            return tl_set_error(TL_ERR_RUNTIME, "grad can be implicitly created only for scalar outputs");
        }
        g = tl_ops_ones_like(out, TL_DTYPE_UNDEFINED, -1, -1, false, false, -1);
        if (!g) {
            tl_node_release(e.node);
            return -1;
        }
    } else {
        if (!same_shape(tl_tensor_ndim(out), tl_tensor_sizes(out), g)) {
            char gs[512], os[512];
            fmt_sizes(gs, sizeof gs, tl_tensor_ndim(g), tl_tensor_sizes(g));
            fmt_sizes(os, sizeof os, tl_tensor_ndim(out), tl_tensor_sizes(out));
            tl_node_release(e.node);
            return tl_set_error(TL_ERR_RUNTIME,
                                "Mismatch in shape: grad_output[%lld] has a shape of torch.Size(%s) and output[%lld] "
                                "has a shape of torch.Size(%s).", (long long)i, gs, (long long)i, os);
        }
        tl_tensor_retain(g);
        if (tl_tensor_dtype(g) != tl_tensor_dtype(out)) {
            tl_tensor *c = tl_ops_to_dtype(g, tl_tensor_dtype(out), false, false, -1);
            tl_tensor_release(g);
            if (!(g = c)) {
                tl_node_release(e.node);
                return -1;
            }
        }
    }
    int is_new;
    int64_t idx = task_insert(t, e.node, &is_new);
    tl_node_release(e.node);
    if (idx < 0) {
        tl_tensor_release(g);
        return -1;
    }
    return buffer_add(&entry_buf(&t->e[idx])[e.input_nr], g);
}

static int run_engine(const run_args *a) {
    graph_task task, *t = &task;
    task_init(t);
    graph_task *prev_task = g_current_task;
    uint64_t prev_mode = tl_grad_mode_guard_enter(a->create_graph);
    int rc = -1;
    int64_t nroots;

    for (int64_t i = 0; i < a->n; i++)
        if (seed_root(t, i, a) < 0) goto done;
    nroots = t->n;
    if (discover(t, 0) < 0) goto done;

    if (a->n_inputs > 0) {
        t->filtered = 1;
        t->caps = calloc((size_t)a->n_inputs, sizeof(capture));
        if (!t->caps) {
            tl_set_error(TL_ERR_MEMORY, "autograd engine: out of memory");
            goto done;
        }
        for (int64_t i = 0; i < a->n_inputs; i++) {
            tl_tensor *in = a->inputs[i];
            tl_edge e = ag_gradient_edge_existing(in);
            if (!e.node) continue;
            int64_t idx = task_find(t, e.node);
            int leaf = tl_autograd_is_leaf(in);
            tl_node_release(e.node);
            if (idx < 0) continue;              /* not part of this graph */
            if (a->accumulate && leaf) {
                t->e[idx].exec_self = 1;        /* its AccumulateGrad runs */
                continue;
            }
            t->e[idx].target = 1;
            t->caps[t->ncaps].entry = idx;
            t->caps[t->ncaps].input_nr = e.input_nr;
            t->caps[t->ncaps].out = i;
            t->ncaps++;
        }
        if (compute_exec(t) < 0) goto done;
    } else {
        for (int64_t i = 0; i < t->n; i++) t->e[i].exec = t->e[i].wanted = 1;
    }

    for (int64_t i = 0; i < nroots; i++)
        if (t->e[i].deps == 0 && t->e[i].wanted && heap_push(t, i) < 0) goto done;

    g_current_task = t;
    while (t->heap_n) {
        int64_t idx = heap_pop(t);
        entry *en = &t->e[idx];
        tl_node *node = en->node;
        tl_tensor **buf = entry_buf(en);
        int32_t nin = node->num_inputs, nnext = node->num_next;

        if (en->target)
            for (int64_t c = 0; c < t->ncaps; c++)
                if (t->caps[c].entry == idx) {
                    tl_tensor *g = buf[t->caps[c].input_nr];
                    tl_tensor **slot = &a->captured[t->caps[c].out];
                    if (g && !*slot) {
                        tl_tensor_retain(g);
                        *slot = g;
                    }
                }
        if (node->retained && ag_run_retained(node, buf) < 0) goto done;
        if (!en->exec) {
            for (int32_t k = 0; k < nin; k++) {
                tl_tensor_release(buf[k]);
                buf[k] = NULL;
            }
            continue;
        }

        tl_tensor *outs_inline[8], **outs = outs_inline;
        if (nnext > 8 && !(outs = calloc((size_t)nnext, sizeof(tl_tensor *)))) {
            tl_set_error(TL_ERR_MEMORY, "autograd engine: out of memory");
            goto done;
        }
        for (int32_t j = 0; j < nnext; j++) outs[j] = NULL;
        int any = 0;
        for (int32_t k = 0; k < nin; k++) any |= buf[k] != NULL;
        int arc = 0;
        node_lock(node);
        /* the node runs with its gradients' device current (PyTorch runs it on the device thread of
         * its input buffer's first non-CPU gradient): what it makes without naming a device lands there */
        tl_cuda_guard guard;
        if (any && (arc = tl_cuda_guard_enter(&guard, tl_cuda_device_of_list(buf, nin))) == 0) {
            arc = node->vt->apply ? node->vt->apply(node, buf, outs)
                                  : tl_set_error(TL_ERR_RUNTIME, "autograd: node %s has no apply", tl_node_name(node));
            tl_cuda_guard_exit(&guard);
        }
        if (!a->retain_graph && node->vt->release_saved_variables) node->vt->release_saved_variables(node);
        node_unlock(node);
        for (int32_t k = 0; k < nin; k++) {
            tl_tensor_release(buf[k]);
            buf[k] = NULL;
        }
        for (int32_t j = 0; arc == 0 && j < nnext; j++) {
            tl_edge e = node->next[j];
            tl_tensor *g = outs[j];
            outs[j] = NULL;
            if (!e.node) {
                tl_tensor_release(g);
                continue;
            }
            int64_t k = task_find(t, e.node);
            entry *ne = &t->e[k];
            if (!ne->wanted) {
                tl_tensor_release(g);
                continue;
            }
            if (g) {
                g = validate_grad(tl_node_name(node), j, g, e);
                if (!g || buffer_add(&entry_buf(ne)[e.input_nr], g) < 0) {
                    arc = -1;
                    break;
                }
            }
            if (--ne->deps == 0 && heap_push(t, k) < 0) {
                arc = -1;
                break;
            }
        }
        for (int32_t j = 0; j < nnext; j++) tl_tensor_release(outs[j]);
        if (outs != outs_inline) free(outs);
        if (arc < 0) goto done;
    }
    rc = 0;

done:
    g_current_task = prev_task;
    tl_autograd_mode_guard_exit(prev_mode);
    task_free(t);
    return rc;
}

static int check_inputs(tl_tensor *const *inputs, int64_t n_inputs) {
    for (int64_t i = 0; i < n_inputs; i++) {
        if (!inputs[i]) return tl_set_error(TL_ERR_RUNTIME, "One of the differentiated Tensors is undefined");
        if (!tl_autograd_requires_grad(inputs[i]))
            return tl_set_error(TL_ERR_RUNTIME, "One of the differentiated Tensors does not require grad");
    }
    return 0;
}

int tl_autograd_backward(tl_tensor *const *tensors, int64_t n, tl_tensor *const *grad_tensors,
                         int retain_graph, int create_graph, tl_tensor *const *inputs, int64_t n_inputs) {
    if (n < 0 || n_inputs < 0) return tl_set_error(TL_ERR_RUNTIME, "autograd.backward: negative count");
    if (check_inputs(inputs, n_inputs) < 0) return -1;
    tl_tensor *cap_inline[8], **captured = cap_inline;
    if (n_inputs > 8 && !(captured = calloc((size_t)n_inputs, sizeof(tl_tensor *))))
        return tl_set_error(TL_ERR_MEMORY, "autograd engine: out of memory");
    for (int64_t i = 0; i < n_inputs && i < 8; i++) captured[i] = NULL;
    run_args a = {tensors, n, grad_tensors, inputs, n_inputs, retain_graph, create_graph, 1, captured};
    int rc = run_engine(&a);
    if (rc == 0) {
        /* non-leaf inputs: their captured gradient accumulates into .grad */
        uint64_t prev = tl_grad_mode_guard_enter(create_graph);
        for (int64_t i = 0; i < n_inputs && rc == 0; i++)
            if (captured[i]) rc = tl_autograd_accumulate_grad(inputs[i], captured[i]);
        tl_autograd_mode_guard_exit(prev);
    }
    for (int64_t i = 0; i < n_inputs; i++) tl_tensor_release(captured[i]);
    if (captured != cap_inline) free(captured);
    return rc;
}

int tl_autograd_backward1(tl_tensor *tensor, tl_tensor *grad, int retain_graph, int create_graph) {
    tl_tensor *roots[1] = {tensor}, *grads[1] = {grad};
    return tl_autograd_backward(roots, 1, grads, retain_graph, create_graph, NULL, 0);
}

int tl_autograd_grad(tl_tensor *const *outputs, int64_t n, tl_tensor *const *grad_outputs,
                     tl_tensor *const *inputs, int64_t n_inputs, int retain_graph, int create_graph,
                     int allow_unused, tl_tensor **out) {
    if (n < 0 || n_inputs < 0) return tl_set_error(TL_ERR_RUNTIME, "autograd.grad: negative count");
    for (int64_t i = 0; i < n_inputs; i++) out[i] = NULL;
    if (n_inputs == 0) return tl_set_error(TL_ERR_RUNTIME, "grad requires non-empty inputs.");
    if (check_inputs(inputs, n_inputs) < 0) return -1;
    run_args a = {outputs, n, grad_outputs, inputs, n_inputs, retain_graph, create_graph, 0, out};
    int rc = run_engine(&a);
    if (rc == 0 && !allow_unused)
        for (int64_t i = 0; i < n_inputs; i++)
            if (!out[i]) {
                rc = tl_set_error(TL_ERR_RUNTIME,
                                  "The differentiated Tensor at index %lld appears to not have been used in the "
                                  "graph. Set allow_unused=True if this is the desired behavior.", (long long)i);
                break;
            }
    if (rc < 0)
        for (int64_t i = 0; i < n_inputs; i++) {
            tl_tensor_release(out[i]);
            out[i] = NULL;
        }
    return rc;
}
