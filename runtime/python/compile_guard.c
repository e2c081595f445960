/* torchlet.compile's guard key: what a compiled graph specialised on, for a
 * list of tensors, as one bytes object, read in one C call (the per-tensor
 * Python version made seven cffi calls and a tuple per tensor, ~2 us each,
 * on every call of a compiled function).
 *
 * First the grad mode and the CPU capability (call-wide state, read here to
 * spare the caller two calls); then per tensor, int64 words: its type's number (type_ids: a dict type -> int
 * the caller keeps, holding the types alive), dtype, device, contiguity,
 * requires_grad, rank, a bit mask of the sizes equal to 1, then, when
 * `exact`, the sizes.  The same fields as api._guard's tuple, so two calls
 * get equal keys exactly when their Python guards are equal.  None: a
 * tensor of a type not in type_ids, not a plain Tensor object (the caller
 * registers the type or takes the Python guard), or of rank over 62. */
#include "compile_fast.h"

#include <string.h>

#include "tl_autograd.h"
#include "tl_runtime.h" /* tl_cpu_capability */

#define WORDS_FIXED 7
#define MAX_RANK 62
#define STACK_WORDS 256

PyObject *tl_fast_guard_key(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    (void)mod;
    if (nargs != 3 || !PyDict_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "_guard_key(tensors, exact, type_ids)");
        return NULL;
    }
    PyObject *seq = PySequence_Fast(args[0], "_guard_key: expected a sequence of tensors");
    if (!seq) return NULL;
    int exact = PyObject_IsTrue(args[1]);
    if (exact < 0) {
        Py_DECREF(seq);
        return NULL;
    }
    Py_ssize_t n = PySequence_Size(seq);
    int64_t stack[STACK_WORDS], *w = stack;
    size_t cap = STACK_WORDS, len = 0;
    PyObject *res = NULL;
    w[len++] = tl_grad_mode_is_enabled();
    w[len++] = tl_cpu_capability();
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *obj = PySequence_GetItem(seq, i);
        if (!obj) goto done;
        PyObject *tid = PyDict_GetItemWithError(args[2], (PyObject *)Py_TYPE(obj)); /* borrowed */
        tl_tensor *t = tid ? tl_fast_tensor_of(obj) : NULL;
        Py_DECREF(obj); /* the sequence keeps it alive */
        if (!t) {
            if (!PyErr_Occurred()) res = Py_NewRef(Py_None);
            goto done;
        }
        int64_t nd = tl_tensor_ndim(t);
        if (nd > MAX_RANK) {
            res = Py_NewRef(Py_None);
            goto done;
        }
        size_t need = len + WORDS_FIXED + (exact ? (size_t)nd : 0);
        if (need > cap) {
            size_t ncap = 2 * need;
            int64_t *nw = PyMem_Malloc(ncap * sizeof(int64_t));
            if (!nw) {
                PyErr_NoMemory();
                goto done;
            }
            memcpy(nw, w, len * sizeof(int64_t));
            if (w != stack) PyMem_Free(w);
            w = nw;
            cap = ncap;
        }
        const int64_t *sizes = tl_tensor_sizes(t);
        int64_t ones = 0;
        for (int64_t d = 0; d < nd; d++)
            if (sizes[d] == 1) ones |= (int64_t)1 << d;
        w[len++] = PyLong_AsLongLong(tid);
        w[len++] = (int64_t)tl_tensor_dtype(t);
        w[len++] = (int64_t)tl_tensor_device(t);
        w[len++] = tl_tensor_is_contiguous(t);
        w[len++] = tl_autograd_requires_grad(t);
        w[len++] = nd;
        w[len++] = ones;
        if (exact)
            for (int64_t d = 0; d < nd; d++) w[len++] = sizes[d];
    }
    if (PyErr_Occurred()) goto done; /* a type number that is not an int */
    res = PyBytes_FromStringAndSize((const char *)w, (Py_ssize_t)(len * sizeof(int64_t)));
done:
    if (w != stack) PyMem_Free(w);
    Py_DECREF(seq);
    return res;
}
