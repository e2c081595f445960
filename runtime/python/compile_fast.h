/* torchlet.compile's per-call work in C: the guard key (compile_guard.c),
 * a fused group's call (compile_group.c) and the backward node (compile_node.c), functions of the torchlet._C_fast
 * module (fastcall.c), which lends them its cffi-pointer reader. */
#ifndef TL_COMPILE_FAST_H
#define TL_COMPILE_FAST_H

#ifndef Py_LIMITED_API
#define Py_LIMITED_API 0x030A0000
#endif
#include <Python.h>

#include "tl_tensor.h"

/* self._p of a plain Tensor as a C pointer; NULL (no exception set) otherwise
 * or before the module's layout check (fastcall.c) */
tl_tensor *tl_fast_tensor_of(PyObject *obj);

/* the layout check passed and the fast paths are on: cffi pointers may be
 * read and made here (fastcall.c) */
int tl_fast_ready(void);

/* a Tensor owning r (a new reference, taken also on failure) */
PyObject *tl_fast_wrap_tensor(tl_tensor *r);

/* _guard_key(tensors, exact, type_ids) -> bytes | None (runtime/torchlet/_compile/api.py) */
PyObject *tl_fast_guard_key(PyObject *mod, PyObject *const *args, Py_ssize_t nargs);

/* _attach_node(primals, outs, saved, name, apply, release, ctx) -> int (compile_node.c) */
PyObject *tl_fast_attach_node(PyObject *mod, PyObject *const *args, Py_ssize_t nargs);

/* _node_inputs(node, grads_in, n_grads) -> list | None (compile_node.c) */
PyObject *tl_fast_node_inputs(PyObject *mod, PyObject *const *args, Py_ssize_t nargs);

/* _run_group(desc, inputs) -> tuple | None (compile_group.c) */
PyObject *tl_fast_run_group(PyObject *mod, PyObject *const *args, Py_ssize_t nargs);

#endif
