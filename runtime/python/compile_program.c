/* A torchlet.compile plan run whole in C, and its backward node applied in C.
 *
 * A plan whose steps are all fused groups, views and expands with constant
 * sizes, aliases, and operators the boxed call takes (their arguments as
 * torchlet.ops's flat streams, made once: plan._op_step) (plan._c_program) is a program: int64 words
 *   n_slots, n_inputs, n_steps,
 *   per step: GROUP len desc[len] n_in in-slots n_out out-slots
 *           | VIEW in-slot out-slot rank sizes[rank]
 *           | EXPAND in-slot out-slot rank sizes[rank]
 *           | ALIAS in-slot out-slot
 *           | OP operator nargs kinds[nargs] n_ints ints n_doubles doubles(bits)
 *                n_tensors (SLOT s | CONST address | NONE 0)[n_tensors] n_out out-slots,
 *   n_results, result slots (-1: None).
 * Slots hold the values; the inputs are the first.  The Python plan frame,
 * its locals and a call per group cost more than a small graph's kernels:
 * here one call runs the whole plan.
 *
 * _run_program(prog, inputs) -> list | None | -1
 *   the plan's results; None: the Python form must run (a non-contiguous
 *   input, an empty row, a failed allocation: it handles and raises those);
 *   -1: a C error is pending (the caller raises it).
 * _call_compiled(prog, bwd, primals, n_out, name) -> list | None | -1
 *   the forward program under no_grad, then one CompiledFunctionBackward
 *   node as the first n_out results' history (the rest are saved for the
 *   backward): api._apply_compiled in one call.  None: nothing done (the
 *   Python path runs; also when an output is a primal or repeats).
 * _compiled_bwd(result_primals, n_grads, apply, ctx, live, item) -> capsule
 *   what every node of one compiled graph shares: the backward program (set
 *   at its first use by _compiled_bwd_program(capsule, prog)), which primal
 *   each backward result is the gradient of, and the Python apply (`apply`,
 *   `ctx`) that runs what the C one does not (create_graph, an undefined
 *   gradient, a torch-function mode, the Python form's cases).  `item` (the
 *   apply's handle and target, which reach the entry holding the capsule) is
 *   held by the entry; while nodes exist it is also in the dict `live` under
 *   ctx's address, so the graph outlives the compiled function, and without
 *   nodes nothing outside that Python cycle holds it: the collector frees
 *   an entry no one uses.
 *
 * The C apply runs without the GIL (the engine runs backward with it
 * released) and touches no Python object; views and expands go through the
 * dispatcher like the Python form's calls. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "compile_fast.h"

#include "tl_autograd.h"
#include "tl_dispatch.h"
#include "tl_error.h"
#include "tl_runtime.h"
#include "ops/contiguous.h"
#include "ops/expand.h"
#include "ops/view.h"

#define MAX_SLOTS 256
#define MAX_TENSORS 64
#define MAX_RANK 64

enum { STEP_GROUP = 0, STEP_VIEW = 1, STEP_ALIAS = 2, STEP_EXPAND = 3, STEP_OP = 4 };
enum { REF_SLOT = 0, REF_CONST = 1, REF_NONE = 2 };
#define MAX_DOUBLES 256

/* one OP step at w[*k..): the operator's boxed call through the dispatcher;
 * its returns into their slots.  0 / -1 (error set) / -2 (malformed) */
