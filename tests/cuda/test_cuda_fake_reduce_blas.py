"""Reductions and matrix products on "cuda" tensors end to end, without a GPU.

Reductions and softmax: the runtime loads the fake libcuda (tests/cuda/fake_driver), the
dispatcher picks the CUDA structured kernels (tl_impl_sum_out_cuda ...), the
host side plans and packs tl_cuda_reduce_params, the runtime loads the
program "reduce" through the installed compiler and calls cuLaunchKernel,
and the fake driver runs the host-shim build of those kernels (fibers per
block) through generated trampolines.

Matrix products: the runtime dlopens the fake libcublas
(tests/cuda/fake_driver/fake_cublas.c, TORCHLET_LIBCUBLAS), which records
each call and computes it on the fake device memory in column-major terms,
so the arguments (transposes, leading dims, batch strides, types, compute
type, algorithm) and the values are both checked; and the error when no
cuBLAS can be loaded. Each configuration runs in a subprocess (the driver
is loaded once per process)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FAKE = HERE / "fake_driver" / "fake_cuda.c"
FAKE_BLAS = HERE / "fake_driver" / "fake_cublas.c"

if shutil.which("g++") is None or not FAKE.exists():
    pytest.skip("needs g++ and the runtime's fake libcuda", allow_module_level=True)

sys.path.insert(0, str(HERE))
import shim_build  # noqa: E402

OPS = ["reduce", "copy"]

COMMON = textwrap.dedent("""
    import ctypes, json, os, sys
    import numpy as np
    import torchlet as tl
    from torchlet._C import ffi, lib
    sys.path.insert(0, os.environ["SHIM_HERE"])
    import shim_build
    OPS = json.loads(os.environ["SHIM_OPS"])
    fake = ctypes.CDLL(os.environ["TORCHLET_LIBCUDA"], mode=os.RTLD_GLOBAL)
    shim = shim_build.load(OPS)
    for op in OPS:
        getattr(shim, "tl_shim_register_fake_" + op)(ctypes.cast(fake.fake_register_kernel, ctypes.c_void_p))
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    compiled = []

    @ffi.callback("tl_cuda_compile_fn")
    def compile_cb(name, source, major, minor, image, image_len, error_msg):
        compiled.append(ffi.string(name).decode())
        img = b"fake image"   # the fake driver loads any image (NVRTC: test_cuda_nvrtc.py)
        p = libc.malloc(len(img))
        ctypes.memmove(p, img, len(img))
        image[0] = ffi.cast("void *", p)
        image_len[0] = len(img)
        return 0
    lib.tl_cuda_set_compiler(compile_cb)

    def close(got, want, rtol=1e-5):
        assert got.device.type == "cuda", got.device
        assert got.dtype == want.dtype and tuple(got.shape) == tuple(want.shape), (got.dtype, got.shape, want.shape)
        g, w = got.cpu(), want
        if w.dtype.is_floating_point:
            np.testing.assert_allclose(g.to(tl.float64).numpy(), w.to(tl.float64).numpy(), rtol=rtol, atol=rtol,
                                       equal_nan=True)
        else:
            np.testing.assert_array_equal(g.numpy(), w.numpy())
