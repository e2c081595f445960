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
