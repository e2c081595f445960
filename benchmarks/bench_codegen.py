"""Front-end speed: torchlet's generator vs torchgen on PyTorch's own files.

Times reading + modelling + analysing native_functions.yaml and
derivatives.yaml (with tags.yaml) with torchlet's ``codegen.model.load_model``
and, in the same run when torch is installed, torchgen's
``parse_native_yaml`` + ``load_derivatives`` on the same files (their module
caches cleared before each run).  Prints best-of-N times and the ratio;
the goal is at most 0.3x torchgen's time.

Then the full generation, end to end as a user runs it (a fresh
interpreter each time): ``torchlet-gen generate`` over the whole corpus
(every emitter, into an empty folder) beside torchgen's full ATen generation
(``python -m torchgen.gen --per-operator-headers``) from the same
native_functions.yaml and tags.yaml, interleaved, best of ``--full-repeat``;
the goal is at most 0.2x torchgen's time. Prints the CPU model.

    python benchmarks/bench_codegen.py [--repeat N] [--full-repeat M]
"""

from __future__ import annotations

import argparse
import gc
import shutil
import subprocess
import sys
import tempfile
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


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or "unknown CPU"


def timed(cmd: list[str], cwd: Path | None = None) -> float:
    t = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    dt = time.perf_counter() - t
    if r.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{r.stderr[-3000:]}")
    return dt


def torchlet_full_cmd(out: Path) -> list[str]:
    return [sys.executable, "-m", "codegen", "generate", "--native-functions", str(CORPUS / "native_functions.yaml"),
            "--derivatives", str(CORPUS / "derivatives.yaml"), "--tags", str(CORPUS / "tags.yaml"), "--autocast", "",
            "--untranslated-derivatives", "not-implemented", "--out", str(out)]  # fmt: skip


def torchgen_source_dir(tmp: Path) -> Path:
    """torchgen's packaged ATen templates with the corpus's YAML in native/."""
    import torchgen

    src = tmp / "aten_src"
    shutil.copytree(Path(torchgen.__file__).parent / "packaged/ATen", src)
    shutil.copy(CORPUS / "native_functions.yaml", src / "native/native_functions.yaml")
    shutil.copy(CORPUS / "tags.yaml", src / "native/tags.yaml")
    return src


def full_generation(repeat: int, have_torchgen: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="tl_bench_gen_") as d:
        tmp = Path(d)
        src = torchgen_source_dir(tmp) if have_torchgen else None
        ours, theirs = [], []
        for i in range(repeat):  # interleaved, each into a fresh folder
            ours.append(timed(torchlet_full_cmd(tmp / f"tl_{i}"), cwd=ROOT))
            if src is not None:
                theirs.append(timed([sys.executable, "-m", "torchgen.gen", "-s", str(src), "-d", str(tmp / f"tg_{i}"),
                                     "--per-operator-headers"], cwd=tmp))  # fmt: skip (it writes torch/csrc/... under cwd)
        n_ours = sum(1 for p in (tmp / "tl_0").rglob("*") if p.is_file())
        print(f"torchlet-gen generate, full corpus ({n_ours} files):  {min(ours):6.2f} s (best of {repeat})")
        if src is None:
            print("torchgen not installed: no full-generation comparison")
            return
        n_theirs = sum(1 for p in (tmp / "tg_0").rglob("*") if p.is_file())
        print(f"torchgen.gen --per-operator-headers ({n_theirs} files): {min(theirs):6.2f} s (best of {repeat})")
        ratio = min(ours) / min(theirs)
        print(f"ratio torchlet/torchgen (full generation): {ratio:.2f}x (goal <= 0.20x) {'OK' if ratio <= 0.2 else 'ABOVE GOAL'}")


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--full-repeat", type=int, default=3)
    args = p.parse_args()
    print(f"CPU: {cpu_model()}")
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
        full_generation(args.full_repeat, False)
        return 0
    print(f"torchgen parse_native_yaml + load_derivatives:  {min(theirs) * 1000:7.1f} ms (best of {args.repeat})")
    ratio = min(ours) / min(theirs)
    print(f"ratio torchlet/torchgen: {ratio:.2f}x (goal <= 0.30x) {'OK' if ratio <= 0.3 else 'ABOVE GOAL'}")
    full_generation(args.full_repeat, True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
