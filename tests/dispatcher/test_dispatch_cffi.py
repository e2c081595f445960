"""The dispatcher's C API from Python through cffi, on its own.

Builds a small API-mode extension from the dispatcher's own (cdef-clean)
headers plus dispatch.c / ivalue.c / error.c, with fake tensors, and uses it
the way torchlet._C will: a Python function registered as a boxed kernel
(extern "Python" trampoline + ffi.new_handle ctx), boxed calls, the
_dispatch_keys / _dispatch_dump_table string protocol, errors.
"""
from __future__ import annotations

import importlib.util
import re
import shutil
import sys
from pathlib import Path

import pytest

cffi = pytest.importorskip("cffi")
pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not available")

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
INCLUDE = ROOT / "runtime" / "include"
ERROR_C = ROOT / "runtime" / "src" / "error.c"

# types the dispatcher headers use from tl_dtype.h / tl_tensor.h (cffi checks
# them against the real headers when it compiles in API mode)
PRELUDE = """
typedef enum tl_scalar_kind { TL_SCALAR_BOOL = 0, TL_SCALAR_INT = 1, TL_SCALAR_DOUBLE = 2 } tl_scalar_kind;
typedef struct tl_scalar { tl_scalar_kind kind; int64_t i; double d; ...; } tl_scalar;
typedef struct tl_tensor tl_tensor;
"""

FAKES_CDEF = """
tl_tensor *fake_new(uint64_t ks, double value);
double fake_value(const tl_tensor *t);
int64_t fake_refs(const tl_tensor *t);
void tl_tensor_release(tl_tensor *t);
uint64_t tl_tensor_key_set(const tl_tensor *t);
extern "Python" int py_trampoline(const tl_kernel *, const tl_operator *, tl_keyset, tl_stack *);
"""

FAKES_SRC = r"""
#include <stdlib.h>
#include "tl_error.h"
#include "tl_dispatch.h"
struct tl_tensor { int64_t refs; uint64_t ks; double value; };
tl_tensor *fake_new(uint64_t ks, double value) {
    tl_tensor *t = malloc(sizeof *t);
    if (!t) return NULL;
    t->refs = 1; t->ks = ks; t->value = value;
    return t;
}
double fake_value(const tl_tensor *t) { return t->value; }
int64_t fake_refs(const tl_tensor *t) { return t->refs; }
void tl_tensor_retain(tl_tensor *t) { __atomic_add_fetch(&t->refs, 1, __ATOMIC_RELAXED); }
void tl_tensor_release(tl_tensor *t) {
    if (t && __atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL) == 0) free(t);
}
uint64_t tl_tensor_key_set(const tl_tensor *t) { return t->ks; }
"""


def strip_for_cdef(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("#"))
    out, i = [], 0
    while (j := text.find("__attribute__", i)) >= 0:  # drop __attribute__((...))
        out.append(text[i:j])
        k, depth = text.index("(", j), 0
        while True:
            depth += {"(": 1, ")": -1}.get(text[k], 0)
            if depth == 0:
                break
            k += 1
        i = k + 1
    out.append(text[i:])
    return "".join(out)


@pytest.fixture(scope="module")
def ext(tmp_path_factory):
    out = tmp_path_factory.mktemp("dispatch_cffi")
    ffi = cffi.FFI()
    ffi.cdef(PRELUDE)
    for h in ["tl_error.h", "tl_dispatch_key.h", "tl_ivalue.h", "tl_dispatch.h"]:
        ffi.cdef(strip_for_cdef((INCLUDE / h).read_text()), override=True)
    ffi.cdef(FAKES_CDEF)
    sources = [str(ROOT / "runtime/src/dispatch.c"), str(ROOT / "runtime/src/ivalue.c"),
               str(ROOT / "runtime/src/op_call.c"),
               str(ERROR_C if ERROR_C.exists() else HERE / "error_stub.c")]
    # -Bsymbolic: this module's own tl_* definitions serve its calls even after
    # torchlet.library.load_library has made torchlet._C's tl_* symbols global
    ffi.set_source("_tl_dispatch_test", FAKES_SRC, sources=sources, include_dirs=[str(INCLUDE)],
                   extra_compile_args=["-std=gnu11", "-O1", "-w"], extra_link_args=["-Wl,-Bsymbolic"])
    so = ffi.compile(tmpdir=str(out))
    spec = importlib.util.spec_from_file_location("_tl_dispatch_test", so)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sys.modules["_tl_dispatch_test"] = mod
    mod.lib.tl_dispatch_reset_for_tests()
    yield mod
    mod.lib.tl_dispatch_reset_for_tests()


def _call_into(fn, args, n):
    """The sizing protocol of every introspection function: n from a (NULL, 0) call."""
    mod = sys.modules["_tl_dispatch_test"]
    buf = mod.ffi.new("char[]", n + 1)
    assert fn(*args, buf, n + 1) == n
    return mod.ffi.string(buf).decode()


def error(lib, ffi):
    kind, msg = lib.tl_error_kind_get(), ffi.string(lib.tl_error_message()).decode()
    lib.tl_clear_error()
    return kind, msg


