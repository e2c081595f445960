"""Fill a kernel cache folder with every generated CUDA program, no GPU needed.

    python -m torchlet.cuda.prebuild --arch sm_90 [--arch sm_80] --out DIR [--jobs N] [--strict]

Compiles generated/cuda/ufunc_<op>.cu (one program per pointwise operator:
per dtype its contiguous, strided and casting kernels) and generated/cuda/
reduce.cu (the reductions: per operator and dtype a rows and a combine
kernel) and generated/cuda/index.cu (indexing, embedding's backward and
nll_loss) with NVRTC into DIR in
the on-disk cache's format (torchlet.cuda.nvrtc), so a machine with a GPU
pointed at it (TORCHLET_KERNEL_CACHE=DIR) only loads CUBINs. Prints how many
programs and kernels it compiled per arch. --strict fails on register spills
(ptxas -v), as the CI test does.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from . import nvrtc

ROOT = Path(__file__).resolve().parents[3]
SOURCES = ROOT / "generated" / "cuda"


@dataclass
class Result:
    program: str
    cc: int
    kernels: int = 0
    cached: bool = False
    seconds: float = 0.0
    error: str | None = None
    usage: list = field(default_factory=list)


def programs(src: Path = SOURCES) -> list[Path]:
    return sorted(src.glob("ufunc_*.cu")) + sorted(src.glob("reduce.cu")) + sorted(src.glob("index.cu"))


def _one(job: tuple[str, str, int, str, bool]) -> Result:
    name, source, cc, out, strict = job
    folder = Path(out)
    t = time.perf_counter()
    r = Result(name, cc)
    try:
        _, r.usage, r.cached = nvrtc.cached_build(name, source, cc, folder)
        r.kernels = len(r.usage)
        if strict:
            nvrtc.check_usage(name, r.usage)
    except Exception as e:  # reported per program; the caller decides
        r.error = str(e)
    r.seconds = time.perf_counter() - t
    return r


def build(archs: list[int], out: Path, jobs: int = 2, strict: bool = False, src: Path = SOURCES,
          only: list[str] | None = None) -> list[Result]:
    """Compiles every program for every arch into out (cache hits are kept)."""
    files = [p for p in programs(src) if only is None or p.stem in only]
    work = [(p.stem, nvrtc.program_source(p), cc, str(out), strict) for cc in archs for p in files]
    out.mkdir(parents=True, exist_ok=True)
    with ProcessPoolExecutor(max(1, jobs)) as ex:
        return list(ex.map(_one, work))


def _arch(s: str) -> int:
    s = s.lower().removeprefix("sm_").removeprefix("compute_").replace(".", "")
    if not s.isdigit():
        raise argparse.ArgumentTypeError(f"not an arch: {s!r} (sm_90, 90, 9.0)")
    return int(s)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m torchlet.cuda.prebuild", description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", action="append", type=_arch, required=True, help="sm_90, sm_80, ... (repeatable)")
    ap.add_argument("--out", type=Path, required=True, help="cache folder to fill")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--strict", action="store_true", help="fail on register spills")
    ap.add_argument("--src", type=Path, default=SOURCES, help="folder of the generated .cu programs")
    a = ap.parse_args(argv)
    t = time.perf_counter()
    results = build(a.arch, a.out, a.jobs, a.strict, a.src)
    failed = [r for r in results if r.error]
    for r in failed:
        print(f"FAILED {r.program} sm_{r.cc}: {r.error}", file=sys.stderr)
    v = nvrtc.version()
    for cc in a.arch:
        rs = [r for r in results if r.cc == cc and not r.error]
        built = [r for r in rs if not r.cached]
        print(f"sm_{cc}: {len(rs)} programs, {sum(r.kernels for r in rs)} kernels "
              f"({len(built)} programs / {sum(r.kernels for r in built)} kernels compiled, "
              f"{len(rs) - len(built)} from the cache) with NVRTC {v[0]}.{v[1]}")
    print(f"{a.out}: {time.perf_counter() - t:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
