/* torchlet runtime: the dispatcher (see docs/DISPATCHER.md).
 *
 * An operator ("aten::add.Tensor") is defined once with its schema and gets a
 * tl_operator handle that lives until tl_dispatch_reset_for_tests (i.e. for
 * the life of the process). Kernels are registered per dispatch key (runtime
 * or alias); from the set of registrations plus the global backend fallbacks
 * the dispatcher computes, per operator, a table with one kernel per runtime
 * key and a mask of the keys whose kernel is a fallthrough. The table depends
 * only on the set of registrations, never on their order.
 *
 * A call: keyset = (OR of the tensor arguments' keysets | TLS included)
 * & ~TLS excluded; the kernel is table[highest key of (keyset & non-fallthrough
 * keys)]. Lookups take no lock, allocate nothing, touch no string.
 *
 * Kernels: every kernel has a boxed function (tl_boxed_fn) and may also have
 * an unboxed C function pointer whose type the operator's schema fixes (the
 * generator casts tl_kernel.unboxed). Entry points call `unboxed` when it is
 * set and otherwise box their arguments onto a tl_stack and call `boxed`.
 *
 * Errors: functions returning a pointer return NULL, functions returning int
 * or int64_t return -1, with the thread-local error set (tl_error.h).
 *
 * cdef-clean: build_ffi.py strips preprocessor lines; keep declarations plain.
 */
#ifndef TL_DISPATCH_H
#define TL_DISPATCH_H

#include <stddef.h>
#include <stdint.h>
#include "tl_dispatch_key.h"
#include "tl_ivalue.h"

typedef struct tl_operator tl_operator;
typedef struct tl_kernel tl_kernel;

/* A boxed kernel: its arguments are the top tl_op_num_arguments(op) values
 * of the stack; it pops them and pushes tl_op_num_returns(op) returns.
 * `kernel` is the table entry being run (read kernel->ctx, kernel->unboxed),
 * `ks` the keyset of the call (still containing the key being served; use
 * tl_keyset_below(ks, key) or tl_op_dispatch_key(op, ks) to redispatch).
 * Returns 0, or -1 with the tl error set (the stack is then unspecified). */
typedef int (*tl_boxed_fn)(const tl_kernel *kernel, const tl_operator *op, tl_keyset ks,
                           tl_stack *stack);

/* One registered kernel; immutable while it is reachable from a table. */
struct tl_kernel {
    void *unboxed;          /* operator-specific C function, or NULL (boxed only) */
    tl_boxed_fn boxed;      /* NULL only for a fallthrough */
    void *ctx;              /* the registrant's data (e.g. a Python callable's handle) */
    const char *debug;      /* name shown by dumps and errors */
    int32_t fallthrough;    /* 1: not a kernel; dispatch skips this key */
    int32_t key;            /* the key (runtime or alias) it was registered for */
};

/* ----------------------------------------------------------- operators */

/* Defines an operator: name "ns::name.overload", schema as in
 * native_functions.yaml ("add.Tensor(Tensor self, Tensor other, *, Scalar
 * alpha=1) -> Tensor"; the part before '(' is not checked). The number of
 * arguments and returns are read from the schema. Defining the same name again
 * with the same schema returns the same handle; another schema is an error. */
tl_operator *tl_op_define(const char *name, const char *schema);
/* The handle of a defined operator, or NULL with RuntimeError
 * "No such operator <name>". */
tl_operator *tl_op_find(const char *name);
/* The operator named `name`, created when absent as a *declared* operator:
 * kernels can be registered on it before its schema is defined (PyTorch
 * accepts impl() before def()); tl_op_find does not see it and calls fail
 * until tl_op_define gives it a schema. */
tl_operator *tl_op_declare(const char *name);
/* Removes the schema of a run-time operator (a destroyed defining Library):
 * the handle stays valid, its registrations stay, tl_op_find stops seeing
 * it, boxed calls fail, and tl_op_define may give it any schema again.
 * -1 + RuntimeError when it is not defined. */
int tl_op_undefine(tl_operator *op);
int tl_op_is_defined(const tl_operator *op);
/* operators in definition (or declaration) order, i < tl_dispatch_num_operators();
 * NULL when out of range */
tl_operator *tl_dispatch_operator_at(int64_t i);
const char *tl_op_name(const tl_operator *op);
const char *tl_op_schema(const tl_operator *op);
int tl_op_num_arguments(const tl_operator *op);
int tl_op_num_returns(const tl_operator *op);
int64_t tl_dispatch_num_operators(void);

/* ----------------------------------------------------------- registration
 * Each returns a registration id (> 0) for tl_dispatch_deregister, or -1.
 * Registering the same (operator, key) twice keeps both; the newest wins and
 * deregistering it brings the previous one back. `debug` is copied; NULL
 * gives "unnamed kernel". Registrations take a mutex; they may run while other
 * threads dispatch (a concurrent call sees the old or the new kernel). */

