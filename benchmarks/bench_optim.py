"""One AdamW step over a ~10M-parameter list of tensors (a transformer-like
mix of matrices and vectors), one thread: torchlet's AdamW (PyTorch's
for-loop algorithm, one in-place op per tensor per line) beside torch's
AdamW with foreach=False (the same algorithm) and torch's default (foreach
on CPU is off, so torch's default is also the for-loop path unless
fused=True is asked; the fused CPU kernel is timed as a third torch row).
Timed round robin (`interleaved`): on a shared machine only the ratios mean
something. Ratio = torch's time / torchlet's time (above 1.0 torchlet is faster)."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import torchlet as tl  # noqa: E402

from _harness import machine_info, print_interleaved, torch  # noqa: E402

# 5 blocks of (4 matrices 512x512, 512x1024, 1024x512, 4 vectors): ~10.5M parameters
SHAPES = [s for _ in range(5) for s in [(512, 512)] * 4 + [(512, 1024), (1024, 512)] + [(512,)] * 3 + [(1024,)]]


def _setup(lib, make_opt):
    rng = np.random.default_rng(0)
    params, grads = [], []
    for s in SHAPES:
        p = lib.tensor(rng.standard_normal(s).astype(np.float32)).requires_grad_(True)
        params.append(p)
        grads.append(lib.tensor(rng.standard_normal(s).astype(np.float32) * 0.01))
    for p, g in zip(params, grads):
        p.grad = g
    opt = make_opt(params)
    opt.step()  # state allocated outside the timing
    return opt.step


def cases():
    n = sum(int(np.prod(s)) for s in SHAPES)
    rows = {f"AdamW step, {n / 1e6:.1f}M params": dict(torchlet=_setup(tl, lambda p: tl.optim.AdamW(p, lr=1e-3)))}
    if torch is not None:
        r = rows[next(iter(rows))]
        r["torch"] = _setup(torch, lambda p: torch.optim.AdamW(p, lr=1e-3, foreach=False))
        rows["  torch default (foreach=None)"] = dict(torchlet=r["torchlet"],
                                                      torch=_setup(torch, lambda p: torch.optim.AdamW(p, lr=1e-3)))
        rows["  torch fused=True"] = dict(torchlet=r["torchlet"],
                                          torch=_setup(torch, lambda p: torch.optim.AdamW(p, lr=1e-3, fused=True)))
    return rows


def main():
    tl.set_num_threads(1)
    if torch is not None:
        torch.set_num_threads(1)
    print(f"# AdamW step, float32, 1 thread, {tl.get_cpu_capability()} ({machine_info()})")
    print_interleaved(cases(), rounds=3, width=34)


if __name__ == "__main__":
    main()
