/* torchlet._C_fast: the hottest metadata calls, `x.view(2, 3)`, `x.t()` and
 * `x[i]`, as CPython methods of Tensor's first base class (TensorBase), so
 * that such a call is one C function: no Python frame, no argument tuple
 * or dict, and no cffi wrapper (whose out-of-line API mode releases and
 * re-acquires the GIL around every call, ~650 instructions).
 *
 * Each method does exactly what the Python path does, or hands the call to
 * it:
 *   - with a torch-function mode active (g_tf, kept equal to the mode count by
 *     torchlet._function_mode), the mode is told first, with this method as
 *     `func` (what `Tensor.view` is), as the generated bindings do;
 *   - for any argument that is not the plain case (keywords, non-int sizes,
 *     slices, ...), the generated / hand-written Python function runs instead;
 *   - once tensor subclass instances exist (g_rewrap set), a result whose C
 *     tensor carries a subclass state becomes its subclass object through
 *     torchlet._subclass.rewrap, as the bindings' `_as_subclass` does;
 *   - the entry point is the same tl_ops_* the binding calls, wrapped the
 *     same way (tl_pyabi_tensor: a pending warning parks the result) and
 *     NULL goes to the binding's own slow path, torchlet._errors.pending_result.
 * The GIL stays held: these operators do O(1) work, and the locks they can
 * take (the grad-accumulator lock of a view of a leaf) are never held across
 * a call into Python.
 *
 * A Tensor holds its C tensor as a cffi pointer (`_p`). This module reads and
 * makes such pointers by cffi's cdata layout (PyObject header, ctype, data
 * pointer, weakref list: the layout numba also relies on); torchlet/_fast.py
 * checks it against cffi's own objects before enabling anything, and the
 * methods fall back to the Python path until it has. Only the limited API
 * (abi3, 3.10) is used.
 */
#define Py_LIMITED_API 0x030A0000
#include <Python.h>
#include <stddef.h>

#include "compile_fast.h" /* torchlet.compile's guard key and node, functions of this module */
#include "tl_error.h"  /* tl_clear_error */

#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/select.h"
#include "ops/t.h"
#include "ops/view.h"

/* cffi's object for a `tl_tensor *` (cffi/_cffi_backend.c: CDataObject) */
typedef struct {
    PyObject_HEAD
    PyObject *c_type;
    char *c_data;
    PyObject *c_weakreflist;
} cdata_object;

#define MAX_SIZES 8 /* view(...) with more sizes takes the Python path */

static int g_ready;                /* layout checked, references below set */
static int g_tf;                   /* active torch-function modes (all threads) */
static PyTypeObject *g_cdata_type; /* type(ffi.cast("tl_tensor *", 0)) */
static PyObject *g_tensor_ctype;   /* ffi.typeof("tl_tensor *") */
static PyTypeObject *g_tensor;     /* torchlet.Tensor */
static allocfunc g_tensor_alloc;   /* its tp_alloc, looked up once in _setup */
static PyObject *g_p_descr;        /* Tensor.__dict__["_p"], the slot's member descriptor */
static descrgetfunc g_p_get;       /* its type's tp_descr_get */
static PyObject *g_name_p;         /* "_p" */
static PyObject *g_pending_result; /* torchlet._errors.pending_result */
static PyObject *g_tf_handle;      /* torchlet._function_mode.handle_args */
static PyObject *g_go;             /* its "no mode: go on" marker */
static PyObject *g_rewrap;         /* torchlet._subclass.rewrap once a subclass instance exists */
static PyObject *g_py_view, *g_py_t, *g_py_getitem; /* the Python paths */
static PyObject *g_func_view, *g_func_t, *g_func_getitem; /* what a mode is told (module_exec) */

/* self._p as a C pointer; NULL (no exception set) when it is anything but a
 * plain cffi `tl_tensor *` */
static tl_tensor *tensor_of(PyObject *self) {
    /* a plain Tensor reads its slot through the descriptor found at setup,
     * without the attribute lookup; subclasses take the general path */
    PyObject *p = Py_TYPE(self) == g_tensor && g_p_get ? g_p_get(g_p_descr, self, (PyObject *)g_tensor)
                                                       : PyObject_GetAttr(self, g_name_p);
    if (!p) {
        PyErr_Clear();
        return NULL;
    }
    tl_tensor *t = NULL;
    if (Py_TYPE(p) == g_cdata_type && ((cdata_object *)p)->c_type == g_tensor_ctype)
        t = (tl_tensor *)((cdata_object *)p)->c_data;
    Py_DECREF(p); /* self keeps it alive */
    return t;
}

