"""Losses and activations beside PyTorch, one thread, float32:
cross_entropy forward + backward on 4096 x 1000 logits (log_softmax +
nll_loss and their backward), hardswish and log_sigmoid forward + backward
on 2^22 elements, smooth_l1_loss and binary_cross_entropy forward +
backward on 2^20. Timed round robin (`interleaved`): on a shared machine
only the ratios mean something. Ratio = torch's time / torchlet's time
(above 1.0 torchlet is faster)."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import torchlet as tl  # noqa: E402

from _harness import machine_info, print_interleaved, torch  # noqa: E402


def _fwd_bwd(lib, fn, *arrays, grad_of=0):
    ts = [lib.tensor(a) for a in arrays]
    ts[grad_of].requires_grad_(True)
    x = ts[grad_of]

    def step():
        x.grad = None
        fn(lib, *ts).backward()
    return step


def _ce(lib, x, t):
    return lib.nn.functional.cross_entropy(x, t)


def _act(name):
    def fn(lib, x):
        return getattr(lib.nn.functional, name)(x).sum()
    return fn


def _smooth_l1(lib, x, y):
    return lib.nn.functional.smooth_l1_loss(x, y)


def _bce(lib, x, y):
    return lib.nn.functional.binary_cross_entropy(x, y)


def cases():
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((4096, 1000)).astype(np.float32)
    target = rng.integers(0, 1000, size=4096).astype(np.int64)
    big = rng.standard_normal(1 << 22).astype(np.float32) * 4
    a = rng.standard_normal(1 << 20).astype(np.float32)
    b = rng.standard_normal(1 << 20).astype(np.float32)
    p = rng.uniform(0.01, 0.99, 1 << 20).astype(np.float32)
    q = rng.uniform(0, 1, 1 << 20).astype(np.float32)
    specs = {
        "cross_entropy 4096x1000 fwd+bwd": (_ce, (logits, target)),
        "hardswish 2^22 fwd+bwd": (_act("hardswish"), (big,)),
        "logsigmoid 2^22 fwd+bwd": (_act("logsigmoid"), (big,)),
        "smooth_l1_loss 2^20 fwd+bwd": (_smooth_l1, (a, b)),
        "binary_cross_entropy 2^20 fwd+bwd": (_bce, (p, q)),
    }
    rows = {}
    for name, (fn, arrays) in specs.items():
        rows[name] = dict(torchlet=_fwd_bwd(tl, fn, *arrays))
        if torch is not None:
            rows[name]["torch"] = _fwd_bwd(torch, fn, *arrays)
    return rows


def main():
    tl.set_num_threads(1)
    if torch is not None:
        torch.set_num_threads(1)
    print(f"# losses and activations, float32, 1 thread, {tl.get_cpu_capability()} ({machine_info()})")
    print_interleaved(cases(), rounds=5, width=36)


if __name__ == "__main__":
    main()