""")

REDUCE = COMMON + textwrap.dedent("""
    rng = np.random.default_rng(0)
    a = tl.from_numpy(rng.standard_normal((37, 129)).astype(np.float32))
    ca = a.to("cuda")
    close(ca.sum(), a.sum())
    close(ca.sum(1), a.sum(1))
    close(ca.sum([0], keepdim=True), a.sum([0], keepdim=True))
    close(tl.sum(ca, 1, dtype=tl.float64), tl.sum(a, 1, dtype=tl.float64))
    close(ca.mean(0), a.mean(0))
    close(ca.mean(), a.mean())
    close(ca.amax(1), a.amax(1))
    close(ca.amin([0, 1]), a.amin([0, 1]))
    close(ca.argmax(), a.argmax())
    close(ca.argmin(1, keepdim=True), a.argmin(1, keepdim=True))
    close(ca.argmax(0), a.argmax(0))
    # integer and bool sums are int64; half accumulates in float
    i = tl.from_numpy(rng.integers(-50, 50, (300,)).astype(np.int32))
    close(i.to("cuda").sum(), i.sum())
    bo = i > 0
    close(bo.to("cuda").sum(), bo.sum())
    h = a.to(tl.float16)
    close(h.to("cuda").sum(0), h.sum(0), rtol=2e-3)
    close(h.to("cuda").amax(0), h.amax(0))
    # a whole-tensor two-pass reduction (partials from the caching allocator)
    big = tl.from_numpy(rng.standard_normal(70001).astype(np.float32))
    close(big.to("cuda").sum(), big.sum(), rtol=1e-4)
    close(big.to("cuda").argmax(), big.argmax())
    close(ca.prod(1), a.prod(1), rtol=1e-4)
    close(i.to("cuda").prod(0, keepdim=True), i.prod(0, keepdim=True))
    close(ca.cumsum(1), a.cumsum(1), rtol=1e-4)
    close(i.to("cuda").cumsum(0), i.cumsum(0))
    close(tl.cumprod(h.to("cuda"), 0), tl.cumprod(h, 0), rtol=1e-2)
    # an outer-dim reduction with many outputs: a thread per output (the _cols kernels)
    tall = tl.from_numpy(rng.standard_normal((50, 1500)).astype(np.float32))
    close(tall.to("cuda").sum(0), tall.sum(0))
    close(tall.to("cuda").argmax(0), tall.argmax(0))
    # a column-major operand and an out=
    cs = tl.empty_strided([37, 129], [1, 37], dtype=tl.float32, device="cuda")
    cs.copy_(a)
    close(cs.sum(0), a.sum(0))
    o = tl.empty([129], dtype=tl.float32, device="cuda")
    r = tl.sum(ca, 0, out=o)
    close(o, a.sum(0))
    # errors from the shared meta functions
    for fn, msg in ((lambda: ca.to(tl.int64).mean(), "mean(): could not infer output dtype"),
                    (lambda: bo.to("cuda").argmax(), "argmax(): does not support bool input"),
                    (lambda: tl.empty([0, 3], device="cuda").amax(0), "Expected reduction dim 0 to have non-zero")):
        try:
            fn()
        except (RuntimeError, IndexError) as e:   # amax's empty dim is an IndexError, as in PyTorch
            assert msg in str(e), str(e)
        else:
            raise AssertionError(msg)
    # softmax / log_softmax (the same program's one-block-per-row kernels)
    close(tl.softmax(ca, 1), tl.softmax(a, 1))
    close(tl.log_softmax(ca, 0), tl.log_softmax(a, 0))
    close(tl.nn.functional.softmax(h.to("cuda"), -1), tl.nn.functional.softmax(h, -1), rtol=2e-3)
    # their backward through autograd (_softmax_backward_data / _log_softmax_backward_data on the device)
    for fn, x in ((tl.nn.functional.softmax, a), (tl.nn.functional.log_softmax, a), (tl.nn.functional.softmax, h)):
        xc = x.to("cuda").requires_grad_()
        w = tl.from_numpy(rng.standard_normal(tuple(x.shape)).astype(np.float32)).to(x.dtype)
        fn(xc, -1).backward(w.to("cuda"))
        xr = x.clone().requires_grad_()
        fn(xr, -1).backward(w)
        close(xc.grad, xr.grad, rtol=1e-5 if x.dtype == tl.float32 else 4e-3)
    close(tl._softmax_backward_data(ca, tl.softmax(ca, 0), 0, tl.float32),
          tl._softmax_backward_data(a, tl.softmax(a, 0), 0, tl.float32))
    # layer_norm forward and backward through autograd (native_layer_norm's CUDA kernel, the fused backward)
    for x, ns in ((a, [129]), (h, [129]), (a.reshape([37, 3, 43]), [3, 43])):
        wt = tl.from_numpy(rng.uniform(0.5, 1.5, ns).astype(np.float32)).to(x.dtype)
        bs = tl.from_numpy(rng.standard_normal(ns).astype(np.float32)).to(x.dtype)
        g = tl.from_numpy(rng.standard_normal(tuple(x.shape)).astype(np.float32)).to(x.dtype)
        leaves = [t.to("cuda").requires_grad_() for t in (x, wt, bs)]
        y = tl.nn.functional.layer_norm(leaves[0], ns, leaves[1], leaves[2])
        y.backward(g.to("cuda"))
        ref = [t.clone().requires_grad_() for t in (x, wt, bs)]
        yr = tl.nn.functional.layer_norm(ref[0], ns, ref[1], ref[2])
        yr.backward(g)
        tol = 1e-4 if x.dtype == tl.float32 else 1e-2
        close(y.detach(), yr.detach(), rtol=tol)
        for lc, lr in zip(leaves, ref):
            close(lc.grad, lr.grad, rtol=tol)
    _, m, rs = tl.native_layer_norm(h.to("cuda"), [129], None, None, 1e-5)
    assert m.dtype == tl.float32 and rs.dtype == tl.float32 and tuple(m.shape) == (37, 1), (m.dtype, m.shape)
    try:
        tl.native_layer_norm(ca, [129], tl.ones([129]), None, 1e-5)
    except RuntimeError as e:
        assert "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!" in str(e)
    else:
        raise AssertionError("a CPU weight was accepted")
    z = tl.empty([0, 3], device="cuda").sum(0)
    close(z, tl.zeros([3]))
    assert "reduce" in compiled, compiled
    print("REDUCE OK", r.shape)
