"""LAPACK solvers: linalg.inv, linalg.solve (one right-hand side matrix of the
same size), linalg.cholesky, linalg.det, linalg.eigh, and the decompositions
linalg.lu_factor, linalg.qr, linalg.lstsq (torchlet / torch: gelsy; numpy:
gelsd, single matrices only), linalg.pinv, float64, square 64 and 512 and a
batch of 256 16x16 matrices, through torchlet, numpy.linalg and PyTorch (when
installed), interleaved in one process (benchmarks/_harness.py).

    python benchmarks/bench_linalg_solvers.py [--rounds N] [--threads 1,2]

A ratio `vs X` is X's time / torchlet's time: above 1.0 torchlet is faster.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import torchlet as tl  # noqa: E402

from _harness import machine_info, print_interleaved, set_threads, thread_counts, torch  # noqa: E402


def size_cases(a, b, s):
    """{op: {impl: fn}} for one operand set (its own closures)"""
    d = a / a.shape[-1] ** 0.5   # det of a moderate size (a's overflows at 512)
    ta, tb, ts, td = tl.from_numpy(a), tl.from_numpy(b), tl.from_numpy(s), tl.from_numpy(d)
    rows = {
        "inv": {"torchlet": lambda: tl.linalg.inv(ta), "numpy": lambda: np.linalg.inv(a)},
        "solve": {"torchlet": lambda: tl.linalg.solve(ta, tb), "numpy": lambda: np.linalg.solve(a, b)},
        "cholesky": {"torchlet": lambda: tl.linalg.cholesky(ts), "numpy": lambda: np.linalg.cholesky(s)},
        "det": {"torchlet": lambda: tl.linalg.det(td), "numpy": lambda: np.linalg.det(d)},
        "eigh": {"torchlet": lambda: tl.linalg.eigh(ts), "numpy": lambda: np.linalg.eigh(s)},
        "lu_factor": {"torchlet": lambda: tl.linalg.lu_factor(ta)},   # numpy has no LU
        "qr": {"torchlet": lambda: tl.linalg.qr(ta), "numpy": lambda: np.linalg.qr(a)},
        "lstsq": {"torchlet": lambda: tl.linalg.lstsq(ta, tb)},
        "pinv": {"torchlet": lambda: tl.linalg.pinv(ta), "numpy": lambda: np.linalg.pinv(a)},
    }
    if a.ndim == 2:   # numpy's lstsq takes one matrix
        rows["lstsq"]["numpy"] = lambda: np.linalg.lstsq(a, b, rcond=None)
    if torch is not None:
        pa, pb, ps, pd = torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(s), torch.from_numpy(d)
        rows["inv"]["torch"] = lambda: torch.linalg.inv(pa)
        rows["solve"]["torch"] = lambda: torch.linalg.solve(pa, pb)
        rows["cholesky"]["torch"] = lambda: torch.linalg.cholesky(ps)
        rows["det"]["torch"] = lambda: torch.linalg.det(pd)
        rows["eigh"]["torch"] = lambda: torch.linalg.eigh(ps)
        rows["lu_factor"]["torch"] = lambda: torch.linalg.lu_factor(pa)
        rows["qr"]["torch"] = lambda: torch.linalg.qr(pa)
        rows["lstsq"]["torch"] = lambda: torch.linalg.lstsq(pa, pb)
        rows["pinv"]["torch"] = lambda: torch.linalg.pinv(pa)
    return rows


def cases(rng):
    """{case: {impl: fn}} for each size"""
    rows = {}
    for name, shape in (("64", (64, 64)), ("512", (512, 512)), ("256x16x16", (256, 16, 16))):
        n = shape[-1]
        a = rng.standard_normal(shape) + n ** 0.5 * np.eye(n)
        b = rng.standard_normal(shape)
        s = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
        for op, fns in size_cases(a, b, s).items():
            rows[f"{op} {name}"] = fns
    return rows


def main():
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 5
    spec = sys.argv[sys.argv.index("--threads") + 1] if "--threads" in sys.argv else None
    print(f"bench_linalg_solvers: {machine_info()}; torch {torch.__version__ if torch else 'not installed'}; "
          f"numpy {np.__version__}; float64, interleaved, best of {rounds} rounds")
    rng = np.random.default_rng(0)
    for threads in thread_counts([1], spec):
        set_threads(threads)   # numpy's LAPACK too
        print(f"\n## threads={threads}")
        print_interleaved(cases(rng), rounds=rounds, width=22)


if __name__ == "__main__":
    main()