static int run_op(const int64_t *w, int64_t nw, int64_t *kp, tl_tensor **slots, int64_t n_slots, int64_t n_in) {
    int64_t k = *kp;
    if (k + 2 > nw) return -2;
    const tl_operator *op = (const tl_operator *)(intptr_t)w[k];
    const int64_t nargs = w[k + 1];
    k += 2;
    if (nargs < 0 || nargs > MAX_TENSORS || k + nargs + 1 > nw) return -2;
    int32_t kinds[MAX_TENSORS];
    for (int64_t a = 0; a < nargs; a++) kinds[a] = (int32_t)w[k + a];
    k += nargs;
    const int64_t n_ints = w[k++];
    if (n_ints < 0 || k + n_ints + 1 > nw) return -2;
    const int64_t *ints = w + k;
    k += n_ints;
    const int64_t n_doubles = w[k++];
    if (n_doubles < 0 || n_doubles > MAX_DOUBLES || k + n_doubles + 1 > nw) return -2;
    double doubles[MAX_DOUBLES];
    memcpy(doubles, w + k, (size_t)n_doubles * sizeof(double));
    k += n_doubles;
    const int64_t n_tensors = w[k++];
    if (n_tensors < 0 || n_tensors > MAX_TENSORS || k + 2 * n_tensors + 1 > nw) return -2;
    tl_tensor *tensors[MAX_TENSORS];
    for (int64_t t = 0; t < n_tensors; t++, k += 2) {
        const int64_t kind = w[k], v = w[k + 1];
        if (kind == REF_SLOT && v >= 0 && v < n_slots && slots[v]) tensors[t] = slots[v];
        else if (kind == REF_CONST && v) tensors[t] = (tl_tensor *)(intptr_t)v;
        else if (kind == REF_NONE) tensors[t] = NULL;
        else return -2;
    }
    const int64_t n_out = w[k++];
    if (n_out < 0 || n_out > MAX_TENSORS || k + n_out > nw) return -2;
    for (int64_t j = 0; j < n_out; j++)
        if (w[k + j] >= n_slots || (w[k + j] >= 0 && (w[k + j] < n_in || slots[w[k + j]]))) return -2;
    tl_stack st;
    tl_stack_init(&st);
    int rc = tl_op_call_flat(op, kinds, (int32_t)nargs, ints, doubles, tensors, NULL, &st);
    if (rc == 0 && tl_stack_size(&st) != n_out)
        rc = tl_set_error(TL_ERR_RUNTIME, "torchlet.compile: %s returned %lld values, the plan expected %lld",
                          tl_op_name(op), (long long)tl_stack_size(&st), (long long)n_out);
    for (int64_t j = 0; rc == 0 && j < n_out; j++) {
        tl_ivalue *v = tl_stack_peek(&st, n_out - 1 - j);
        if (v->tag != TL_IV_TENSOR) {
            rc = tl_set_error(TL_ERR_RUNTIME, "torchlet.compile: %s returned a value that is not a Tensor",
                              tl_op_name(op));
            break;
        }
        if (w[k + j] >= 0) { /* the slot takes the stack's reference */
            slots[w[k + j]] = v->u.t;
            v->u.t = NULL;
            v->tag = TL_IV_NONE;
        }
    }
    tl_stack_free(&st);
    *kp = k + n_out;
    return rc;
}

/* runs program w on slots[0..n_in) (borrowed): results[0..*n_res) get new
 * references (NULL for a None result).  0 done; 1 the Python form must run
 * (nothing left allocated); -1 a C error is set; -2 a malformed program. */
