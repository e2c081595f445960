/* One fused group of a torchlet.compile plan in one C call: what the plan's
 * Python does per group (runtime/torchlet/_compile/plan.py) without a cffi
 * crossing per step: check the inputs are contiguous, read the sizes of the
 * group's dimensions from them, allocate the outputs, call the generated
 * kernel, and wrap the outputs as Tensors.
 *
 * _run_group(desc, inputs) -> tuple of Tensors | None
 *   desc: bytes of int64 words, made once per group (plan._group_desc):
 *     kernel, pfor, grain, stream_min, is_row, n_in, n_out, n_dims,
 *     n_dims x (input position or -1, axis),
 *     n_segments, per segment: its length, its dims,
 *     per output: dtype, rank, per output dim: a space dim or -1 (size 1).
 *   None: the Python form runs instead, which handles what this does not: a
 *   non-contiguous input (made contiguous there), a row kernel over an empty
 *   row (run operator by operator), a failed allocation (whose error it
 *   raises), a kernel that found no memory for its row buffers (the same),
 *   a tensor that is not a plain Tensor object. */
#include "compile_fast.h"

#include "tl_error.h"

#define MAX_OPERANDS 64
#define MAX_DIMS 64

typedef int (*group_kernel_fn)(const int64_t *sizes, void *const *ptrs, void *pfor, int64_t grain,
                               int64_t stream_min);

/* The group described by w[0..nw) on ins (n_in_given borrowed tensors):
 * outs[0..its n_out) get new references.  0: done; 1: the Python form must
 * run it (nothing allocated); -2: a malformed descriptor.  Touches no Python
 * object (the program runner calls it without the GIL). */
int tl_compile_group_call(const int64_t *w, int64_t nw, tl_tensor *const *ins, int64_t n_in_given, tl_tensor **outs) {
    if (nw < 8) return -2;
    group_kernel_fn kernel = (group_kernel_fn)(intptr_t)w[0];
    void *pfor = (void *)(intptr_t)w[1];
    int64_t grain = w[2], stream_min = w[3], is_row = w[4], n_in = w[5], n_out = w[6], n_dims = w[7];
    if (n_in + n_out > MAX_OPERANDS || n_dims > MAX_DIMS || n_in_given != n_in) return -2;
    for (int64_t i = 0; i < n_in; i++)
        if (!tl_tensor_is_contiguous(ins[i])) return 1;
    int64_t k = 8, dims[MAX_DIMS];
    if (k + 2 * n_dims > nw) return -2;
    for (int64_t d = 0; d < n_dims; d++, k += 2) {
        int64_t pos = w[k], axis = w[k + 1];
        if (pos < 0) {
            dims[d] = 1;
            continue;
        }
        if (pos >= n_in || axis < 0 || axis >= tl_tensor_ndim(ins[pos])) return -2;
        dims[d] = tl_tensor_sizes(ins[pos])[axis];
    }
    if (is_row && n_dims > 0 && dims[n_dims - 1] == 0) return 1; /* an empty row: operator by operator */
    if (k >= nw) return -2;
    int64_t n_seg = w[k++], seg_sizes[MAX_DIMS];
    if (n_seg > MAX_DIMS) return -2;
    for (int64_t s = 0; s < n_seg; s++) {
        if (k >= nw) return -2;
        int64_t len = w[k++], size = 1;
        if (k + len > nw) return -2;
        for (int64_t j = 0; j < len; j++, k++) {
            if (w[k] < 0 || w[k] >= n_dims) return -2;
            size *= dims[w[k]];
        }
        seg_sizes[s] = size;
    }
    void *ptrs[MAX_OPERANDS];
    int64_t made = 0;
    int rc = 0;
    for (; made < n_out; made++) {
        int64_t shape[MAX_DIMS];
        if (k + 2 > nw) {
            rc = -2;
            break;
        }
        int64_t dtype = w[k], rank = w[k + 1];
        k += 2;
        if (rank > MAX_DIMS || k + rank > nw) {
            rc = -2;
            break;
        }
        for (int64_t j = 0; j < rank; j++, k++) shape[j] = w[k] < 0 ? 1 : (w[k] < n_dims ? dims[w[k]] : 0);
        outs[made] = tl_empty(rank, shape, (tl_dtype)dtype, TL_CPU);
        if (!outs[made]) { /* the Python form allocates again and raises the error */
            tl_clear_error();
            rc = 1;
            break;
        }
        ptrs[made] = tl_tensor_data_ptr(outs[made]);
    }
    if (rc == 0) {
        for (int64_t i = 0; i < n_in; i++) ptrs[n_out + i] = tl_tensor_data_ptr(ins[i]);
        if (kernel(seg_sizes, ptrs, pfor, grain, stream_min)) rc = 1; /* no row buffers: its message there */
    }
    if (rc != 0)
        for (int64_t i = 0; i < made; i++) tl_tensor_release(outs[i]);
    return rc;
}

PyObject *tl_fast_run_group(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    (void)mod;
    if (nargs != 2 || !PyBytes_Check(args[0]) || !PyTuple_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "_run_group(desc: bytes, inputs: tuple)");
        return NULL;
    }
    const int64_t *w = (const int64_t *)PyBytes_AsString(args[0]);
    int64_t nw = (int64_t)(PyBytes_Size(args[0]) / (Py_ssize_t)sizeof(int64_t));
    Py_ssize_t n_in = PyTuple_Size(args[1]);
    if (nw < 8 || n_in > MAX_OPERANDS || w[6] < 0 || w[6] > MAX_OPERANDS) goto bad_desc;
    tl_tensor *ins[MAX_OPERANDS], *outs[MAX_OPERANDS];
    for (Py_ssize_t i = 0; i < n_in; i++) {
        ins[i] = tl_fast_tensor_of(PyTuple_GetItem(args[1], i));
        if (!ins[i]) Py_RETURN_NONE;
    }
    int64_t n_out = w[6];
    /* the GIL is released while the kernel runs, as cffi's call released it */
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = tl_compile_group_call(w, nw, ins, (int64_t)n_in, outs);
    Py_END_ALLOW_THREADS
    if (rc == -2) goto bad_desc;
    if (rc != 0) Py_RETURN_NONE;
    PyObject *res = PyTuple_New((Py_ssize_t)n_out);
    if (!res) {
        for (int64_t i = 0; i < n_out; i++) tl_tensor_release(outs[i]);
        return NULL;
    }
    for (int64_t i = 0; i < n_out; i++) {
        PyObject *t = tl_fast_wrap_tensor(outs[i]); /* takes the reference, also on failure */
        if (!t) {
            for (int64_t j = i + 1; j < n_out; j++) tl_tensor_release(outs[j]);
            Py_DECREF(res);
            return NULL;
        }
        PyTuple_SetItem(res, (Py_ssize_t)i, t);
    }
    return res;
bad_desc:
    PyErr_SetString(PyExc_ValueError, "_run_group: a malformed group descriptor");
    return NULL;
}