""")

BLAS = COMMON + textwrap.dedent("""
    blas = ctypes.CDLL(os.environ["TORCHLET_LIBCUBLAS"])
    blas.fake_cublas_last.restype = ctypes.c_char_p
    blas.fake_cublas_counter.restype = ctypes.c_long
    def last():
        v = blas.fake_cublas_last().decode().split()
        keys = "transa transb m n k lda ldb ldc stride_a stride_b stride_c batch type compute algo alpha beta".split()
        return dict(zip(keys, [float(x) if "." in x or "e" in x else int(x) for x in v]))
    rng = np.random.default_rng(1)
    def rnd(*shape, dt=tl.float32):
        return tl.from_numpy(rng.standard_normal(shape)).to(dt)
    def colmajor(t):
        c = tl.empty_strided(list(t.shape), [1, t.shape[0]], dtype=t.dtype, device="cuda")
        c.copy_(t)
        return c
    A, B = rnd(5, 7), rnd(7, 3)
    close(tl.mm(A.to("cuda"), B.to("cuda")), tl.mm(A, B))
    # row-major C = A B is column-major C^T = B^T A^T: cuBLAS gets (B, A), m = 3, n = 5
    L = last()
    assert (L["transa"], L["transb"], L["m"], L["n"], L["k"]) == (0, 0, 3, 5, 7), L
    assert (L["lda"], L["ldb"], L["ldc"], L["batch"]) == (3, 7, 3, 1), L
    assert (L["type"], L["compute"], L["algo"], L["alpha"], L["beta"]) == (0, 68, -1, 1, 0), L
    # a column-major (transposed) operand: 'T' with its column stride as ld, no copy
    close(tl.mm(colmajor(A), B.to("cuda")), tl.mm(A, B))
    L = last()
    assert (L["transa"], L["transb"], L["ldb"]) == (0, 1, 5), L
    close(tl.mm(A.to("cuda"), colmajor(B)), tl.mm(A, B))
    L = last()
    assert (L["transa"], L["transb"], L["lda"]) == (1, 0, 7), L
    # float64, float16, bfloat16: types, compute types, algorithms
    for dt, ty, comp, algo, rtol in ((tl.float64, 1, 70, -1, 1e-12), (tl.float16, 2, 68, 99, 2e-3),
                                     (tl.bfloat16, 14, 68, 99, 1.6e-2)):
        a, b = rnd(4, 6, dt=dt), rnd(6, 2, dt=dt)
        close(tl.mm(a.to("cuda"), b.to("cuda")), tl.mm(a.to(tl.float64), b.to(tl.float64)).to(dt), rtol=rtol)
        L = last()
        assert (L["type"], L["compute"], L["algo"]) == (ty, comp, algo), (dt, L)
    # bmm: batch strides
    X, Y = rnd(4, 5, 6), rnd(4, 6, 2)
    close(tl.bmm(X.to("cuda"), Y.to("cuda")), tl.bmm(X, Y))
    L = last()
    assert (L["m"], L["n"], L["k"], L["batch"], L["stride_a"], L["stride_b"], L["stride_c"]) == (2, 5, 6, 4, 12, 30, 10), L
    # addmm: beta * self (broadcast) + alpha * product; addmm_ in place; beta 0 ignores NaN in self
    M = rnd(3)
    close(tl.addmm(M.to("cuda"), A.to("cuda"), B.to("cuda"), beta=0.5, alpha=2.0),
          tl.addmm(M, A, B, beta=0.5, alpha=2.0))
    L = last()
    assert (L["alpha"], L["beta"]) == (2.0, 0.5), L
    nan = tl.full([5, 3], float("nan"))
    close(tl.addmm(nan.to("cuda"), A.to("cuda"), B.to("cuda"), beta=0), tl.mm(A, B))
    S = rnd(5, 3)
    cS = S.to("cuda")
    cS.addmm_(A.to("cuda"), B.to("cuda"), alpha=-1)
    close(cS, tl.addmm(S, A, B, alpha=-1))
    # baddbmm, matmul (3-d @ 2-d, batched), linear with and without bias
    P = rnd(4, 5, 2)
    close(tl.baddbmm(P.to("cuda"), X.to("cuda"), Y.to("cuda"), beta=2), tl.baddbmm(P, X, Y, beta=2))
    close(tl.matmul(X.to("cuda"), Y[0].to("cuda")), tl.matmul(X, Y[0]))
    close(tl.matmul(A.to("cuda"), B.to("cuda")), tl.matmul(A, B))
    W, bias = rnd(3, 7), rnd(3)
    close(tl.nn.functional.linear(A.to("cuda"), W.to("cuda"), bias.to("cuda")), tl.nn.functional.linear(A, W, bias))
    close(tl.nn.functional.linear(A.to("cuda"), W.to("cuda")), tl.nn.functional.linear(A, W))
    # k == 0: beta * self (zeros for mm)
    close(tl.mm(tl.zeros([2, 0], device="cuda"), tl.zeros([0, 3], device="cuda")), tl.zeros([2, 3]))
    # integer matrices: PyTorch's message
    try:
        tl.mm(tl.ones([2, 2], dtype=tl.int32, device="cuda"), tl.ones([2, 2], dtype=tl.int32, device="cuda"))
    except RuntimeError as e:
        assert "\\"addmm_cuda\\" not implemented for 'Int'" in str(e), str(e)
    else:
        raise AssertionError("int mm")
    # a failing call: cuBLAS's status in the message
    blas.fake_cublas_fail_next(13)
    try:
        tl.mm(A.to("cuda"), B.to("cuda"))
    except RuntimeError as e:
        assert "CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasGemmStridedBatchedEx(" in str(e), str(e)
    else:
        raise AssertionError("failing gemm")
    # one handle for (device 0, default stream), its stream set once, default math (no TF32)
    assert blas.fake_cublas_counter(b"create") == 1 and blas.fake_cublas_counter(b"set_stream") == 1
    assert blas.fake_cublas_counter(b"math_mode") == 1
    s = tl.cuda.Stream()
    with tl.cuda.stream(s):
        tl.mm(A.to("cuda"), B.to("cuda"))
    assert blas.fake_cublas_counter(b"create") == 2   # another stream, another handle
    print("BLAS OK")