static int run_program(const int64_t *w, int64_t nw, tl_tensor *const *inputs, int64_t n_in, tl_tensor **results,
                       int64_t *n_res) {
    if (nw < 3 || w[0] > MAX_SLOTS || w[0] < w[1] || w[1] != n_in) return -2;
    const int64_t n_slots = w[0], n_steps = w[2];
    tl_tensor *slots[MAX_SLOTS];
    for (int64_t i = 0; i < n_slots; i++) slots[i] = i < n_in ? inputs[i] : NULL;
    int64_t k = 3;
    int rc = 0;
#define SLOT_OK(s) ((s) >= 0 && (s) < n_slots)
#define NEED(n)                 \
    if (k + (n) > nw) {         \
        rc = -2;                \
        break;                  \
    }
    for (int64_t step = 0; rc == 0 && step < n_steps; step++) {
        NEED(1);
        const int64_t kind = w[k++];
        if (kind == STEP_GROUP) {
            NEED(1);
            const int64_t len = w[k++];
            NEED(len + 1);
            const int64_t *desc = w + k;
            k += len;
            const int64_t gn_in = w[k++];
            NEED(gn_in + 1);
            tl_tensor *ins[MAX_TENSORS], *outs[MAX_TENSORS], *temps[MAX_TENSORS];
            int64_t n_temps = 0;
            if (gn_in > MAX_TENSORS) {
                rc = -2;
                break;
            }
            for (int64_t i = 0; rc == 0 && i < gn_in; i++, k++) {
                if (!SLOT_OK(w[k]) || !slots[w[k]]) {
                    rc = -2;
                } else if (!tl_tensor_is_contiguous(slots[w[k]])) { /* an expand's result: as the Python form */
                    ins[i] = temps[n_temps] = tl_ops_contiguous(slots[w[k]], TL_CONTIGUOUS_FORMAT);
                    if (ins[i]) n_temps++;
                    else rc = -1;
                } else {
                    ins[i] = slots[w[k]];
                }
            }
            if (rc) {
                for (int64_t i = 0; i < n_temps; i++) tl_tensor_release(temps[i]);
                break;
            }
            const int64_t gn_out = w[k++];
            NEED(gn_out);
            if (len < 8 || gn_out != desc[6] || gn_out > MAX_TENSORS) {
                rc = -2;
                break;
            }
            rc = tl_compile_group_call(desc, len, ins, gn_in, outs);
            for (int64_t i = 0; i < n_temps; i++) tl_tensor_release(temps[i]);
            for (int64_t i = 0; i < gn_out; i++, k++) {
                if (rc != 0) continue;
                if (!SLOT_OK(w[k]) || w[k] < n_in || slots[w[k]]) {
                    for (int64_t j = i; j < gn_out; j++) tl_tensor_release(outs[j]);
                    rc = -2;
                    continue;
                }
                slots[w[k]] = outs[i];
            }
        } else if (kind == STEP_VIEW || kind == STEP_EXPAND) {
            NEED(3);
            const int64_t in = w[k], out = w[k + 1], rank = w[k + 2];
            k += 3;
            NEED(rank);
            if (!SLOT_OK(in) || !slots[in] || !SLOT_OK(out) || out < n_in || slots[out] || rank < 0 ||
                rank > MAX_RANK) {
                rc = -2;
                break;
            }
            slots[out] = kind == STEP_VIEW ? tl_ops_view(slots[in], w + k, rank)
                                           : tl_ops_expand(slots[in], w + k, rank, false);
            k += rank;
            if (!slots[out]) rc = -1;
        } else if (kind == STEP_OP) {
            rc = run_op(w, nw, &k, slots, n_slots, n_in);
        } else if (kind == STEP_ALIAS) {
            NEED(2);
            const int64_t in = w[k], out = w[k + 1];
            k += 2;
            if (!SLOT_OK(in) || !slots[in] || !SLOT_OK(out) || out < n_in || slots[out]) {
                rc = -2;
                break;
            }
            tl_tensor_retain(slots[in]);
            slots[out] = slots[in];
        } else {
            rc = -2;
        }
    }
    if (rc == 0) {
        if (k >= nw || w[k] > MAX_TENSORS || w[k] < 0 || k + 1 + w[k] > nw) {
            rc = -2;
        } else {
            *n_res = w[k++];
            for (int64_t i = 0; i < *n_res; i++, k++) {
                const int64_t s = w[k];
                results[i] = SLOT_OK(s) ? slots[s] : NULL;
                if (results[i]) tl_tensor_retain(results[i]);
            }
        }
    }
#undef NEED
#undef SLOT_OK
    for (int64_t i = n_in; i < n_slots; i++) tl_tensor_release(slots[i]);
    return rc;
}

/* the tensors of a list or tuple (borrowed); -1 when one is not a plain Tensor or too many */
static int read_tensors(PyObject *seq, tl_tensor **ts, int64_t *n) {
    const int is_list = PyList_Check(seq);
    if (!is_list && !PyTuple_Check(seq)) return -1;
    const Py_ssize_t len = is_list ? PyList_Size(seq) : PyTuple_Size(seq);
    if (len > MAX_TENSORS) return -1;
    for (Py_ssize_t i = 0; i < len; i++) {
        ts[i] = tl_fast_tensor_of(is_list ? PyList_GetItem(seq, i) : PyTuple_GetItem(seq, i));
        if (!ts[i]) return -1;
    }
    *n = (int64_t)len;
    return 0;
}

/* results[0..n) as a list of Tensors (None for NULL); takes the references,
 * also on failure.  A result that is one of the inputs is that input's
 * object (`is` holds, as in the Python form). */