/* key: a runtime key or an alias key (not Undefined). boxed is required;
 * unboxed may be NULL (then entry points box and call `boxed`). */
int64_t tl_op_register_kernel(tl_operator *op, int key, void *unboxed, tl_boxed_fn boxed,
                              void *ctx, const char *debug);
/* makes `key` (runtime or alias) of this operator a fallthrough */
int64_t tl_op_register_fallthrough(tl_operator *op, int key, const char *debug);
/* a boxed kernel that serves every operator at a runtime key when the
 * operator's table has nothing there */
int64_t tl_register_backend_fallback(int key, tl_boxed_fn boxed, void *ctx, const char *debug);
int64_t tl_register_backend_fallthrough(int key, const char *debug);
/* removes one registration; -1 + RuntimeError for an unknown or removed id */
int tl_dispatch_deregister(int64_t id);

/* Tests only: forgets every operator and registration (handles become
 * invalid) and restores the default backend fallbacks: fallthrough at
 * BackendSelect, Python, ADInplaceOrView and every Autograd* key. */
void tl_dispatch_reset_for_tests(void);

/* ----------------------------------------------------------- dispatch */

/* (tensor_keys | TLS included) & ~TLS excluded */
tl_keyset tl_dispatch_compute_keyset(tl_keyset tensor_keys);

/* The kernel for a final keyset: table[highest non-fallthrough key of ks]
 * (the Undefined slot when none). NULL with NotImplementedError
 * "Could not run 'aten::add.Tensor' with arguments from the 'Meta' backend..."
 * when that slot is empty. */
const tl_kernel *tl_op_lookup(const tl_operator *op, tl_keyset ks);
/* tl_op_lookup(op, tl_keyset_below(ks, key)): redispatch below `key` */
const tl_kernel *tl_op_lookup_below(const tl_operator *op, tl_keyset ks, int key);
/* Entry point fast path: *ks_out = tl_dispatch_compute_keyset(tensor_keys),
 * returns tl_op_lookup(op, *ks_out). */
const tl_kernel *tl_op_select(const tl_operator *op, tl_keyset tensor_keys, tl_keyset *ks_out);
/* the key tl_op_lookup(op, ks) would serve (TL_KEY_UNDEFINED if none) */
int tl_op_dispatch_key(const tl_operator *op, tl_keyset ks);
/* the keys of ks that are fallthrough for this operator */
tl_keyset tl_op_fallthrough_keys(const tl_operator *op);

/* Boxed calls. tl_op_call_boxed: full dispatch; the keyset is computed from
 * the tensors (TENSOR, TENSOR_LIST, OPT_TENSOR_LIST values) among the top
 * tl_op_num_arguments(op) values, plus TLS. tl_op_redispatch_boxed: dispatch on
 * `ks` as given (no TLS), e.g. tl_keyset_below(ks, TL_KEY_PYTHON).
 * tl_kernel_call_boxed: run a looked-up kernel. All return 0 or -1. */
int tl_op_call_boxed(const tl_operator *op, tl_stack *stack);
int tl_op_redispatch_boxed(const tl_operator *op, tl_keyset ks, tl_stack *stack);
int tl_kernel_call_boxed(const tl_kernel *kernel, const tl_operator *op, tl_keyset ks,
                         tl_stack *stack);
/* A boxed call from flat arrays, so that a caller outside C (torchlet.ops)
 * crosses into C once per call. Argument i has the tag kinds[i] (TL_IV_*);
 * its payload is read from the next unread entries of the streams:
 *   NONE: nothing             BOOL, INT, DTYPE: one int
 *   DOUBLE: one double        COMPLEX: two doubles (re, im)
 *   TENSOR: one tensor (NULL = None, borrowed)      STRING: one string
 *   DEVICE: two ints (type, index)
 *   INT_LIST, BOOL_LIST: an int n, then n ints
 *   DOUBLE_LIST: an int n, then n doubles
 *   TENSOR_LIST, OPT_TENSOR_LIST: an int n, then n tensors (NULL = None in the optional list)
 * Two more kinds let a caller keep its kinds array constant across calls:
 *   TL_FLAT_SCALAR: an int k (0 bool, 1 int, 2 double), then the value
 *                   (k < 2: one int; k == 2: one double)
 *   TL_FLAT_OPTIONAL | tag: an int p; p == 0 pushes None, else the tag's payload follows
 * The returns are left on `out` (pushed after anything already there).
 * 0, or -1 with the error set (out holds what it held before). */