""")

NO_BLAS = textwrap.dedent("""
    import torchlet as tl
    try:
        tl.mm(tl.ones([2, 2], device="cuda"), tl.ones([2, 2], device="cuda"))
    except RuntimeError as e:
        assert "cuBLAS is not available: could not load /nonexistent/libcublas.so.12" in str(e), str(e)
        assert "TORCHLET_LIBCUBLAS" in str(e)
    else:
        raise AssertionError("no cuBLAS")
    from torchlet._C import lib, ffi
    assert lib.tl_cuda_blas_available() == 0
    print("NO BLAS OK")
""")


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    d = tmp_path_factory.mktemp("fake")
    fake_so, blas_so = d / "libfakecuda.so", d / "libfakecublas.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-pthread", "-o", str(fake_so), str(FAKE)], check=True)
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-Wall", "-Wextra", "-Werror", "-o", str(blas_so),
                    str(FAKE_BLAS)], check=True)
    shim_build.build(OPS)   # built here, loaded by the subprocesses
    return fake_so, blas_so


def _run(script, libs, tmp_path, **env):
    e = {**os.environ, "TORCHLET_LIBCUDA": str(libs[0]), "TORCHLET_KERNEL_CACHE": str(tmp_path / "cache"),
         "FAKE_CUDA_CC": "9.0", "SHIM_HERE": str(HERE), "SHIM_OPS": json.dumps(OPS), **env}
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=e, cwd=ROOT, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-6000:]
    return r.stdout


def test_reductions_on_fake_cuda(libs, tmp_path):
    assert "REDUCE OK" in _run(REDUCE, libs, tmp_path)


def test_matrix_products_on_fake_cublas(libs, tmp_path):
    assert "BLAS OK" in _run(BLAS, libs, tmp_path, TORCHLET_LIBCUBLAS=str(libs[1]))


def test_missing_cublas_is_a_clear_error(libs, tmp_path):
    assert "NO BLAS OK" in _run(NO_BLAS, libs, tmp_path, TORCHLET_LIBCUBLAS="/nonexistent/libcublas.so.12")