tl_tensor *tl_fast_tensor_of(PyObject *obj) {
    return g_ready ? tensor_of(obj) : NULL;
}

int tl_fast_ready(void) {
    return g_ready;
}

int tl_fast_tf_active(void) {
    return g_tf;
}

/* a new cffi `tl_tensor *` over r (cffi's new_simple_cdata) */
static PyObject *cdata_of(tl_tensor *r) {
    cdata_object *cd = PyObject_New(cdata_object, g_cdata_type);
    if (!cd) return NULL;
    Py_INCREF(g_tensor_ctype);
    cd->c_type = g_tensor_ctype;
    cd->c_data = (char *)r;
    cd->c_weakreflist = NULL;
    return (PyObject *)cd;
}

/* a Tensor owning `handle` (a cdata; stolen), as `_new(Tensor); t._p = h`,
 * then `_as_subclass(t)` when its C tensor is a subclass tensor */
static PyObject *tensor_from_cdata(PyObject *handle) {
    tl_tensor *c = (tl_tensor *)((cdata_object *)handle)->c_data;
    PyObject *t = g_tensor_alloc(g_tensor, 0);
    if (!t || PyObject_SetAttr(t, g_name_p, handle) < 0) {
        /* the reference is not owned by any Tensor yet: give it back */
        tl_tensor_release(c);
        Py_DECREF(handle);
        Py_XDECREF(t);
        return NULL;
    }
    Py_DECREF(handle);
    if (g_rewrap && tl_tensor_py_slot(c)) {
        PyObject *sub = PyObject_CallFunctionObjArgs(g_rewrap, t, NULL);
        Py_DECREF(t);
        return sub;
    }
    return t;
}

/* the result of a wrapped entry point as a Tensor: NULL means an error or a
 * result parked while warnings are raised (the binding's `_pending_result()`) */
static PyObject *wrap_result(tl_tensor *r) {
    PyObject *h;
    if (r) {
        h = cdata_of(r);
        if (!h) {
            tl_tensor_release(r);
            return NULL;
        }
    } else {
        h = PyObject_CallNoArgs(g_pending_result);
        if (!h) return NULL;
        if (Py_TYPE(h) != g_cdata_type) { /* cannot happen: pending_result returns the parked pointer */
            Py_DECREF(h);
            PyErr_SetString(PyExc_SystemError, "torchlet: pending_result returned no tensor pointer");
            return NULL;
        }
    }
    return tensor_from_cdata(h);
}

PyObject *tl_fast_wrap_tensor(tl_tensor *r) {
    return wrap_result(r);
}

/* (self, *args) as a new tuple */
static PyObject *args_tuple(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    PyObject *tup = PyTuple_New(nargs + 1);
    if (!tup) return NULL;
    Py_INCREF(self);
    PyTuple_SetItem(tup, 0, self);
    for (Py_ssize_t i = 0; i < nargs; i++) {
        Py_INCREF(args[i]);
        PyTuple_SetItem(tup, i + 1, args[i]);
    }
    return tup;
}

/* the vectorcall keywords (names in kwnames, values after the positionals) as a dict */
static PyObject *kwargs_dict(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    PyObject *kw = PyDict_New();
    if (!kw || !kwnames) return kw;
    Py_ssize_t n = PyTuple_Size(kwnames);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (PyDict_SetItem(kw, PyTuple_GetItem(kwnames, i), args[nargs + i]) < 0) {
            Py_DECREF(kw);
            return NULL;
        }
    }
    return kw;
}

/* the Python path: fn(self, *args, **kwargs) */
static PyObject *call_python(PyObject *fn, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
    if (!fn) { /* while torchlet imports: Tensor has no such method yet */
        PyErr_SetString(PyExc_TypeError, "torchlet.Tensor: this method is not installed yet");
        return NULL;
    }
    PyObject *tup = args_tuple(self, args, nargs);
    if (!tup) return NULL;
    PyObject *kw = kwnames ? kwargs_dict(args, nargs, kwnames) : NULL;
    if (kwnames && !kw) {
        Py_DECREF(tup);
        return NULL;
    }
    PyObject *r = PyObject_Call(fn, tup, kw);
    Py_DECREF(tup);
    Py_XDECREF(kw);
    return r;
}

/* a torch-function mode's turn (the bindings' `_tf` check): the mode's result,
 * or g_go (borrowed) to go on, or NULL with its exception */
