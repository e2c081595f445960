/* torchlet.compile's guard key in C (compile_guard.c), a function of the
 * torchlet._C_fast module (fastcall.c), which lends it its cffi-pointer reader. */
#ifndef TL_COMPILE_GUARD_H
#define TL_COMPILE_GUARD_H

#ifndef Py_LIMITED_API
#define Py_LIMITED_API 0x030A0000
#endif
#include <Python.h>

#include "tl_tensor.h"

/* self._p of a plain Tensor as a C pointer; NULL (no exception set) otherwise
 * or before the module's layout check (fastcall.c) */
tl_tensor *tl_fast_tensor_of(PyObject *obj);

/* _guard_key(tensors, exact, type_ids) -> bytes | None (runtime/torchlet/_compile/api.py) */
PyObject *tl_fast_guard_key(PyObject *mod, PyObject *const *args, Py_ssize_t nargs);

#endif
