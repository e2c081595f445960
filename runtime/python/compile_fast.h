/* torchlet.compile's per-call work in C: the guard key (compile_guard.c),
 * a fused group's call (compile_group.c), the backward node (compile_node.c) and a
 * whole plan with its backward node (compile_program.c), functions of the torchlet._C_fast
 * module (fastcall.c), which lends them its cffi-pointer reader. */
#ifndef TL_COMPILE_FAST_H
#define TL_COMPILE_FAST_H

#ifndef Py_LIMITED_API
#define Py_LIMITED_API 0x030A0000
#endif
#include <Python.h>

#include "tl_autograd.h"
#include "tl_tensor.h"

/* self._p of a plain Tensor as a C pointer; NULL (no exception set) otherwise
 * or before the module's layout check (fastcall.c) */
tl_tensor *tl_fast_tensor_of(PyObject *obj);

/* the layout check passed and the fast paths are on: cffi pointers may be
 * read and made here (fastcall.c) */
int tl_fast_ready(void);

/* a torch-function mode is active (on any thread): the Python forms run */
int tl_fast_tf_active(void);

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

/* the C cores the program runner shares (compile_group.c, compile_node.c) */
int tl_compile_group_call(const int64_t *w, int64_t nw, tl_tensor *const *ins, int64_t n_in_given, tl_tensor **outs);
int tl_compile_attach_node(tl_tensor *const *primals, int64_t np, tl_tensor *const *outs, int64_t no,
                           tl_tensor *const *saved, int64_t ns, const char *name, tl_callback_apply_fn apply,
                           tl_callback_release_fn release, void *ctx);

/* a plan run whole, its backward node (compile_program.c) */
PyObject *tl_fast_run_program(PyObject *mod, PyObject *const *args, Py_ssize_t nargs);
PyObject *tl_fast_call_compiled(PyObject *mod, PyObject *const *args, Py_ssize_t nargs);
PyObject *tl_fast_compiled_bwd(PyObject *mod, PyObject *const *args, Py_ssize_t nargs);
PyObject *tl_fast_compiled_bwd_program(PyObject *mod, PyObject *const *args, Py_ssize_t nargs);

#endif
