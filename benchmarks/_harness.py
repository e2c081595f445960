"""Shared benchmark harness: timing and ratio tables (torchlet beside numpy and
PyTorch, when installed). Benchmarks report ratios, not just absolute times.

    from _harness import Bench
    b = Bench("copy, 2^24 float32", threads=1)
    b.row("clone", nbytes, torchlet=lambda: ..., numpy=lambda: ..., torch=lambda: ...)
    b.print()

A ratio column `vs X` is X's time / torchlet's time: above 1.0 torchlet is faster.
"""
from __future__ import annotations

import gc
import os
import statistics
import sys
import time

# numpy (through OpenBLAS) is slowed by OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE on
# machines that set them, and a ratio against a slowed numpy is not a ratio:
# every benchmark process runs without them (re-executed before any library
# has read them); machine_info() says so.
_OPENBLAS_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
_UNSET_OPENBLAS = os.environ.get("TORCHLET_BENCH_UNSET_OPENBLAS", "")
if any(v in os.environ for v in _OPENBLAS_VARS) and __name__ != "__main__":
    env = {k: v for k, v in os.environ.items() if k not in _OPENBLAS_VARS}
    env["TORCHLET_BENCH_UNSET_OPENBLAS"] = ",".join(f"{v}={os.environ[v]}" for v in _OPENBLAS_VARS
                                                    if v in os.environ)
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable, *sys.argv], env)

try:
    import torch  # noqa: F401
except ImportError:  # torch is optional
    torch = None


def timeit(fn, *, repeat: int = 7, min_time: float = 0.05) -> float:
    """Median seconds per call over `repeat` runs of an auto-sized batch."""
    fn()  # warm up (page faults, caches, lazy init)
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt >= min_time or n >= 1 << 20:
            break
        n *= 2 if dt * 4 > min_time else 8
    samples = []
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeat):
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            samples.append((time.perf_counter() - t0) / n)
    finally:
        if gc_was:
            gc.enable()
    return statistics.median(samples)


def _fmt_time(s: float) -> str:
    if s < 1e-6:
        return f"{s * 1e9:7.0f} ns"
    if s < 1e-3:
        return f"{s * 1e6:7.1f} us"
    return f"{s * 1e3:7.2f} ms"


def _numpy_blas_threads():
    """A setter for numpy's bundled OpenBLAS thread count (None if not found):
    numpy's products (matmul, einsum with optimize, tensordot, linalg) would
    otherwise use every core in a row measured at one thread."""
    import ctypes
    import glob

    import numpy as np

    for path in glob.glob(os.path.join(os.path.dirname(np.__file__) + ".libs", "libscipy_openblas*.so")):
        lib = ctypes.CDLL(path)
        for name in ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads"):
            fn = getattr(lib, name, None)
            if fn is not None:
                return lambda n: fn(ctypes.c_int(n))
    return None


_NP_SET_THREADS = _numpy_blas_threads()


def set_threads(n: int) -> None:
    """One thread count for all three: torchlet's pool, torch's and numpy's BLAS."""
    import torchlet

    torchlet.set_num_threads(n)
    if torch is not None:
        torch.set_num_threads(n)
    if _NP_SET_THREADS is not None:
        _NP_SET_THREADS(n)


class Bench:
    """Collects rows of {implementation: callable} and prints a ratio table.
    ``threads=`` sets that thread count for all three implementations."""

    IMPLS = ("torchlet", "numpy", "torch")

    def __init__(self, title: str, **info):
        self.title = title
        self.info = info
        self.rows = []
        if "threads" in info:
            set_threads(info["threads"])

    def row(self, name: str, nbytes: int | None = None, **impls):
        times = {}
        for impl in self.IMPLS:
            fn = impls.get(impl)
            if fn is None:
                continue
            times[impl] = timeit(fn)
        self.rows.append((name, nbytes, times))
        return times

    def print(self, file=sys.stdout):
        extra = ", ".join(f"{k}={v}" for k, v in self.info.items())
        print(f"\n## {self.title}" + (f" ({extra})" if extra else ""), file=file)
        head = f"{'case':<34}"
        for impl in self.IMPLS:
            head += f" {impl:>22}"
        head += f" {'vs numpy':>9} {'vs torch':>9}"
        print(head, file=file)
        print("-" * len(head), file=file)
        for name, nbytes, times in self.rows:
            line = f"{name:<34}"
            for impl in self.IMPLS:
                t = times.get(impl)
                if t is None:
                    line += f" {'-':>22}"
                elif nbytes:
                    line += f" {_fmt_time(t)} {nbytes / t / 1e9:6.1f} GB/s"
                else:
                    line += f" {_fmt_time(t):>22}"
            tl_t = times.get("torchlet")
            for ref in ("numpy", "torch"):
                r = times.get(ref)
                line += f" {r / tl_t:8.2f}x" if (r and tl_t) else f" {'-':>9}"
            print(line, file=file)
        file.flush()


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo), else the platform's processor or machine."""
    import platform
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def numpy_kernels() -> str:
    """Which SIMD kernels numpy dispatches to on this CPU (its highest
    dispatched target) and its BLAS, to check what the numpy column runs."""
    try:
        import numpy as np
        from numpy._core import _multiarray_umath as mu
        feats = getattr(mu, "__cpu_features__", {})
        targets = [t for t in getattr(mu, "__cpu_dispatch__", []) if feats.get(t)]
        simd = targets[-1] if targets else "baseline " + " ".join(getattr(mu, "__cpu_baseline__", []))
        blas = ""
        try:
            cfg = np.show_config(mode="dicts")
            blas = cfg.get("Build Dependencies", {}).get("blas", {}).get("name", "")
        except Exception:  # noqa: BLE001 - older numpy: no dict mode
            pass
        return f"numpy {np.__version__} (SIMD {simd}{', BLAS ' + blas if blas else ''})"
    except Exception:  # noqa: BLE001 - the description is best effort
        return "numpy (kernels unknown)"