static PyObject *result_list(tl_tensor **results, int64_t n, PyObject *inputs, tl_tensor *const *ins, int64_t n_in) {
    PyObject *res = PyList_New((Py_ssize_t)n);
    for (int64_t i = 0; i < n; i++) {
        if (!res) {
            tl_tensor_release(results[i]);
            continue;
        }
        PyObject *t = NULL;
        for (int64_t j = 0; results[i] && j < n_in; j++)
            if (results[i] == ins[j]) {
                tl_tensor_release(results[i]);
                t = Py_NewRef(PyList_Check(inputs) ? PyList_GetItem(inputs, (Py_ssize_t)j)
                                                   : PyTuple_GetItem(inputs, (Py_ssize_t)j));
                break;
            }
        if (!t) t = results[i] ? tl_fast_wrap_tensor(results[i]) : Py_NewRef(Py_None);
        if (!t) {
            Py_CLEAR(res);
            continue;
        }
        PyList_SetItem(res, (Py_ssize_t)i, t);
    }
    return res;
}

/* an operator warned: its results are dropped and the warnings with them,
 * and the Python form runs the plan again, where the bindings raise them
 * as Python warnings.  1 when that is so (results released). */
static int warned(tl_tensor **results, int64_t n) {
    if (!tl_pyabi_rc(0)) return 0;
    while (tl_pyabi_rc(0)) (void)tl_take_warning();
    for (int64_t i = 0; i < n; i++) tl_tensor_release(results[i]);
    return 1;
}

static PyObject *bad_program(void) {
    PyErr_SetString(PyExc_ValueError, "torchlet.compile: a malformed plan program");
    return NULL;
}

PyObject *tl_fast_run_program(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    (void)mod;
    if (nargs != 2 || !PyBytes_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "_run_program(prog: bytes, inputs)");
        return NULL;
    }
    tl_tensor *ins[MAX_TENSORS], *results[MAX_TENSORS];
    int64_t n_in = 0, n_res = 0;
    if (!tl_fast_ready() || read_tensors(args[1], ins, &n_in) < 0) Py_RETURN_NONE;
    const int64_t *w = (const int64_t *)PyBytes_AsString(args[0]);
    const int64_t nw = (int64_t)(PyBytes_Size(args[0]) / (Py_ssize_t)sizeof(int64_t));
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = run_program(w, nw, ins, n_in, results, &n_res);
    Py_END_ALLOW_THREADS
    if (rc == -2) return bad_program();
    if (rc == -1) return PyLong_FromLong(-1);
    if (rc != 0 || warned(results, n_res)) Py_RETURN_NONE;
    return result_list(results, n_res, args[1], ins, n_in);
}

/* ---- the backward node */

typedef struct {
    atomic_long refs;                 /* the capsule and every live node */
    _Atomic(int64_t *) prog;          /* the backward program once planned; NULL: the Python apply */
    int64_t nw;
    int32_t n_grads, n_results;
    int32_t *result_primal;           /* per backward result: the primal it is the gradient of */
    tl_callback_apply_fn py_apply;
    void *py_ctx;
    /* under the GIL: the live nodes; `item` (borrowed: the entry holds it)
     * is in `live` under `key` while there are any */
    long nodes;
    PyObject *live, *key, *item;
} compiled_bwd;

static const char CAPSULE_NAME[] = "torchlet.compile.backward";

/* with the GIL */
static void bwd_unref(compiled_bwd *b) {
    if (atomic_fetch_sub(&b->refs, 1) != 1) return;
    Py_XDECREF(b->live);
    Py_XDECREF(b->key);
    free(atomic_load(&b->prog));
    free(b->result_primal);
    free(b);
}

/* a node is made (with the GIL): the first keeps the Python side alive */
static int bwd_node_made(compiled_bwd *b) {
    atomic_fetch_add(&b->refs, 1);
    if (b->nodes++ == 0 && PyDict_SetItem(b->live, b->key, b->item) < 0) {
        b->nodes--;
        atomic_fetch_sub(&b->refs, 1); /* the capsule's remains */
        return -1;
    }
    return 0;
}

/* a node died (the engine may run without the GIL); the last lets the
 * Python side go.  At interpreter exit nothing is left to let go. */
static void bwd_release(void *ctx) {
    compiled_bwd *b = (compiled_bwd *)ctx;
    if (!Py_IsInitialized()) return;
    PyGILState_STATE g = PyGILState_Ensure();
    if (--b->nodes == 0 && PyDict_DelItem(b->live, b->key) < 0) PyErr_Clear();
    bwd_unref(b);
    PyGILState_Release(g);
}

