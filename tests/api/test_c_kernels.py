"""Custom operators with no Python in their call path: kernels written in C
against torchlet's C API, compiled at test time (c_kernels/myc_kernels.c) and
loaded with torchlet.library.load_library (docs/EXTENDING.md, "Kernels in C").

  * myc::scale(Tensor x, float alpha) -> Tensor: an exported boxed kernel that
    Python registers with torchlet.library.register_c_kernel;
  * myc2::twice(Tensor x) -> Tensor: defined and registered by the library's
    own constructor (tl_op_define + tl_op_register_kernel) when it is loaded.
"""
from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
import threading

import numpy as np
import pytest

import torchlet as tl
import torchlet.library as L
from torchlet._C import ffi

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "c_kernels"))

from build_c_kernels import compile_library  # noqa: E402

SCALE = "myc::scale"
SHAPES = [(), (0,), (1,), (7,), (3, 5), (2, 3, 5), (4, 0, 3), (17, 33), (1, 1, 1, 13)]


@pytest.fixture(scope="module")
def clib(tmp_path_factory):
    """The compiled library, loaded (once per process: dlopen keeps it)."""
    path = compile_library(tmp_path_factory.mktemp("c_kernels"))
    if path is None:
        pytest.skip("gcc is not installed: the C kernel library cannot be built")
    return L.load_library(path)


@pytest.fixture(scope="module")
def scale_def(clib):
    """myc::scale defined by a DEF library (no kernel yet) for this module's tests."""
    lib = L.Library("myc", "DEF")
    lib.define("scale(Tensor x, float alpha) -> Tensor")
    yield lib
    lib._destroy()


@pytest.fixture
def scale_impl(clib, scale_def):
    """The C kernel of myc::scale registered at CPU from Python by an IMPL library,
    removed at the end of the test."""
    lib = L.Library("myc", "IMPL")
    L.register_c_kernel(SCALE, "CPU", clib.myc_scale_boxed, lib=lib, name="myc_scale_boxed (C kernel)")
    yield lib
    lib._destroy()


def _np(x):
    return np.asarray(x.numpy())


# ---------------------------------------------------------------- loading