static PyObject *mode_call(PyObject *func, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames) {
    PyObject *tup = args_tuple(self, args, nargs);
    if (!tup) return NULL;
    PyObject *kw = kwargs_dict(args, nargs, kwnames);
    if (!kw) {
        Py_DECREF(tup);
        return NULL;
    }
    PyObject *r = PyObject_CallFunctionObjArgs(g_tf_handle, func, tup, kw, NULL);
    Py_DECREF(tup);
    Py_DECREF(kw);
    if (r == g_go) Py_DECREF(r); /* g_go stays alive: torchlet._function_mode holds it */
    return r;
}

/* an exact int that fits int64_t; 0 with no exception set otherwise */
static int int_arg(PyObject *o, int64_t *out) {
    if (!PyLong_CheckExact(o)) return 0;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow || (v == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return 0;
    }
    *out = (int64_t)v;
    return 1;
}

/* the sizes of view(2, 3) / view((2, 3)) / view([2, 3]) when they are all
 * plain ints (the only form taken here); their count, or -1 */
static Py_ssize_t int_sizes(PyObject *const *args, Py_ssize_t nargs, int64_t *sizes) {
    PyObject *seq = NULL;
    if (nargs == 1 && (PyTuple_CheckExact(args[0]) || PyList_CheckExact(args[0]))) seq = args[0];
    Py_ssize_t n = seq ? PyObject_Length(seq) : nargs;
    if (n < 0 || n > MAX_SIZES || (seq && n == 0)) {
        PyErr_Clear();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        /* a list's items are read one at a time (borrowed): the list cannot change meanwhile, no Python runs */
        PyObject *o = seq ? (PyTuple_CheckExact(seq) ? PyTuple_GetItem(seq, i) : PyList_GetItem(seq, i)) : args[i];
        if (!o || !int_arg(o, &sizes[i])) {
            PyErr_Clear();
            return -1;
        }
    }
    return n;
}

static PyObject *fast_view(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    if (g_tf && g_func_view) {
        PyObject *r = mode_call(g_func_view, self, args, nargs, kwnames);
        if (r != g_go) return r;
    }
    if (g_ready && !kwnames && nargs > 0) {
        int64_t sizes[MAX_SIZES];
        Py_ssize_t n = int_sizes(args, nargs, sizes);
        tl_tensor *p = n > 0 ? tensor_of(self) : NULL;
        if (p) return wrap_result(tl_pyabi_tensor(tl_ops_view(p, sizes, (int64_t)n)));
    }
    return call_python(g_py_view, self, args, nargs, kwnames);
}

/* METH_NOARGS: `x.t(0)` raises "TensorBase.t() takes no arguments (1 given)", PyTorch's text */
static PyObject *fast_t(PyObject *self, PyObject *unused) {
    (void)unused;
    if (g_tf && g_func_t) {
        PyObject *r = mode_call(g_func_t, self, NULL, 0, NULL);
        if (r != g_go) return r;
    }
    tl_tensor *p = g_ready ? tensor_of(self) : NULL;
    if (p) return wrap_result(tl_pyabi_tensor(tl_ops_t(p)));
    return call_python(g_py_t, self, NULL, 0, NULL);
}

static PyObject *fast_getitem(PyObject *self, PyObject *idx) {
    if (g_tf && g_func_getitem) {
        PyObject *r = mode_call(g_func_getitem, self, &idx, 1, NULL);
        if (r != g_go) return r;
    }
    int64_t i;
    tl_tensor *p = g_ready && int_arg(idx, &i) ? tensor_of(self) : NULL;
    if (p) {
        tl_tensor *r = tl_pyabi_tensor(tl_ops_select_int(p, 0, i));
        if (r) return wrap_result(r);
        /* out of range, a 0-dim tensor ...: the Python path raises PyTorch's message */
        tl_clear_error();
    }
    return call_python(g_py_getitem, self, &idx, 1, NULL);
}

