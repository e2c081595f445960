/* torchlet.compile's backward node, made in one C call after the forward
 * plan ran (api._apply_compiled): a callback node CompiledFunctionBackward
 * whose next edges are the primals' gradient edges, the outputs' history,
 * and the primals and saved values as its saved variables (an output saved
 * is marked as one: no reference cycle).  The same calls the Python version
 * makes one cffi crossing each (~8 us a call for a two-input graph).
 *
 * _attach_node(primals, outs, saved, name, apply, release, ctx) -> int
 *   primals, outs, saved: sequences of Tensors; name: bytes; apply, release,
 *   ctx: addresses (the cffi callbacks of torchlet.autograd.function and the
 *   node's handle).  Returns
 *    1  the node is made and the outputs' history set;
 *    0  an output is a primal or repeats (autograd.Function's general path
 *       is needed): nothing done;
 *   -1  a C error is pending (the caller raises it); if the node was made,
 *       releasing it has called `release`;
 *   -2  a tensor is not a plain Tensor object (the caller's Python path). */
#include "compile_fast.h"

#include "tl_autograd.h"
#include "tl_error.h"

#define MAX_TENSORS 64

/* the tensors of a sequence into ts[]; -2 when one is unreadable or too many */
static int read_tensors(PyObject *seq_obj, tl_tensor **ts, Py_ssize_t *n) {
    PyObject *seq = PySequence_Fast(seq_obj, "_attach_node: expected a sequence of tensors");
    if (!seq) return -3;
    Py_ssize_t len = PySequence_Size(seq);
    int rc = 0;
    if (len > MAX_TENSORS) rc = -2;
    for (Py_ssize_t i = 0; rc == 0 && i < len; i++) {
        PyObject *obj = PySequence_GetItem(seq, i);
        if (!obj) {
            rc = -3;
            break;
        }
        ts[i] = tl_fast_tensor_of(obj);
        Py_DECREF(obj); /* the sequence keeps it alive */
        if (!ts[i]) rc = -2;
    }
    Py_DECREF(seq);
    *n = len;
    return rc;
}

static void *address(PyObject *v) {
    return PyLong_AsVoidPtr(v);
}

/* The node over primals / outs / saved (borrowed tensors): 1 made, 0 an
 * output is a primal or repeats (nothing done), -1 error set (the node was
 * made: its release has called `release`), -3 error set (no node was made:
 * release was not called, ctx stays the caller's).  No Python object is
 * touched. */
int tl_compile_attach_node(tl_tensor *const *primals, int64_t np, tl_tensor *const *outs, int64_t no,
                           tl_tensor *const *saved, int64_t ns, const char *name, tl_callback_apply_fn apply,
                           tl_callback_release_fn release, void *ctx) {
    /* an output that is a primal or another output: the general path */
    for (int64_t i = 0; i < no; i++) {
        for (int64_t j = 0; j < np; j++)
            if (outs[i] == primals[j]) return 0;
        for (int64_t j = 0; j < i; j++)
            if (outs[i] == outs[j]) return 0;
    }
    tl_node *node = tl_callback_node_new(name, (int32_t)no, (int32_t)np, apply, release, ctx, (int32_t)(np + ns));
    if (!node) return -3;
    /* edge by edge, as the Python path: tl_node_set_next_edges would also make
     * an output sharing the first primal's storage a view of it */
    int rc = 0;
    for (int64_t i = 0; rc == 0 && i < np; i++) {
        tl_edge e = tl_autograd_gradient_edge(primals[i]);
        if (!e.node && tl_autograd_requires_grad(primals[i])) rc = -1; /* allocation failure: the error is set */
        if (rc == 0) rc = tl_node_set_next_edge(node, (int32_t)i, e);
        tl_node_release(e.node);
    }
    for (int64_t i = 0; rc == 0 && i < no; i++) rc = tl_autograd_set_history(outs[i], node, (int32_t)i);
    for (int64_t i = 0; rc == 0 && i < np; i++) rc = tl_callback_node_save(node, (int32_t)i, primals[i], 0);
    for (int64_t i = 0; rc == 0 && i < ns; i++) {
        int is_output = 0;
        for (int64_t j = 0; j < no; j++)
            if (saved[i] == outs[j]) is_output = 1;
        rc = tl_callback_node_save(node, (int32_t)(np + i), saved[i], is_output);
    }
    tl_node_release(node); /* the outputs hold it now (or, on failure, no one: release runs) */
    return rc == 0 ? 1 : -1;
}

