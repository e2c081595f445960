"""The reductions held to >= 1.0x PyTorch on one and two threads: sum, mean,
amax, amin, float64 and float16 sum at 2^20 and 2^24 elements, and
sum(dim=1) / sum(dim=0) of a 4096x4096 float32 matrix. torchlet and PyTorch
timed round robin in one process (`_harness.interleaved`, best of --rounds
rounds); ratio = PyTorch's time / torchlet's (above 1.0 torchlet is faster).
On a shared machine run it with the other processes paused for the few
seconds each thread count takes; only the ratios mean anything under load.

    .venv/bin/python benchmarks/bench_reduce_parity.py [--threads 1,2] [--rounds 15] [--rows sum,amax]
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import torchlet as tl  # noqa: E402

from _harness import interleaved, machine_info, thread_counts, torch  # noqa: E402


def cases(rng) -> dict:
    """{case: (torchlet fn, torch fn)}"""
    out = {}
    for logn in (20, 24):
        a = rng.standard_normal(1 << logn).astype(np.float32)
        k = f"2^{logn}"
        for name, arr in (("", a), (" f64", a.astype(np.float64)), (" f16", a.astype(np.float16))):
            # each library reads memory it allocated (bench_guard.py: the pages are the allocator's doing)
            t, p = tl.from_numpy(arr).clone(), torch.from_numpy(arr).clone()
            out[f"sum{name} {k}"] = (lambda t=t: t.sum(), lambda p=p: p.sum())
            if not name:
                out[f"mean {k}"] = (lambda t=t: t.mean(), lambda p=p: p.mean())
                out[f"amax {k}"] = (lambda t=t: t.amax(), lambda p=p: p.amax())
                out[f"amin {k}"] = (lambda t=t: t.amin(), lambda p=p: p.amin())
    a2 = rng.standard_normal((4096, 4096)).astype(np.float32)
    t2, p2 = tl.from_numpy(a2).clone(), torch.from_numpy(a2).clone()
    out["sum(dim=1) 4096^2"] = (lambda: t2.sum(1), lambda: p2.sum(1))
    out["sum(dim=0) 4096^2"] = (lambda: t2.sum(0), lambda: p2.sum(0))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default=None)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--rows", default="", help="comma-separated substrings: only the matching cases")
    args = ap.parse_args()
    if torch is None:
        raise SystemExit("bench_reduce_parity compares with PyTorch: install torch")
    print(f"# bench_reduce_parity: {machine_info()}")
    rows = cases(np.random.default_rng(0))
    if args.rows:
        keys = [s.strip() for s in args.rows.split(",") if s.strip()]
        rows = {k: v for k, v in rows.items() if any(s in k for s in keys)}
    for threads in thread_counts([1, 2], args.threads):
        tl.set_num_threads(threads)
        torch.set_num_threads(threads)
        print(f"\n## {threads} thread{'s' if threads > 1 else ''} (best of {args.rounds}; ratio = torch / torchlet)")
        print(f"{'case':<20} {'torchlet':>10} {'torch':>10} {'ratio':>7}")
        for name, (f_tl, f_pt) in rows.items():
            t = interleaved({"torchlet": f_tl, "torch": f_pt}, rounds=args.rounds)
            r = t["torch"] / t["torchlet"]
            print(f"{name:<20} {t['torchlet'] * 1e3:8.3f}ms {t['torch'] * 1e3:8.3f}ms {r:6.2f}x"
                  + ("" if r >= 1.0 else "  <"), flush=True)


if __name__ == "__main__":
    main()