static int bwd_apply(void *ctx, tl_node *node, tl_tensor *const *grads_in, tl_tensor **grads_out) {
    compiled_bwd *b = (compiled_bwd *)ctx;
    int64_t *prog = atomic_load_explicit(&b->prog, memory_order_acquire);
    const int32_t n_saved = tl_callback_node_num_saved(node);
    if (!prog || tl_grad_mode_is_enabled() || tl_fast_tf_active() || n_saved + b->n_grads > MAX_TENSORS)
        return b->py_apply(b->py_ctx, node, grads_in, grads_out);
    for (int32_t i = 0; i < b->n_grads; i++)
        if (!grads_in[i]) return b->py_apply(b->py_ctx, node, grads_in, grads_out);
    tl_tensor *ins[MAX_TENSORS] = {0}, *results[MAX_TENSORS];
    int32_t unpacked = 0;
    int rc = 0;
    for (; unpacked < n_saved; unpacked++) {
        tl_tensor *t = NULL;
        if (tl_callback_node_unpack(node, unpacked, &t) < 0) { /* a version or freed-graph error: raised */
            rc = -1;
            break;
        }
        ins[unpacked] = t;
        if (!t) { /* an undefined saved value: the Python apply */
            rc = 1;
            break;
        }
    }
    int64_t n_res = 0;
    if (rc == 0) {
        for (int32_t i = 0; i < b->n_grads; i++) ins[n_saved + i] = grads_in[i];
        rc = run_program(prog, b->nw, ins, n_saved + b->n_grads, results, &n_res);
        if (rc == 0 && n_res != b->n_results) {
            for (int64_t j = 0; j < n_res; j++) tl_tensor_release(results[j]);
            rc = -2;
        }
    }
    for (int32_t i = 0; i < unpacked; i++) tl_tensor_release(ins[i]);
    if (rc == -1) return -1;
    if (rc != 0) return b->py_apply(b->py_ctx, node, grads_in, grads_out);
    for (int64_t j = 0; j < n_res; j++) {
        const int32_t i = b->result_primal[j];
        if (results[j] && tl_node_should_compute_output(node, i)) {
            grads_out[i] = results[j];
        } else {
            tl_tensor_release(results[j]);
        }
    }
    return 0;
}

static void capsule_free(PyObject *cap) {
    compiled_bwd *b = (compiled_bwd *)PyCapsule_GetPointer(cap, CAPSULE_NAME);
    if (b) bwd_unref(b);
}

PyObject *tl_fast_compiled_bwd(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    (void)mod;
    if (nargs != 6 || !PyTuple_Check(args[0]) || !PyDict_Check(args[4])) {
        PyErr_SetString(PyExc_TypeError, "_compiled_bwd(result_primals: tuple, n_grads, apply, ctx, live: dict, item)");
        return NULL;
    }
    const Py_ssize_t n = PyTuple_Size(args[0]);
    const long n_grads = PyLong_AsLong(args[1]);
    void *apply = PyLong_AsVoidPtr(args[2]), *ctx = PyLong_AsVoidPtr(args[3]);
    if (PyErr_Occurred()) return NULL;
    if (!apply || n > MAX_TENSORS || n_grads < 0 || n_grads > MAX_TENSORS) {
        PyErr_SetString(PyExc_ValueError, "_compiled_bwd: bad arguments");
        return NULL;
    }
    compiled_bwd *b = calloc(1, sizeof *b);
    int32_t *rp = calloc((size_t)n + 1, sizeof *rp);
    if (!b || !rp) {
        free(b);
        free(rp);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t j = 0; j < n; j++) {
        const long i = PyLong_AsLong(PyTuple_GetItem(args[0], j));
        if (i < 0 || i >= MAX_TENSORS) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "_compiled_bwd: bad primal index");
            free(b);
            free(rp);
            return NULL;
        }
        rp[j] = (int32_t)i;
    }
    atomic_init(&b->refs, 1);
    atomic_init(&b->prog, NULL);
    b->n_grads = (int32_t)n_grads;
    b->n_results = (int32_t)n;
    b->result_primal = rp;
    b->py_apply = (tl_callback_apply_fn)apply;
    b->py_ctx = ctx;
    b->live = Py_NewRef(args[4]);
    b->key = Py_NewRef(args[3]);
    b->item = args[5];
    PyObject *cap = PyCapsule_New(b, CAPSULE_NAME, capsule_free);
    if (!cap) bwd_unref(b);
    return cap;
}

