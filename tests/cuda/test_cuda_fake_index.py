"""Indexing, embedding, nll_loss / cross_entropy and the seeds' Transformer
block on "cuda" tensors end to end, without a GPU.

The runtime loads the fake libcuda (tests/cuda/fake_driver) and the fake
libcublas; the dispatcher picks the CUDA kernels (index_select, gather,
scatter_add, index_add, masked_fill_, index / index_put_, embedding's
backward, nll_loss, cat, and the reductions, pointwise kernels and products
they meet on the way), autograd runs through the generated nodes, and the
fake driver runs the host-shim build of every program the work launches
through generated trampolines. Values and gradients are compared with the
same work on the CPU. Runs in a subprocess (the driver is loaded once per
process)."""

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
from test_cuda_fake_reduce_blas import COMMON  # noqa: E402   the fake driver, shim kernels and compiler callback

#: every program the script below launches
OPS = ["index", "reduce", "copy", "where", "add", "mul", "eq", "div", "sub", "neg", "gt", "ne"]

SCRIPT = COMMON + textwrap.dedent("""
    sys.path.insert(0, os.path.join(os.environ["SHIM_ROOT"], "examples"))
    import seed_workloads as S
    F = tl.nn.functional
    rng = np.random.default_rng(0)

    def rnd(*shape, dt=tl.float32):
        return tl.from_numpy(rng.standard_normal(shape)).to(dt)

    def both(fn, leaves, grad_seed=1, tol=1e-5):
        \"\"\"fn on CUDA leaves and on CPU copies: values and every leaf's gradient\"\"\"
        cl = [x.to("cuda").requires_grad_() if x.dtype.is_floating_point else x.to("cuda") for x in leaves]
        rl = [x.clone().requires_grad_() if x.dtype.is_floating_point else x for x in leaves]
        yc, yr = fn(*cl), fn(*rl)
        close(yc, yr, tol)
        g = tl.from_numpy(np.random.default_rng(grad_seed).standard_normal(tuple(yr.shape))).to(yr.dtype)
        yc.backward(g.to("cuda"))
        yr.backward(g)
        for a, b in zip(cl, rl):
            if b.dtype.is_floating_point and b.grad is None:   # nll_loss's weight
                assert a.grad is None
            elif b.dtype.is_floating_point:
                close(a.grad, b.grad, tol)

    x, w = rnd(7, 5), rnd(11, 6)
    ix, ix2 = tl.tensor([4, 0, 2, 2, 6]), tl.tensor([[1, 4, 4], [0, 2, 3]])
    # index_select / gather forward and backward (scatter_add on the device)
    both(lambda a: tl.index_select(a, 0, ix.to(a.device)), [x])
    both(lambda a: tl.index_select(a, 1, ix[:3].to(a.device).to(tl.int32)), [x])
    both(lambda a: tl.gather(a, 1, ix2.to(a.device)), [x[:2]])
    # index_add (alpha), scatter_add with repeated indices
    src = rnd(5, 5)
    both(lambda a, s: tl.index_add(a, 0, ix.to(a.device), s, alpha=0.5), [x, src])
    both(lambda a, s: tl.scatter_add(a, 1, ix2.to(a.device), s), [x[:2], src[:2, :3]])
    xi, si = tl.tensor([[1, -2], [3, 4], [5, 6]]), tl.tensor([[7, 8], [9, 10]])
    close(tl.index_add(xi.to("cuda"), 0, tl.tensor([2, 2]).to("cuda"), si.to("cuda"), alpha=3),
          tl.index_add(xi, 0, tl.tensor([2, 2]), si, alpha=3))              # integers, an integer alpha
    close(tl.index_add(xi.to(tl.float16).to("cuda"), 1, tl.tensor([1]).to("cuda"), si[:, :1].repeat(3, 1)[:3].to(
          tl.float16).to("cuda")), tl.index_add(xi.to(tl.float16), 1, tl.tensor([1]), si[:, :1].repeat(3, 1)[:3].to(
          tl.float16)))                                                        # float16: the compare-and-swap adds
    # scatter (a src, a value) with distinct indices per row
    perm = tl.tensor([[2, 0, 4], [1, 3, 0]])
    both(lambda a, s: tl.scatter(a, 1, perm.to(a.device), s), [x[:2], src[:2, :3]])
    close(tl.scatter(x.to("cuda"), 1, perm.to("cuda"), -2.5), tl.scatter(x, 1, perm, -2.5))
    # index_copy (forward and backward), index_fill_ with negative indices
    both(lambda a, s: tl.index_copy(a, 0, tl.tensor([6, 1, 3]).to(a.device), s), [x, src[:3]])
    cf = x.to("cuda")
    cf.index_fill_(1, tl.tensor([-1, 0]).to("cuda"), 9.0)
    close(cf, x.clone().index_fill_(1, tl.tensor([-1, 0]), 9.0))
    try:
        cf.index_fill_(1, tl.tensor([5]).to("cuda"), 1.0)
    except IndexError as e:
        assert "index 5 is out of bounds for dimension 1 with size 5" in str(e), str(e)
    else:
        raise AssertionError("index_fill_ out of range")
    # embedding (index_select) and its dense backward, padding_idx and scale_grad_by_freq
    for pad, freq in ((None, False), (2, False), (None, True)):
        both(lambda t: F.embedding(ix2.to(t.device), t, padding_idx=pad, scale_grad_by_freq=freq), [w])
    # masked_fill_ / masked_fill and where's backward
    m = x > 0.3
    both(lambda a: a.masked_fill(m.to(a.device), -1.5), [x])
    cx = x.to("cuda")
    cx.masked_fill_(m.to("cuda"), tl.tensor(2.0))
    close(cx, x.clone().masked_fill_(m, 2.0))
    # advanced indexing: integer and bool indices, backward through index_put_ (accumulate)
    both(lambda a: a[ix.to(a.device)], [x])
    both(lambda a: a[:, ix[:2].to(a.device)], [x])
    both(lambda a: a[m.to(a.device)], [x])
    cy = x.to("cuda")
    cy[ix.to("cuda")] = tl.zeros([5], device="cuda")
    yy = x.clone()
    yy[ix] = tl.zeros([5])
    close(cy, yy)
    # nll_loss / cross_entropy: reductions, weight, ignore_index, 1-D input
    logits, tgt = rnd(6, 5), tl.tensor([0, 4, 2, -100, 1, 3])
    wt = rnd(5).abs() + 0.1
    for red in ("mean", "sum", "none"):
        both(lambda a: F.cross_entropy(a, tgt.to(a.device), reduction=red), [logits])
        both(lambda a, ww: F.nll_loss(F.log_softmax(a, 1), tgt.to(a.device), weight=ww, reduction=red), [logits, wt])
    both(lambda a: F.cross_entropy(a, tl.tensor(3).to(a.device)), [logits[0]])
    t4 = tl.from_numpy(rng.integers(0, 5, (2, 3, 4)))
    for kw in ({}, {"label_smoothing": 0.1}, {"reduction": "none"}):   # [N, C, d1, d2]: nll_loss_nd's reshape
        both(lambda a: F.cross_entropy(a, t4.to(a.device), **kw), [rnd(2, 5, 3, 4)])
    both(lambda a: F.cross_entropy(a, tl.tensor([0, 4, 2, 2, 1, 3]).to(a.device), ignore_index=2),
         [logits.to(tl.float64)], tol=1e-12)
    # errors: an out-of-range index raises the CPU's error, nothing is written
    for fn, exc, msg in ((lambda: tl.index_select(cx, 0, tl.tensor([7], device="cuda")), IndexError,
                          "index out of range in self"),
                         (lambda: cx[tl.tensor([-8], device="cuda")], IndexError,
                          "index -8 is out of bounds for dimension 0 with size 7"),
                         (lambda: F.cross_entropy(logits.to("cuda"), tl.tensor([0, 5, 1, 1, 1, 1], device="cuda")),
                          IndexError, "Target 5 is out of bounds."),
                         (lambda: tl.gather(cx, 0, tl.tensor([[9]], device="cuda")), RuntimeError,
                          "index 9 is out of bounds for dimension 0 with size 7")):
        try:
            fn()
        except exc as e:
            assert msg in str(e), str(e)
        else:
            raise AssertionError(msg)
    # cat (chunk's backward) and the seeds' Transformer block, forward and backward
    both(lambda a, b: tl.cat([a, b], 0), [x, src])
    both(lambda a, b: tl.cat([a, b.t()], 1), [x, rnd(3, 7)])
    sizes = S.SMALL["transformer"]
    arrays = S.make_inputs("transformer", sizes, np.random.default_rng(1))
    ts = S.to_lib(tl, arrays, requires_grad=False)
    both(lambda *a: S.forward("transformer", tl, F, a, sizes), ts[:-1], tol=2e-5)
    assert "index" in compiled and "reduce" in compiled, compiled
    print("INDEX OK", sorted(set(compiled)))
""")


def test_indexing_and_transformer_block_on_fake_cuda(tmp_path):
    fake_so, blas_so = tmp_path / "libfakecuda.so", tmp_path / "libfakecublas.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-pthread", "-o", str(fake_so), str(FAKE)], check=True)
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-o", str(blas_so), str(FAKE_BLAS)], check=True)
    shim_build.build(OPS)   # built here, loaded by the subprocess
    env = {**os.environ, "TORCHLET_LIBCUDA": str(fake_so), "TORCHLET_LIBCUBLAS": str(blas_so),
           "TORCHLET_KERNEL_CACHE": str(tmp_path / "cache"), "FAKE_CUDA_CC": "9.0", "SHIM_HERE": str(HERE),
           "SHIM_ROOT": str(ROOT), "SHIM_OPS": json.dumps(OPS)}
    r = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, cwd=ROOT, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-6000:]
    assert "INDEX OK" in r.stdout
