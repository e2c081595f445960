"""Pooling and normalization on ResNet-like shapes (float32, NCHW), torchlet
beside PyTorch (when installed): max_pool2d 3x3 stride 2 pad 1 on
8x64x112x112 and 2x2 on 8x64x56x56 (forward, and forward + backward),
avg_pool2d, adaptive_avg_pool2d to 1x1, batch_norm training forward and
forward + backward (weight and bias, running statistics updated), batch_norm
eval, group_norm (32 groups) forward and forward + backward, bilinear and
nearest upsampling by 2 (forward, bilinear forward + backward),
MultiheadAttention self-attention (batch 8, seq 128, embed 256, 8 heads)
and ctc_loss, forward + backward, max_pool3d
2x2x2 on 4x32x16x32x32 (forward, forward + backward), F.unfold / F.fold 3x3
pad 1 on 8x32x56x56, embedding_bag (100000 x 64 table, 4096 bags of 20
indices: sum forward, mean forward + backward). Timed round
robin (`interleaved`) at the thread counts of `--threads` (default 1 and 2).
Ratio = PyTorch's time / torchlet's time (above 1.0 torchlet is faster).

    python benchmarks/bench_nn_ops.py [--threads 1,2] [--cpu-time] [--rounds N] [--only TEXT]

--cpu-time: process CPU time per call (time.process_time: on one thread far
less disturbed by a loaded machine than wall time); --only: the rows whose
name contains TEXT."""
from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import torchlet as tl  # noqa: E402

from _harness import machine_info, print_interleaved, thread_counts, torch  # noqa: E402


def _fwd_bwd(lib, fn, x, *params):
    """one forward + backward through fn(x, *params) with a fixed upstream gradient"""
    xs = [t.detach().requires_grad_() for t in (x, *params)]
    y = fn(*xs)
    y.backward(lib.ones_like(y))
    return xs[0].grad


