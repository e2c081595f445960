"""Front-end speed: torchlet's generator vs torchgen on PyTorch's own files.

Times reading + modelling + analysing native_functions.yaml and
derivatives.yaml (with tags.yaml) with torchlet's ``codegen.model.load_model``
and, in the same run when torch is installed, torchgen's
``parse_native_yaml`` + ``load_derivatives`` on the same files (their module
caches cleared before each run).  Prints best-of-N times and the ratio;
the goal is at most 0.3x torchgen's time.

    python benchmarks/bench_codegen.py [--repeat N]
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared/reference/pytorch-2.13"
sys.path.insert(0, str(ROOT))


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def torchlet_front_end() -> None:
    from codegen.model import Inputs, load_model

    load_model(Inputs(str(CORPUS / "native_functions.yaml"), str(CORPUS / "derivatives.yaml"), str(CORPUS / "tags.yaml")))


def torchgen_front_end() -> None:
    import torchgen.gen as tg
    import torchgen.packaged.autograd.load_derivatives as ld

    tg._GLOBAL_PARSE_NATIVE_YAML_CACHE.clear()
    ld._GLOBAL_LOAD_DERIVATIVE_CACHE.clear()
    nf, tags = str(CORPUS / "native_functions.yaml"), str(CORPUS / "tags.yaml")
    tg.parse_native_yaml(nf, tags)
    ld.load_derivatives(str(CORPUS / "derivatives.yaml"), nf, tags)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()
    if not (CORPUS / "native_functions.yaml").is_file():
        print(f"skipped: PyTorch corpus not found at {CORPUS}")
        return 0
    try:
        import torchgen  # noqa: F401

        have_torchgen = True
    except ImportError:
        have_torchgen = False
    torchlet_front_end()  # warm imports
    if have_torchgen:
        torchgen_front_end()
    # interleave the runs so that both see the same machine load; keep the best of each
    ours, theirs = [], []
    for _ in range(args.repeat):
        ours.append(best_of(torchlet_front_end, 1))
        if have_torchgen:
            theirs.append(best_of(torchgen_front_end, 1))
    print(f"torchlet codegen front end (both files):        {min(ours) * 1000:7.1f} ms (best of {args.repeat})")
    if not have_torchgen:
        print("torchgen not installed (pip install torch==2.13.0): no comparison")
        return 0
    print(f"torchgen parse_native_yaml + load_derivatives:  {min(theirs) * 1000:7.1f} ms (best of {args.repeat})")
    ratio = min(ours) / min(theirs)
    print(f"ratio torchlet/torchgen: {ratio:.2f}x (goal <= 0.30x) {'OK' if ratio <= 0.3 else 'ABOVE GOAL'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
