"""`a + b` on "cuda" tensors end to end, without a GPU: the runtime loads the
fake libcuda (tests/cuda/fake_driver, TORCHLET_LIBCUDA), the dispatcher picks
the generated CUDA structured kernel, the generated launcher packs the
parameter struct, the runtime compiles the program through the installed
compiler (NVRTC when present) and calls cuLaunchKernel, and the fake driver
runs the host-shim build of that very kernel through a generated trampoline.
Runs in a subprocess (the driver library is chosen once per process)."""

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

if shutil.which("g++") is None or not FAKE.exists():
    pytest.skip("needs g++ and the runtime's fake libcuda", allow_module_level=True)

sys.path.insert(0, str(HERE))
import shim_build  # noqa: E402

OPS = ["add", "mul", "eq", "exp", "copy"]

SCRIPT = textwrap.dedent("""
    import ctypes, json, os, sys
    import numpy as np
    import torchlet as tl
    from torchlet._C import ffi, lib
    sys.path.insert(0, os.environ["SHIM_HERE"])
    import shim_build
    OPS = json.loads(os.environ["SHIM_OPS"])

    fake = ctypes.CDLL(os.environ["TORCHLET_LIBCUDA"], mode=os.RTLD_GLOBAL)
    shim = shim_build.load(OPS)
    REG = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_void_p)
    for op in OPS:
        getattr(shim, "tl_shim_register_fake_" + op)(ctypes.cast(fake.fake_register_kernel, ctypes.c_void_p))

    compiled, sources = [], {}
    try:
        from torchlet.cuda import nvrtc
        use_nvrtc = nvrtc.available()
    except Exception:
        use_nvrtc = False

    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.strdup.restype = ctypes.c_void_p

    @ffi.callback("tl_cuda_compile_fn")
    def compile_cb(name, source, major, minor, image, image_len, error_msg):
        # the runtime frees image / error_msg: malloc'd memory only
        try:
            name, src = ffi.string(name).decode(), ffi.string(source).decode()
            compiled.append((name, major, minor))
            sources[name] = src
            img = nvrtc.compile_program(name, src, major * 10 + minor) if use_nvrtc else b"fake image"
            p = libc.malloc(len(img))
            ctypes.memmove(p, img, len(img))
            image[0] = ffi.cast("void *", p)
            image_len[0] = len(img)
            return 0
        except Exception as e:
            error_msg[0] = ffi.cast("char *", libc.strdup(str(e).encode()))
            return -1
    lib.tl_cuda_set_compiler(compile_cb)

    a = tl.arange(4097, dtype=tl.float32) * 0.5 - 7
    b = tl.arange(4097, dtype=tl.float32).flip(0) if hasattr(tl.Tensor, "flip") else a * 2
    ca, cb = a.to("cuda"), b.to("cuda")
    assert ca.device.type == "cuda"
    c = ca + cb
    assert c.device.type == "cuda", c.device
    np.testing.assert_allclose(c.cpu().numpy(), (a + b).numpy(), rtol=1e-6)
    d = tl.add(ca, cb, alpha=2.5)
    np.testing.assert_allclose(d.cpu().numpy(), tl.add(a, b, alpha=2.5).numpy(), rtol=1e-6)
    e = ca + 3.0                        # a wrapped number: a CPU scalar operand
    np.testing.assert_allclose(e.cpu().numpy(), (a + 3.0).numpy(), rtol=1e-6)
    # strided operands (views are not on the runtime's CUDA key yet: an
    # empty_strided column-major tensor filled from the host)
    at = a.reshape(241, 17)
    cs = tl.empty_strided([241, 17], [1, 241], dtype=tl.float32, device="cuda")
    cs.copy_(at)
    assert cs.stride() == (1, 241)
    t = cs + cb.cpu().reshape(241, 17).to("cuda")
    np.testing.assert_allclose(t.cpu().numpy(), (at + b.reshape(241, 17)).numpy(), rtol=1e-6)
    m = tl.eq(ca, cb)
    assert m.dtype == tl.bool
    np.testing.assert_array_equal(m.cpu().numpy(), tl.eq(a, b).numpy())
    x = tl.exp(ca.to("cuda") * 0.1)
    np.testing.assert_allclose(x.cpu().numpy(), tl.exp(a * 0.1).numpy(), rtol=2e-6)
    # copy / cast / fill on the device (the runtime's hooks -> ufunc_copy's kernels)
    h = ca.to(tl.float16)
    assert h.device.type == "cuda" and h.dtype == tl.float16
    np.testing.assert_array_equal(h.cpu().numpy(), a.to(tl.float16).numpy())
    tt = cs.contiguous()                # a same-dtype strided device copy
    assert tt.stride() == (17, 1)
    np.testing.assert_array_equal(tt.cpu().numpy(), at.numpy())
    z = tl.zeros([7, 9], dtype=tl.float64).to("cuda")
    z.fill_(1.5)                        # 8-byte value, unequal halves: no memset pattern
    want = tl.zeros([7, 9], dtype=tl.float64)
    want.fill_(1.5)
    np.testing.assert_array_equal(z.cpu().numpy(), want.numpy())
    o64 = tl.empty([4097], dtype=tl.float64).to("cuda")   # out= of another dtype: a temporary, copied back
    tl.add(ca, cb, out=o64)
    np.testing.assert_allclose(o64.cpu().numpy(), (a + b).numpy().astype(np.float64), rtol=1e-6)
    i32 = (tl.arange(100, dtype=tl.int32) - 50).to("cuda")
    np.testing.assert_allclose((i32 + 0.5).cpu().numpy(), (tl.arange(100, dtype=tl.int32) - 50 + 0.5).numpy())
    assert compiled and compiled[0][1:] == (9, 0), compiled
    assert "ufunc_copy" in {n for n, _, _ in compiled}, compiled
    # the runtime joined each program's parts into what the prebuild composes from its .cu file
    from torchlet.cuda.nvrtc import program_source
    for name, src in sources.items():
        assert src == program_source(os.path.join("generated", "cuda", name + ".cu")), name
    print("E2E OK", sorted(set(n for n, _, _ in compiled)), "nvrtc" if use_nvrtc else "no nvrtc")
""")


def test_add_on_fake_cuda(tmp_path):
    fake_so = tmp_path / "libfakecuda.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-pthread", "-o", str(fake_so), str(FAKE)], check=True)
    shim_build.build(OPS)   # built here, loaded by the subprocess
    env = {**os.environ, "TORCHLET_LIBCUDA": str(fake_so), "TORCHLET_KERNEL_CACHE": str(tmp_path / "cache"),
           "FAKE_CUDA_CC": "9.0", "SHIM_HERE": str(HERE), "SHIM_OPS": json.dumps(OPS)}
    r = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True,
                       text=True, env=env, cwd=ROOT, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-6000:]
    assert "E2E OK" in r.stdout
