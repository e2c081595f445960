"""On a machine with an NVIDIA driver and GPU (the real libcuda.so.1): the
runtime finds it and moves data through it. Skipped everywhere else."""
from __future__ import annotations

import os

import pytest

torchlet = pytest.importorskip("torchlet")

needs_gpu = pytest.mark.skipif(os.environ.get("TORCHLET_LIBCUDA") is not None or not torchlet.cuda.is_available(),
                               reason="no CUDA driver/GPU (torchlet.cuda.is_available() is False)")


@needs_gpu
def test_real_device_round_trip():
    c = torchlet.cuda
    assert c.device_count() >= 1
    major, minor = c.get_device_capability()
    assert major >= 5 and c.get_device_name()
    x = torchlet.arange(1 << 20, dtype=torchlet.float32)
    g = x.cuda()
    assert g.is_cuda and c.memory_allocated() >= 4 << 20
    assert torchlet.equal(g.cpu(), x)
    assert g[7].item() == 7.0
    g.fill_(2.5)
    g[::3].zero_()
    exp = torchlet.full((1 << 20,), 2.5)
    exp[::3] = 0.0
    assert torchlet.equal(g.cpu(), exp)
    s = c.Stream()
    e0, e1 = c.Event(enable_timing=True), c.Event(enable_timing=True)
    with c.stream(s):
        e0.record()
        h = g.clone()
        e1.record()
    e1.synchronize()
    assert e0.elapsed_time(e1) >= 0.0 and torchlet.equal(h.cpu(), exp)
    del g, h
    c.empty_cache()


@needs_gpu
def test_real_reductions_and_softmax():
    """the block trees (warp shuffles, shared memory) on the device against the CPU"""
    import numpy as np

    rng = np.random.default_rng(0)
    for shape, dims in (([1000, 513], [1]), ([1000, 513], [0]), ([3, 200000], [1]), ([1 << 20], [0]), ([70000, 3], [1])):
        x = torchlet.from_numpy(rng.standard_normal(shape).astype(np.float32))
        g = x.cuda()
        for op in ("sum", "mean", "amax", "amin"):
            np.testing.assert_allclose(getattr(g, op)(dims).cpu().numpy(), getattr(x, op)(dims).numpy(),
                                       rtol=1e-4, atol=1e-4)
        for op in ("argmax", "argmin"):
            assert torchlet.equal(getattr(g, op)(dims[0]).cpu(), getattr(x, op)(dims[0]))
        np.testing.assert_allclose(torchlet.softmax(g, dims[0]).cpu().numpy(), torchlet.softmax(x, dims[0]).numpy(),
                                   rtol=1e-4, atol=1e-7)
    h = torchlet.from_numpy(rng.standard_normal([64, 4097]).astype(np.float32)).to(torchlet.float16)
    np.testing.assert_allclose(h.cuda().sum(1).cpu().to(torchlet.float32).numpy(),
                               h.sum(1).to(torchlet.float32).numpy(), rtol=5e-3, atol=5e-2)


@needs_gpu
def test_real_cublas_products():
    import numpy as np
    from torchlet._C import lib

    if not lib.tl_cuda_blas_available():
        pytest.skip("no cuBLAS library (nvidia-cublas wheel or TORCHLET_LIBCUBLAS)")
    rng = np.random.default_rng(1)
    a = torchlet.from_numpy(rng.standard_normal([129, 65]))
    b = torchlet.from_numpy(rng.standard_normal([65, 33]))
    for dt, tol in ((torchlet.float64, 1e-12), (torchlet.float32, 1e-4), (torchlet.bfloat16, 3e-2),
                    (torchlet.float16, 5e-3)):
        want = torchlet.mm(a, b).numpy()
        got = torchlet.mm(a.to(dt).cuda(), b.to(dt).cuda()).cpu().to(torchlet.float64).numpy()
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 10)
    x, y = a[:64].reshape([4, 16, 65]), b
    np.testing.assert_allclose(torchlet.matmul(x.cuda(), y.cuda()).cpu().numpy(), torchlet.matmul(x, y).numpy(),
                               rtol=1e-10)
    bias = torchlet.from_numpy(rng.standard_normal([33]))
    np.testing.assert_allclose(torchlet.addmm(bias.cuda(), a.cuda(), b.cuda(), beta=0.5).cpu().numpy(),
                               torchlet.addmm(bias, a, b, beta=0.5).numpy(), rtol=1e-10)


@needs_gpu
def test_real_indexing_embedding_and_cross_entropy():
    """the indexing kernels (atomics, the bad-index flag) on the device against the CPU,
    more than 65536 blocks of work included (the grid-stride loops)"""
    import numpy as np

    rng = np.random.default_rng(0)
    F = torchlet.nn.functional
    x = torchlet.from_numpy(rng.standard_normal([5000, 257]).astype(np.float32))
    ix = torchlet.from_numpy(rng.integers(0, 5000, 70000))
    g = x.cuda()
    assert torchlet.equal(torchlet.index_select(g, 0, ix.cuda()).cpu(), torchlet.index_select(x, 0, ix))
    gi = torchlet.from_numpy(rng.integers(0, 257, [5000, 300]))
    assert torchlet.equal(torchlet.gather(g, 1, gi.cuda()).cpu(), torchlet.gather(x, 1, gi))
    src = torchlet.from_numpy(rng.standard_normal([5000, 300]).astype(np.float32))
    np.testing.assert_allclose(torchlet.scatter_add(g, 1, gi.cuda(), src.cuda()).cpu().numpy(),
                               torchlet.scatter_add(x, 1, gi, src).numpy(), rtol=1e-4, atol=1e-4)
    w = x.cuda().requires_grad_()
    ids = ix[:4096].reshape(64, 64)
    F.embedding(ids.cuda(), w, padding_idx=3).sum().backward()
    wr = x.clone().requires_grad_()
    F.embedding(ids, wr, padding_idx=3).sum().backward()
    np.testing.assert_allclose(w.grad.cpu().numpy(), wr.grad.numpy(), rtol=1e-5, atol=1e-5)
    assert torchlet.equal(g[ix[:100].cuda()].cpu(), x[ix[:100]])
    m = x[:, 0] > 0
    assert torchlet.equal(g[m.cuda()].cpu(), x[m])
    logits = torchlet.from_numpy(rng.standard_normal([4096, 1000]).astype(np.float32))
    t = torchlet.from_numpy(rng.integers(0, 1000, 4096))
    lc = logits.cuda().requires_grad_()
    F.cross_entropy(lc, t.cuda()).backward()
    lr = logits.clone().requires_grad_()
    loss = F.cross_entropy(lr, t)
    loss.backward()
    np.testing.assert_allclose(lc.grad.cpu().numpy(), lr.grad.numpy(), rtol=1e-4, atol=1e-7)
    with pytest.raises(IndexError, match="index out of range in self"):
        torchlet.index_select(g, 0, torchlet.tensor([5000]).cuda())
    assert torchlet.equal(g[:2].cpu(), x[:2])   # the context survives a bad index