static PyMethodDef base_methods[] = {
    {"view", (PyCFunction)(void (*)(void))fast_view, METH_FASTCALL | METH_KEYWORDS,
     "view(*size) -> Tensor | view(dtype) -> Tensor\n\nA view of this tensor with another shape or dtype."},
    {"t", (PyCFunction)fast_t, METH_NOARGS,
     "t($self, /)\n--\n\nThe transpose of a tensor of at most 2 dims."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot base_slots[] = {
    {Py_tp_doc, "The C half of torchlet.Tensor: its hottest metadata calls (torchlet/_fast.py)."},
    {Py_tp_methods, base_methods},
    {Py_mp_subscript, fast_getitem},
    {0, NULL},
};

static PyType_Spec base_spec = {
    .name = "torchlet._C_fast.TensorBase",
    .basicsize = 0, /* object's layout: Tensor keeps its own slots */
    .itemsize = 0,
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .slots = base_slots,
};

/* *slot = value (None stores NULL), keeping a reference */
static void set_ref(PyObject **slot, PyObject *value) {
    PyObject *old = *slot;
    if (value == Py_None) value = NULL;
    Py_XINCREF(value);
    *slot = value;
    Py_XDECREF(old);
}

/* _setup(cdata_type, tensor_ctype, Tensor, pending_result, handle_args, GO):
 * the references the methods use; they stay on the Python path until
 * _enable(True) */
static PyObject *mod_setup(PyObject *mod, PyObject *args) {
    (void)mod;
    PyObject *cdata_type, *ctype, *tensor, *pending, *handle, *go;
    if (!PyArg_UnpackTuple(args, "_setup", 6, 6, &cdata_type, &ctype, &tensor, &pending, &handle, &go))
        return NULL;
    if (!PyType_Check(cdata_type) || !PyType_Check(tensor)) {
        PyErr_SetString(PyExc_TypeError, "_setup: expected cffi's cdata type and torchlet.Tensor");
        return NULL;
    }
    g_ready = 0;
    set_ref((PyObject **)&g_cdata_type, cdata_type);
    set_ref(&g_tensor_ctype, ctype);
    set_ref((PyObject **)&g_tensor, tensor);
    g_tensor_alloc = (allocfunc)PyType_GetSlot(g_tensor, Py_tp_alloc);
    /* `_p` is a slot: its member descriptor, a data descriptor (no instance
     * dict can shadow it); anything else: the attribute lookup per call */
    PyObject *descr = PyObject_GetAttr(tensor, g_name_p);
    if (!descr) return NULL;
    descrgetfunc get = (descrgetfunc)PyType_GetSlot(Py_TYPE(descr), Py_tp_descr_get);
    const int data_descr = PyType_GetSlot(Py_TYPE(descr), Py_tp_descr_set) != NULL;
    set_ref(&g_p_descr, descr);
    Py_DECREF(descr);
    g_p_get = data_descr ? get : NULL;
    set_ref(&g_pending_result, pending);
    set_ref(&g_tf_handle, handle);
    set_ref(&g_go, go);
    Py_RETURN_NONE;
}

/* _set_python(view, t, getitem): the Python functions a call goes to when
 * it is not the plain case (None: not there yet) */
static PyObject *mod_set_python(PyObject *mod, PyObject *args) {
    (void)mod;
    PyObject *view, *t, *getitem;
    if (!PyArg_UnpackTuple(args, "_set_python", 3, 3, &view, &t, &getitem)) return NULL;
    set_ref(&g_py_view, view);
    set_ref(&g_py_t, t);
    set_ref(&g_py_getitem, getitem);
    Py_RETURN_NONE;
}

static PyObject *mod_enable(PyObject *mod, PyObject *on) {
    (void)mod;
    int v = PyObject_IsTrue(on);
    if (v < 0) return NULL;
    if (v && !(g_cdata_type && g_tensor && g_pending_result && g_tf_handle)) {
        PyErr_SetString(PyExc_RuntimeError, "_enable: _setup first");
        return NULL;
    }
    g_ready = v;
    Py_RETURN_NONE;
}

static PyObject *mod_set_tf(PyObject *mod, PyObject *n) {
    (void)mod;
    long v = PyLong_AsLong(n);
    if (v == -1 && PyErr_Occurred()) return NULL;
    g_tf = v != 0;
    Py_RETURN_NONE;
}

static PyObject *mod_set_rewrap(PyObject *mod, PyObject *fn) {
    (void)mod;
    set_ref(&g_rewrap, fn);
    Py_RETURN_NONE;
}

/* the layout check's two halves: the address in a cffi pointer, and a cffi
 * pointer made here (compared with ffi.cast's by torchlet/_fast.py) */
static PyObject *mod_address_of(PyObject *mod, PyObject *p) {
    (void)mod;
    if (!g_cdata_type || Py_TYPE(p) != g_cdata_type) {
        PyErr_SetString(PyExc_TypeError, "_address_of: expected a cffi pointer");
        return NULL;
    }
    return PyLong_FromVoidPtr(((cdata_object *)p)->c_data);
}

static PyObject *mod_pointer_at(PyObject *mod, PyObject *addr) {
    (void)mod;
    if (!g_cdata_type || !g_tensor_ctype) {
        PyErr_SetString(PyExc_RuntimeError, "_pointer_at: _setup first");
        return NULL;
    }
    void *v = PyLong_AsVoidPtr(addr);
    if (!v && PyErr_Occurred()) return NULL;
    return cdata_of((tl_tensor *)v);
}

static PyObject *mod_layout(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    return Py_BuildValue("(nn)", (Py_ssize_t)sizeof(cdata_object), (Py_ssize_t)offsetof(cdata_object, c_weakreflist));
}

static PyMethodDef module_methods[] = {
    {"_setup", mod_setup, METH_VARARGS, "the references the fast methods use"},
    {"_set_python", mod_set_python, METH_VARARGS, "the Python paths"},
    {"_enable", mod_enable, METH_O, "turn the fast paths on (after the layout check) or off"},
    {"_set_tf", mod_set_tf, METH_O, "the number of active torch-function modes"},
    {"_set_rewrap", mod_set_rewrap, METH_O, "torchlet._subclass.rewrap, once subclass instances exist"},
    {"_address_of", mod_address_of, METH_O, "the address a cffi pointer holds"},
    {"_pointer_at", mod_pointer_at, METH_O, "a cffi tl_tensor * made by this module"},
    {"_layout", mod_layout, METH_NOARGS, "(basicsize, weakref offset) this module assumes for cffi pointers"},
    {"_guard_key", (PyCFunction)(void (*)(void))tl_fast_guard_key, METH_FASTCALL,
     "_guard_key(tensors, exact, type_ids): torchlet.compile's guard key of the tensors (compile_guard.c)"},
    {"_run_group", (PyCFunction)(void (*)(void))tl_fast_run_group, METH_FASTCALL,
     "_run_group(desc, inputs): one fused group of a compiled plan (compile_group.c)"},
    {"_run_program", (PyCFunction)(void (*)(void))tl_fast_run_program, METH_FASTCALL,
     "_run_program(prog, inputs): a compiled plan run whole (compile_program.c)"},
    {"_call_compiled", (PyCFunction)(void (*)(void))tl_fast_call_compiled, METH_FASTCALL,
     "_call_compiled(prog, bwd, primals, n_out, name): a compiled forward and its backward node (compile_program.c)"},
    {"_compiled_bwd", (PyCFunction)(void (*)(void))tl_fast_compiled_bwd, METH_FASTCALL,
     "_compiled_bwd(result_primals, n_grads, apply, release, ctx): a compiled graph's backward (compile_program.c)"},
    {"_compiled_bwd_program", (PyCFunction)(void (*)(void))tl_fast_compiled_bwd_program, METH_FASTCALL,
     "_compiled_bwd_program(capsule, prog): its backward program, once planned (compile_program.c)"},
    {"_node_inputs", (PyCFunction)(void (*)(void))tl_fast_node_inputs, METH_FASTCALL,
     "_node_inputs(node, grads_in, n_grads): a compiled graph's node's saved tensors and gradients (compile_node.c)"},
    {"_attach_node", (PyCFunction)(void (*)(void))tl_fast_attach_node, METH_FASTCALL,
     "_attach_node(primals, outs, saved, name, apply, release, ctx): a compiled graph's backward node (compile_node.c)"},
    {NULL, NULL, 0, NULL},
};

static int module_exec(PyObject *mod) {
    PyObject *base = PyType_FromSpec(&base_spec);
    if (!base) return -1;
    /* what a torch-function mode is told: Tensor.view, Tensor.t, Tensor.__getitem__ */
    g_func_view = PyObject_GetAttrString(base, "view");
    g_func_t = PyObject_GetAttrString(base, "t");
    g_func_getitem = PyObject_GetAttrString(base, "__getitem__");
    if (!g_func_view || !g_func_t || !g_func_getitem || PyModule_AddObject(mod, "TensorBase", base) < 0) {
        Py_DECREF(base);
        return -1;
    }
    g_name_p = PyUnicode_InternFromString("_p");
    return g_name_p ? 0 : -1;
}

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, (void *)module_exec},
    {0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "torchlet._C_fast",
    .m_doc = "CPython methods of torchlet.Tensor for its hottest metadata calls (torchlet/_fast.py)",
    .m_size = 0,
    .m_methods = module_methods,
    .m_slots = module_slots,
};

PyMODINIT_FUNC PyInit__C_fast(void) { return PyModuleDef_Init(&module_def); }