PyObject *tl_fast_compiled_bwd_program(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    (void)mod;
    if (nargs != 2 || !PyBytes_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "_compiled_bwd_program(capsule, prog: bytes)");
        return NULL;
    }
    compiled_bwd *b = (compiled_bwd *)PyCapsule_GetPointer(args[0], CAPSULE_NAME);
    if (!b) return NULL;
    const Py_ssize_t size = PyBytes_Size(args[1]);
    int64_t *prog = malloc((size_t)size + sizeof(int64_t));
    if (!prog) return PyErr_NoMemory();
    memcpy(prog, PyBytes_AsString(args[1]), (size_t)size);
    int64_t *none = NULL;
    b->nw = (int64_t)(size / (Py_ssize_t)sizeof(int64_t));   /* before the pointer is published */
    if (!atomic_compare_exchange_strong_explicit(&b->prog, &none, prog, memory_order_release, memory_order_relaxed))
        free(prog); /* set already */
    Py_RETURN_NONE;
}

PyObject *tl_fast_call_compiled(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    (void)mod;
    if (nargs != 5 || !PyBytes_Check(args[0]) || !PyBytes_Check(args[4])) {
        PyErr_SetString(PyExc_TypeError, "_call_compiled(prog: bytes, bwd, primals, n_out, name: bytes)");
        return NULL;
    }
    compiled_bwd *b = (compiled_bwd *)PyCapsule_GetPointer(args[1], CAPSULE_NAME);
    if (!b) return NULL;
    const long n_out = PyLong_AsLong(args[3]);
    if (n_out == -1 && PyErr_Occurred()) return NULL;
    tl_tensor *primals[MAX_TENSORS], *results[MAX_TENSORS];
    int64_t np = 0, n_res = 0;
    if (!tl_fast_ready() || read_tensors(args[2], primals, &np) < 0) Py_RETURN_NONE;
    const int64_t *w = (const int64_t *)PyBytes_AsString(args[0]);
    const int64_t nw = (int64_t)(PyBytes_Size(args[0]) / (Py_ssize_t)sizeof(int64_t));
    const char *name = PyBytes_AsString(args[4]);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    const uint64_t prev = tl_grad_mode_guard_enter(0);
    rc = run_program(w, nw, primals, np, results, &n_res);
    tl_autograd_mode_guard_exit(prev);
    Py_END_ALLOW_THREADS
    if (rc == 0 && warned(results, n_res)) rc = 1;
    if (rc == 0 && (n_out < 0 || n_out > n_res)) {
        for (int64_t j = 0; j < n_res; j++) tl_tensor_release(results[j]);
        rc = -2;
    }
    for (int64_t j = 0; rc == 0 && j < n_res; j++)
        if (!results[j]) { /* a None result: the Python path */
            for (int64_t i = 0; i < n_res; i++) tl_tensor_release(results[i]);
            rc = 1;
        }
    if (rc == 0) {
        if (bwd_node_made(b) < 0) { /* the node's references, dropped by its release */
            for (int64_t j = 0; j < n_res; j++) tl_tensor_release(results[j]);
            return NULL;
        }
        const int made = tl_compile_attach_node(primals, np, results, n_out, results + n_out, n_res - n_out, name,
                                                bwd_apply, bwd_release, b);
        if (made == 0 || made == -3) bwd_release(b); /* no node was made: undone */
        if (made != 1)
            for (int64_t j = 0; j < n_res; j++) tl_tensor_release(results[j]);
        rc = made == 1 ? 0 : made == 0 ? 1 : -1;
    }
    if (rc == -2) return bad_program();
    if (rc == -1) return PyLong_FromLong(-1);
    if (rc != 0) Py_RETURN_NONE;
    for (int64_t j = n_out; j < n_res; j++) tl_tensor_release(results[j]); /* the node holds the saved */
    return result_list(results, n_out, args[2], primals, np);
}