enum { TL_FLAT_SCALAR = 64, TL_FLAT_OPTIONAL = 128 };
int tl_op_call_flat(const tl_operator *op, const int32_t *kinds, int32_t nargs, const int64_t *ints,
                    const double *doubles, tl_tensor *const *tensors, const char *const *strings,
                    tl_stack *out);
/* tl_op_call_flat dispatching on `ks` as given (no TLS): OpOverload.redispatch */
int tl_op_redispatch_flat(const tl_operator *op, tl_keyset ks, const int32_t *kinds, int32_t nargs,
                          const int64_t *ints, const double *doubles, tl_tensor *const *tensors,
                          const char *const *strings, tl_stack *out);
/* tl_op_call_flat for an operator that returns exactly one Tensor: that
 * tensor (a new reference; NULL + error on failure or for another return). */
tl_tensor *tl_op_call_flat_tensor(const tl_operator *op, const int32_t *kinds, int32_t nargs,
                                  const int64_t *ints, const double *doubles,
                                  tl_tensor *const *tensors, const char *const *strings);
#ifdef TL_PYABI_WRAP_ENTRIES
/* inside the cffi module: a pending warning parks the result and returns NULL
 * (tl_runtime.h, tl_pyabi_tensor), so Python checks one pointer per call */
#define tl_op_call_flat_tensor(...) tl_pyabi_tensor(tl_op_call_flat_tensor(__VA_ARGS__))
#endif

/* OR of the keysets of the tensors among the top tl_op_num_arguments(op) values */
tl_keyset tl_op_stack_keyset(const tl_operator *op, const tl_stack *stack);

/* ----------------------------------------------------------- thread-local state
 * Per OS thread. Every thread starts with included = the default included set
 * {BackendSelect, ADInplaceOrView} (PyTorch's default; both fall through for
 * operators without a kernel there) and excluded = the default excluded set
 * {AutocastCPU, AutocastCUDA} (autocast off). Setters replace a set
 * and reject bits that are not runtime keys (-1 + ValueError). Guards return
 * the previous set and must be exited with it in LIFO order; keys outside the
 * runtime keys are ignored:
 *     tl_keyset prev = tl_exclude_guard_enter(tl_keyset_autograd());
 *     ... redispatch ...
 *     tl_exclude_guard_exit(prev);                                      */
tl_keyset tl_tls_default_included(void);
tl_keyset tl_tls_default_excluded(void);
tl_keyset tl_tls_get_included(void);
tl_keyset tl_tls_get_excluded(void);
int tl_tls_set_included(tl_keyset ks);
int tl_tls_set_excluded(tl_keyset ks);
tl_keyset tl_include_guard_enter(tl_keyset keys);   /* included |= keys */
void tl_include_guard_exit(tl_keyset previous);
tl_keyset tl_exclude_guard_enter(tl_keyset keys);   /* excluded |= keys */
void tl_exclude_guard_exit(tl_keyset previous);

/* ----------------------------------------------------------- introspection
 * Like the string functions of tl_dispatch_key.h: write at most n bytes
 * including the NUL, return the full length without it (-1 on error). */

/* PyTorch's _dispatch_dump_table: one line per key that has a kernel, the
 * Undefined slot first, then runtime keys in increasing priority:
 *   "CPU: add_cpu [kernel]\n"
 *   "Meta: add_composite [default backend kernel]\n"
 *   "AutogradCPU: fallthrough registered in torchlet runtime [backend fallback]\n"
 * provenance: kernel | default backend kernel | math kernel | autograd kernel
 * | backend fallback. Unknown operator: -1 + RuntimeError. */
int64_t tl_dispatch_dump_table(const char *name, char *buf, size_t n);
int64_t tl_op_dump_table(const tl_operator *op, char *buf, size_t n);
/* The registrations of an operator, newest first, one per line:
 *   "CompositeImplicitAutograd: add_composite\n", "AutogradCPU: fallthrough\n" */
int64_t tl_op_dump_registrations(const tl_operator *op, char *buf, size_t n);
/* "[CPU, BackendSelect, ...]": the runtime keys whose table slot is filled */
int64_t tl_op_list_keys(const tl_operator *op, char *buf, size_t n);
/* 1 if a kernel or fallthrough is registered for exactly this (runtime or
 * alias) key of the operator (PyTorch's _dispatch_has_kernel_for_dispatch_key) */
int tl_op_has_registration(const tl_operator *op, int key);
/* 1 if the operator's table slot for a runtime key (or Undefined) is filled
 * by anything: kernel, alias kernel, fallthrough or backend fallback */
int tl_op_has_kernel_for_key(const tl_operator *op, int key);
/* 0 if every operator's table equals a fresh recomputation, else -1 + RuntimeError */
int tl_dispatch_check_invariants(void);

#endif
