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

PyObject *tl_fast_run_group(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    (void)mod;
    if (nargs != 2 || !PyBytes_Check(args[0]) || !PyTuple_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "_run_group(desc: bytes, inputs: tuple)");
        return NULL;
    }
    const int64_t *w = (const int64_t *)PyBytes_AsString(args[0]);
    Py_ssize_t nw = PyBytes_Size(args[0]) / (Py_ssize_t)sizeof(int64_t);
    if (nw < 8) goto bad_desc;
    group_kernel_fn kernel = (group_kernel_fn)(intptr_t)w[0];
    void *pfor = (void *)(intptr_t)w[1];
    int64_t grain = w[2], stream_min = w[3], is_row = w[4], n_in = w[5], n_out = w[6], n_dims = w[7];
    if (n_in + n_out > MAX_OPERANDS || n_dims > MAX_DIMS || PyTuple_Size(args[1]) != n_in) goto bad_desc;
    tl_tensor *ins[MAX_OPERANDS];
    for (int64_t i = 0; i < n_in; i++) {
        ins[i] = tl_fast_tensor_of(PyTuple_GetItem(args[1], (Py_ssize_t)i));
        if (!ins[i] || !tl_tensor_is_contiguous(ins[i])) Py_RETURN_NONE;
    }
    int64_t k = 8, dims[MAX_DIMS];
    if (k + 2 * n_dims > nw) goto bad_desc;
    for (int64_t d = 0; d < n_dims; d++, k += 2) {
        int64_t pos = w[k], axis = w[k + 1];
        if (pos < 0) {
            dims[d] = 1;
            continue;
        }
        if (pos >= n_in || axis < 0 || axis >= tl_tensor_ndim(ins[pos])) goto bad_desc;
        dims[d] = tl_tensor_sizes(ins[pos])[axis];
    }
    if (is_row && n_dims > 0 && dims[n_dims - 1] == 0) Py_RETURN_NONE; /* an empty row: operator by operator */
    if (k >= nw) goto bad_desc;
    int64_t n_seg = w[k++], seg_sizes[MAX_DIMS];
    if (n_seg > MAX_DIMS) goto bad_desc;
    for (int64_t s = 0; s < n_seg; s++) {
        if (k >= nw) goto bad_desc;
        int64_t len = w[k++], size = 1;
        if (k + len > nw) goto bad_desc;
        for (int64_t j = 0; j < len; j++, k++) {
            if (w[k] < 0 || w[k] >= n_dims) goto bad_desc;
            size *= dims[w[k]];
        }
        seg_sizes[s] = size;
    }
    tl_tensor *outs[MAX_OPERANDS];
    void *ptrs[MAX_OPERANDS];
    int64_t made = 0;
    for (; made < n_out; made++) {
        if (k + 2 > nw) goto bad_desc_outs;
        int64_t dtype = w[k], rank = w[k + 1], shape[MAX_DIMS];
        k += 2;
        if (rank > MAX_DIMS || k + rank > nw) goto bad_desc_outs;
        for (int64_t j = 0; j < rank; j++, k++) shape[j] = w[k] < 0 ? 1 : (w[k] < n_dims ? dims[w[k]] : 0);
        outs[made] = tl_empty(rank, shape, (tl_dtype)dtype, TL_CPU);
        if (!outs[made]) { /* the Python form allocates again and raises the error */
            tl_clear_error();
            goto python_form;
        }
        ptrs[made] = tl_tensor_data_ptr(outs[made]);
    }
    for (int64_t i = 0; i < n_in; i++) ptrs[n_out + i] = tl_tensor_data_ptr(ins[i]);
    /* the GIL is released while the kernel runs, as cffi's call released it */
    int failed;
    Py_BEGIN_ALLOW_THREADS
    failed = kernel(seg_sizes, ptrs, pfor, grain, stream_min);
    Py_END_ALLOW_THREADS
    if (failed) goto python_form; /* no row buffers: its message there */
    PyObject *res = PyTuple_New((Py_ssize_t)n_out);
    if (!res) goto release_all;
    for (int64_t i = 0; i < n_out; i++) {
        PyObject *t = tl_fast_wrap_tensor(outs[i]); /* takes the reference, also on failure */
        outs[i] = NULL;
        if (!t) {
            for (int64_t j = i + 1; j < n_out; j++) tl_tensor_release(outs[j]);
            Py_DECREF(res);
            return NULL;
        }
        PyTuple_SetItem(res, (Py_ssize_t)i, t);
    }
    return res;
release_all:
    for (int64_t i = 0; i < n_out; i++) tl_tensor_release(outs[i]);
    return NULL;
python_form:
    for (int64_t i = 0; i < made; i++) tl_tensor_release(outs[i]);
    Py_RETURN_NONE;
bad_desc_outs:
    for (int64_t i = 0; i < made; i++) tl_tensor_release(outs[i]);
bad_desc:
    PyErr_SetString(PyExc_ValueError, "_run_group: a malformed group descriptor");
    return NULL;
}