def machine_info() -> str:
    """Where a benchmark ran: CPU model and vendor, caches, huge pages, cores,
    torchlet's threads and store policy, library versions; what the numpy
    column runs; the OpenBLAS variables unset for the run."""
    import platform
    parts = []
    try:
        import torchlet
        parts.append(torchlet.backends.cpu.describe())
        parts.append(f"{os.cpu_count()} cpus, torchlet threads {torchlet.get_num_threads()}")
    except Exception:  # noqa: BLE001 - torchlet not built: still say where
        parts.append(f"{cpu_model()} ({platform.machine()}), {os.cpu_count()} cpus")
    parts.append(numpy_kernels())
    parts.append(f"torch {torch.__version__}" if torch is not None else "torch not installed")
    parts.append(f"python {platform.python_version()}")
    if _UNSET_OPENBLAS:
        parts.append(f"unset for this run: {_UNSET_OPENBLAS}")
    return "; ".join(parts)


def thread_counts(default, spec: str | None = None) -> list[int]:
    """The thread counts a benchmark runs at: `spec` or the script's
    `--threads 1,4,16` option, else the environment's TORCHLET_BENCH_THREADS
    (benchmarks/device/run_cpu_bench.sh sets it on the 16-core machine), else
    `default`, the script's own counts (what `make bench` runs)."""
    if spec is None:
        argv = sys.argv[1:]
        for i, a in enumerate(argv):
            if a == "--threads" and i + 1 < len(argv):
                spec = argv[i + 1]
            elif a.startswith("--threads="):
                spec = a.partition("=")[2]
    spec = spec or os.environ.get("TORCHLET_BENCH_THREADS")
    if not spec:
        return list(default)
    try:
        counts = [int(x) for x in spec.split(",") if x.strip()]
    except ValueError:
        counts = []
    if not counts or min(counts) < 1:
        raise SystemExit(f"thread counts must be positive integers, comma-separated: {spec!r}")
    return counts


def default_settle() -> float:
    """interleaved's pause before each batch: 0.05 s when torchlet runs on more
    than one thread (see interleaved), else none"""
    import torchlet
    return 0.05 if torchlet.get_num_threads() > 1 else 0.0


def interleaved(fns: dict, rounds: int = 5, min_time: float = 0.02, settle: float | None = None,
                clock=time.perf_counter) -> dict:
    """Best seconds per call of each callable ({name: fn}), timed round robin:
    one batch of each per round, so that load from other processes on a
    shared machine hits every implementation alike (ratios, not absolute
    times, are what such a machine measures).

    settle: seconds to sleep before each batch (then one untimed call wakes
    that library's threads). Each library's threads keep spinning for a while
    after its last call (PyTorch's OpenMP team, numpy's OpenBLAS ~0.1 s,
    torchlet's pool up to 1 ms) and would take a core from whichever library is
    timed next. Default: 0.05 s when torchlet runs on more than one thread.

    clock: time.process_time measures the CPU time the process spent (on one
    thread: that call's work, much less disturbed by a loaded machine than
    wall time; on several: all threads' work added up, not wall time)."""
    if settle is None:
        settle = default_settle()
    batch = {}
    for k, fn in fns.items():  # warm up, then size one batch of ~min_time
        fn()
        t0 = time.perf_counter()
        fn()
        batch[k] = max(1, int(min_time / max(time.perf_counter() - t0, 1e-7)))
    best = {k: float("inf") for k in fns}
    for _ in range(rounds):
        for k, fn in fns.items():
            n = batch[k]
            if settle:
                time.sleep(settle)
                fn()
            t0 = clock()
            for _ in range(n):
                fn()
            best[k] = min(best[k], (clock() - t0) / n)
    return best


def print_interleaved(rows: dict, rounds: int = 5, width: int = 30, file=sys.stdout,
                      clock=time.perf_counter) -> dict:
    """Times each row ({case: {impl: fn}}) with `interleaved` (clock: as
    there) and prints one line per case: milliseconds per implementation and
    the ratios other / torchlet (above 1.0 torchlet is faster). Returns
    {case: times}."""
    impls = ("torchlet", "numpy", "torch")
    head = f"{'case':<{width}}" + "".join(f" {k:>10}" for k in impls) + f" {'vs numpy':>9} {'vs torch':>9}"
    print(head, file=file)
    print("-" * len(head), file=file)
    out = {}
    for name, fns in rows.items():
        t = out[name] = interleaved(fns, rounds=rounds, clock=clock)
        line = f"{name:<{width}}" + "".join(f" {t[k] * 1e3:8.2f}ms" if k in t else f" {'-':>10}" for k in impls)
        for ref in ("numpy", "torch"):
            line += f" {t[ref] / t['torchlet']:8.2f}x" if ref in t else f" {'-':>9}"
        print(line, file=file, flush=True)
    return out