PyObject *tl_fast_attach_node(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    (void)mod;
    if (nargs != 7 || !PyBytes_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError, "_attach_node(primals, outs, saved, name, apply, release, ctx)");
        return NULL;
    }
    tl_tensor *primals[MAX_TENSORS], *outs[MAX_TENSORS], *saved[MAX_TENSORS];
    Py_ssize_t np, no, ns;
    int rc = read_tensors(args[0], primals, &np);
    if (rc == 0) rc = read_tensors(args[1], outs, &no);
    if (rc == 0) rc = read_tensors(args[2], saved, &ns);
    if (rc == -3) return NULL;
    if (rc == -2) return PyLong_FromLong(-2);
    void *apply = address(args[4]), *release = address(args[5]), *ctx = address(args[6]);
    if (PyErr_Occurred()) return NULL;
    rc = tl_compile_attach_node(primals, np, outs, no, saved, ns, PyBytes_AsString(args[3]),
                                (tl_callback_apply_fn)apply, (tl_callback_release_fn)release, ctx);
    return PyLong_FromLong(rc == -3 ? -1 : rc);
}

/* _node_inputs(node, grads_in, n_grads) -> list | None: what the node's apply
 * reads, in one call: its saved variables (unpacked: the version check and
 * the freed-graph error), then the n_grads incoming gradients (None for an
 * undefined one).  node, grads_in: addresses.  None when an unpack fails
 * (the caller unpacks again one by one and raises that error) or the fast
 * paths are off. */
PyObject *tl_fast_node_inputs(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    (void)mod;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "_node_inputs(node, grads_in, n_grads)");
        return NULL;
    }
    tl_node *node = (tl_node *)PyLong_AsVoidPtr(args[0]);
    tl_tensor *const *grads_in = (tl_tensor *const *)PyLong_AsVoidPtr(args[1]);
    Py_ssize_t n_grads = PyLong_AsSsize_t(args[2]);
    if (PyErr_Occurred()) return NULL;
    if (!tl_fast_ready()) Py_RETURN_NONE; /* no Tensors made here: the caller's Python path */
    int32_t n_saved = tl_callback_node_num_saved(node);
    PyObject *res = PyList_New((Py_ssize_t)n_saved + n_grads);
    if (!res) return NULL;
    for (int32_t i = 0; i < n_saved; i++) {
        tl_tensor *t = NULL;
        if (tl_callback_node_unpack(node, i, &t) < 0) {
            tl_clear_error();
            Py_DECREF(res);
            Py_RETURN_NONE;
        }
        PyObject *obj = t ? tl_fast_wrap_tensor(t) : Py_NewRef(Py_None);
        if (!obj) {
            Py_DECREF(res);
            return NULL;
        }
        PyList_SetItem(res, i, obj);
    }
    for (Py_ssize_t i = 0; i < n_grads; i++) {
        tl_tensor *g = grads_in[i];
        PyObject *obj;
        if (g) {
            tl_tensor_retain(g);
            obj = tl_fast_wrap_tensor(g);
        } else {
            obj = Py_NewRef(Py_None);
        }
        if (!obj) {
            Py_DECREF(res);
            return NULL;
        }
        PyList_SetItem(res, n_saved + i, obj);
    }
    return res;
}
