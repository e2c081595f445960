"""The CUDA device guard end to end, without a GPU.

The fake driver (tests/cuda/fake_driver) has two devices. With cuda:0
current, operators of every kind on cuda:1 tensors (pointwise, reductions,
indexing, cuBLAS products through the fake libcublas, cat, softmax,
factories, copies, in-place and out= forms, boxed calls through
torchlet.ops, autograd's backward) must give
results on cuda:1 equal to the CPU's, launch their kernels with device 1's
context current (the fake counts launches per current context), and leave
device 0 current; an error inside a guarded kernel restores it too; mixing
cuda:0 and cuda:1 inputs raises PyTorch's error; and a guard on the current
device calls no driver function. Runs in a subprocess (the driver is loaded
once per process)."""

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
import test_cuda_fake_reduce_blas as reduce_blas  # noqa: E402

COMMON = reduce_blas.COMMON   # the fake driver, shim kernels and compiler callback
libs = reduce_blas.libs       # the fixture: the fake libcuda and libcublas built once per module

#: every program the script below launches (test_cuda_fake_index.py's set: one shim build serves both)
OPS = ["index", "reduce", "copy", "where", "add", "mul", "eq", "div", "sub", "neg", "gt", "ne"]

SCRIPT = COMMON + textwrap.dedent("""
    fake.fake_launches_on.restype = ctypes.c_longlong
    fake.fake_counter.restype = ctypes.c_longlong
    fake.fake_is_device_ptr.argtypes = [ctypes.c_ulonglong, ctypes.c_ulonglong]
    cur = tl.cuda.current_device
    D0, D1 = tl.device("cuda:0"), tl.device("cuda:1")
    assert tl.cuda.device_count() == 2 and cur() == 0
    rng = np.random.default_rng(0)

    def rnd(*shape, dt=tl.float32):
        return tl.from_numpy(rng.standard_normal(shape)).to(dt)

    def on(dev, fn, want, launches=True, rtol=1e-5):
        \"\"\"fn() with device 1 - dev current: every result on `dev`, equal to want (the CPU's), its
        memory allocated on `dev`, kernels launched with dev's context only, the current device
        unchanged after\"\"\"
        other = 1 - dev
        before = cur()
        assert before == other, before
        l_dev, l_other = fake.fake_launches_on(dev), fake.fake_launches_on(other)
        got = fn()
        assert cur() == before, (cur(), before)
        n_dev, n_other = fake.fake_launches_on(dev) - l_dev, fake.fake_launches_on(other) - l_other
        assert n_other == 0, f"{n_other} launches on the current device {other}"
        assert not launches or n_dev > 0, "no launch on the inputs' device"
        gots = got if isinstance(got, (tuple, list)) else (got,)
        wants = want if isinstance(want, (tuple, list)) else (want,)
        for g, w in zip(gots, wants):
            assert g.device == tl.device("cuda", dev), g.device
            if g.numel():
                assert fake.fake_is_device_ptr(g.data_ptr(), 1) == dev, "memory of another device"
            close(g, w, rtol)
        return got

    def raises(fn, exc, msg):
        before = cur()
        try:
            fn()
        except exc as e:
            assert msg in str(e), str(e)
        else:
            raise AssertionError("no error: " + msg)
        assert cur() == before, (cur(), before)

    a, b, m = rnd(5, 7), rnd(5, 7), rnd(7, 3)
    a1, b1, m1 = a.to("cuda:1"), b.to("cuda:1"), m.to("cuda:1")
    assert a1.device == D1 and cur() == 0
    idx = tl.tensor([4, 0, 2, 2])
    idx1 = idx.cuda(1)
    assert idx1.device == D1
    # pointwise: binary, with a Python scalar, a CPU 0-dim tensor first, unary, a comparison
    on(1, lambda: a1 + b1, a + b)
    on(1, lambda: a1 * 2.5, a * 2.5)
    on(1, lambda: tl.add(tl.tensor(1.5), a1), tl.add(tl.tensor(1.5), a))
    on(1, lambda: -a1, -a)
    on(1, lambda: tl.where(a1 > b1, a1, b1), tl.where(a > b, a, b))
    # reductions
    on(1, lambda: a1.sum(), a.sum())
    on(1, lambda: a1.sum(1), a.sum(1))
    on(1, lambda: a1.argmax(), a.argmax())
    on(1, lambda: a1.var(0), a.var(0))
    on(1, lambda: tl.var_mean(a1, 1), tl.var_mean(a, 1))
    on(1, lambda: tl.softmax(a1, 1), tl.softmax(a, 1))
    # indexing
    on(1, lambda: tl.index_select(a1, 0, idx1), tl.index_select(a, 0, idx))
    on(1, lambda: a1[idx1], a[idx])
    # cuBLAS products (no kernel launch: the result's device and memory are checked)
    on(1, lambda: tl.mm(a1, m1), tl.mm(a, m), launches=False)
    on(1, lambda: tl.matmul(a1, m1), tl.matmul(a, m), launches=False)
    # cat, factories
    on(1, lambda: tl.cat([a1, b1], 1), tl.cat([a, b], 1))
    on(1, lambda: tl.zeros([3, 2], device="cuda:1"), tl.zeros([3, 2]), launches=False)
    on(1, lambda: tl.full([4], 2 ** 40 + 1, device="cuda:1"), tl.full([4], 2 ** 40 + 1))   # the fill kernel
    on(1, lambda: tl.empty([2, 3], device=1).fill_(-1.5), tl.full([2, 3], -1.5), launches=False)
    # copies: a cast on the device, to another device, .cuda(i), copy_ with a cast
    on(1, lambda: a1.to(tl.float64), a.to(tl.float64))
    on(1, lambda: a.to("cuda:0").to("cuda:1"), a, launches=False)
    on(1, lambda: a.cuda(1), a, launches=False)
    on(1, lambda: tl.empty([5, 7], dtype=tl.float64, device="cuda:1").copy_(a1), a.to(tl.float64))
    on(1, lambda: a1.t().contiguous(), a.t().contiguous())
    # in place and out=
    c1 = a1.clone()
    on(1, lambda: c1.add_(b1), a + b)
    on(1, lambda: c1.mul_(2), (a + b) * 2)
    o1 = tl.empty([5, 7], device="cuda:1")
    on(1, lambda: tl.add(a1, b1, out=o1), a + b)
    s1 = tl.empty([7], device="cuda:1")
    on(1, lambda: tl.sum(a1, 0, out=s1), a.sum(0))

    # composite kernels that make their result themselves: on self's device too
    on(1, lambda: a1.masked_fill(a1 > 0, 0.5), a.masked_fill(a > 0, 0.5))
    on(1, lambda: a1.logsumexp(1), a.logsumexp(1))
    on(1, lambda: a1.new_zeros([3]), tl.zeros([3]), launches=False)
    on(1, lambda: a1.new_full([2], 3.0), tl.full([2], 3.0), launches=False)
    # boxed calls through torchlet.ops reach the same guarded registration
    on(1, lambda: tl.ops.aten.add.Tensor(a1, b1), a + b)
    on(1, lambda: tl.ops.aten.argmax.default(a1), a.argmax())
    on(1, lambda: tl.ops.aten.mm.default(a1, m1), tl.mm(a, m), launches=False)

    # backward of a small graph on cuda:1 (softmax, mul, sum, mm, index_select)
    def graph(x, w, i):
        return (tl.softmax(tl.mm(x, w), 1) * 3).index_select(0, i).sum()

    xr, wr = a.clone().requires_grad_(), m.clone().requires_grad_()
    graph(xr, wr, idx).backward()
    x1, w1 = a1.clone().requires_grad_(), m1.clone().requires_grad_()
    y1 = on(1, lambda: graph(x1, w1, idx1), graph(a, m, idx))
    on(1, lambda: (y1.backward(), x1.grad, w1.grad)[1:], (xr.grad, wr.grad))

    # the torchlet.cuda.device context: "cuda" means the context's device
    with tl.cuda.device(1):
        assert cur() == 1
        z = tl.ones([3], device="cuda")
        assert z.device == D1
        a0 = a.to("cuda:0")
        on(0, lambda: a0 * a0, a * a)      # inputs on cuda:0 while cuda:1 is current
    assert cur() == 0

    # mixed devices: PyTorch's error, the current device unchanged
    same = "Expected all tensors to be on the same device, but found at least two devices, "
    raises(lambda: a1 + a0, RuntimeError, same + "cuda:1 and cuda:0!")
    raises(lambda: a0 * b1, RuntimeError, same + "cuda:0 and cuda:1!")
    raises(lambda: tl.mm(a1, m.to("cuda:0")), RuntimeError, same)
    raises(lambda: tl.cat([a1, a0]), RuntimeError, same)
    raises(lambda: tl.index_select(a1, 0, idx.to("cuda:0")), RuntimeError, same)
    raises(lambda: tl.add(a1, b1, out=tl.empty([5, 7], device="cuda:0")), RuntimeError, same)
    # an error inside a guarded kernel restores the current device
    raises(lambda: tl.mm(a1.to(tl.int32), m1.to(tl.int32)), RuntimeError, "\\"addmm_cuda\\" not implemented for 'Int'")
    raises(lambda: tl.empty([0, 3], device="cuda:1").amax(0), IndexError, "Expected reduction dim 0 to have non-zero")
    raises(lambda: tl.index_select(a1, 0, tl.tensor([9]).cuda(1)), IndexError, "index out of range in self")
    raises(lambda: tl.empty([2], device="cuda:5"), RuntimeError, "CUDA error: invalid device ordinal")

    # a guard on the current device calls no driver function; one on another device makes its
    # context current for the launch (one cuCtxSetCurrent each way)
    a0, b0 = a.to("cuda:0"), b.to("cuda:0")
    a0 + b0
    n = fake.fake_counter(b"ctx_set")
    for _ in range(3):
        a0 + b0
    assert fake.fake_counter(b"ctx_set") == n, "a same-device guard called the driver"
    a1 + b1
    assert fake.fake_counter(b"ctx_set") == n + 1
    a0 + b0
    assert fake.fake_counter(b"ctx_set") == n + 2
    print("GUARD OK")
""")


@pytest.fixture(scope="module")
def shim_libs(libs):
    shim_build.build(OPS)   # built here, loaded by the subprocess
    return libs


def test_device_guard_on_fake_cuda(shim_libs, tmp_path):
    env = {**os.environ, "TORCHLET_LIBCUDA": str(shim_libs[0]), "TORCHLET_LIBCUBLAS": str(shim_libs[1]),
           "TORCHLET_KERNEL_CACHE": str(tmp_path / "cache"), "FAKE_CUDA_CC": "9.0", "FAKE_CUDA_DEVICES": "2",
           "SHIM_HERE": str(HERE), "SHIM_OPS": json.dumps(OPS)}
    r = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, cwd=ROOT, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-6000:]
    assert "GUARD OK" in r.stdout
