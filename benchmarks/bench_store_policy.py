"""Plain against streaming stores on this machine: checks the store policy
torchlet derived from the caches (docs/UFUNC.md, "Stores").

For `a + b` (three streams), `-a` (two) and a same-dtype copy, at working sets
from half the L2 to 8x the L3 (float32, one thread by default), it times the
loop with streaming stores forced off, forced on, and forced on with the
input prefetch, beside numpy and PyTorch, round robin in one process; then
says which store the rule picks at that size and whether it was the faster
(within 5%). Run it on a new kind of machine before trusting the rule there:

    .venv/bin/python benchmarks/bench_store_policy.py [--threads 2] [--rounds 9]
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import torchlet as tl  # noqa: E402

from _harness import interleaved, machine_info, torch  # noqa: E402

NEVER = 1 << 62


def sizes(info: dict) -> list[int]:
    """log2 element counts whose 2-stream working set spans L2/2 .. 8 x L3"""
    l2 = info["l2_bytes"] or 1 << 20
    l3 = info["l3_bytes"] or 32 << 20
    lo = max(14, (l2 // 2 // 8).bit_length() - 1)
    hi = min(27, (8 * l3 // 8).bit_length() - 1)
    return list(range(lo, hi + 1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args()
    tl.set_num_threads(args.threads)
    if torch is not None:
        torch.set_num_threads(args.threads)
    cpu = tl.backends.cpu
    info = cpu.info()
    rule = info["derived"]
    lib = tl._lib
    print(f"# bench_store_policy: {machine_info()}")
    print(f"# the rule, at {args.threads} thread(s): stream a pointwise call from {rule['stream_min_bytes'] >> 10} KiB "
          f"moved, a copy from {rule['copy_stream_min_bytes'] >> 10} KiB written "
          f"(per call: each of the {args.threads} thread(s) moves 1/{args.threads} of the working set)")
    head = f"{'case':<22} {'moved':>9} {'plain':>7} {'stream':>7} {'+pf':>7} {'numpy':>7} {'torch':>7}  rule picks"
    print(head + "\n" + "-" * (len(head) + 12))
    wrong = 0
    try:
        for logn in sizes(info):
            n = 1 << logn
            rng = np.random.default_rng(logn)
            a = rng.standard_normal(n).astype(np.float32)
            b = rng.standard_normal(n).astype(np.float32)
            on = np.empty_like(a)
            ta, tb, to = tl.from_numpy(a), tl.from_numpy(b), tl.empty(n)
            if torch is not None:
                pa, pb, po = torch.from_numpy(a), torch.from_numpy(b), torch.empty(n)
            cases = [
                ("a + b", 12 * n, False, lambda: tl.add(ta, tb, out=to), lambda: np.add(a, b, out=on),
                 (lambda: torch.add(pa, pb, out=po)) if torch is not None else None),
                ("-a", 8 * n, False, lambda: tl.neg(ta, out=to), lambda: np.negative(a, out=on),
                 (lambda: torch.neg(pa, out=po)) if torch is not None else None),
                ("copy", 8 * n, True, lambda: to.copy_(ta), lambda: np.copyto(on, a),
                 (lambda: po.copy_(pa)) if torch is not None else None),
            ]
            for name, moved, is_copy, f_tl, f_np, f_t in cases:
                def forced(stream: bool, prefetch: bool, f=f_tl, is_copy=is_copy):
                    s = 0 if stream else NEVER
                    sm, cm = (rule["stream_min_bytes"], s) if is_copy else (s, rule["copy_stream_min_bytes"])

                    def run():
                        lib.tl_cpu_set_store_policy(sm, cm, int(prefetch))
                        f()
                    return run
                fns = {"plain": forced(False, False), "stream": forced(True, False), "+pf": forced(True, True),
                       "numpy": f_np}
                if f_t is not None:
                    fns["torch"] = f_t
                t = interleaved(fns, rounds=args.rounds)
                per_call = moved // args.threads
                picks_stream = (per_call // 2 >= rule["copy_stream_min_bytes"]) if is_copy \
                    else per_call >= rule["stream_min_bytes"]
                best_store = min(t["plain"], t["stream"])
                chosen = t["+pf" if rule["prefetch"] else "stream"] if picks_stream else t["plain"]
                ok = chosen <= best_store * 1.05
                wrong += not ok
                gbs = {k: moved / v / 1e9 for k, v in t.items()}
                print(f"{name + f' 2^{logn}':<22} {moved >> 10:>7}K " + " ".join(
                    f"{gbs[k]:7.1f}" if k in gbs else f"{'-':>7}" for k in ("plain", "stream", "+pf", "numpy", "torch"))
                    + f"  {'stream' if picks_stream else 'plain':<6} {'ok' if ok else 'SLOWER'}", flush=True)
    finally:
        lib.tl_cpu_set_store_policy(rule["stream_min_bytes"], rule["copy_stream_min_bytes"], int(rule["prefetch"]))
    print(f"\n# GB/s = bytes read + written per second; 'SLOWER': the rule's store lost by more than 5% "
          f"at that size ({wrong} case(s))")


if __name__ == "__main__":
    main()
