"""Matrix products: mm (256^3, 1024^3, 4096^3 with --big), bmm (also q @ k^T
with a transposed operand), the Linear seeds' three products, and addmm in
nn.Linear's forward shape (x[64,1024] @ W[4096,1024].T + b), float32, through
torchlet, numpy and PyTorch (when installed), on one thread and on two.

The three implementations are timed interleaved in one process (round robin,
one batch of each per round, best batch kept), so that load from other
processes on a shared machine hits all three alike. Before each batch the
process sleeps SETTLE seconds (--settle, 0.2): each library's threads spin
for a while after its last call (numpy's OpenBLAS ~0.1 s, torch's OpenMP
team, torchlet's pool up to 1 ms), and spinning threads of the library timed
just before would take the cores from the one being timed. numpy's own OpenBLAS
(numpy.libs) gets its thread count through its exported
scipy_openblas_set_num_threads64_ (_harness.set_threads), as threadpoolctl would do.

    python benchmarks/bench_matmul.py [--big] [--rounds N] [--settle S] [--threads 1,2]

(--threads defaults to TORCHLET_BENCH_THREADS when set, else 1 and 2.)

A ratio `vs X` is X's time / torchlet's time: above 1.0 torchlet is faster.
The goal for mm is >= 0.9x numpy.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import torchlet as tl  # noqa: E402

from _harness import interleaved as _interleaved, machine_info, set_threads, thread_counts, torch  # noqa: E402

SETTLE = 0.2  # seconds before each batch (--settle)


def interleaved(fns: dict, rounds: int, min_time: float = 0.02) -> dict:
    """_harness.interleaved with a pause of SETTLE before each batch, at any
    thread count (numpy's OpenBLAS threads spin ~0.1 s after a product)"""
    return _interleaved(fns, rounds=rounds, min_time=min_time, settle=SETTLE)


def row(name: str, flops: float, fns: dict, rounds: int) -> None:
    fns = {k: v for k, v in fns.items() if v is not None}
    t = interleaved(fns, rounds)
    line = f"{name:<40}"
    for impl in ("torchlet", "numpy", "torch"):
        s = t.get(impl)
        line += f" {s * 1e3:9.3f} ms {flops / s / 1e9:6.1f} GF/s" if s else f" {'-':>22}"
    for ref in ("numpy", "torch"):
        r = t.get(ref)
        line += f" {r / t['torchlet']:8.2f}x" if r and "torchlet" in t else f" {'-':>9}"
    print(line, flush=True)


def run(threads: int, big: bool, rounds: int) -> None:
    set_threads(threads)
    print(f"\n## float32 matrix products, threads={threads}, cpu={tl.get_cpu_capability()}")
    head = f"{'case':<40}" + "".join(f" {k:>22}" for k in ("torchlet", "numpy", "torch"))
    print(head + f" {'vs numpy':>9} {'vs torch':>9}")
    print("-" * (len(head) + 20))
    rng = np.random.default_rng(0)

    def mats(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    for n in (256, 1024) + ((4096,) if big else ()):
        a, b = mats(n, n), mats(n, n)
        ta, tb = tl.from_numpy(a), tl.from_numpy(b)
        pa, pb = (torch.from_numpy(a), torch.from_numpy(b)) if torch is not None else (None, None)
        row(f"mm {n}x{n} @ {n}x{n}", 2.0 * n ** 3,
            {"torchlet": lambda: tl.mm(ta, tb), "numpy": lambda: a @ b,
             "torch": (lambda: torch.mm(pa, pb)) if torch is not None else None},
            rounds if n < 4096 else max(2, rounds // 3))
        if n == 1024:
            row(f"mm {n}x{n} @ ({n}x{n}).T", 2.0 * n ** 3,
                {"torchlet": lambda: tl.mm(ta, tb.t()), "numpy": lambda: a @ b.T,
                 "torch": (lambda: torch.mm(pa, pb.t())) if torch is not None else None}, rounds)

    # bmm: attention-like scores, 32 batches of 128x64 @ 64x128
    a, b = mats(32, 128, 64), mats(32, 64, 128)
    ta, tb = tl.from_numpy(a), tl.from_numpy(b)
    pa, pb = (torch.from_numpy(a), torch.from_numpy(b)) if torch is not None else (None, None)
    row("bmm 32 x (128x64 @ 64x128)", 2.0 * 32 * 128 * 64 * 128,
        {"torchlet": (lambda: tl.bmm(ta, tb)) if hasattr(tl, "bmm") else None,
         "numpy": lambda: np.matmul(a, b),
         "torch": (lambda: torch.bmm(pa, pb)) if torch is not None else None}, rounds)

    # q @ k^T in attention: the second operand transposed (the small-product kernel packs it)
    bt = np.ascontiguousarray(np.swapaxes(b, 1, 2))
    tbt, pbt = tl.from_numpy(bt), (torch.from_numpy(bt) if torch is not None else None)
    row("bmm 32 x (128x64 @ (128x64).T)", 2.0 * 32 * 128 * 64 * 128,
        {"torchlet": lambda: tl.bmm(ta, tbt.transpose(1, 2)),
         "numpy": lambda: np.matmul(a, np.swapaxes(bt, 1, 2)),
         "torch": (lambda: torch.bmm(pa, pbt.transpose(1, 2))) if torch is not None else None}, rounds)

    # the Linear seeds' products (x 256x512, W 512x512): forward x @ W.T, grad_input g @ W, grad_weight g.T @ x
    x, w, g = mats(256, 512), mats(512, 512), mats(256, 512)
    tx, tw, tg = tl.from_numpy(x), tl.from_numpy(w), tl.from_numpy(g)
    if torch is not None:
        px, pw, pg = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(g)
    for name, f_tl, f_np, f_pt in (
            ("mm seed fwd 256x512 @ W[512,512].T", lambda: tl.mm(tx, tw.t()), lambda: x @ w.T,
             lambda: torch.mm(px, pw.t())),
            ("mm seed grad_input g @ W", lambda: tl.mm(tg, tw), lambda: g @ w, lambda: torch.mm(pg, pw)),
            ("mm seed grad_weight g.T @ x", lambda: tl.mm(tg.t(), tx), lambda: g.T @ x, lambda: torch.mm(pg.t(), px))):
        row(name, 2.0 * 256 * 512 * 512, {"torchlet": f_tl, "numpy": f_np,
                                          "torch": f_pt if torch is not None else None}, rounds)

    # nn.Linear forward: addmm(b, x, W.t()), W stored [out, in] like PyTorch's
    x, w, bias = mats(64, 1024), mats(4096, 1024), mats(4096)
    tx, tw, tbias = tl.from_numpy(x), tl.from_numpy(w), tl.from_numpy(bias)
    if torch is not None:
        px, pw, pbias = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(bias)
    row("addmm (Linear) 64x1024 @ W[4096,1024].T + b", 2.0 * 64 * 1024 * 4096,
        {"torchlet": (lambda: tl.addmm(tbias, tx, tw.t())) if hasattr(tl, "addmm") else
                     (lambda: tl.mm(tx, tw.t()) + tbias),
         "numpy": lambda: x @ w.T + bias,
         "torch": (lambda: torch.addmm(pbias, px, pw.t())) if torch is not None else None}, rounds)


def main():
    big = "--big" in sys.argv
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 5
    global SETTLE
    SETTLE = float(sys.argv[sys.argv.index("--settle") + 1]) if "--settle" in sys.argv else SETTLE
    print(f"bench_matmul: {machine_info()}; torch {torch.__version__ if torch else 'not installed'}; "
          f"numpy {np.__version__}; interleaved, best of {rounds} rounds, {SETTLE} s pause before each batch")
    for threads in thread_counts([1, 2] if (os.cpu_count() or 1) > 1 else [1]):
        run(threads, big, rounds)


if __name__ == "__main__":
    main()
