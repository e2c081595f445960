"""Import smoke test before the device benchmarks (run_cpu_bench.sh): torchlet
imports, reports its kernel ISA, and a + b, sum and mm match numpy at 1 thread
and at every thread count the benchmarks will use (TORCHLET_BENCH_THREADS), so
a broken build fails here in seconds instead of inside a benchmark.

Prints the versions and thread settings the benchmark logs depend on."""
from __future__ import annotations

import os
import sys
import time

import numpy as np

t0 = time.perf_counter()
import torchlet as tl  # noqa: E402

print(f"torchlet imported in {time.perf_counter() - t0:.2f}s from {os.path.dirname(tl.__file__)}")
print(f"torchlet cpu capability: {tl.get_cpu_capability()}, default threads: {tl.get_num_threads()}")
print(f"python {sys.version.split()[0]}, numpy {np.__version__}")
try:
    import torch
    print(f"torch {torch.__version__}, default threads {torch.get_num_threads()}")
    print(torch.__config__.parallel_info())
except ImportError:
    print("torch: not installed (the benchmarks' torch columns will be empty)")

rng = np.random.default_rng(0)
a = rng.standard_normal(1 << 20, dtype=np.float32)
b = rng.standard_normal(1 << 20, dtype=np.float32)
m = rng.standard_normal((257, 129), dtype=np.float32)
k = rng.standard_normal((129, 65), dtype=np.float32)
ta, tb, tm, tk = (tl.from_numpy(x) for x in (a, b, m, k))
counts = sorted({1, *(int(x) for x in os.environ.get("TORCHLET_BENCH_THREADS", "1").split(",") if x.strip())})
for n in counts:
    tl.set_num_threads(n)
    np.testing.assert_array_equal((ta + tb).numpy(), a + b)
    np.testing.assert_allclose(float(tl.sum(ta)), float(a.astype(np.float64).sum()), rtol=1e-5, atol=1e-3)
    np.testing.assert_allclose(tl.mm(tm, tk).numpy(), m @ k, rtol=1e-4, atol=1e-4)
    print(f"threads={n}: a + b, sum, mm match numpy")
tl.set_num_threads(1)
print("smoke OK")
