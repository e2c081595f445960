"""The seed workloads forward + backward (examples/seed_workloads.py), torchlet
beside PyTorch on 1 and 2 threads; and softmax over 2^24 float32 elements
(rows of 1024) beside numpy and PyTorch.

Goal: the Transformer block forward + backward no slower than
PyTorch on 2 threads ("torch/torchlet" >= 1.0).

Timing: the implementations of a row run interleaved, ROUNDS rounds, and the
best round counts (the development machine is shared and noisy; ratios
between interleaved runs are meaningful, absolute times much less). The seed
table also gives the ratio of best process CPU times, which a loaded machine
disturbs less (with several threads it sums all threads' time).

    python benchmarks/bench_seed.py [--threads 1,2]

(--threads defaults to TORCHLET_BENCH_THREADS when set, else 1,2.)
"""
from __future__ import annotations

import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "examples"))

import numpy as np  # noqa: E402

import torchlet as tl  # noqa: E402
import torchlet.nn.functional as tF  # noqa: E402

import seed_workloads as S  # noqa: E402
from _harness import default_settle, machine_info, thread_counts, torch  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "7"))


CPU = {}  # name -> best process CPU seconds of the last _best call (one thread: robust to a loaded machine)


def _best(fns: dict, rounds: int = ROUNDS) -> dict:
    """interleaved best-of-rounds wall seconds per call of each callable (CPU
    seconds go to CPU)"""
    for f in fns.values():
        f()
    best = {k: float("inf") for k in fns}
    CPU.clear()
    CPU.update({k: float("inf") for k in fns})
    settle = default_settle()  # _harness.interleaved's rule: no other library's threads spinning
    for _ in range(rounds):
        for k, f in fns.items():
            if settle:
                time.sleep(settle)
                f()
            c0, t0 = time.process_time(), time.perf_counter()
            f()
            best[k] = min(best[k], time.perf_counter() - t0)
            CPU[k] = min(CPU[k], time.process_time() - c0)
    return best


def _ms(s):
    return f"{s * 1e3:9.3f} ms"


def bench_seeds():
    rng = np.random.default_rng(0)
    print("\n== seed workloads, forward + backward (float32)")
    print(f"{'seed':<12} {'threads':>7} {'torchlet':>12} {'torch':>12} {'torch/torchlet':>15} {'(CPU time)':>11}")
    for name, sizes in S.SIZES.items():
        arrays = S.make_inputs(name, sizes, rng)
        tts = S.to_lib(tl, arrays)
        try:
            S.fwd_bwd(name, tl, tF, tts, sizes)
        except (NotImplementedError, AttributeError, RuntimeError) as e:
            print(f"{name:<12} skipped: {type(e).__name__}: {str(e).splitlines()[0]}")
            continue
        fns = {"torchlet": lambda: S.fwd_bwd(name, tl, tF, tts, sizes)}
        if torch is not None:
            pts = S.to_lib(torch, arrays)
            fns["torch"] = lambda: S.fwd_bwd(name, torch, torch.nn.functional, pts, sizes)
        for threads in thread_counts([1, 2]):
            tl.set_num_threads(threads)
            if torch is not None:
                torch.set_num_threads(threads)
            b = _best(fns)
            pt, me = b.get("torch"), b["torchlet"]
            ratio = f"{pt / me:.2f}" if pt else "-"
            cpu = f"{CPU['torch'] / CPU['torchlet']:.2f}" if pt else "-"
            print(f"{name:<12} {threads:>7} {_ms(me)} {(_ms(pt) if pt else '-'):>12} {ratio:>15} {cpu:>11}")


def bench_softmax():
    n = 1 << 24
    x = np.random.default_rng(1).standard_normal((n // 1024, 1024)).astype(np.float32)
    tx = tl.from_numpy(x)
    out = tl.empty(n // 1024, 1024)

    def np_softmax():
        m = x.max(-1, keepdims=True)
        e = np.exp(x - m)
        e /= e.sum(-1, keepdims=True)
        return e

    fns = {"torchlet": lambda: tl.softmax(tx, -1), "torchlet out=": lambda: tl._softmax(tx, -1, False, out=out),
           "numpy": np_softmax}
    if torch is not None:
        px = torch.from_numpy(x)
        po = torch.empty(n // 1024, 1024)
        fns["torch"] = lambda: torch.softmax(px, -1)
        fns["torch out="] = lambda: torch._softmax(px, -1, False, out=po)
    print("\n== softmax over 2^24 float32 (16384 rows of 1024)")
    print(f"{'threads':>7} " + " ".join(f"{k:>14}" for k in fns) + f" {'numpy/tl':>9} {'torch/tl':>9}")
    for threads in thread_counts([1, 2]):
        tl.set_num_threads(threads)
        if torch is not None:
            torch.set_num_threads(threads)
        b = _best(fns, max(3, ROUNDS // 2))
        vs_t = f"{b['torch'] / b['torchlet']:.2f}" if "torch" in b else "-"
        print(f"{threads:>7} " + " ".join(f"{_ms(v):>14}" for v in b.values())
              + f" {b['numpy'] / b['torchlet']:9.2f} {vs_t:>9}")


def main():
    print(machine_info())
    bench_softmax()
    bench_seeds()
    tl.set_num_threads(1)


if __name__ == "__main__":
    main()