def cases():
    rng = np.random.default_rng(0)
    big = rng.standard_normal((8, 64, 112, 112)).astype(np.float32)
    mid = rng.standard_normal((8, 64, 56, 56)).astype(np.float32)
    w = rng.uniform(0.5, 1.5, 64).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    libs = {"torchlet": tl}
    if torch is not None:
        libs["torch"] = torch
    rows = {}

    def add(name, make):
        rows[name] = {k: make(lib) for k, lib in libs.items()}

    def T(lib, a):
        return lib.from_numpy(a.copy())

    add("max_pool2d 3x3/2 8x64x112x112",
        lambda m: (lambda x=T(m, big): m.nn.functional.max_pool2d(x, 3, 2, 1)))
    add("max_pool2d 2x2 8x64x56x56",
        lambda m: (lambda x=T(m, mid): m.nn.functional.max_pool2d(x, 2)))
    add("max_pool2d 3x3/2 fwd+bwd",
        lambda m: (lambda x=T(m, big): _fwd_bwd(m, lambda t: m.nn.functional.max_pool2d(t, 3, 2, 1), x)))
    add("avg_pool2d 3x3/2 8x64x56x56",
        lambda m: (lambda x=T(m, mid): m.nn.functional.avg_pool2d(x, 3, 2, 1)))
    add("adaptive_avg_pool2d 1x1 8x64x56x56",
        lambda m: (lambda x=T(m, mid): m.nn.functional.adaptive_avg_pool2d(x, 1)))
    add("batch_norm train 8x64x56x56",
        lambda m: (lambda x=T(m, mid), w_=T(m, w), b_=T(m, b), rm=m.zeros(64), rv=m.ones(64):
                   m.nn.functional.batch_norm(x, rm, rv, w_, b_, True)))
    add("batch_norm train fwd+bwd",
        lambda m: (lambda x=T(m, mid), w_=T(m, w), b_=T(m, b), rm=m.zeros(64), rv=m.ones(64):
                   _fwd_bwd(m, lambda t, ww, bb: m.nn.functional.batch_norm(t, rm, rv, ww, bb, True), x, w_, b_)))
    add("batch_norm eval 8x64x56x56",
        lambda m: (lambda x=T(m, mid), w_=T(m, w), b_=T(m, b), rm=m.zeros(64), rv=m.ones(64):
                   m.nn.functional.batch_norm(x, rm, rv, w_, b_, False)))
    add("group_norm 32 8x64x56x56",
        lambda m: (lambda x=T(m, mid), w_=T(m, w), b_=T(m, b): m.nn.functional.group_norm(x, 32, w_, b_)))
    add("group_norm 32 fwd+bwd",
        lambda m: (lambda x=T(m, mid), w_=T(m, w), b_=T(m, b):
                   _fwd_bwd(m, lambda t, ww, bb: m.nn.functional.group_norm(t, 32, ww, bb), x, w_, b_)))
    add("upsample_bilinear2d x2 8x64x56x56",
        lambda m: (lambda x=T(m, mid): m.nn.functional.interpolate(x, scale_factor=2, mode="bilinear")))
    add("upsample_bilinear2d x2 fwd+bwd",
        lambda m: (lambda x=T(m, mid): _fwd_bwd(m, lambda t: m.nn.functional.interpolate(t, scale_factor=2,
                                                                                        mode="bilinear"), x)))
    add("upsample_nearest2d x2 8x64x56x56",
        lambda m: (lambda x=T(m, mid): m.nn.functional.interpolate(x, scale_factor=2)))
    # MultiheadAttention self-attention, batch 8, seq 128, embed 256, 8 heads, the same weights in both
    seq = rng.standard_normal((8, 128, 256)).astype(np.float32)
    mha_w = {"in_proj_weight": rng.uniform(-0.08, 0.08, (768, 256)), "in_proj_bias": np.zeros(768),
             "out_proj.weight": rng.uniform(-0.06, 0.06, (256, 256)), "out_proj.bias": np.zeros(256)}

    def mha(lib):
        m = lib.nn.MultiheadAttention(256, 8, batch_first=True)
        m.load_state_dict({k: lib.from_numpy(v.astype(np.float32)) for k, v in mha_w.items()})
        return m
    add("MultiheadAttention 8x128x256 h8 fwd+bwd",
        lambda m: (lambda x=T(m, seq), mod=mha(m):
                   _fwd_bwd(m, lambda t: mod(t, t, t, need_weights=False)[0], x)))
    # ctc_loss on the OpInfo's shape: T 50, batch 16, 20 classes, padded targets of 30
    ctc_x = rng.standard_normal((50, 16, 20)).astype(np.float32)
    ctc_t = rng.integers(1, 20, (16, 30))
    ctc_tl = rng.integers(10, 30, 16).tolist()
    add("ctc_loss 50x16x20 fwd+bwd",
        lambda m: (lambda x=T(m, ctc_x), tg=T(m, ctc_t):
                   _fwd_bwd(m, lambda t: m.nn.functional.ctc_loss(t.log_softmax(2), tg, [50] * 16, ctc_tl), x)))
    vol = rng.standard_normal((4, 32, 16, 32, 32)).astype(np.float32)
    add("max_pool3d 2x2x2 4x32x16x32x32",
        lambda m: (lambda x=T(m, vol): m.nn.functional.max_pool3d(x, 2)))
    add("max_pool3d 2x2x2 fwd+bwd",
        lambda m: (lambda x=T(m, vol): _fwd_bwd(m, lambda t: m.nn.functional.max_pool3d(t, 2), x)))
    img = mid[:, :32]
    cols = rng.standard_normal((8, 32 * 9, 56 * 56)).astype(np.float32)
    add("unfold 3x3 pad 1 8x32x56x56",
        lambda m: (lambda x=T(m, img): m.nn.functional.unfold(x, 3, padding=1)))
    add("fold 3x3 pad 1 to 8x32x56x56",
        lambda m: (lambda c=T(m, cols): m.nn.functional.fold(c, (56, 56), 3, padding=1)))
    table = rng.standard_normal((100000, 64)).astype(np.float32)
    bag_idx = rng.integers(0, 100000, 4096 * 20)
    bag_off = np.arange(0, 4096 * 20, 20)
    add("embedding_bag sum 4096 bags x 20",
        lambda m: (lambda w_=T(m, table), i=T(m, bag_idx), o=T(m, bag_off):
                   m.nn.functional.embedding_bag(i, w_, o, mode="sum")))
    add("embedding_bag mean fwd+bwd",
        lambda m: (lambda w_=T(m, table), i=T(m, bag_idx), o=T(m, bag_off):
                   _fwd_bwd(m, lambda ww: m.nn.functional.embedding_bag(i, ww, o, mode="mean"), w_)))
    return rows


def _arg(flag, default):
    return sys.argv[sys.argv.index(flag) + 1] if flag in sys.argv else default


def main():
    clock = time.process_time if "--cpu-time" in sys.argv else time.perf_counter
    rounds, only = int(_arg("--rounds", 5)), _arg("--only", "")
    for n in thread_counts([1, 2]):
        tl.set_num_threads(n)
        if torch is not None:
            torch.set_num_threads(n)
        what = "CPU time" if clock is time.process_time else "wall time"
        print(f"# pooling / normalization, float32 NCHW, {n} thread(s), {what}, {tl.get_cpu_capability()} "
              f"({machine_info()})")
        rows = {k: v for k, v in cases().items() if only in k}
        print_interleaved(rows, rounds=rounds, width=36, clock=clock)


if __name__ == "__main__":
    main()