def test_runtime_exports_its_c_api():
    """Every function of the public headers a kernel library calls is in _C's dynamic symbol table."""
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("nm is not installed")
    from torchlet import _C
    r = subprocess.run([nm, "-D", "--defined-only", _C.__file__], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    exported = {line.split()[-1] for line in r.stdout.splitlines() if line.strip()}
    for name in ("tl_stack_pop_double", "tl_stack_pop_tensor", "tl_stack_push_tensor_steal", "tl_set_error",
                 "tl_clear_error", "tl_error_message", "tl_op_define", "tl_op_register_kernel",
                 "tl_tensor_dtype", "tl_tensor_sizes", "tl_tensor_numel", "tl_tensor_data_ptr",
                 "tl_tensor_is_contiguous", "tl_tensor_release", "tl_empty", "tl_dtype_name"):
        assert name in exported, name


def test_load_library_spellings_and_handle(clib, tmp_path):
    assert tl.ops.load_library is L.load_library
    assert os.path.isfile(os.path.join(L.c_include_dir(), "tl_dispatch.h"))
    # the same file again: the same handle, its constructor does not run again
    assert L.load_library(clib._name) is clib
    assert tl.ops.load_library(clib._name) is clib
    with pytest.raises(OSError):
        L.load_library(tmp_path / "no_such_library.so")


# ---------------------------------------------------------------- myc::scale (registered from Python)

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_scale_matches_numpy(scale_impl, dtype, shape, rng):
    a = rng.standard_normal(shape).astype(dtype)
    for alpha in (2.5, -0.125, 3, 0.0):
        out = tl.ops.myc.scale(tl.from_numpy(a), alpha)
        assert out.dtype == getattr(tl, dtype)
        assert tuple(out.shape) == shape
        assert out.is_contiguous()
        want = a * np.asarray(alpha, dtype)
        np.testing.assert_array_equal(_np(out), want)


def test_scale_spellings(scale_impl, rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    x = tl.from_numpy(a)
    want = a * np.float32(1.5)
    for out in (tl.ops.myc.scale(x, 1.5), tl.ops.myc.scale.default(x, alpha=1.5),
                tl.ops.myc.scale(alpha=1.5, x=x), L.call(SCALE, x, 1.5)):
        np.testing.assert_array_equal(_np(out), want)
    # the input is untouched, the result is new storage
    np.testing.assert_array_equal(_np(x), a)


def test_scale_contiguous_view_with_offset(scale_impl):
    """A contiguous view that starts inside its storage (data_ptr = storage + offset)."""
    base = tl.from_numpy(np.arange(20, dtype=np.float64).reshape(4, 5))
    v = base[2]
    assert v.is_contiguous()
    np.testing.assert_array_equal(_np(tl.ops.myc.scale(v, -1.0)), -np.arange(10, 15, dtype=np.float64))


@pytest.mark.parametrize("dtype", ["int64", "int32", "float16", "bool"])
def test_scale_wrong_dtype_is_type_error(scale_impl, dtype):
    x = tl.ones(3, dtype=getattr(tl, dtype))
    with pytest.raises(TypeError, match=rf"^myc::scale: expected a float32 or float64 tensor, got {dtype}$"):
        tl.ops.myc.scale(x, 2.0)
    # the error was taken, nothing is left pending, the next call works
    np.testing.assert_array_equal(_np(tl.ops.myc.scale(tl.ones(2), 2.0)), [2.0, 2.0])


def test_scale_non_contiguous_is_runtime_error(scale_impl):
    x = tl.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
    for bad in (x.t(), x[:, ::2]):
        assert not bad.is_contiguous()
        with pytest.raises(RuntimeError, match=r"^myc::scale: expected a contiguous tensor \(call "
                                               r"\.contiguous\(\) first\)$"):
            tl.ops.myc.scale(bad, 2.0)
    np.testing.assert_array_equal(_np(tl.ops.myc.scale(x.t().contiguous(), 2.0)),
                                  np.arange(6, dtype=np.float32).reshape(2, 3).T * 2)


def test_scale_bad_arguments_never_reach_c(scale_impl):
    with pytest.raises(RuntimeError, match="Expected a value of type 'float' for argument 'alpha'"):
        tl.ops.myc.scale(tl.ones(2), "two")
    with pytest.raises(RuntimeError, match="Expected a value of type 'Tensor' for argument 'x'"):
        tl.ops.myc.scale([1.0, 2.0], 2.0)


def test_scale_dispatch_table_names_the_kernel(scale_impl):
    table = tl._C._dispatch_dump_table(SCALE)
    assert "CPU: myc_scale_boxed (C kernel) [kernel]" in table.splitlines()
    assert tl.ops.myc.scale.default.has_kernel_for_dispatch_key("CPU")


def test_destroy_removes_the_c_kernel(clib, scale_def):
    impl = L.Library("myc", "IMPL")
    L.register_c_kernel(SCALE, "CPU", clib.myc_scale_boxed, lib=impl)
    assert "CPU: C kernel of myc::scale [kernel]" in tl._C._dispatch_dump_table(SCALE).splitlines()
    np.testing.assert_array_equal(_np(tl.ops.myc.scale(tl.ones(2), 3.0)), [3.0, 3.0])
    impl._destroy()
    assert "C kernel" not in tl._C._dispatch_dump_table(SCALE)
    assert not tl.ops.myc.scale.default.has_kernel_for_dispatch_key("CPU")
    with pytest.raises(NotImplementedError, match=r"^Could not run 'myc::scale' with arguments from the "
                                                  r"'CPU' backend"):
        tl.ops.myc.scale(tl.ones(2), 3.0)
    # the operator is still defined: registering again serves it again
    with L.Library("myc", "IMPL") as again:
        L.register_c_kernel(SCALE, "CPU", clib.myc_scale_boxed, lib=again)
        np.testing.assert_array_equal(_np(tl.ops.myc.scale(tl.ones(1), 4.0)), [4.0])


def test_register_c_kernel_pointer_forms(clib, scale_def):
    """The kernel as a ctypes function pointer, its address as an int, and a cffi pointer."""
    addr = ctypes.cast(clib.myc_scale_boxed, ctypes.c_void_p).value
    for boxed in (clib.myc_scale_boxed, addr, ffi.cast("tl_boxed_fn", addr)):
        with L.Library("myc", "IMPL") as impl:
            rid = L.register_c_kernel(SCALE, "CPU", boxed, lib=impl)
            assert rid > 0
            np.testing.assert_array_equal(_np(tl.ops.myc.scale(tl.ones(2), 0.5)), [0.5, 0.5])
    with pytest.raises(ValueError, match="NULL function pointer"):
        L.register_c_kernel(SCALE, "CPU", ctypes.cast(None, ctypes.c_void_p), lib=scale_def)


def test_scale_from_threads_with_ctx(clib, scale_def):
    """Calls from several threads at once (cffi releases the GIL: the kernels run
    concurrently); kernel->ctx points at a call counter the kernel bumps atomically."""
    counter = ctypes.c_int64(0)
    n_threads, n_calls = 8, 300
    errors = []
    start = threading.Barrier(n_threads)

    def work(k):
        try:
            a = np.arange(k, k + 37, dtype=np.float32 if k % 2 else np.float64).reshape(37)
            x = tl.from_numpy(a)
            alpha = float(k + 1)
            start.wait()
            for _ in range(n_calls):
                np.testing.assert_array_equal(_np(tl.ops.myc.scale(x, alpha)), a * np.asarray(alpha, a.dtype))
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    with L.Library("myc", "IMPL") as impl:
        L.register_c_kernel(SCALE, "CPU", clib.myc_scale_boxed, ctx=ctypes.addressof(counter), lib=impl)
        threads = [threading.Thread(target=work, args=(k,)) for k in range(n_threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors, errors[0]
    assert counter.value == n_threads * n_calls


# ---------------------------------------------------------------- myc2::twice (registered in C)

def test_constructor_registered_twice(clib, rng):
    status = ctypes.c_int.in_dll(clib, "myc2_register_status").value
    assert status == 0, (ctypes.c_char * 256).in_dll(clib, "myc2_register_error").value
    assert ctypes.c_int64.in_dll(clib, "myc2_register_id").value > 0
    assert "twice" in list(tl.ops.myc2)
    assert str(tl.ops.myc2.twice.default._schema) == "myc2::twice(Tensor x) -> Tensor"
    for shape in SHAPES:
        for dtype in (np.float32, np.float64):
            a = rng.standard_normal(shape).astype(dtype)
            out = tl.ops.myc2.twice(tl.from_numpy(a))
            assert tuple(out.shape) == shape and out.dtype == getattr(tl, np.dtype(dtype).name)
            np.testing.assert_array_equal(_np(out), a * 2)
    assert "CPU: myc2_twice_cpu (C kernel) [kernel]" in tl._C._dispatch_dump_table("myc2::twice").splitlines()


def test_constructor_kernel_errors(clib):
    with pytest.raises(TypeError, match=r"^myc2::twice: expected a float32 or float64 tensor, got int64$"):
        tl.ops.myc2.twice(tl.tensor([1, 2]))
    with pytest.raises(RuntimeError, match=r"^myc2::twice: expected a contiguous tensor"):
        tl.ops.myc2.twice(tl.ones(2, 3).t())


def test_constructor_kernel_from_threads(clib):
    errors = []

    def work(k):
        try:
            a = np.full((5, 7), k, np.float32)
            x = tl.from_numpy(a)
            for _ in range(200):
                np.testing.assert_array_equal(_np(tl.ops.myc2.twice(x)), a * 2)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
