"""Three-input pointwise ops on 2^24 float32, one thread: addcmul and where
(allocating and out=), plus clamp and lerp, torchlet beside numpy and PyTorch
(when installed). Timed round robin (`interleaved`): on a shared machine only
the ratios mean something. Ratio = other library's time / torchlet's time
(above 1.0 torchlet is faster).

numpy has no addcmul / lerp: its rows are the same arithmetic in numpy
expressions (`s + v * a * b`; out= rows with preallocated temporaries), which
is what a numpy user writes."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import torchlet as tl  # noqa: E402
from torchlet import _rt  # noqa: E402

from _harness import machine_info, print_interleaved, torch  # noqa: E402

N = 1 << 24


def cases():
    rng = np.random.default_rng(0)
    s, a, b = (rng.standard_normal(N).astype(np.float32) for _ in range(3))
    c = rng.random(N) < 0.5
    ts, ta, tb, tc = tl.from_numpy(s), tl.from_numpy(a), tl.from_numpy(b), tl.from_numpy(c)
    o_tl, o_np, tmp = _rt.empty(N), np.empty_like(s), np.empty_like(s)

    def np_addcmul_out():
        np.multiply(a, b, out=tmp)
        np.multiply(tmp, np.float32(0.5), out=tmp)
        np.add(s, tmp, out=o_np)

    def np_lerp():   # the two-branch formula, as torch computes it
        return np.where(np.abs(b) < 0.5, s + b * (a - s), a - (a - s) * (1 - b))

    rows = {
        "addcmul (allocating)": dict(torchlet=lambda: tl.addcmul(ts, ta, tb, value=0.5),
                                     numpy=lambda: s + 0.5 * a * b),
        "addcmul out=": dict(torchlet=lambda: tl.addcmul(ts, ta, tb, value=0.5, out=o_tl), numpy=np_addcmul_out),
        "where (allocating)": dict(torchlet=lambda: tl.where(tc, ta, tb), numpy=lambda: np.where(c, a, b)),
        "where out=": dict(torchlet=lambda: tl.where(tc, ta, tb, out=o_tl),
                           numpy=lambda: np.copyto(o_np, np.where(c, a, b))),
        "where(c, a, 0.0)": dict(torchlet=lambda: tl.where(tc, ta, 0.0), numpy=lambda: np.where(c, a, np.float32(0))),
        "clamp(a, -0.5, 0.5)": dict(torchlet=lambda: tl.clamp(ta, -0.5, 0.5), numpy=lambda: np.clip(a, -0.5, 0.5)),
        "lerp(s, a, b) tensor weight": dict(torchlet=lambda: tl.lerp(ts, ta, tb), numpy=np_lerp),
    }
    if torch is not None:
        ps, pa, pb, pc = (torch.from_numpy(x) for x in (s, a, b, c))
        o_pt = torch.empty(N)
        rows["addcmul (allocating)"]["torch"] = lambda: torch.addcmul(ps, pa, pb, value=0.5)
        rows["addcmul out="]["torch"] = lambda: torch.addcmul(ps, pa, pb, value=0.5, out=o_pt)
        rows["where (allocating)"]["torch"] = lambda: torch.where(pc, pa, pb)
        rows["where out="]["torch"] = lambda: torch.where(pc, pa, pb, out=o_pt)
        rows["where(c, a, 0.0)"]["torch"] = lambda: torch.where(pc, pa, 0.0)
        rows["clamp(a, -0.5, 0.5)"]["torch"] = lambda: torch.clamp(pa, -0.5, 0.5)
        rows["lerp(s, a, b) tensor weight"]["torch"] = lambda: torch.lerp(ps, pa, pb)
    return rows


def main():
    tl.set_num_threads(1)
    if torch is not None:
        torch.set_num_threads(1)
    print(f"# three-input pointwise ops, 2^24 float32, 1 thread, {tl.get_cpu_capability()} ({machine_info()})")
    print_interleaved(cases(), width=30)


if __name__ == "__main__":
    main()