def test_python_kernel_boxed_call_and_introspection(ext):
    ffi, lib = ext.ffi, ext.lib
    cpu = lib.tl_dispatch_backend_tensor_keyset(lib.TL_KEY_CPU)
    meta = lib.tl_dispatch_backend_tensor_keyset(lib.TL_KEY_META)

    @ffi.def_extern()
    def py_trampoline(kernel, op, ks, stack):
        fn = ffi.from_handle(kernel.ctx)
        n = lib.tl_op_num_arguments(op)
        args = []
        for depth in range(n - 1, -1, -1):
            v = lib.tl_stack_peek(stack, depth)
            if v.tag == lib.TL_IV_TENSOR:
                args.append(lib.fake_value(v.u.t))
            elif v.tag == lib.TL_IV_INT:
                args.append(v.u.i)
            elif v.tag == lib.TL_IV_DOUBLE:
                args.append(v.u.d)
            else:
                args.append(None)
        lib.tl_stack_drop(stack, n)
        try:
            result = fn(*args)
        except Exception as e:  # noqa: BLE001 - becomes the tl error
            lib.tl_set_error(lib.TL_ERR_VALUE, b"%s", ffi.new("char[]", str(e).encode()))
            return -1
        return lib.tl_stack_push_tensor_steal(stack, lib.fake_new(cpu, result))

    op = lib.tl_op_define(b"aten::add.Tensor",
                          b"add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
    assert op != ffi.NULL
    calls = []

    def py_add(self, other, alpha):
        calls.append((self, other, alpha))
        if alpha == 0:
            raise ValueError("alpha must not be 0 here")
        return self + alpha * other

    handle = ffi.new_handle(py_add)
    rid = lib.tl_op_register_kernel(op, lib.tl_dispatch_key_parse(b"CPU"), ffi.NULL,
                                    lib.py_trampoline, handle, b"py_add")
    assert rid > 0

    a, b = lib.fake_new(cpu, 2.0), lib.fake_new(cpu, 3.0)

    def call(alpha):
        st = ffi.new("tl_stack *")
        lib.tl_stack_init(st)
        lib.tl_stack_push_tensor(st, a)
        lib.tl_stack_push_tensor(st, b)
        lib.tl_stack_push_int(st, alpha)
        rc = lib.tl_op_call_boxed(op, st)
        value = None
        if rc == 0:
            assert lib.tl_stack_size(st) == 1
            out = ffi.new("tl_tensor **")
            assert lib.tl_stack_pop_tensor(st, out) == 0
            value = lib.fake_value(out[0])
            lib.tl_tensor_release(out[0])
        lib.tl_stack_free(st)
        return rc, value

    assert call(2) == (0, 8.0)
    assert calls == [(2.0, 3.0, 2)]
    assert lib.fake_refs(a) == 1 and lib.fake_refs(b) == 1

    # an exception in the Python kernel becomes the thread-local error
    assert call(0) == (-1, None)
    assert error(lib, ffi) == (lib.TL_ERR_VALUE, "alpha must not be 0 here")

    # _dispatch_keys / _dispatch_dump_table as torchlet._C will expose them
    keys = _call_into(lib.tl_dispatch_keyset_to_string, (lib.tl_tensor_key_set(a),),
                      lib.tl_dispatch_keyset_to_string(lib.tl_tensor_key_set(a), ffi.NULL, 0))
    assert keys == "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)"
    n = lib.tl_dispatch_dump_table(b"aten::add.Tensor", ffi.NULL, 0)
    table = _call_into(lib.tl_dispatch_dump_table, (b"aten::add.Tensor",), n)
    assert table.splitlines()[0] == "CPU: py_add [kernel]"
    assert "AutogradCPU: fallthrough registered in torchlet runtime [backend fallback]" in table

    # Meta has no kernel: PyTorch's meta-fallback NotImplementedError text
    m = lib.fake_new(meta, 1.0)
    st = ffi.new("tl_stack *")
    lib.tl_stack_init(st)
    lib.tl_stack_push_tensor(st, m)
    lib.tl_stack_push_tensor(st, m)
    lib.tl_stack_push_int(st, 1)
    assert lib.tl_op_call_boxed(op, st) == -1
    kind, msg = error(lib, ffi)
    assert kind == lib.TL_ERR_NOT_IMPLEMENTED
    assert msg.startswith("aten::add.Tensor: attempted to run this operator with Meta tensors, but there was no "
                          "fake impl or Meta kernel registered.")
    lib.tl_stack_free(st)
    lib.tl_tensor_release(m)

    # unknown key names are errors
    assert lib.tl_dispatch_key_parse(b"Foo") == lib.TL_KEY_INVALID
    assert error(lib, ffi) == (lib.TL_ERR_RUNTIME, "could not parse dispatch key: Foo")

    # removing the Python kernel leaves the op without a CPU kernel
    assert lib.tl_dispatch_deregister(rid) == 0
    assert call(1) == (-1, None)
    assert error(lib, ffi)[0] == lib.TL_ERR_NOT_IMPLEMENTED
    assert len(calls) == 2
    lib.tl_tensor_release(a)
    lib.tl_tensor_release(b)
